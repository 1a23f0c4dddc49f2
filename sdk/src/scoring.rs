//! The service's ev and confidence of a signal, so a strategy can report the numbers the
//! confirm gates will see.
//!
//! The service stores ev and confidence with every signal and confirms only when
//! **ev > [`MIN_EV`] and confidence >= [`MIN_CONFIDENCE`]** (docs/signals.md, "ev and
//! confidence"). When a result leaves them unset the service computes them with the formula of
//! [`service_scores`]; when a result sets them the service keeps the lower of its own and the
//! plugin's. A plugin that fills them with [`service_scores`] therefore shows in a preview
//! exactly what confirm will judge, and can never be refused for reporting more than the
//! service would.
//!
//! This module is the one home of the formula: the host's signal flow
//! (`host/src/signals/scoring.rs`) computes its scores with [`scores_of`] and its gates with
//! these constants, so a plugin and the service can never disagree.

use crate::Checklist;

/// The ev gate: a signal is confirmed only when its ev is above this.
pub const MIN_EV: f64 = 25.0;
/// The confidence gate: a signal is confirmed only when its confidence is at least this.
pub const MIN_CONFIDENCE: u32 = 8;

/// The service's `(ev, confidence)` of a checklist and bracket (docs/signals.md, "ev and
/// confidence"):
///
/// - score `s = passed / total` (an empty checklist: `s = 0`);
/// - confidence `= round(10 × s)`, 0..=10;
/// - win probability `p = 0.6 × s` (a perfect checklist is a 60 % edge, not a certainty);
/// - reward/risk `rr = tp_pct / sl_pct`, 0 unless both are > 0;
/// - ev `= 100 × (p × rr − (1 − p))`, rounded to 2 decimals: the expected result in percent of
///   the amount risked.
///
/// ```
/// use spotbot_sdk::Checklist;
/// use spotbot_sdk::scoring::{MIN_CONFIDENCE, MIN_EV, service_scores};
/// let mut list = Checklist::new();
/// for i in 0..6 {
///     list.check("line", i < 5, "");
/// }
/// // 5 of 6 with a 1 % stop and a 2 % target.
/// let (ev, confidence) = service_scores(&list, 1.0, 2.0);
/// assert_eq!((ev, confidence), (50.0, 8));
/// assert!(ev > MIN_EV && confidence >= MIN_CONFIDENCE);
/// ```
pub fn service_scores(list: &Checklist, sl_pct: f64, tp_pct: f64) -> (f64, u32) {
    scores_of(list.passed() as usize, list.total() as usize, sl_pct, tp_pct)
}

/// The formula of [`service_scores`] on the checklist's counts: `passed` of `total` lines
/// (`total` 0: `s = 0`). The host scores every signal with it.
pub fn scores_of(passed: usize, total: usize, sl_pct: f64, tp_pct: f64) -> (f64, u32) {
    let s = if total > 0 { passed.min(total) as f64 / total as f64 } else { 0.0 };
    let confidence = (10.0 * s).round() as u32;
    let p = 0.6 * s;
    let rr = if sl_pct > 0.0 && tp_pct > 0.0 { tp_pct / sl_pct } else { 0.0 };
    let ev = (100.0 * (p * rr - (1.0 - p)) * 100.0).round() / 100.0;
    (ev, confidence)
}

/// Whether `(ev, confidence)` pass both confirm gates (a NaN ev fails).
pub fn passes_gates(ev: f64, confidence: u32) -> bool {
    ev > MIN_EV && confidence >= MIN_CONFIDENCE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(passed: usize, total: usize) -> Checklist {
        let mut c = Checklist::new();
        for i in 0..total {
            c.check(&format!("c{i}"), i < passed, "");
        }
        c
    }

    /// The host's calibration (`host/src/signals/scoring.rs` tests, docs/signals.md table).
    #[test]
    fn the_hosts_calibration_numbers() {
        let (ev, confidence) = service_scores(&list(9, 10), 2.0, 5.0);
        assert_eq!((ev, confidence), (89.0, 9));
        assert!(passes_gates(ev, confidence));

        let (ev, confidence) = service_scores(&list(5, 10), 2.0, 5.0);
        assert_eq!((ev, confidence), (5.0, 5));
        assert!(!passes_gates(ev, confidence));

        let (ev, confidence) = service_scores(&list(10, 10), 2.0, 2.0);
        assert_eq!((ev, confidence), (20.0, 10), "a 1:1 bracket never passes on the formula");
        assert!(!passes_gates(ev, confidence));
        assert!(!passes_gates(25.0, 8), "ev must be strictly above 25");

        let (ev, confidence) = service_scores(&Checklist::new(), 2.0, 5.0);
        assert_eq!(confidence, 0, "no checklist: confidence 0");
        assert!(ev < 0.0);
    }

    #[test]
    fn a_missing_side_of_the_bracket_is_rr_zero() {
        assert_eq!(service_scores(&list(5, 6), 1.0, 2.0), (50.0, 8));
        assert_eq!(service_scores(&list(6, 6), 0.0, 2.0), (-40.0, 10));
        assert_eq!(service_scores(&list(6, 6), 1.0, -2.0), (-40.0, 10));
        assert_eq!(service_scores(&Checklist::new(), 0.0, 0.0), (-100.0, 0));
        assert!(!passes_gates(f64::NAN, 10));
    }

    #[test]
    fn with_signal_reports_these_scores() {
        use crate::{Direction, ScanResult};
        let r = ScanResult::new("X", "mine", Direction::Skip, 10.0).with_signal(
            Direction::Buy,
            1.0,
            2.0,
            list(5, 6),
        );
        assert_eq!((r.direction, r.sl_pct, r.tp_pct), (Direction::Buy, 1.0, 2.0));
        assert_eq!((r.ev, r.confidence, r.passed, r.total), (Some(50.0), Some(8), 5, 6));
        assert_eq!(r.with_reason("why").reason.as_deref(), Some("why"));
    }
}
