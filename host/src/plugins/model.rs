//! The plugin contract's types: the SDK's own (`spotbot_sdk`, generated from
//! `wit/strategy.wit`), so the host, the SDK and strategy authors' tests share one Rust
//! spelling and one JSON spelling (snake_case values such as `buy`, `pump_watch`,
//! `trade_long`; the SDK's `openapi` feature gives them their schemas). A new WIT field is
//! added to the WIT file and to the wasmtime conversion in `convert.rs`, nowhere else.
//!
//! The rest of the host and the API use these; the Wasm bindings (and every wasmtime type)
//! stay inside `plugins/`. See `docs/strategies.md` for the meaning of each field.

use serde::{Deserialize, Serialize};
pub use spotbot_sdk::{
    BosMode, CandleNeed, Candles, Check, ConfidenceLevel, Direction, LiquidityProfile, MacroPhase,
    Manifest, MarketContext, Metric, PluginKind, PriorityDecision, RangePosition, Regime,
    ScanError, ScanRequest, ScanResponse, ScanResult, ScannerAlert, Stage, StateEntry, StateUpdate,
    SymbolData, TrendAge,
};

/// The market data of one scan: the symbols and, when asked, the reference symbol.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MarketSnapshot {
    pub symbols: Vec<SymbolData>,
    pub reference: Option<SymbolData>,
}

/// A scan error in words: `bad config: ...`, `missing data: ...`, `failed: ...`.
pub fn describe_error(error: &ScanError) -> String {
    match error {
        ScanError::BadConfig(m) => format!("bad config: {m}"),
        ScanError::MissingData(m) => format!("missing data: {m}"),
        ScanError::Failed(m) => format!("failed: {m}"),
    }
}

/// An upper bound of the bytes a response occupies (strings, lists, fixed fields);
/// compared with `plugins.max_result_kib`.
pub fn approx_size(response: &ScanResponse) -> usize {
    const RESULT_FIXED: usize = 256;
    const CHECK_FIXED: usize = 16;
    const ALERT_FIXED: usize = 32;
    let results: usize = response
        .results
        .iter()
        .map(|r| {
            RESULT_FIXED
                + r.symbol.len()
                + r.bot.len()
                + r.tier.as_ref().map_or(0, String::len)
                + r.reason.as_ref().map_or(0, String::len)
                + r.checklist
                    .iter()
                    .map(|c| CHECK_FIXED + c.name.len() + c.detail.len())
                    .sum::<usize>()
        })
        .sum();
    let alerts: usize = response
        .alerts
        .iter()
        .map(|a| {
            ALERT_FIXED + a.symbol.len() + a.metrics.iter().map(|m| 8 + m.name.len()).sum::<usize>()
        })
        .sum();
    let updates: usize = response
        .state_updates
        .iter()
        .map(|u| match u {
            StateUpdate::Set(entry) => 8 + entry.key.len() + entry.value.len(),
            StateUpdate::Remove(key) => 8 + key.len(),
            StateUpdate::Clear => 8,
        })
        .sum();
    results + alerts + updates
}
