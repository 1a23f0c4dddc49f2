//! Manual LIMIT entries: placed, filled, expired, cancelled.

use super::escape;
use super::format::plain_lines;
use crate::messenger::Outgoing;

/// A manual LIMIT entry waiting for its fill (placed, filled, expired).
#[derive(Debug, Clone, PartialEq)]
pub struct PendingEntryNote {
    pub symbol: String,
    pub direction: String,
    pub size: String,
    pub entry_px: String,
    pub sl_px: String,
    pub tp_px: String,
    pub client_order_id: String,
    /// ISO 8601 time the entry is cancelled if unfilled.
    pub expires_at: String,
}

/// A manual LIMIT entry was placed and waits for its fill.
pub fn pending_entry_placed(e: &PendingEntryNote) -> Outgoing {
    plain_lines(&[
        format!(
            "📝 <b>LIMIT entry placed: {} {}</b>",
            escape(&e.direction.to_uppercase()),
            escape(&e.symbol)
        ),
        format!(
            "{} at {}; stop {} / target {} once filled",
            escape(&e.size),
            escape(&e.entry_px),
            escape(&e.sl_px),
            escape(&e.tp_px)
        ),
        format!(
            "Cancelled if unfilled at {} (order <code>{}</code>)",
            escape(&e.expires_at),
            escape(&e.client_order_id)
        ),
    ])
}

/// A manual LIMIT entry filled: the position is open (the OCO result follows in the trade
/// message).
pub fn pending_entry_filled(e: &PendingEntryNote) -> Outgoing {
    plain_lines(&[
        format!(
            "✅ <b>LIMIT entry filled: {} {}</b>",
            escape(&e.direction.to_uppercase()),
            escape(&e.symbol)
        ),
        format!(
            "{} at {} (order <code>{}</code>); placing stop {} / target {}",
            escape(&e.size),
            escape(&e.entry_px),
            escape(&e.client_order_id),
            escape(&e.sl_px),
            escape(&e.tp_px)
        ),
    ])
}

/// A manual LIMIT entry reached its time to live and was cancelled; `filled` is what had
/// filled before (protected like any trade), if anything.
pub fn pending_entry_expired(e: &PendingEntryNote, filled: Option<&str>) -> Outgoing {
    let mut lines = vec![
        format!("⌛ <b>LIMIT entry expired and cancelled: {}</b>", escape(&e.symbol)),
        format!(
            "{} {} at {} did not fill by {} (order <code>{}</code>)",
            escape(&e.direction),
            escape(&e.size),
            escape(&e.entry_px),
            escape(&e.expires_at),
            escape(&e.client_order_id)
        ),
    ];
    lines.extend(filled_part(filled));
    plain_lines(&lines)
}

/// A manual LIMIT entry was cancelled on request (its cancel route, or closeall); `filled`
/// is what had filled before (protected like any trade), if anything.
pub fn pending_entry_cancelled(e: &PendingEntryNote, filled: Option<&str>) -> Outgoing {
    let mut lines = vec![
        format!("🛑 <b>LIMIT entry cancelled: {}</b>", escape(&e.symbol)),
        format!(
            "{} {} at {} cancelled on request (order <code>{}</code>)",
            escape(&e.direction),
            escape(&e.size),
            escape(&e.entry_px),
            escape(&e.client_order_id)
        ),
    ];
    lines.extend(filled_part(filled));
    plain_lines(&lines)
}

/// The line about the part of a cancelled entry that had filled.
fn filled_part(filled: Option<&str>) -> Option<String> {
    filled.map(|f| format!("{} had filled: that part is open and protected", escape(f)))
}
