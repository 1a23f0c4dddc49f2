//! The expected value (ev) and confidence stored with a signal, and the gates confirm checks
//! on them (spec: ev > 25 and confidence >= 8, enforced server-side).
//!
//! When the strategy gives ev and confidence they are stored as given; otherwise one formula
//! computes them from the checklist score and the reward/risk of sl_pct/tp_pct:
//!
//! - score `s = passed / total` of the checklist (no checklist: `s = 0`);
//! - confidence `= round(10 × s)`, an integer 0..=10;
//! - estimated win probability `p = 0.6 × s` (a perfect checklist is taken as a 60 % edge,
//!   not a certainty);
//! - reward/risk `rr = tp_pct / sl_pct` (0 when either is missing);
//! - ev `= 100 × (p × rr − (1 − p))`: the expected result in percent of the amount risked,
//!   rounded to two decimals.
//!
//! Calibration: 9 of 10 with rr 2.5 gives confidence 9 and ev 89 (passes both gates); 5 of 10
//! gives confidence 5 (fails the confidence gate, and ev 5 fails the ev gate too); 10 of 10
//! with rr 1 gives ev 20: a 1:1 bracket never passes on the formula alone.

use super::model::SignalInput;
use crate::money::Number;

/// The gates: ev must be above [`MIN_EV`], confidence at least [`MIN_CONFIDENCE`]. They and the
/// formula live in the SDK (`spotbot_sdk::scoring`), so that a strategy reports exactly the
/// scores the service computes.
pub use spotbot_sdk::scoring::{MIN_CONFIDENCE, MIN_EV};

/// ev and confidence by the formula above (a missing sl_pct or tp_pct counts as 0: rr 0).
pub fn score(input: &SignalInput) -> (f64, u32) {
    let list = input.checklist.as_deref().unwrap_or_default();
    let passed = list.iter().filter(|c| c.pass).count();
    spotbot_sdk::scoring::scores_of(
        passed,
        list.len(),
        input.sl_pct.map_or(0.0, Number::to_f64),
        input.tp_pct.map_or(0.0, Number::to_f64),
    )
}

/// The ev gate (a NaN fails it).
pub fn ev_passes(ev: f64) -> bool {
    ev > MIN_EV
}

/// Why a signal fails the gates, or `None` when it passes both.
pub fn gate_failure(ev: f64, confidence: u32) -> Option<String> {
    let mut reasons = Vec::new();
    if !ev_passes(ev) {
        reasons.push(format!("ev {ev} must be > {MIN_EV}"));
    }
    if confidence < MIN_CONFIDENCE {
        reasons.push(format!("confidence {confidence} must be >= {MIN_CONFIDENCE}"));
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::Direction;
    use crate::signals::model::CheckItem;

    fn input(passed: usize, total: usize, sl: f64, tp: f64) -> SignalInput {
        let checklist = (0..total)
            .map(|i| CheckItem { name: format!("c{i}"), pass: i < passed, detail: String::new() })
            .collect();
        SignalInput {
            symbol: "BTCUSDT".into(),
            direction: Direction::Buy,
            bot: "mr_combined".into(),
            price: None,
            sl_pct: Some(sl.into()),
            tp_pct: Some(tp.into()),
            checklist: Some(checklist),
            passed: None,
            total: None,
            rsi: None,
            macd_hist: None,
            bb_lower: None,
            bb_upper: None,
            bb_mid: None,
            vol_ratio: None,
            buy_signals: None,
            sell_signals: None,
            adx: None,
            stoch_k: None,
            tp1_pct: None,
            tp2_pct: None,
            range_support: None,
            range_resistance: None,
            range_midline: None,
            tier: None,
        }
    }

    #[test]
    fn nine_of_ten_with_reward_risk_2_5_passes_both_gates() {
        let (ev, confidence) = score(&input(9, 10, 2.0, 5.0));
        assert_eq!((ev, confidence), (89.0, 9));
        assert_eq!(gate_failure(ev, confidence), None);
    }

    #[test]
    fn five_of_ten_fails_the_confidence_gate() {
        let (ev, confidence) = score(&input(5, 10, 2.0, 5.0));
        assert_eq!(confidence, 5);
        assert!(gate_failure(ev, confidence).unwrap().contains("confidence 5"));
    }

    #[test]
    fn no_checklist_means_confidence_zero_and_a_one_to_one_bracket_never_passes() {
        let mut no_list = input(0, 0, 2.0, 5.0);
        no_list.checklist = None;
        assert_eq!(score(&no_list).1, 0);
        let (ev, confidence) = score(&input(10, 10, 2.0, 2.0));
        assert_eq!((ev, confidence), (20.0, 10));
        assert!(gate_failure(ev, confidence).unwrap().contains("ev 20"));
        assert!(gate_failure(25.0, 8).is_some(), "ev must be strictly above 25");
    }
}
