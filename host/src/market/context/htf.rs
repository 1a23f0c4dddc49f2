//! The higher-timeframe read: macro phase from swing structure, the dealing range and where
//! the last close sits in it, and the liquidity profile (equal highs/lows, voids).

use serde_json::json;
use spotbot_sdk::indicators::{atr, last};

use super::structure::{Direction, r, structure, swings};
use super::{ATR_PERIOD, HtfContext};
use spotbot_sdk::{Candles, LiquidityProfile, MacroPhase, RangePosition};

/// The dealing range is the highest high and lowest low of this many bars ...
pub const RANGE_BARS: usize = 50;
/// ... ending this many bars before the last bar, so a close outside it is a break that
/// happened within the last `BREAK_BARS` bars (`just_broken_up` / `just_broken_down`).
pub const BREAK_BARS: usize = 3;
/// A range narrower than this many HTF ATR is not a range: position `unknown`.
pub const MIN_RANGE_WIDTH_ATR: f64 = 2.0;
/// Inside the range: the lower third is `low`, the upper third `high`, the rest `mid`.
pub const LOW_ZONE: f64 = 1.0 / 3.0;
pub const HIGH_ZONE: f64 = 2.0 / 3.0;
/// Two of the last `EQUAL_SWINGS` swing highs (lows) within this fraction of the HTF ATR are
/// equal highs (lows): resting liquidity.
pub const EQUAL_LEVEL_ATR: f64 = 0.1;
pub const EQUAL_SWINGS: usize = 3;
/// A void is a three-bar fair-value gap (bar i+1's low above bar i−1's high, or the mirror)
/// at least this many ATR wide, in the last `VOID_BARS` bars, not refilled since.
pub const VOID_GAP_ATR: f64 = 1.0;
pub const VOID_BARS: usize = 20;

pub fn analyze(c: &Candles) -> HtfContext {
    let (high, low, close) = (&c.high[..], &c.low[..], &c.close[..]);
    let n = close.len();
    let atr_val = last(&atr(high, low, close, ATR_PERIOD)).unwrap_or(0.0);
    let sw = swings(high, low);
    let macro_phase = match structure(high, low, &sw) {
        Some(Direction::Up) => MacroPhase::Bull,
        Some(Direction::Down) => MacroPhase::Bear,
        None => MacroPhase::Range,
    };

    let end = n - BREAK_BARS;
    let start = end.saturating_sub(RANGE_BARS);
    let range_high = high[start..end].iter().copied().fold(f64::MIN, f64::max);
    let range_low = low[start..end].iter().copied().fold(f64::MAX, f64::min);
    let width = range_high - range_low;
    let width_atr = if atr_val > 0.0 { width / atr_val } else { 0.0 };
    let price = close[n - 1];
    let fraction = if width > 0.0 { (price - range_low) / width } else { f64::NAN };
    let range_position = if price > range_high {
        RangePosition::JustBrokenUp
    } else if price < range_low {
        RangePosition::JustBrokenDown
    } else if width_atr < MIN_RANGE_WIDTH_ATR {
        RangePosition::Unknown
    } else if fraction <= LOW_ZONE {
        RangePosition::Low
    } else if fraction >= HIGH_ZONE {
        RangePosition::High
    } else {
        RangePosition::Mid
    };

    let equal = |idx: &[usize], col: &[f64]| -> Option<f64> {
        let recent = &idx[idx.len().saturating_sub(EQUAL_SWINGS)..];
        let tol = EQUAL_LEVEL_ATR * atr_val;
        recent.iter().enumerate().find_map(|(k, &a)| {
            recent[k + 1..].iter().find(|&&b| (col[a] - col[b]).abs() <= tol).map(|_| col[a])
        })
    };
    let equal_highs = equal(&sw.highs, high);
    let equal_lows = equal(&sw.lows, low);
    let void = fair_value_gap(high, low, atr_val);
    let liquidity_profile = match (equal_highs, equal_lows) {
        // Both pools: the one nearer to the price is the one that matters next.
        (Some(h), Some(l)) if (h - price).abs() <= (price - l).abs() => {
            LiquidityProfile::EqualHighs
        }
        (Some(_), Some(_)) => LiquidityProfile::EqualLows,
        (Some(_), None) => LiquidityProfile::EqualHighs,
        (None, Some(_)) => LiquidityProfile::EqualLows,
        (None, None) if void.is_some() => LiquidityProfile::Void,
        (None, None) => LiquidityProfile::Clean,
    };

    let levels = |idx: &[usize], col: &[f64]| -> Vec<f64> {
        idx[idx.len().saturating_sub(2)..].iter().map(|&i| r(col[i])).collect()
    };
    let detail = json!({
        "candles": n,
        "close": r(price),
        "atr": r(atr_val),
        "swing_highs": levels(&sw.highs, high),
        "swing_lows": levels(&sw.lows, low),
        "range_bars": end - start,
        "range_width_atr": r(width_atr),
        "range_fraction": r(fraction),
        "equal_highs_level": equal_highs.map(r),
        "equal_lows_level": equal_lows.map(r),
        "void_gap_atr": void.map(r),
    });
    HtfContext { macro_phase, range_position, liquidity_profile, range_high, range_low, detail }
}

/// The widest unfilled fair-value gap of the last `VOID_BARS` bars, in ATR, if one is at
/// least `VOID_GAP_ATR` wide.
fn fair_value_gap(high: &[f64], low: &[f64], atr_val: f64) -> Option<f64> {
    let n = high.len();
    if atr_val <= 0.0 || n < 3 {
        return None;
    }
    let mut widest: Option<f64> = None;
    for i in n.saturating_sub(VOID_BARS).max(1)..n - 1 {
        let later = i + 2..n;
        // Bullish gap: [high[i-1], low[i+1]] never traded again.
        let up = low[i + 1] - high[i - 1];
        let up_open = up > 0.0 && low[later.clone()].iter().all(|&l| l > high[i - 1]);
        let down = low[i - 1] - high[i + 1];
        let down_open = down > 0.0 && high[later].iter().all(|&h| h < low[i - 1]);
        for (gap, open) in [(up, up_open), (down, down_open)] {
            let g = gap / atr_val;
            if open && g >= VOID_GAP_ATR && widest.is_none_or(|w| g > w) {
                widest = Some(g);
            }
        }
    }
    widest
}
