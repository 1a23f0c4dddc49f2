//! `ta_trend`: trend following on one timeframe (default 1h) with textbook indicators.
//!
//! Buy when an uptrend is in place and still has fuel: EMA20 above EMA50, the close above
//! EMA50 (the two must-haves), ADX(14) showing a trend, the MACD histogram positive and rising,
//! RSI(14) in a healthy band (momentum without being overbought) and volume at least its
//! 20-candle mean. Sell (on spot: exit the coin held) on the mirror image, when the trend has
//! clearly turned. A side is a signal when its must-haves and at least `min_passed` of its six
//! checks pass; otherwise the result is a `skip` whose reason names the failing checks with
//! their values. Stop-loss `sl_atr_multiplier` × ATR(14), take-profit `reward_risk` × the stop.
//! `README.md` lists every key, check and rule.
//!
//! Modules: [`config`] (keys, defaults, validation), [`checks`] (indicators and the checks of
//! each side), [`mod@evaluate`] (the plugin: one symbol to a result), [`scenarios`] (scripted test paths).

pub mod checks;
pub mod config;
pub mod evaluate;
pub mod scenarios;

#[cfg(test)]
mod tests;

pub use config::Config;

/// The plugin name: `bot` of every result, `[strategy.ta_trend]` in the config.
pub const NAME: &str = "ta_trend";

/// Candles asked for: EMA50 and the Wilder-type indicators settle well within 200, and a fixed
/// count keeps their values reproducible (they remember all history).
pub const CANDLES: u32 = 200;

/// The strategy: a [`OneTimeframe`](spotbot_sdk::sides::OneTimeframe) plugin, implemented in
/// [`mod@evaluate`].
pub struct TaTrend;

spotbot_sdk::export_strategy!(TaTrend);
