//! The plugin contract as plain host types: the same records as `wit/strategy.wit`, with the
//! spec's JSON spelling (snake_case values such as `buy`, `pump_watch`, `trade_long`).
//!
//! The rest of the host and the API use these; the Wasm bindings (and every wasmtime type)
//! stay inside `plugins/`. See `docs/strategies.md` for the meaning of each field.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PluginKind {
    Strategy,
    Scanner,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CandleNeed {
    pub timeframe: String,
    pub count: u32,
}

/// What `describe()` returned, validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub kind: PluginKind,
    pub description: String,
    pub candles: Vec<CandleNeed>,
    pub needs_reference: bool,
    pub needs_market_context: bool,
    /// JSON object as text.
    pub default_config: String,
}

/// Candles of one symbol on one timeframe, oldest first, column by column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Candles {
    pub timeframe: String,
    pub open_time: Vec<i64>,
    pub open: Vec<f64>,
    pub high: Vec<f64>,
    pub low: Vec<f64>,
    pub close: Vec<f64>,
    pub volume: Vec<f64>,
}

impl Candles {
    pub fn len(&self) -> usize {
        self.close.len()
    }

    pub fn is_empty(&self) -> bool {
        self.close.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MacroPhase {
    Bull,
    Bear,
    Range,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RangePosition {
    Low,
    Mid,
    High,
    JustBrokenUp,
    JustBrokenDown,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LiquidityProfile {
    Clean,
    EqualHighs,
    EqualLows,
    Void,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    Trend,
    Compression,
    Sideway,
    VolatileChop,
    Transition,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BosMode {
    Confirmed,
    Quick,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrendAge {
    Fresh,
    Extended,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PriorityDecision {
    TradeLong,
    TradeShort,
    Standby,
    NoTrade,
    WatchRegimeShift,
}

/// The market context of one symbol, as the plugin receives it: flat, without the analysis
/// details of the market routes' `MarketContext` (hence its own schema name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PluginMarketContext)]
pub struct MarketContext {
    pub htf_tf: String,
    pub mtf_tf: String,
    pub macro_phase: MacroPhase,
    pub range_position: RangePosition,
    pub liquidity_profile: LiquidityProfile,
    pub range_high: f64,
    pub range_low: f64,
    pub regime: Regime,
    pub trend_direction: String,
    pub bos_mode: BosMode,
    pub trend_age: TrendAge,
    pub compression_bias: String,
    pub volatile_chop: bool,
    pub atr: f64,
    pub priority_decision: PriorityDecision,
    pub no_trade_reason: String,
    pub timestamp: i64,
}

/// Market data of one symbol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SymbolData {
    pub symbol: String,
    pub last_price: f64,
    pub quote_volume_24h: f64,
    pub candles: Vec<Candles>,
    pub market_context: Option<MarketContext>,
}

/// The market data of one scan: the symbols and, when asked, the reference symbol.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MarketSnapshot {
    pub symbols: Vec<SymbolData>,
    pub reference: Option<SymbolData>,
}

/// A plugin result's direction. Named `StrategyDirection` in the OpenAPI document: it has
/// `skip`, which a trade's `Direction` (buy or sell) does not, and two schemas of one name
/// would make the document say whichever registered first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = StrategyDirection)]
pub enum Direction {
    Buy,
    Sell,
    Skip,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Check {
    pub name: String,
    pub pass: bool,
    pub detail: String,
}

/// One scan result with the spec's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ScanResult {
    pub symbol: String,
    pub bot: String,
    pub direction: Direction,
    pub price: f64,
    pub checklist: Vec<Check>,
    pub passed: u32,
    pub total: u32,
    pub ask_coo: bool,
    pub sl_pct: f64,
    pub tp_pct: f64,
    pub ev: Option<f64>,
    pub confidence: Option<u32>,
    pub tier: Option<String>,
    pub reason: Option<String>,
    pub tp1_pct: Option<f64>,
    pub tp2_pct: Option<f64>,
    pub range_support: Option<f64>,
    pub range_resistance: Option<f64>,
    pub range_midline: Option<f64>,
    pub rsi: Option<f64>,
    pub macd_hist: Option<f64>,
    pub bb_lower: Option<f64>,
    pub bb_upper: Option<f64>,
    pub bb_mid: Option<f64>,
    pub vol_ratio: Option<f64>,
    pub adx: Option<f64>,
    pub stoch_k: Option<f64>,
    pub buy_signals: Option<u32>,
    pub sell_signals: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    PumpWatch,
    PumpSignal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConfidenceLevel {
    Low,
    Medium,
    High,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Metric {
    pub name: String,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ScannerAlert {
    pub symbol: String,
    pub stage: Stage,
    pub confidence: ConfidenceLevel,
    pub price: f64,
    pub metrics: Vec<Metric>,
}

/// A change to a plugin's persisted state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StateUpdate {
    Set { key: String, value: String },
    Remove { key: String },
    Clear,
}

/// The full input of one `scan` call. Its JSON (`GET /api/strategies/{name}/request`) is what
/// `spotbot_sdk::testing::load_request` reads, so authors test natively on the host's input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ScanRequest {
    /// The only clock a plugin has, epoch milliseconds UTC.
    pub now_ms: i64,
    /// The effective config, a JSON object as text.
    pub config: String,
    pub symbols: Vec<SymbolData>,
    pub reference: Option<SymbolData>,
    /// The persisted state, sorted by key; in JSON a list of `{key, value}` like the WIT's
    /// `state-entry`.
    #[serde(with = "state_entries")]
    #[schema(value_type = Vec<StateEntry>)]
    pub state: Vec<(String, String)>,
}

/// One key of a plugin's persisted state, as the JSON of a [`ScanRequest`] spells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StateEntry {
    pub key: String,
    pub value: String,
}

/// `(key, value)` pairs as `[{"key": .., "value": ..}]`: readable, and the shape of the WIT
/// record, so a fixture file reads like the contract.
mod state_entries {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::StateEntry;

    pub fn serialize<S: Serializer>(state: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
        let entries: Vec<StateEntry> = state
            .iter()
            .map(|(key, value)| StateEntry { key: key.clone(), value: value.clone() })
            .collect();
        entries.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
        let entries = Vec::<StateEntry>::deserialize(d)?;
        Ok(entries.into_iter().map(|e| (e.key, e.value)).collect())
    }
}

/// What a successful `scan` returned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ScanResponse {
    pub results: Vec<ScanResult>,
    pub alerts: Vec<ScannerAlert>,
    pub state_updates: Vec<StateUpdate>,
}

/// The error variants a plugin may return from `scan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case", tag = "kind", content = "message")]
pub enum ScanError {
    BadConfig(String),
    MissingData(String),
    Failed(String),
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::BadConfig(m) => write!(f, "bad config: {m}"),
            ScanError::MissingData(m) => write!(f, "missing data: {m}"),
            ScanError::Failed(m) => write!(f, "failed: {m}"),
        }
    }
}

impl ScanResponse {
    /// An upper bound of the bytes this response occupies (strings, lists, fixed fields);
    /// compared with `plugins.max_result_kib`.
    pub fn approx_size(&self) -> usize {
        const RESULT_FIXED: usize = 256;
        const CHECK_FIXED: usize = 16;
        const ALERT_FIXED: usize = 32;
        let results: usize = self
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
        let alerts: usize = self
            .alerts
            .iter()
            .map(|a| {
                ALERT_FIXED
                    + a.symbol.len()
                    + a.metrics.iter().map(|m| 8 + m.name.len()).sum::<usize>()
            })
            .sum();
        let updates: usize = self
            .state_updates
            .iter()
            .map(|u| match u {
                StateUpdate::Set { key, value } => 8 + key.len() + value.len(),
                StateUpdate::Remove { key } => 8 + key.len(),
                StateUpdate::Clear => 8,
            })
            .sum();
        results + alerts + updates
    }
}
