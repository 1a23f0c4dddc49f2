//! Market context: the multi-timeframe analysis of one symbol (framework v3.2, seven priority
//! levels) from HTF and MTF candles to one `priority_decision`.
//!
//! Owns: the rules, as a pure function ([`analyze`]) of candles and "now". Must never: fetch
//! candles, cache, store or serve (the cache, the snapshots and the routes build on this).
//! The rules and their thresholds are written down in `docs/market-context.md`.

mod htf;
mod mtf;
mod priority;
mod structure;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use serde_json::json;
use spotbot_sdk::indicators::{atr, last};
use utoipa::ToSchema;

use spotbot_sdk::{
    self as model, BosMode, Candles, LiquidityProfile, MacroPhase, PriorityDecision, RangePosition,
    Regime, TrendAge,
};

pub use priority::{REASON_COMPRESSION, REASON_VOLATILE_CHOP};
pub use structure::MarketDirection;

/// Wilder ATR period on both timeframes.
pub const ATR_PERIOD: usize = 14;
/// Wilder ADX/DI period on the MTF.
pub const ADX_PERIOD: usize = 14;
/// Level 1: fewer candles than this on either timeframe is not enough to analyse (ADX(14)
/// needs 28, the HTF range 53, and the medians need history beyond the lookbacks).
pub const MIN_CANDLES: usize = 60;
/// The MTF used when none is asked for.
pub const DEFAULT_MTF: &str = "4h";

/// The HTF the spec pairs with an MTF (`None` for a timeframe outside the table).
pub fn htf_for(mtf: &str) -> Option<&'static str> {
    Some(match mtf {
        "15m" => "1h",
        "30m" | "1h" => "4h",
        "4h" => "1d",
        "1d" => "1d",
        "1w" => "1w",
        _ => return None,
    })
}

/// The market context of one symbol, as the API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MarketContext {
    pub symbol: String,
    /// One of 15m, 30m, 1h, 4h, 1d, 1w.
    pub htf_tf: String,
    pub mtf_tf: String,
    pub htf: HtfContext,
    pub mtf: MtfContext,
    pub priority_decision: PriorityDecision,
    /// Why `no_trade` (`volatile_chop`, `compression`); empty for every other decision.
    pub no_trade_reason: String,
    /// Epoch seconds of the analysis.
    pub timestamp: i64,
}

/// The higher-timeframe layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HtfContext {
    pub macro_phase: MacroPhase,
    pub range_position: RangePosition,
    pub liquidity_profile: LiquidityProfile,
    pub range_high: f64,
    pub range_low: f64,
    /// The numbers the rules used.
    #[schema(value_type = Object)]
    pub detail: serde_json::Value,
}

/// The medium-timeframe layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MtfContext {
    pub regime: Regime,
    /// The direction of the latest break of structure.
    pub trend_direction: MarketDirection,
    pub bos_mode: BosMode,
    pub trend_age: TrendAge,
    /// None unless the regime is compression.
    pub compression_bias: MarketDirection,
    pub volatile_chop: bool,
    pub atr_val: f64,
    /// The numbers the rules used, and the priority level that decided.
    #[schema(value_type = Object)]
    pub detail: serde_json::Value,
}

/// Analyses `symbol` from its HTF and MTF candles (oldest first; pass a fixed count per
/// timeframe, e.g. 200, since Wilder indicators depend on the history length).
pub fn analyze(
    symbol: &str,
    htf_tf: &str,
    mtf_tf: &str,
    htf: &Candles,
    mtf: &Candles,
    now_s: i64,
) -> MarketContext {
    let context = |htf: HtfContext, mtf: MtfContext, v: priority::Verdict| {
        let mut mtf = mtf;
        if let Some(d) = mtf.detail.as_object_mut() {
            d.insert("priority_level".into(), json!(v.level));
            d.insert("priority_rule".into(), json!(v.rule));
        }
        MarketContext {
            symbol: symbol.to_string(),
            htf_tf: htf_tf.to_string(),
            mtf_tf: mtf_tf.to_string(),
            htf,
            mtf,
            priority_decision: v.decision,
            no_trade_reason: v.no_trade_reason.to_string(),
            timestamp: now_s,
        }
    };
    // Level 1: insufficient data, decided before any indicator runs.
    if !usable(htf) || !usable(mtf) {
        let detail = |c: &Candles| json!({ "candles": c.len(), "min_candles": MIN_CANDLES });
        let htf_ctx = HtfContext {
            macro_phase: MacroPhase::Range,
            range_position: RangePosition::Unknown,
            liquidity_profile: LiquidityProfile::Clean,
            range_high: 0.0,
            range_low: 0.0,
            detail: detail(htf),
        };
        let mtf_ctx = MtfContext {
            regime: Regime::Unknown,
            trend_direction: MarketDirection::None,
            bos_mode: BosMode::None,
            trend_age: TrendAge::None,
            compression_bias: MarketDirection::None,
            volatile_chop: false,
            atr_val: 0.0,
            detail: detail(mtf),
        };
        let v = priority::Verdict {
            decision: PriorityDecision::Standby,
            no_trade_reason: "",
            level: 1,
            rule: "insufficient_data",
        };
        return context(htf_ctx, mtf_ctx, v);
    }
    let htf_ctx = htf::analyze(htf);
    let mtf_read = mtf::analyze(mtf);
    let v = priority::decide(&htf_ctx, &mtf_read.context, mtf_read.direction);
    context(htf_ctx, mtf_read.context, v)
}

/// Enough candles, equal column lengths, every price finite and positive, and a positive ATR
/// (the rules measure distances in ATR).
fn usable(c: &Candles) -> bool {
    let n = c.len();
    n >= MIN_CANDLES
        && c.high.len() == n
        && c.low.len() == n
        && [&c.high, &c.low, &c.close]
            .iter()
            .all(|col| col.iter().all(|v| v.is_finite() && *v > 0.0))
        && last(&atr(&c.high, &c.low, &c.close, ATR_PERIOD)).is_some_and(|a| a > 0.0)
}

impl From<&MarketContext> for model::MarketContext {
    /// The flat record plugins receive (`wit/strategy.wit`): the same values without `detail`.
    fn from(c: &MarketContext) -> Self {
        model::MarketContext {
            htf_tf: c.htf_tf.clone(),
            mtf_tf: c.mtf_tf.clone(),
            macro_phase: c.htf.macro_phase,
            range_position: c.htf.range_position,
            liquidity_profile: c.htf.liquidity_profile,
            range_high: c.htf.range_high,
            range_low: c.htf.range_low,
            regime: c.mtf.regime,
            trend_direction: c.mtf.trend_direction.as_str().to_string(),
            bos_mode: c.mtf.bos_mode,
            trend_age: c.mtf.trend_age,
            compression_bias: c.mtf.compression_bias.as_str().to_string(),
            volatile_chop: c.mtf.volatile_chop,
            atr: c.mtf.atr_val,
            priority_decision: c.priority_decision,
            no_trade_reason: c.no_trade_reason.clone(),
            timestamp: c.timestamp,
        }
    }
}
