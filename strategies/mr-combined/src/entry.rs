//! Gate 4: the entry on the entry timeframe (1h by default). The edge was just tested and
//! rejected (a reversal candle), the price is in the entry zone a little inside the range, and
//! volume confirms the rejection.

use crate::data::Bars;
use crate::line::{Line, Side};
use crate::range::{Range, TOUCH_ATR};

/// The edge must have been tested by one of the last this many closed candles: the candles
/// of one regime bar (4 × 1h = 4h), since a dip often takes a few candles to turn and the
/// range lives on the regime timeframe.
pub const REVERSAL_BARS: usize = 4;
/// The reversal candle must close in the half of its own range away from the edge (for a buy,
/// at or above the middle of its high–low).
pub const REVERSAL_CLOSE_FRACTION: f64 = 0.5;
/// Volume ratio: a candle's volume over the mean of this many candles before it.
pub const VOLUME_AVG_BARS: usize = 20;
/// RSI period on the entry timeframe (shown, and a tier quality check).
pub const RSI_PERIOD: usize = 14;

/// The volume of the turn: the highest volume ratio (SDK `volume_ratio`, over the
/// [`VOLUME_AVG_BARS`] candles before each) among the last [`REVERSAL_BARS`] candles, the
/// test and the reversal. Buyers often step in on the candle that wicks into support, not on
/// the quieter candle that closes the turn; either shows participation in the rejection.
pub fn turn_volume_ratio(volume: &[f64]) -> Option<f64> {
    let ratios = spotbot_sdk::indicators::volume_ratio(volume, VOLUME_AVG_BARS);
    let from = ratios.len().saturating_sub(REVERSAL_BARS);
    ratios[from..].iter().copied().filter(|r| r.is_finite()).reduce(f64::max)
}

/// Distance of `price` from the edge `side` leans on, in ATR, positive inside the range.
pub fn proximity_atr(price: f64, range: &Range, side: Side) -> f64 {
    side.sign() * (price - range.near_edge(side)) / range.atr
}

/// The edge was tested and rejected, and the rejection still stands:
/// - tested: the extreme of the last [`REVERSAL_BARS`] candles came within [`TOUCH_ATR`] ATR
///   of the edge (or beyond it);
/// - held: that extreme did not reach the stop level (`stop_atr` ATR beyond the edge), which
///   would be a breakout, not a test;
/// - rejected: a candle from the extreme's on closed in the trade's direction (close > open
///   for a buy) and in the half of its range away from the edge
///   ([`REVERSAL_CLOSE_FRACTION`]) — a hammer at the test counts, the turn need not be the
///   very last candle;
/// - still standing: the last close is not back below that candle's middle (for a buy).
pub fn reversal_line(bars: &Bars, range: &Range, side: Side, stop_atr: f64) -> Line {
    let n = bars.len();
    if n < REVERSAL_BARS {
        return Line::new("entry_reversal", false, "n/a: too few candles");
    }
    let s = side.sign();
    // The extreme towards the edge: lowest low for a buy, highest high for a sell (the latest
    // one on a tie), as a "distance inside the range" that is smallest at the extreme.
    let inside = |i: usize| match side {
        Side::Buy => bars.low[i],
        Side::Sell => -bars.high[i],
    };
    let at = (n - REVERSAL_BARS..n)
        .fold(n - REVERSAL_BARS, |k, i| if inside(i) <= inside(k) { i } else { k });
    let extreme = match side {
        Side::Buy => bars.low[at],
        Side::Sell => bars.high[at],
    };
    let rejects = |i: usize| {
        let (open, high, low, close) = (bars.open[i], bars.high[i], bars.low[i], bars.close[i]);
        let span = high - low;
        let away = match side {
            Side::Buy => (close - low) / span,
            Side::Sell => (high - close) / span,
        };
        span > 0.0 && s * (close - open) > 0.0 && away >= REVERSAL_CLOSE_FRACTION
    };
    let rejection = (at..n).find(|&i| rejects(i));
    let last_close = bars.close[n - 1];
    let standing =
        rejection.is_some_and(|i| s * (last_close - (bars.high[i] + bars.low[i]) / 2.0) >= 0.0);
    let edge = range.near_edge(side);
    // Distance of the extreme from the edge in ATR, positive inside the range.
    let test_atr = s * (extreme - edge) / range.atr;
    let tested = test_atr <= TOUCH_ATR;
    let held = test_atr > -stop_atr;
    let pass = tested && held && standing;
    let verdict = if !tested {
        "edge not tested"
    } else if !held {
        "edge broken through the stop level"
    } else if rejection.is_none() {
        "no candle closed away from the edge since the test"
    } else if !standing {
        "rejection undone: last close back past its middle"
    } else {
        "reversal"
    };
    let turn = rejection.map_or("none".to_string(), |i| format!("{} candle(s) ago", n - 1 - i));
    Line::new(
        "entry_reversal",
        pass,
        format!(
            "{verdict}: {} {} extreme {extreme:.6} at {test_atr:+.2} ATR from {} (test <= {TOUCH_ATR}, hold > -{stop_atr}) within the last {REVERSAL_BARS} candles; rejection candle (close with the trade, {:.0}% or more away from its extreme): {turn}; last close {last_close:.6}",
            bars.timeframe,
            side.as_str(),
            side.edge(),
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

/// Volume confirms: the turn's volume ratio ([`turn_volume_ratio`]) is at least `min`.
pub fn volume_line(tf: &str, ratio: Option<f64>, min: f64) -> Line {
    match ratio {
        Some(r) => Line::new(
            "entry_volume",
            r >= min,
            format!(
                "{tf} turn volume {r:.2}x the mean of the {VOLUME_AVG_BARS} before {} {min}",
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
        let buy = |c: &[(f64, f64, f64, f64)]| reversal_line(&bars(c), &r, Side::Buy, 1.5);
        let before = (101.2, 101.3, 100.9, 101.0);
        // Dip to 100.1, then a candle from 100.2 up to 100.45 (close in the upper part).
        let dip = (100.5, 100.6, 100.1, 100.2);
        let l = buy(&[before, (101.0, 101.1, 100.4, 100.5), dip, (100.2, 100.5, 100.15, 100.45)]);
        assert!(l.pass, "{}", l.detail);
        // The test candle itself is the rejection (a hammer), then a small red candle that
        // stays above the hammer's middle: the rejection stands.
        let hammer = (100.3, 100.6, 100.05, 100.55);
        let l = buy(&[before, before, hammer, (100.55, 100.6, 100.4, 100.45)]);
        assert!(l.pass, "{}", l.detail);
        // ... but a close back below its middle (100.325) undoes it.
        let l = buy(&[before, before, hammer, (100.55, 100.6, 100.2, 100.25)]);
        assert!(l.detail.starts_with("rejection undone"), "{}", l.detail);
        // No candle closed up since the dip: no reversal.
        let l = buy(&[before, before, dip, (100.45, 100.5, 100.15, 100.2)]);
        assert!(l.detail.starts_with("no candle closed away"), "{}", l.detail);
        // Never came near support (0.5 ATR).
        let high = (102.5, 102.6, 102.1, 102.2);
        assert!(buy(&[high, high, high, high]).detail.starts_with("edge not tested"));
        // Went through the stop level (100 - 1.5).
        let l = buy(&[before, (101.0, 101.1, 98.0, 100.5), dip, (100.2, 100.5, 100.15, 100.45)]);
        assert!(l.detail.starts_with("edge broken"), "{}", l.detail);
        // Mirror at resistance.
        let s = bars(&[
            (109.0, 109.2, 108.9, 109.1),
            (109.0, 109.6, 108.9, 109.5),
            (109.5, 109.9, 109.4, 109.8),
            (109.8, 109.85, 109.5, 109.55),
        ]);
        assert!(reversal_line(&s, &r, Side::Sell, 1.5).pass);
        assert!(!buy(&[(1.0, 1.0, 1.0, 1.0)]).pass);
    }

    #[test]
    fn turn_volume_is_the_busiest_of_the_last_candles() {
        let mut volume = vec![1.0; 30];
        volume[26] = 3.0; // the test candle, three before the last
        assert_eq!(turn_volume_ratio(&volume), Some(3.0));
        volume[25] = 5.0; // older than the reversal window: not counted
        assert!(turn_volume_ratio(&volume).unwrap() < 3.0);
        assert_eq!(turn_volume_ratio(&[1.0; 5]), None);
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
