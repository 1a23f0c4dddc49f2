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
//! each side), [`mod@evaluate`] (one symbol to a result), [`scenarios`] (scripted test paths).

pub mod checks;
pub mod config;
pub mod evaluate;
pub mod scenarios;

#[cfg(test)]
mod tests;

use spotbot_sdk::{
    Manifest, PluginKind, ScanError, ScanRequest, ScanResponse, Strategy, export_strategy,
};

pub use config::Config;
pub use evaluate::evaluate;

/// The plugin name: `bot` of every result, `[strategy.ta_trend]` in the config.
pub const NAME: &str = "ta_trend";

/// Candles asked for: EMA50 and the Wilder-type indicators settle well within 200, and a fixed
/// count keeps their values reproducible (they remember all history).
pub const CANDLES: u32 = 200;

/// The strategy.
pub struct TaTrend;

impl Strategy for TaTrend {
    fn describe() -> Manifest {
        let config = Config::default();
        Manifest::new(
            NAME,
            env!("CARGO_PKG_VERSION"),
            PluginKind::Strategy,
            "Trend following: EMA20/50, ADX, MACD, RSI and volume on one timeframe; \
                          sell exits when the trend turns",
        )
        .with_candles(config.timeframe(), CANDLES)
        .with_default_config(&config)
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let config = Config::parse(&request.config)?;
        request.evaluate_each(|symbol| evaluate(&config, symbol, request.now_ms))
    }
}

export_strategy!(TaTrend);
