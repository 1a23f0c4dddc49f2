//! `[strategy.ta_mean_revert]`: every key, its default and its validation.
//!
//! The manifest publishes `serde_json::to_string(&Config::default())`, so this struct is the one
//! source of the section's keys: the host refuses keys it lacks and values of another JSON type,
//! and overlays the section on these defaults. Values are judged at every scan
//! ([`Settings::parse`]): a bad one fails the scan with `bad-config` naming the key, never a
//! signal. The keys marked "host" are read by the service (docs/strategies.md, "Keys the host
//! acts on"), which checks their ranges itself; they are declared here so that this strategy's
//! trades never borrow `mr_combined`'s values.

use serde::{Deserialize, Serialize};
use spotbot_sdk::ScanError;
use spotbot_sdk::config::{self, ScanKeys, TradeKeys, bad, within};
use spotbot_sdk::sides::Settings;

use crate::checks::BUY_CHECKS;

/// The longest Bollinger period accepted (the manifest asks for 200 candles).
pub const MAX_BB_PERIOD: u32 = 100;

/// The configuration. Every key is optional; unknown keys are refused ([`Settings::parse`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Host: `enabled`, `use_universe`, `watchlist_override`, `min_quote_volume_usd` (the
    /// service's defaults).
    #[serde(flatten)]
    pub scan: ScanKeys,
    /// Host and plugin: the one timeframe every check reads, as a one-element list.
    pub timeframes: Vec<String>,
    /// Host: `size_pct`, `max_trades_per_day`, `trailing_*` and `risk_normal` (the service's
    /// defaults; results carry no tier, so every signal is `normal`).
    #[serde(flatten)]
    pub trade: TradeKeys,
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
            scan: ScanKeys::default(),
            timeframes: vec!["1h".into()],
            trade: TradeKeys::default(),
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
    /// The one element of `timeframes` (validation guarantees there is one).
    fn timeframe(&self) -> &str {
        self.timeframes.first().map_or("1h", String::as_str)
    }

    fn validate(&self) -> Result<(), ScanError> {
        config::one_timeframe(&self.timeframes)?;
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
