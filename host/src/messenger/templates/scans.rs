//! Messages of the scan pipelines: a signal a strategy confirmed on its own (`ask_coo = false`
//! with `[signals] allow_auto_confirm`), and a Pump Momentum alert.

use super::{escape, number, percent, plain_lines};
use crate::messenger::Outgoing;

/// A signal confirmed without asking the boss, and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoConfirmed {
    pub symbol: String,
    pub direction: String,
    pub bot: String,
    pub ev: f64,
    pub confidence: u32,
    /// True when the trade was placed.
    pub placed: bool,
    /// Why nothing was placed.
    pub reason: Option<String>,
}

pub fn auto_confirmed(a: &AutoConfirmed) -> Outgoing {
    let mut lines = vec![
        format!(
            "🤖 <b>Auto-confirmed {} {}</b> ({})",
            escape(&a.direction.to_uppercase()),
            escape(&a.symbol),
            escape(&a.bot)
        ),
        "The strategy asked not to wait for your approval (ask_coo = false), and \
         [signals] allow_auto_confirm is on."
            .to_string(),
        format!("EV {} · confidence {}/10", number(a.ev), a.confidence),
    ];
    lines.push(match (&a.placed, &a.reason) {
        (true, _) => "Result: placed (see the trade message).".to_string(),
        (false, Some(reason)) => format!("Result: nothing placed: {}", escape(reason)),
        (false, None) => "Result: nothing placed.".to_string(),
    });
    plain_lines(&lines)
}

/// One Pump Momentum alert (an observation, never an order).
#[derive(Debug, Clone, PartialEq)]
pub struct PumpAlertNote {
    pub symbol: String,
    /// `pump_watch` or `pump_signal`.
    pub stage: String,
    /// `low`, `medium` or `high`.
    pub confidence: String,
    pub price: f64,
    pub vol_ratio: Option<f64>,
    pub candle_return_pct: Option<f64>,
    pub rel_strength_15m: Option<f64>,
    pub rel_strength_1h: Option<f64>,
}

pub fn pump_alert(a: &PumpAlertNote) -> Outgoing {
    let title = if a.stage == "pump_signal" { "🚀 Pump signal" } else { "👀 Pump watch" };
    let mut lines = vec![
        format!("<b>{title} {}</b> · confidence {}", escape(&a.symbol), escape(&a.confidence)),
        format!("Price: {}", number(a.price)),
    ];
    let metric = |label: &str, value: Option<f64>, unit: fn(f64) -> String| {
        value.map(|v| format!("{label}: {}", unit(v)))
    };
    lines.extend(metric("15m volume", a.vol_ratio, |v| format!("{}× average", number(v))));
    lines.extend(metric("15m candle", a.candle_return_pct, percent));
    lines.extend(metric("vs reference 15m", a.rel_strength_15m, percent));
    lines.extend(metric("vs reference 1h", a.rel_strength_1h, percent));
    lines.push("An observation only: the scanner never trades.".to_string());
    plain_lines(&lines)
}
