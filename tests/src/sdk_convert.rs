//! The two type families of the plugin contract side by side: the SDK's (`spotbot_sdk`, the
//! wit-bindgen guest types a strategy's native `scan` takes) and the host's
//! (`spotbot::plugins::model`, what `StandalonePlugin::scan` takes). They hold the same records
//! but spell enums differently in serde (`TradeLong` vs `trade_long`), so everything here is
//! written field by field, with exhaustive matches and full destructuring: a field or case
//! added to `wit/strategy.wit` breaks this file's build instead of being silently dropped.
//!
//! - SDK → host: [`host_request`] (and its parts) turns a native test or bench request into the
//!   request the Wasm component gets.
//! - Host → SDK: [`sdk_market_context`] (a context computed by the host's `analyze`, for the
//!   native side) and [`sdk_state_update`] (to carry the Wasm side's state like the native one).
//! - [`ResponseView`]: a canonical projection of a response, equal on both sides exactly when
//!   every field is equal, floats compared bit for bit ([`Bits`]).
//! - [`built_plugin`]: the `.wasm` files `cargo xtask plugins` puts into `plugins/`.

use std::fmt;
use std::path::{Path, PathBuf};

use spotbot::plugins::model as host;
use spotbot_sdk as sdk;

// ---------------------------------------------------------------------------------------------
// The built components

/// The workspace root (the parent of this crate's folder).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// The bytes of `plugins/<file>` in the workspace root (`mr_combined.wasm`,
/// `pump_momentum.wasm`). Panics asking for `cargo xtask plugins` when the file is missing.
pub fn built_plugin(file: &str) -> Vec<u8> {
    let path = workspace_root().join("plugins").join(file);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!("{} is missing ({e}): run `cargo xtask plugins` first", path.display())
    })
}

// ---------------------------------------------------------------------------------------------
// SDK → host

/// The host's request for an SDK request.
pub fn host_request(r: &sdk::ScanRequest) -> host::ScanRequest {
    let sdk::ScanRequest { now_ms, config, symbols, reference, state } = r;
    host::ScanRequest {
        now_ms: *now_ms,
        config: config.clone(),
        symbols: symbols.iter().map(host_symbol_data).collect(),
        reference: reference.as_ref().map(host_symbol_data),
        state: state.iter().map(|e| (e.key.clone(), e.value.clone())).collect(),
    }
}

pub fn host_symbol_data(d: &sdk::SymbolData) -> host::SymbolData {
    let sdk::SymbolData { symbol, last_price, quote_volume_24h, candles, market_context } = d;
    host::SymbolData {
        symbol: symbol.clone(),
        last_price: *last_price,
        quote_volume_24h: *quote_volume_24h,
        candles: candles.iter().map(host_candles).collect(),
        market_context: market_context.as_ref().map(host_market_context),
    }
}

pub fn host_candles(c: &sdk::Candles) -> host::Candles {
    let sdk::Candles { timeframe, open_time, open, high, low, close, volume } = c;
    host::Candles {
        timeframe: timeframe.clone(),
        open_time: open_time.clone(),
        open: open.clone(),
        high: high.clone(),
        low: low.clone(),
        close: close.clone(),
        volume: volume.clone(),
    }
}

/// The market-context conversion in either direction, written once: both records have the
/// same fields and cases, only the module differs.
macro_rules! market_context {
    ($(#[$doc:meta])* $name:ident: $from:ident -> $to:ident) => {
        $(#[$doc])*
        pub fn $name(c: &$from::MarketContext) -> $to::MarketContext {
            let $from::MarketContext {
                htf_tf,
                mtf_tf,
                macro_phase,
                range_position,
                liquidity_profile,
                range_high,
                range_low,
                regime,
                trend_direction,
                bos_mode,
                trend_age,
                compression_bias,
                volatile_chop,
                atr,
                priority_decision,
                no_trade_reason,
                timestamp,
            } = c;
            $to::MarketContext {
                htf_tf: htf_tf.clone(),
                mtf_tf: mtf_tf.clone(),
                macro_phase: match macro_phase {
                    $from::MacroPhase::Bull => $to::MacroPhase::Bull,
                    $from::MacroPhase::Bear => $to::MacroPhase::Bear,
                    $from::MacroPhase::Range => $to::MacroPhase::Range,
                },
                range_position: match range_position {
                    $from::RangePosition::Low => $to::RangePosition::Low,
                    $from::RangePosition::Mid => $to::RangePosition::Mid,
                    $from::RangePosition::High => $to::RangePosition::High,
                    $from::RangePosition::JustBrokenUp => $to::RangePosition::JustBrokenUp,
                    $from::RangePosition::JustBrokenDown => $to::RangePosition::JustBrokenDown,
                    $from::RangePosition::Unknown => $to::RangePosition::Unknown,
                },
                liquidity_profile: match liquidity_profile {
                    $from::LiquidityProfile::Clean => $to::LiquidityProfile::Clean,
                    $from::LiquidityProfile::EqualHighs => $to::LiquidityProfile::EqualHighs,
                    $from::LiquidityProfile::EqualLows => $to::LiquidityProfile::EqualLows,
                    $from::LiquidityProfile::Void => $to::LiquidityProfile::Void,
                },
                range_high: *range_high,
                range_low: *range_low,
                regime: match regime {
                    $from::Regime::Trend => $to::Regime::Trend,
                    $from::Regime::Compression => $to::Regime::Compression,
                    $from::Regime::Sideway => $to::Regime::Sideway,
                    $from::Regime::VolatileChop => $to::Regime::VolatileChop,
                    $from::Regime::Transition => $to::Regime::Transition,
                    $from::Regime::Unknown => $to::Regime::Unknown,
                },
                trend_direction: trend_direction.clone(),
                bos_mode: match bos_mode {
                    $from::BosMode::Confirmed => $to::BosMode::Confirmed,
                    $from::BosMode::Quick => $to::BosMode::Quick,
                    $from::BosMode::None => $to::BosMode::None,
                },
                trend_age: match trend_age {
                    $from::TrendAge::Fresh => $to::TrendAge::Fresh,
                    $from::TrendAge::Extended => $to::TrendAge::Extended,
                    $from::TrendAge::None => $to::TrendAge::None,
                },
                compression_bias: compression_bias.clone(),
                volatile_chop: *volatile_chop,
                atr: *atr,
                priority_decision: match priority_decision {
                    $from::PriorityDecision::TradeLong => $to::PriorityDecision::TradeLong,
                    $from::PriorityDecision::TradeShort => $to::PriorityDecision::TradeShort,
                    $from::PriorityDecision::Standby => $to::PriorityDecision::Standby,
                    $from::PriorityDecision::NoTrade => $to::PriorityDecision::NoTrade,
                    $from::PriorityDecision::WatchRegimeShift => {
                        $to::PriorityDecision::WatchRegimeShift
                    }
                },
                no_trade_reason: no_trade_reason.clone(),
                timestamp: *timestamp,
            }
        }
    };
}

market_context!(
    /// The host's record for an SDK market context (what the Wasm side gets).
    host_market_context: sdk -> host
);

// ---------------------------------------------------------------------------------------------
// Host → SDK

market_context!(
    /// The SDK's record for a host market context (e.g. one from `spotbot::market::context`).
    sdk_market_context: host -> sdk
);

/// The SDK's state update for a host one (to apply the Wasm side's updates with the same
/// function as the native side's, e.g. `pump_momentum::apply_state`).
pub fn sdk_state_update(u: &host::StateUpdate) -> sdk::StateUpdate {
    match u {
        host::StateUpdate::Set { key, value } => {
            sdk::StateUpdate::Set(sdk::StateEntry { key: key.clone(), value: value.clone() })
        }
        host::StateUpdate::Remove { key } => sdk::StateUpdate::Remove(key.clone()),
        host::StateUpdate::Clear => sdk::StateUpdate::Clear,
    }
}

// ---------------------------------------------------------------------------------------------
// Canonical projection of responses

/// An `f64` compared bit for bit (`-0.0 != 0.0`, a NaN equals only the same NaN), shown as
/// its value (and its bits when it is a NaN).
#[derive(Clone, Copy)]
pub struct Bits(pub f64);

impl PartialEq for Bits {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Bits {}

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_nan() {
            write!(f, "NaN({:#018x})", self.0.to_bits())
        } else {
            write!(f, "{:?}", self.0)
        }
    }
}

fn bits(v: Option<f64>) -> Option<Bits> {
    v.map(Bits)
}

/// One checklist line: (name, pass, detail).
pub type CheckView = (String, bool, String);

/// Every field of a scan result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultView {
    pub symbol: String,
    pub bot: String,
    /// `buy`, `sell` or `skip`.
    pub direction: &'static str,
    pub price: Bits,
    pub checklist: Vec<CheckView>,
    pub passed: u32,
    pub total: u32,
    pub ask_coo: bool,
    pub sl_pct: Bits,
    pub tp_pct: Bits,
    pub ev: Option<Bits>,
    pub confidence: Option<u32>,
    pub tier: Option<String>,
    pub reason: Option<String>,
    pub tp1_pct: Option<Bits>,
    pub tp2_pct: Option<Bits>,
    pub range_support: Option<Bits>,
    pub range_resistance: Option<Bits>,
    pub range_midline: Option<Bits>,
    pub rsi: Option<Bits>,
    pub macd_hist: Option<Bits>,
    pub bb_lower: Option<Bits>,
    pub bb_upper: Option<Bits>,
    pub bb_mid: Option<Bits>,
    pub vol_ratio: Option<Bits>,
    pub adx: Option<Bits>,
    pub stoch_k: Option<Bits>,
    pub buy_signals: Option<u32>,
    pub sell_signals: Option<u32>,
}

/// Every field of a scanner alert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertView {
    pub symbol: String,
    /// `pump_watch` or `pump_signal`.
    pub stage: &'static str,
    /// `low`, `medium` or `high`.
    pub confidence: &'static str,
    pub price: Bits,
    /// (name, value) in the plugin's order.
    pub metrics: Vec<(String, Bits)>,
}

/// A state update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateView {
    Set(String, String),
    Remove(String),
    Clear,
}

/// A whole response, in the plugin's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseView {
    pub results: Vec<ResultView>,
    pub alerts: Vec<AlertView>,
    pub state_updates: Vec<UpdateView>,
}

/// A scan error: (`bad_config` | `missing_data` | `failed`, message).
pub type ErrorView = (&'static str, String);

pub fn view_sdk(r: &sdk::ScanResponse) -> ResponseView {
    let sdk::ScanResponse { results, alerts, state_updates } = r;
    ResponseView {
        results: results.iter().map(view_sdk_result).collect(),
        alerts: alerts.iter().map(view_sdk_alert).collect(),
        state_updates: state_updates
            .iter()
            .map(|u| match u {
                sdk::StateUpdate::Set(e) => UpdateView::Set(e.key.clone(), e.value.clone()),
                sdk::StateUpdate::Remove(k) => UpdateView::Remove(k.clone()),
                sdk::StateUpdate::Clear => UpdateView::Clear,
            })
            .collect(),
    }
}

pub fn view_host(r: &host::ScanResponse) -> ResponseView {
    let host::ScanResponse { results, alerts, state_updates } = r;
    ResponseView {
        results: results.iter().map(view_host_result).collect(),
        alerts: alerts.iter().map(view_host_alert).collect(),
        state_updates: state_updates
            .iter()
            .map(|u| match u {
                host::StateUpdate::Set { key, value } => {
                    UpdateView::Set(key.clone(), value.clone())
                }
                host::StateUpdate::Remove { key } => UpdateView::Remove(key.clone()),
                host::StateUpdate::Clear => UpdateView::Clear,
            })
            .collect(),
    }
}

/// The projections of an error, a result and an alert, written once for both type families:
/// their records have the same field and case names, only the module differs.
macro_rules! views {
    ($m:ident, $error:ident, $result:ident, $alert:ident) => {
        pub fn $error(e: &$m::ScanError) -> ErrorView {
            match e {
                $m::ScanError::BadConfig(m) => ("bad_config", m.clone()),
                $m::ScanError::MissingData(m) => ("missing_data", m.clone()),
                $m::ScanError::Failed(m) => ("failed", m.clone()),
            }
        }

        fn $result(r: &$m::ScanResult) -> ResultView {
            let $m::ScanResult {
                symbol,
                bot,
                direction,
                price,
                checklist,
                passed,
                total,
                ask_coo,
                sl_pct,
                tp_pct,
                ev,
                confidence,
                tier,
                reason,
                tp1_pct,
                tp2_pct,
                range_support,
                range_resistance,
                range_midline,
                rsi,
                macd_hist,
                bb_lower,
                bb_upper,
                bb_mid,
                vol_ratio,
                adx,
                stoch_k,
                buy_signals,
                sell_signals,
            } = r;
            ResultView {
                symbol: symbol.clone(),
                bot: bot.clone(),
                direction: match direction {
                    $m::Direction::Buy => "buy",
                    $m::Direction::Sell => "sell",
                    $m::Direction::Skip => "skip",
                },
                price: Bits(*price),
                checklist: checklist
                    .iter()
                    .map(|c| (c.name.clone(), c.pass, c.detail.clone()))
                    .collect(),
                passed: *passed,
                total: *total,
                ask_coo: *ask_coo,
                sl_pct: Bits(*sl_pct),
                tp_pct: Bits(*tp_pct),
                ev: bits(*ev),
                confidence: *confidence,
                tier: tier.clone(),
                reason: reason.clone(),
                tp1_pct: bits(*tp1_pct),
                tp2_pct: bits(*tp2_pct),
                range_support: bits(*range_support),
                range_resistance: bits(*range_resistance),
                range_midline: bits(*range_midline),
                rsi: bits(*rsi),
                macd_hist: bits(*macd_hist),
                bb_lower: bits(*bb_lower),
                bb_upper: bits(*bb_upper),
                bb_mid: bits(*bb_mid),
                vol_ratio: bits(*vol_ratio),
                adx: bits(*adx),
                stoch_k: bits(*stoch_k),
                buy_signals: *buy_signals,
                sell_signals: *sell_signals,
            }
        }

        fn $alert(a: &$m::ScannerAlert) -> AlertView {
            let $m::ScannerAlert { symbol, stage, confidence, price, metrics } = a;
            AlertView {
                symbol: symbol.clone(),
                stage: match stage {
                    $m::Stage::PumpWatch => "pump_watch",
                    $m::Stage::PumpSignal => "pump_signal",
                },
                confidence: match confidence {
                    $m::ConfidenceLevel::Low => "low",
                    $m::ConfidenceLevel::Medium => "medium",
                    $m::ConfidenceLevel::High => "high",
                },
                price: Bits(*price),
                metrics: metrics.iter().map(|m| (m.name.clone(), Bits(m.value))).collect(),
            }
        }
    };
}

views!(sdk, view_sdk_error, view_sdk_result, view_sdk_alert);
views!(host, view_host_error, view_host_result, view_host_alert);
