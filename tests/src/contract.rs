//! The plugin contract in tests. The host and the SDK share the contract's types
//! (`spotbot::plugins::model` re-exports `spotbot_sdk`'s), so a native `scan` and the Wasm
//! component take the very same request; what is left here:
//!
//! - [`ResponseView`]: a canonical projection of a response, equal for two responses exactly
//!   when every field is equal, floats compared bit for bit ([`Bits`]), with a readable diff.
//!   Full destructuring: a field added to `wit/strategy.wit` breaks this file's build instead
//!   of being left out of the comparison.
//! - [`built_plugin`]: the `.wasm` files `cargo xtask plugins` puts into `plugins/`.

use std::fmt;
use std::path::{Path, PathBuf};

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

/// The view of a response.
pub fn view(r: &sdk::ScanResponse) -> ResponseView {
    let sdk::ScanResponse { results, alerts, state_updates } = r;
    ResponseView {
        results: results.iter().map(view_result).collect(),
        alerts: alerts.iter().map(view_alert).collect(),
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

/// The view of a scan error.
pub fn view_error(e: &sdk::ScanError) -> ErrorView {
    match e {
        sdk::ScanError::BadConfig(m) => ("bad_config", m.clone()),
        sdk::ScanError::MissingData(m) => ("missing_data", m.clone()),
        sdk::ScanError::Failed(m) => ("failed", m.clone()),
    }
}

fn view_result(r: &sdk::ScanResult) -> ResultView {
    let sdk::ScanResult {
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
            sdk::Direction::Buy => "buy",
            sdk::Direction::Sell => "sell",
            sdk::Direction::Skip => "skip",
        },
        price: Bits(*price),
        checklist: checklist.iter().map(|c| (c.name.clone(), c.pass, c.detail.clone())).collect(),
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

fn view_alert(a: &sdk::ScannerAlert) -> AlertView {
    let sdk::ScannerAlert { symbol, stage, confidence, price, metrics } = a;
    AlertView {
        symbol: symbol.clone(),
        stage: match stage {
            sdk::Stage::PumpWatch => "pump_watch",
            sdk::Stage::PumpSignal => "pump_signal",
        },
        confidence: match confidence {
            sdk::ConfidenceLevel::Low => "low",
            sdk::ConfidenceLevel::Medium => "medium",
            sdk::ConfidenceLevel::High => "high",
        },
        price: Bits(*price),
        metrics: metrics.iter().map(|m| (m.name.clone(), Bits(m.value))).collect(),
    }
}
