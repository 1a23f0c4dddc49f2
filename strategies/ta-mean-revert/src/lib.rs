//! `ta_mean_revert`: Bollinger-band mean reversion on one timeframe (default 1h).
//!
//! Buy a stretched price that starts to come back: the close at the lower Bollinger band
//! (20, 2σ), RSI(14) oversold, ADX(14) low (a range, where stretches revert), a volume spike
//! and a bullish reversal candle, with a target (the middle band) worth at least `min_rr`
//! times the stop. `at_lower_band` and `reward_risk` must pass, and at least `min_passed` of
//! the six checks. Sell (on spot: take profit on the coin held) when the close is at the upper
//! band with RSI overbought. Otherwise the result is a `skip` whose reason names the failing
//! checks with their values. Stop-loss `sl_atr_multiplier` × ATR(14) beyond the band, target
//! the middle band. `README.md` lists every key, check and rule.
//!
//! Modules: [`config`] (keys, defaults, validation), [`checks`] (indicators, brackets and the
//! checks of each side), [`mod@evaluate`] (the plugin: one symbol to a result), [`scenarios`] (scripted
//! test paths).

pub mod checks;
pub mod config;
pub mod evaluate;
pub mod scenarios;

#[cfg(test)]
mod tests;

pub use config::Config;

/// The plugin name: `bot` of every result, `[strategy.ta_mean_revert]` in the config.
pub const NAME: &str = "ta_mean_revert";

/// Candles asked for: the bands need 20, ADX and RSI settle well within 200, and a fixed count
/// keeps the Wilder-type values reproducible.
pub const CANDLES: u32 = 200;

/// The strategy: a [`OneTimeframe`](spotbot_sdk::sides::OneTimeframe) plugin, implemented in
/// [`mod@evaluate`].
pub struct TaMeanRevert;

spotbot_sdk::export_strategy!(TaMeanRevert);
