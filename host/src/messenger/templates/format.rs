//! Number and level formatting shared by the messages, and the plain-lines message shape.

use crate::messenger::Outgoing;

/// One message of plain lines (no buttons); each line is escaped by its caller.
pub(super) fn plain_lines(lines: &[String]) -> Outgoing {
    Outgoing { html: lines.join("\n"), buttons: Vec::new() }
}

/// `Stop-loss: 63700 (2%)`, with whichever of price and percent is known.
pub(super) fn level(label: &str, px: Option<f64>, pct: Option<f64>) -> Option<String> {
    match (px, pct) {
        (Some(px), Some(pct)) => Some(format!("{label}: {} ({})", number(px), percent(pct))),
        (Some(px), None) => Some(format!("{label}: {}", number(px))),
        (None, Some(pct)) => Some(format!("{label}: {}", percent(pct))),
        (None, None) => None,
    }
}

/// A price or amount as plain digits: 8 significant digits, never scientific notation,
/// trailing zeros trimmed (`65000.5`, `0.00001234`).
pub(super) fn number(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (7 - magnitude).clamp(0, 12) as usize;
    trim_zeros(format!("{x:.decimals$}"))
}

pub(super) fn percent(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    format!("{}%", trim_zeros(format!("{x:.2}")))
}

fn trim_zeros(s: String) -> String {
    if !s.contains('.') {
        return s;
    }
    match s.trim_end_matches('0').trim_end_matches('.') {
        "-0" => "0".into(),
        trimmed => trimmed.into(),
    }
}
