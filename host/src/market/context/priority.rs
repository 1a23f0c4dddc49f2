//! The seven priority levels, checked in order; the first that applies decides.
//! `docs/market-context.md` lists them with their thresholds.

use super::structure::Direction;
use super::{HtfContext, MtfContext};
use spotbot_sdk::{BosMode, MacroPhase, PriorityDecision, RangePosition, Regime, TrendAge};

/// The `no_trade_reason` of level 2.
pub const REASON_VOLATILE_CHOP: &str = "volatile_chop";
/// The `no_trade_reason` of level 3.
pub const REASON_COMPRESSION: &str = "compression";

/// What the levels decided: the decision, the reason (only for `no_trade`), and which level.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub decision: PriorityDecision,
    pub no_trade_reason: &'static str,
    pub level: u8,
    pub rule: &'static str,
}

fn verdict(level: u8, rule: &'static str, decision: PriorityDecision) -> Verdict {
    let no_trade_reason = if decision == PriorityDecision::NoTrade { rule } else { "" };
    Verdict { decision, no_trade_reason, level, rule }
}

/// The HTF's directional lean: a bull phase (unless the range just broke down), a bear phase
/// (unless it just broke up), or a range that just broke out.
pub fn htf_direction(htf: &HtfContext) -> Option<Direction> {
    use RangePosition::{JustBrokenDown, JustBrokenUp};
    match (htf.macro_phase, htf.range_position) {
        (MacroPhase::Bull, p) if p != JustBrokenDown => Some(Direction::Up),
        (MacroPhase::Bear, p) if p != JustBrokenUp => Some(Direction::Down),
        (MacroPhase::Range, JustBrokenUp) => Some(Direction::Up),
        (MacroPhase::Range, JustBrokenDown) => Some(Direction::Down),
        _ => None,
    }
}

/// Levels 2..=7 (level 1, insufficient data, is decided before anything is computed).
pub fn decide(htf: &HtfContext, mtf: &MtfContext, mtf_direction: Option<Direction>) -> Verdict {
    use PriorityDecision::*;
    if mtf.regime == Regime::VolatileChop {
        return verdict(2, REASON_VOLATILE_CHOP, NoTrade);
    }
    if mtf.regime == Regime::Compression {
        return verdict(3, REASON_COMPRESSION, NoTrade);
    }
    let htf_dir = htf_direction(htf);
    if let (Some(h), Some(m)) = (htf_dir, mtf_direction)
        && h != m
    {
        return verdict(4, "htf_mtf_conflict", WatchRegimeShift);
    }
    if htf.macro_phase == MacroPhase::Range && htf.range_position == RangePosition::Mid {
        return verdict(5, "htf_range_middle", Standby);
    }
    if let Some(m) = mtf_direction
        && mtf.regime == Regime::Trend
        && mtf.bos_mode == BosMode::Confirmed
        && mtf.trend_age == TrendAge::Fresh
    {
        // The HTF agrees: same lean, or a range whose edge the trend leaves from.
        let edge = match m {
            Direction::Up => RangePosition::Low,
            Direction::Down => RangePosition::High,
        };
        let at_edge = htf.macro_phase == MacroPhase::Range && htf.range_position == edge;
        if htf_dir == Some(m) || at_edge {
            let decision = if m == Direction::Up { TradeLong } else { TradeShort };
            return verdict(6, "aligned_fresh_trend", decision);
        }
    }
    verdict(7, "unclear", Standby)
}
