//! `[strategy.ta_mean_revert]`: every key, its default and its validation.
//!
//! The strategy's own keys say when a price is stretched far enough to bet on its return: the
//! Bollinger bands and how near a band counts as "at" it, the RSI levels of oversold and
//! overbought, how quiet the market must be (ADX below a cap), the volume spike and reversal
//! candle that show buyers stepping in, and how much the middle band must pay per unit of
//! stop. As for every one-timeframe strategy ([`Settings`]), `Config::default()` is what the
//! manifest publishes and the host overlays a section on, and each scan judges every value
//! first: a bad one is a `bad-config` naming its key, never a signal. The "host" keys are the
//! service's own (docs/strategies.md, "Keys the host acts on"), declared here with the
//! service's defaults so this strategy's trades use its own section.

use serde::{Deserialize, Serialize};
use spotbot_sdk::ScanError;
use spotbot_sdk::config::{bad, within};
use spotbot_sdk::sides::{HostKeys, Settings};

use crate::checks::BUY_CHECKS;

/// The longest Bollinger period accepted (the manifest asks for 200 candles).
pub const MAX_BB_PERIOD: u32 = 100;

/// The configuration. Every key is optional; unknown keys are refused ([`Settings::parse`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Host: `enabled` ... `min_quote_volume_usd`, `timeframes` (the one timeframe every check
    /// reads), `size_pct` ... `risk_normal`, with the service's defaults on 1h.
    #[serde(flatten)]
    pub host: HostKeys,
    /// Period of the Bollinger bands (SMA middle).
    pub bb_period: u32,
    /// Width of the bands in population standard deviations.
    pub bb_deviations: f64,
    /// The close counts as "at the lower band" up to this many percent above it (a sell: at
    /// most this far below the upper band).
    pub band_tolerance_pct: f64,
    /// RSI(14) of a buy at most this.
    pub rsi_oversold: f64,
    /// RSI(14) of a sell at least this.
    pub rsi_overbought: f64,
    /// ADX(14) of a buy below this: a range, where stretched prices come back.
    pub adx_max: f64,
    /// Volume of the last closed candle over the mean of the 20 before it, at least (a spike:
    /// capitulation met by buyers).
    pub vol_ratio_min: f64,
    /// The reversal candle closes above its open, in the top part of its range: (close − low)
    /// / (high − low) at least this.
    pub reversal_close_position: f64,
    /// Buy checks that must pass (`at_lower_band` and `reward_risk` always must).
    pub min_passed: u32,
    /// Stop-loss: this many ATR(14) below the lower band (below the entry when it is under the
    /// band); a sell mirrors above the upper band.
    pub sl_atr_multiplier: f64,
    /// Reward/risk of a buy, target (middle band) over stop distance, at least.
    pub min_rr: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            host: HostKeys::on("1h"),
            bb_period: 20,
            bb_deviations: 2.0,
            band_tolerance_pct: 0.5,
            rsi_oversold: 30.0,
            rsi_overbought: 70.0,
            adx_max: 25.0,
            vol_ratio_min: 1.5,
            reversal_close_position: 0.5,
            min_passed: 5,
            sl_atr_multiplier: 1.0,
            min_rr: 2.0,
        }
    }
}

impl Settings for Config {
    fn host(&self) -> &HostKeys {
        &self.host
    }

    /// The bands' period within the manifest's candles, `min_passed` a count of the six buy
    /// checks, and each level, width and ratio in its range.
    fn validate(&self) -> Result<(), ScanError> {
        if !(2..=MAX_BB_PERIOD).contains(&self.bb_period) {
            let got = format!("must be 2..={MAX_BB_PERIOD}, got {}", self.bb_period);
            return Err(bad("bb_period", got));
        }
        if !(1..=BUY_CHECKS).contains(&self.min_passed) {
            let got = format!("must be 1..={BUY_CHECKS}, got {}", self.min_passed);
            return Err(bad("min_passed", got));
        }
        let big = f64::MAX;
        for (key, v, lo, hi) in [
            ("bb_deviations", self.bb_deviations, f64::MIN_POSITIVE, 10.0),
            ("band_tolerance_pct", self.band_tolerance_pct, 0.0, 10.0),
            ("rsi_oversold", self.rsi_oversold, 0.0, 100.0),
            ("rsi_overbought", self.rsi_overbought, self.rsi_oversold, 100.0),
            ("adx_max", self.adx_max, 0.0, 100.0),
            ("vol_ratio_min", self.vol_ratio_min, 0.0, big),
            ("reversal_close_position", self.reversal_close_position, 0.0, 1.0),
            ("sl_atr_multiplier", self.sl_atr_multiplier, f64::MIN_POSITIVE, big),
            ("min_rr", self.min_rr, 0.0, big),
        ] {
            within(key, v, lo, hi)?;
        }
        Ok(())
    }
}
