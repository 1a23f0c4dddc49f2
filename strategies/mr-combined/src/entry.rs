//! Gate 4: the entry on the entry timeframe (1h by default). The edge was just tested and
//! rejected (a reversal candle), the price is in the entry zone a little inside the range, and
//! volume confirms the rejection.

use crate::data::Bars;
use crate::line::{Line, Side};
use crate::range::{Range, TOUCH_ATR};

/// The edge must have been tested by one of the last this many closed candles (the reversal
/// candle and the two before it: a dip often takes a few candles to turn).
pub const REVERSAL_BARS: usize = 3;
/// The reversal candle must close in the half of its own range away from the edge (for a buy,
/// at or above the middle of its high–low).
pub const REVERSAL_CLOSE_FRACTION: f64 = 0.5;
/// Volume ratio: the reversal candle's volume over the mean of this many candles before it.
pub const VOLUME_AVG_BARS: usize = 20;
/// RSI period on the entry timeframe (shown, and a tier quality check).
pub const RSI_PERIOD: usize = 14;

/// Distance of `price` from the edge `side` leans on, in ATR, positive inside the range.
pub fn proximity_atr(price: f64, range: &Range, side: Side) -> f64 {
    side.sign() * (price - range.near_edge(side)) / range.atr
}

/// The last closed candle is a reversal away from the edge:
/// - it closed in the trade's direction (close > open for a buy) and in the half of its range
///   away from the edge ([`REVERSAL_CLOSE_FRACTION`]);
/// - the edge was tested: the extreme of the last [`REVERSAL_BARS`] candles came within
///   [`TOUCH_ATR`] ATR of it (or beyond it);
/// - and held: that extreme did not reach the stop level (`stop_atr` ATR beyond the edge),
///   which would be a breakout, not a test.
pub fn reversal_line(bars: &Bars, range: &Range, side: Side, stop_atr: f64) -> Line {
    let n = bars.len();
    if n < REVERSAL_BARS {
        return Line::new("entry_reversal", false, "n/a: too few candles");
    }
    let (open, high, low, close) =
        (bars.open[n - 1], bars.high[n - 1], bars.low[n - 1], bars.close[n - 1]);
    let span = high - low;
    let recent = n - REVERSAL_BARS..n;
    let (extreme, away, closed_with) = match side {
        Side::Buy => (
            bars.low[recent].iter().copied().fold(f64::INFINITY, f64::min),
            if span > 0.0 { (close - low) / span } else { 0.0 },
            close > open,
        ),
        Side::Sell => (
            bars.high[recent].iter().copied().fold(f64::NEG_INFINITY, f64::max),
            if span > 0.0 { (high - close) / span } else { 0.0 },
            close < open,
        ),
    };
    let edge = range.near_edge(side);
    // Distance of the extreme from the edge in ATR, positive inside the range.
    let test_atr = side.sign() * (extreme - edge) / range.atr;
    let tested = test_atr <= TOUCH_ATR;
    let held = test_atr > -stop_atr;
    let turned = closed_with && away >= REVERSAL_CLOSE_FRACTION;
    let pass = tested && held && turned;
    let verdict = if !tested {
        "edge not tested"
    } else if !held {
        "edge broken through the stop level"
    } else if !closed_with {
        "candle did not close away from the edge"
    } else if !turned {
        "close too near the candle's extreme"
    } else {
        "reversal"
    };
    Line::new(
        "entry_reversal",
        pass,
        format!(
            "{verdict}: {} {} extreme {extreme:.6} at {test_atr:+.2} ATR from {} (test <= {TOUCH_ATR}, hold > -{stop_atr}); last candle {open:.6}->{close:.6}, close at {:.0}% away from its extreme (>= {:.0}%)",
            bars.timeframe,
            side.as_str(),
            side.edge(),
            away * 100.0,
            REVERSAL_CLOSE_FRACTION * 100.0,
        ),
    )
}

/// The price is in the entry zone: between `min` and `max` ATR inside the range from the edge.
pub fn proximity_line(price: f64, range: &Range, side: Side, min: f64, max: f64) -> Line {
    let d = proximity_atr(price, range, side);
    let pass = d >= min && d <= max;
    Line::new(
        "entry_proximity",
        pass,
        format!(
            "price {price:.6} is {d:.2} ATR from {} {:.6} (zone {min}-{max} ATR)",
            side.edge(),
            range.near_edge(side)
        ),
    )
}

/// Volume confirms: the reversal candle's volume ratio is at least `min`.
pub fn volume_line(tf: &str, ratio: Option<f64>, min: f64) -> Line {
    match ratio {
        Some(r) => Line::new(
            "entry_volume",
            r >= min,
            format!(
                "{tf} volume {r:.2}x the mean of the {VOLUME_AVG_BARS} before {} {min}",
                if r >= min { ">=" } else { "<" }
            ),
        ),
        None => Line::new("entry_volume", false, format!("{tf} volume ratio n/a")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range() -> Range {
        Range {
            support: 100.0,
            resistance: 110.0,
            atr: 1.0,
            support_touches: 2,
            resistance_touches: 2,
            median_adx: Some(15.0),
            bars: 120,
        }
    }

    fn bars(candles: &[(f64, f64, f64, f64)]) -> Bars {
        Bars {
            timeframe: "1h".into(),
            open: candles.iter().map(|c| c.0).collect(),
            high: candles.iter().map(|c| c.1).collect(),
            low: candles.iter().map(|c| c.2).collect(),
            close: candles.iter().map(|c| c.3).collect(),
            volume: vec![1.0; candles.len()],
        }
    }

    #[test]
    fn reversal_at_support_and_resistance() {
        let r = range();
        // Dip to 100.1, then a candle from 100.2 up to 100.45 (close in the upper part).
        let b = bars(&[
            (101.0, 101.1, 100.4, 100.5),
            (100.5, 100.6, 100.1, 100.2),
            (100.2, 100.5, 100.15, 100.45),
        ]);
        let l = reversal_line(&b, &r, Side::Buy, 1.5);
        assert!(l.pass, "{}", l.detail);
        // Close below open: no reversal.
        let b2 = bars(&[
            (101.0, 101.1, 100.4, 100.5),
            (100.5, 100.6, 100.1, 100.2),
            (100.45, 100.5, 100.15, 100.2),
        ]);
        assert!(!reversal_line(&b2, &r, Side::Buy, 1.5).pass);
        // Never came near support.
        let b3 = bars(&[
            (103.0, 103.1, 102.4, 102.5),
            (102.5, 102.6, 102.1, 102.2),
            (102.2, 102.5, 102.15, 102.45),
        ]);
        assert!(reversal_line(&b3, &r, Side::Buy, 1.5).detail.starts_with("edge not tested"));
        // Went through the stop level (100 - 1.5).
        let b4 = bars(&[
            (101.0, 101.1, 98.0, 100.5),
            (100.5, 100.6, 100.1, 100.2),
            (100.2, 100.5, 100.15, 100.45),
        ]);
        assert!(!reversal_line(&b4, &r, Side::Buy, 1.5).pass);
        // Mirror at resistance.
        let s = bars(&[
            (109.0, 109.6, 108.9, 109.5),
            (109.5, 109.9, 109.4, 109.8),
            (109.8, 109.85, 109.5, 109.55),
        ]);
        assert!(reversal_line(&s, &r, Side::Sell, 1.5).pass);
        assert!(!reversal_line(&bars(&[(1.0, 1.0, 1.0, 1.0)]), &r, Side::Buy, 1.5).pass);
    }

    #[test]
    fn proximity_and_volume() {
        let r = range();
        assert!((proximity_atr(100.4, &r, Side::Buy) - 0.4).abs() < 1e-12);
        assert!((proximity_atr(109.7, &r, Side::Sell) - 0.3).abs() < 1e-12);
        assert!(proximity_line(100.4, &r, Side::Buy, 0.3, 0.5).pass);
        assert!(!proximity_line(100.6, &r, Side::Buy, 0.3, 0.5).pass);
        assert!(!proximity_line(100.1, &r, Side::Buy, 0.3, 0.5).pass);
        assert!(!proximity_line(99.6, &r, Side::Buy, 0.3, 0.5).pass, "below support");
        assert!(volume_line("1h", Some(1.2), 1.2).pass);
        assert!(!volume_line("1h", Some(1.19), 1.2).pass);
        assert!(!volume_line("1h", None, 1.2).pass);
    }
}
