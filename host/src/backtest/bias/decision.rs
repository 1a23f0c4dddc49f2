//! What a scan decided for one symbol, and the first thing two decisions disagree on.
//!
//! The decision is what trading acts on: the direction, the stop and target distances, the
//! tier, the gates' inputs (ev, confidence) and the checklist lines with their verdicts. Texts
//! (reasons, details) are left out: a plugin may print numbers into them that move without
//! any decision moving. Prices and indicator values are left out too: they are inputs a
//! decision is made from, and a later step shows whether a drift changed a decision. The
//! stop and target distances and the ev are equal within [`RELATIVE_TOLERANCE`] of their
//! value: an average seeded a few hundred candles earlier (Wilder's ATR) moves a 5 % stop by
//! parts in ten million, a drift no order book would tell from noise, where a changed
//! decision moves it by whole percents.

use serde::Serialize;

use crate::plugins::model::{Check, Direction, ScanResult};

/// One symbol's decision at one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub direction: Direction,
    pub sl_pct: f64,
    pub tp_pct: f64,
    pub tier: Option<String>,
    pub ev: Option<f64>,
    pub confidence: Option<u32>,
    /// The checklist lines in order: their names and verdicts are compared, their details
    /// only shown with a disagreement (they carry numbers).
    pub checklist: Vec<Check>,
}

impl Decision {
    pub fn of(result: &ScanResult) -> Self {
        Decision {
            direction: result.direction,
            sl_pct: result.sl_pct,
            tp_pct: result.tp_pct,
            tier: result.tier.clone(),
            ev: result.ev,
            confidence: result.confidence,
            checklist: result.checklist.clone(),
        }
    }
}

/// Where two decisions of the same symbol and step part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    /// The checklist item (`checklist:<name>`) or the field (`direction`, `sl_pct`, ...).
    pub item: String,
    /// Its value in the reference replay and in the other.
    pub reference: String,
    pub other: String,
}

/// The first item `other` decides differently from `reference`: a checklist line first (the
/// reason is more useful than its consequence), then the direction and the other fields.
pub fn first_disagreement(reference: &Decision, other: &Decision) -> Option<Disagreement> {
    let differ = |item: &str, a: String, b: String| {
        (a != b).then(|| Disagreement { item: item.to_string(), reference: a, other: b })
    };
    let lines = reference.checklist.len().max(other.checklist.len());
    for i in 0..lines {
        let (ours, theirs) = (reference.checklist.get(i), other.checklist.get(i));
        if ours.map(|c| (&c.name, c.pass)) != theirs.map(|c| (&c.name, c.pass)) {
            let name = ours.or(theirs).map_or("", |c| c.name.as_str());
            return Some(Disagreement {
                item: format!("checklist:{name}"),
                reference: show(ours),
                other: show(theirs),
            });
        }
    }
    let debug = |v: &dyn std::fmt::Debug| format!("{v:?}");
    differ("direction", debug(&reference.direction), debug(&other.direction))
        .or_else(|| near("sl_pct", reference.sl_pct, other.sl_pct))
        .or_else(|| near("tp_pct", reference.tp_pct, other.tp_pct))
        .or_else(|| differ("tier", debug(&reference.tier), debug(&other.tier)))
        .or_else(|| match (reference.ev, other.ev) {
            (Some(a), Some(b)) => near("ev", a, b),
            (a, b) => differ("ev", debug(&a), debug(&b)),
        })
        .or_else(|| differ("confidence", debug(&reference.confidence), debug(&other.confidence)))
}

/// Relative difference under which two distances or evs are the same decision.
pub const RELATIVE_TOLERANCE: f64 = 1e-4;

/// The disagreement of two numbers further apart than [`RELATIVE_TOLERANCE`] of the larger.
fn near(item: &str, a: f64, b: f64) -> Option<Disagreement> {
    let same = (a - b).abs() <= RELATIVE_TOLERANCE * a.abs().max(b.abs()) || a == b;
    (!same).then(|| Disagreement {
        item: item.to_string(),
        reference: a.to_string(),
        other: b.to_string(),
    })
}

/// A checklist line with its verdict and detail, or `absent`.
fn show(line: Option<&Check>) -> String {
    line.map_or("absent".to_string(), |c| format!("{}: {} ({})", c.name, verdict(c.pass), c.detail))
}

fn verdict(pass: bool) -> &'static str {
    if pass { "pass" } else { "fail" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(direction: Direction, checks: &[(&str, bool)]) -> Decision {
        Decision {
            direction,
            sl_pct: 2.0,
            tp_pct: 4.0,
            tier: None,
            ev: Some(30.0),
            confidence: Some(8),
            checklist: checks
                .iter()
                .map(|(n, p)| Check {
                    name: n.to_string(),
                    pass: *p,
                    detail: format!("{n} detail"),
                })
                .collect(),
        }
    }

    #[test]
    fn the_first_differing_checklist_line_is_named_before_the_direction() {
        let a = decision(Direction::Buy, &[("trend", true), ("rsi", true), ("volume", true)]);
        let b = decision(Direction::Skip, &[("trend", true), ("rsi", false), ("volume", false)]);
        let d = first_disagreement(&a, &b).unwrap();
        assert_eq!(d.item, "checklist:rsi");
        assert_eq!(d.reference, "rsi: pass (rsi detail)");
        assert_eq!(d.other, "rsi: fail (rsi detail)");
    }

    #[test]
    fn fields_are_compared_when_the_checklists_agree() {
        let a = decision(Direction::Buy, &[("trend", true)]);
        assert_eq!(first_disagreement(&a, &a.clone()), None);
        let mut b = a.clone();
        b.tp_pct = 5.0;
        assert_eq!(first_disagreement(&a, &b).unwrap().item, "tp_pct");
        b.tp_pct = 4.000_001;
        assert_eq!(first_disagreement(&a, &b), None, "a seeding drift, not a decision");
        b.tp_pct = 4.01;
        assert_eq!(first_disagreement(&a, &b).unwrap().item, "tp_pct");
        let b = decision(Direction::Skip, &[("trend", true)]);
        assert_eq!(first_disagreement(&a, &b).unwrap().item, "direction");
        let b = decision(Direction::Buy, &[("trend", true), ("extra", false)]);
        assert_eq!(first_disagreement(&a, &b).unwrap().item, "checklist:extra");
    }
}
