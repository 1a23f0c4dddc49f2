//! `mr_combined`: the spec's MR Combined strategy, a range mean-reversion plugin.
//!
//! Buy near the support of a validated range on the regime timeframe (4h), sell near its
//! resistance, when the macro timeframe (1d) and the regime agree that nothing trends, and the
//! entry timeframe (1h) shows the edge being rejected. Gates, in the spec's order, each a
//! checklist line or three: no-trade windows, multi-timeframe regime, 4h range, 1h reversal
//! and proximity, reward/risk, and the market-context override. The first failing gate makes
//! the result a `skip` with its reason. `README.md` lists every rule and threshold.
//!
//! Modules, one job each: [`config`] (keys, defaults, validation), [`windows`] (blackouts),
//! [`data`] (closed, sane candles), [`regime`], [`range`], [`entry`], [`targets`], [`context`],
//! [`tier`], [`mod@evaluate`] (the gate sequence), [`scenarios`] (scripted test paths).

pub mod config;
pub mod context;
pub mod data;
pub mod entry;
pub mod evaluate;
pub mod line;
pub mod range;
pub mod regime;
pub mod scenarios;
pub mod targets;
pub mod tier;
pub mod windows;

#[cfg(test)]
mod tests;

use spotbot_sdk::{
    CandleNeed, Manifest, PluginKind, ScanError, ScanRequest, ScanResponse, Strategy,
    export_strategy,
};

pub use config::{Config, default_config_json};
pub use evaluate::evaluate;

/// The plugin name: `bot` of every result, `[strategy.mr_combined]` in the config.
pub const NAME: &str = "mr_combined";

/// Candles asked for per role, in the order of `Config::default().timeframes` (1d, 4h, 1h):
/// - 120 × 1d: the 50-day dealing range + 3 break days + swings, with history to spare;
/// - 200 × 4h: the 120-bar range window plus 80 bars before it, so ADX(14) (lookback 27) has
///   settled when the window starts and the median ADX covers all of it;
/// - 300 × 1h: ATR(14) and the median of its last 185 values (~8 days), with 100 candles
///   before them so Wilder's smoothing has forgotten its seed (`regime::ATR_SETTLE`); the
///   20-candle volume mean, RSI(14).
pub const COUNTS: [u32; 3] = [120, 200, 300];

/// The strategy.
pub struct MrCombined;

impl Strategy for MrCombined {
    fn describe() -> Manifest {
        let candles = Config::default()
            .timeframes
            .iter()
            .zip(COUNTS)
            .map(|(tf, count)| CandleNeed { timeframe: tf.clone(), count })
            .collect();
        Manifest {
            name: NAME.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            kind: PluginKind::Strategy,
            description: "Range mean reversion: buy 4h support / sell 4h resistance on a 1h \
                          reversal, 1d/4h/1h regime and market-context gates"
                .to_string(),
            candles,
            needs_reference: false,
            needs_market_context: true,
            default_config: default_config_json(),
        }
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let settings = Config::parse(&request.config)?;
        request.evaluate_each(|symbol| evaluate(&settings, symbol, request.now_ms))
    }
}

export_strategy!(MrCombined);
