//! `[strategy.ta_trend]`: every key, its default and its validation.
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
use spotbot_sdk::config::{bad, within};
use spotbot_sdk::sides::{HostKeys, Settings};

use crate::checks::CHECKS;

/// The longest slow EMA accepted: the manifest asks for 200 candles, and an EMA needs about as
/// many bars again as its period before its SMA seed is forgotten.
pub const MAX_EMA_SLOW: u32 = 100;

/// The configuration. Every key is optional; unknown keys are refused ([`Settings::parse`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Host: `enabled` ... `min_quote_volume_usd`, `timeframes` (the one timeframe every check
    /// reads), `size_pct` ... `risk_normal`, with the service's defaults on 1h.
    #[serde(flatten)]
    pub host: HostKeys,
    /// Period of the fast EMA.
    pub ema_fast: u32,
    /// Period of the slow EMA (the trend's backbone), at most [`MAX_EMA_SLOW`].
    pub ema_slow: u32,
    /// ADX(14) at least this: a trend, not a range.
    pub adx_min: f64,
    /// RSI(14) of a buy at least this (momentum) ...
    pub rsi_min: f64,
    /// ... and at most this (not overbought). A sell mirrors the band: 100 − rsi_max ..=
    /// 100 − rsi_min.
    pub rsi_max: f64,
    /// Volume of the last closed candle over the mean of the 20 before it, at least.
    pub vol_ratio_min: f64,
    /// Checks of a side that must pass (the two EMA checks always must).
    pub min_passed: u32,
    /// Stop-loss distance: this many ATR(14).
    pub sl_atr_multiplier: f64,
    /// Take-profit distance: this many stop-loss distances.
    pub reward_risk: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            host: HostKeys::on("1h"),
            ema_fast: 20,
            ema_slow: 50,
            adx_min: 25.0,
            rsi_min: 50.0,
            rsi_max: 70.0,
            vol_ratio_min: 1.0,
            min_passed: 5,
            sl_atr_multiplier: 2.0,
            reward_risk: 2.0,
        }
    }
}

impl Settings for Config {
    fn host(&self) -> &HostKeys {
        &self.host
    }

    /// The EMAs in order, the slow one short enough for the manifest's candles, every threshold
    /// in its range and `min_passed` a count of the six checks.
    fn validate(&self) -> Result<(), ScanError> {
        if self.ema_fast < 2 {
            return Err(bad("ema_fast", format!("must be >= 2, got {}", self.ema_fast)));
        }
        if self.ema_slow <= self.ema_fast || self.ema_slow > MAX_EMA_SLOW {
            return Err(bad(
                "ema_slow",
                format!(
                    "must be above ema_fast {} and at most {MAX_EMA_SLOW}, got {}",
                    self.ema_fast, self.ema_slow
                ),
            ));
        }
        within("adx_min", self.adx_min, 0.0, 100.0)?;
        within("rsi_min", self.rsi_min, 0.0, 100.0)?;
        within("rsi_max", self.rsi_max, self.rsi_min, 100.0)?;
        within("vol_ratio_min", self.vol_ratio_min, 0.0, f64::MAX)?;
        within("sl_atr_multiplier", self.sl_atr_multiplier, f64::MIN_POSITIVE, f64::MAX)?;
        within("reward_risk", self.reward_risk, f64::MIN_POSITIVE, f64::MAX)?;
        if !(1..=CHECKS).contains(&self.min_passed) {
            return Err(bad(
                "min_passed",
                format!("must be 1..={CHECKS}, got {}", self.min_passed),
            ));
        }
        Ok(())
    }
}
