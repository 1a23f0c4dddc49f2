//! Targets, stop and gate 5 (reward/risk).
//!
//! For a buy at price `p` in a range `S`–`R` with ATR `A` (regime timeframe), mirrored for a
//! sell:
//! - SL  = S − sl_atr_multiplier × A (beyond the edge the trade leans on)
//! - TP1 = (S + R) / 2 (midline), TP2 = R − tp2_atr_multiplier × A, TP3 = R
//! - `tpN_pct` = |TPN − p| / p × 100, `sl_pct` = |p − SL| / p × 100
//! - `tp_pct` = tp1_ratio × tp1_pct + tp2_ratio × tp2_pct + tp3_ratio × tp3_pct: the
//!   position-weighted target, the single take-profit of the host's bracket order
//! - reward/risk = tp_pct / sl_pct, as the host computes it.

use crate::config::Config;
use crate::line::{Line, Side};
use crate::range::Range;

/// Prices and percentages of a trade's stop and targets.
#[derive(Debug, Clone, PartialEq)]
pub struct Targets {
    pub sl: f64,
    pub tp1: f64,
    pub tp2: f64,
    pub tp3: f64,
    /// Distances in percent of the price, positive when the level is on the right side.
    pub sl_pct: f64,
    pub tp1_pct: f64,
    pub tp2_pct: f64,
    pub tp3_pct: f64,
    /// The ratio-weighted target distance.
    pub tp_pct: f64,
    /// tp_pct / sl_pct (0 when sl_pct is not positive).
    pub rr: f64,
}

impl Targets {
    pub fn compute(price: f64, range: &Range, side: Side, config: &Config) -> Targets {
        let s = side.sign();
        let near = range.near_edge(side);
        let far = range.far_edge(side);
        let sl = near - s * config.sl_atr_multiplier * range.atr;
        let tp1 = range.midline();
        let tp2 = far - s * config.tp2_atr_multiplier * range.atr;
        let tp3 = far;
        // Signed so that a level on the wrong side of the price comes out negative.
        let pct = |level: f64| s * (level - price) / price * 100.0;
        let (tp1_pct, tp2_pct, tp3_pct) = (pct(tp1), pct(tp2), pct(tp3));
        let sl_pct = -pct(sl);
        let tp_pct =
            config.tp1_ratio * tp1_pct + config.tp2_ratio * tp2_pct + config.tp3_ratio * tp3_pct;
        let rr = if sl_pct > 0.0 { tp_pct / sl_pct } else { 0.0 };
        Targets { sl, tp1, tp2, tp3, sl_pct, tp1_pct, tp2_pct, tp3_pct, tp_pct, rr }
    }

    /// Targets beyond the entry and in order (TP1 nearest, TP3 farthest), stop beyond it on
    /// the other side.
    pub fn well_formed(&self) -> bool {
        self.sl_pct > 0.0
            && self.tp1_pct > 0.0
            && self.tp1_pct <= self.tp2_pct
            && self.tp2_pct <= self.tp3_pct
    }

    /// Gate 5: well formed and reward/risk ≥ `min_rr`.
    pub fn line(&self, min_rr: f64) -> Line {
        let numbers = format!(
            "rr {:.2} = tp {:.3}% / sl {:.3}% (tp1 {:.3}%, tp2 {:.3}%, tp3 {:.3}%)",
            self.rr, self.tp_pct, self.sl_pct, self.tp1_pct, self.tp2_pct, self.tp3_pct
        );
        if !self.well_formed() {
            return Line::new(
                "min_rr",
                false,
                format!("targets not beyond the entry in order: {numbers}"),
            );
        }
        let pass = self.rr >= min_rr;
        Line::new("min_rr", pass, format!("{numbers} {} {min_rr}", if pass { ">=" } else { "<" }))
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

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn buy_targets_by_hand() {
        let t = Targets::compute(100.4, &range(), Side::Buy, &Config::default());
        assert!(
            close(t.sl, 98.5) && close(t.tp1, 105.0) && close(t.tp2, 109.25) && close(t.tp3, 110.0)
        );
        assert!(close(t.sl_pct, 1.9 / 100.4 * 100.0));
        assert!(close(t.tp1_pct, 4.6 / 100.4 * 100.0));
        assert!(close(t.tp2_pct, 8.85 / 100.4 * 100.0));
        assert!(close(t.tp3_pct, 9.6 / 100.4 * 100.0));
        let weighted = (0.4 * 4.6 + 0.4 * 8.85 + 0.2 * 9.6) / 100.4 * 100.0;
        assert!(close(t.tp_pct, weighted));
        assert!(close(t.rr, weighted / (1.9 / 100.4 * 100.0)));
        assert!(t.line(2.5).pass, "{}", t.line(2.5).detail);
        assert!(!t.line(4.0).pass);
    }

    #[test]
    fn sell_mirrors_and_bad_targets_fail() {
        let t = Targets::compute(109.6, &range(), Side::Sell, &Config::default());
        assert!(close(t.sl, 111.5) && close(t.tp2, 100.75) && close(t.tp3, 100.0));
        assert!(close(t.sl_pct, 1.9 / 109.6 * 100.0));
        assert!(close(t.tp1_pct, 4.6 / 109.6 * 100.0));
        // A range narrower than 1.5 ATR puts TP2 before TP1.
        let narrow = Range { resistance: 101.0, ..range() };
        let t = Targets::compute(100.2, &narrow, Side::Buy, &Config::default());
        assert!(!t.well_formed());
        assert!(t.line(0.1).detail.starts_with("targets not beyond the entry"));
    }
}
