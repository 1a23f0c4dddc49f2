//! Gate 3: the range on the regime timeframe (4h by default). Support and resistance are the
//! lowest low and highest high of the last [`RANGE_BARS`] closed bars; the range must be wide
//! enough in ATR, trendless over its span (median ADX), and its edges must have been touched
//! repeatedly (an edge touched once is a swing, not a level).

use crate::data::Bars;
use crate::line::{Line, Side};
use crate::regime::ADX_TREND_MAX;
use spotbot_sdk::indicators::median;

/// Bars of the regime timeframe that make the range: 120 × 4h = 20 days. A range wide enough
/// for the default reward/risk (about 7 ATR, see the README) with ADX below 25 needs legs of
/// several days, and each edge needs two touches, so the window must hold a few legs.
pub const RANGE_BARS: usize = 120;
/// A bar touches support when its low is within this many ATR of it (resistance: its high).
/// Half an ATR is the outer edge of the entry zone (`zone_proximity_atr_max` 0.5): a price
/// that near the edge is "at" it for an entry, so a turn that near it is a touch too.
pub const TOUCH_ATR: f64 = 0.5;
/// Between two touches of an edge the price must have gone this many ATR away from it (for
/// support: a bar's high at least S + 2 ATR): a retest after a real excursion, more than
/// a stop's worth (1.5 ATR), not a bar wobbling in and out of the band.
pub const TOUCH_SEPARATION_ATR: f64 = 1.0;
/// Separate touches the edge the trade leans on needs: an edge turned once is a swing, twice
/// a level (a double bottom or top). The far edge is the target, and the window's extreme
/// is a touch by construction; requiring a second touch there too refused most real ranges
/// whose far side had been visited once (EURUSD 4h: support 2, resistance 1) without making
/// the level the trade relies on any better.
pub const MIN_TOUCHES: usize = 2;

/// The measured range.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub support: f64,
    pub resistance: f64,
    /// ATR of the regime timeframe, the unit of every distance.
    pub atr: f64,
    /// Separate touches of support / resistance within the window.
    pub support_touches: usize,
    pub resistance_touches: usize,
    /// Median ADX over the window (`None` when no ADX value is defined there).
    pub median_adx: Option<f64>,
    /// Bars in the window.
    pub bars: usize,
}

impl Range {
    /// Measures the range over the last [`RANGE_BARS`] bars (fewer if fewer are given).
    /// `adx` is the ADX series of the same bars; `atr` must be > 0.
    pub fn measure(bars: &Bars, atr: f64, adx: &[f64]) -> Range {
        let start = bars.len().saturating_sub(RANGE_BARS);
        let (high, low) = (&bars.high[start..], &bars.low[start..]);
        let support = low.iter().copied().fold(f64::INFINITY, f64::min);
        let resistance = high.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (band, away) = (TOUCH_ATR * atr, TOUCH_SEPARATION_ATR * atr);
        let support_visits = low
            .iter()
            .zip(high)
            .map(|(&l, &h)| Visit { touches: l <= support + band, leaves: h >= support + away });
        let resistance_visits = low.iter().zip(high).map(|(&l, &h)| Visit {
            touches: h >= resistance - band,
            leaves: l <= resistance - away,
        });
        Range {
            support,
            resistance,
            atr,
            support_touches: touches(support_visits),
            resistance_touches: touches(resistance_visits),
            median_adx: median(adx.get(start..).unwrap_or(&[])),
            bars: low.len(),
        }
    }

    pub fn midline(&self) -> f64 {
        (self.support + self.resistance) / 2.0
    }

    pub fn width(&self) -> f64 {
        self.resistance - self.support
    }

    /// The width in ATR.
    pub fn width_atr(&self) -> f64 {
        self.width() / self.atr
    }

    /// Buy in the lower half (towards support), sell in the upper half.
    pub fn side(&self, price: f64) -> Side {
        if price <= self.midline() { Side::Buy } else { Side::Sell }
    }

    /// The edge a side leans on.
    pub fn near_edge(&self, side: Side) -> f64 {
        match side {
            Side::Buy => self.support,
            Side::Sell => self.resistance,
        }
    }

    /// The edge a side aims at.
    pub fn far_edge(&self, side: Side) -> f64 {
        match side {
            Side::Buy => self.resistance,
            Side::Sell => self.support,
        }
    }

    /// Touches of the edge a side leans on.
    pub fn touches(&self, side: Side) -> usize {
        match side {
            Side::Buy => self.support_touches,
            Side::Sell => self.resistance_touches,
        }
    }

    /// The gate's three lines: width, ADX, touches of the edge `side` leans on.
    pub fn lines(&self, tf: &str, min_width_atr: f64, side: Side) -> Vec<Line> {
        let width_atr = self.width_atr();
        let width = Line::new(
            "range_width",
            width_atr >= min_width_atr,
            format!(
                "{tf} range {:.6}-{:.6} over {} bars: width {:.2} ATR {} {min_width_atr} ATR",
                self.support,
                self.resistance,
                self.bars,
                width_atr,
                if width_atr >= min_width_atr { ">=" } else { "<" },
            ),
        );
        let adx = match self.median_adx {
            Some(a) => Line::new(
                "range_adx",
                a < ADX_TREND_MAX,
                format!(
                    "{tf} median ADX over the range {a:.1} {} {ADX_TREND_MAX}",
                    if a < ADX_TREND_MAX { "<" } else { ">=" }
                ),
            ),
            None => Line::new("range_adx", false, format!("{tf} ADX n/a over the range")),
        };
        let touches = Line::new(
            "range_touches",
            self.touches(side) >= MIN_TOUCHES,
            format!(
                "touches within {TOUCH_ATR} ATR, {TOUCH_SEPARATION_ATR} ATR apart: support {}, resistance {} (need {MIN_TOUCHES} at the {} a {} leans on)",
                self.support_touches,
                self.resistance_touches,
                side.edge(),
                side.as_str()
            ),
        );
        vec![width, adx, touches]
    }
}

/// What one bar did relative to an edge.
#[derive(Debug, Clone, Copy)]
struct Visit {
    /// Came within [`TOUCH_ATR`] of the edge.
    touches: bool,
    /// Went [`TOUCH_SEPARATION_ATR`] away from it.
    leaves: bool,
}

/// Counts separate touches: the first touching bar is one, and a later touching bar is
/// another only when some bar since the previous touch left the edge.
fn touches(visits: impl Iterator<Item = Visit>) -> usize {
    let mut count = 0;
    let mut armed = true;
    for v in visits {
        if v.touches && armed {
            count += 1;
            armed = false;
        } else if v.leaves {
            armed = true;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(high: &[f64], low: &[f64]) -> Bars {
        let mid: Vec<f64> = high.iter().zip(low).map(|(h, l)| (h + l) / 2.0).collect();
        Bars {
            timeframe: "4h".into(),
            open: mid.clone(),
            high: high.to_vec(),
            low: low.to_vec(),
            close: mid,
            volume: vec![1.0; high.len()],
        }
    }

    #[test]
    fn touches_need_an_excursion_between_them() {
        let v = |touches, leaves| Visit { touches, leaves };
        // Touch, wobble out of the band and back without leaving: one touch.
        assert_eq!(touches([v(true, false), v(false, false), v(true, false)].into_iter()), 1);
        // Touch, leave, touch again: two.
        assert_eq!(touches([v(true, false), v(false, true), v(true, false)].into_iter()), 2);
        assert_eq!(touches(std::iter::empty()), 0);
    }

    #[test]
    fn edges_touches_and_sides() {
        // ATR 1: band 0.5, separation 1. Support 1.0 touched by bars 0, 2 and 5, each after
        // a bar whose high went 1 ATR or more away.
        let b = bars(&[10.0, 9.0, 9.95, 9.8, 10.0, 8.0], &[1.0, 2.0, 1.2, 2.0, 3.0, 1.1]);
        let r = Range::measure(&b, 1.0, &[f64::NAN, f64::NAN, 20.0, 22.0, 24.0, 30.0]);
        assert_eq!((r.support, r.resistance, r.midline(), r.width_atr()), (1.0, 10.0, 5.5, 9.0));
        // Resistance band >= 9.5 and every low at or below 9 (left): bars 0, 2 and 4.
        assert_eq!((r.support_touches, r.resistance_touches), (3, 3));
        assert_eq!(r.median_adx, Some(23.0));
        assert_eq!(r.side(5.5), Side::Buy);
        assert_eq!(r.side(5.6), Side::Sell);
        assert_eq!((r.near_edge(Side::Sell), r.far_edge(Side::Sell)), (10.0, 1.0));
        assert!(r.lines("4h", 3.0, Side::Buy).iter().all(|l| l.pass));
        // Only the edge the trade leans on needs its second touch.
        let once = Range { resistance_touches: 1, ..r.clone() };
        assert!(once.lines("4h", 3.0, Side::Buy)[2].pass);
        assert!(!once.lines("4h", 3.0, Side::Sell)[2].pass);
        assert!(!r.lines("4h", 9.5, Side::Buy)[0].pass);
    }
}
