//! Trades opened and closed by the service: the bracket placed, a position left unprotected,
//! close results, reconciliation and an entry whose outcome is unknown.

use super::escape;
use super::format::plain_lines;
use crate::messenger::Outgoing;

/// A bracket order placed: the entry filled and its protection (OCO) on the exchange.
#[derive(Debug, Clone, PartialEq)]
pub struct TradeOpened {
    pub symbol: String,
    pub direction: String,
    pub bot: String,
    pub size: String,
    pub entry_px: String,
    pub sl_px: String,
    pub tp_px: String,
    pub entry_order_id: i64,
    pub oco_list_id: Option<i64>,
    pub sl_oid: Option<i64>,
    pub tp_oid: Option<i64>,
    /// The stop-loss is watched by the service (no stop order on the exchange).
    pub stop_watched: bool,
    pub exchange: String,
}

/// A filled entry whose stop-loss could not be placed.
#[derive(Debug, Clone, PartialEq)]
pub struct UnprotectedAlert {
    pub symbol: String,
    pub size: String,
    pub entry_px: String,
    pub reason: String,
    pub exchange: String,
}

/// The outcome of `close` (one row) or `closeall` (one row per position).
#[derive(Debug, Clone, PartialEq)]
pub struct CloseReport {
    pub rows: Vec<CloseRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CloseRow {
    pub symbol: String,
    pub size: String,
    pub outcome: CloseOutcome,
}

/// How one position's close came out, as the message tells it.
#[derive(Debug, Clone, PartialEq)]
pub enum CloseOutcome {
    /// Sold, with the pnl when known.
    Sold { pnl: Option<String> },
    /// Still open, and why.
    Failed { error: String },
}

/// Differences between the store and the exchange that reconciliation settled.
#[derive(Debug, Clone, PartialEq)]
pub struct ReconciliationReport {
    /// One human sentence per settled difference.
    pub actions: Vec<String>,
}

/// An order sent without a clear answer (timeout, 5xx, dropped connection).
#[derive(Debug, Clone, PartialEq)]
pub struct EntryUnknownAlert {
    pub symbol: String,
    pub client_order_id: String,
    pub detail: String,
}

/// The final result of a confirmed signal or a filled manual entry.
pub fn trade_opened(t: &TradeOpened) -> Outgoing {
    let ids = |id: Option<i64>| id.map_or_else(|| "?".to_string(), |id| id.to_string());
    let protection = match t.oco_list_id {
        None if t.stop_watched => format!(
            "take-profit order {}; the stop-loss is watched by the service (no order on the book)",
            ids(t.tp_oid)
        ),
        Some(list) => format!(
            "OCO list {list} (stop-loss order {}, take-profit order {})",
            ids(t.sl_oid),
            ids(t.tp_oid)
        ),
        None => format!("stop-loss order {}, take-profit order {}", ids(t.sl_oid), ids(t.tp_oid)),
    };
    plain_lines(&[
        format!(
            "✅ <b>Trade opened: {} {}</b>",
            escape(&t.direction.to_uppercase()),
            escape(&t.symbol)
        ),
        format!("Size {} at {} on {}", escape(&t.size), escape(&t.entry_px), escape(&t.exchange)),
        format!("Stop-loss {} · take-profit {}", escape(&t.sl_px), escape(&t.tp_px)),
        format!("Strategy: {}", escape(&t.bot)),
        format!("Entry order {}; {protection}", t.entry_order_id),
    ])
}

/// Loud on purpose: money is at risk until someone acts.
pub fn unprotected_alert(a: &UnprotectedAlert) -> Outgoing {
    let symbol = escape(&a.symbol);
    plain_lines(&[
        format!("🚨🚨 <b>UNPROTECTED POSITION: {symbol}</b> 🚨🚨"),
        format!(
            "{} {symbol} bought at {} on {} has <b>NO stop-loss</b> on the exchange.",
            escape(&a.size),
            escape(&a.entry_px),
            escape(&a.exchange)
        ),
        format!("Reason: {}", escape(&a.reason)),
        "<b>What to do now:</b> place a stop-loss for this position on the exchange yourself, \
         or close it (ask coo to close it: <code>POST /api/close</code>). \
         The trade is marked unprotected until then."
            .to_string(),
    ])
}

/// One message for `close` and `closeall`, one line per position.
pub fn close_result(report: &CloseReport) -> Outgoing {
    if report.rows.is_empty() {
        return plain_lines(&["<b>Close</b>: no open positions to close.".to_string()]);
    }
    let closed =
        report.rows.iter().filter(|r| matches!(r.outcome, CloseOutcome::Sold { .. })).count();
    let mut lines = vec![format!("<b>Close</b>: {closed} of {} closed", report.rows.len())];
    for row in &report.rows {
        let symbol = escape(&row.symbol);
        let size = escape(&row.size);
        lines.push(match &row.outcome {
            CloseOutcome::Sold { pnl } => {
                let pnl =
                    pnl.as_deref().map(|p| format!(", PnL {}", escape(p))).unwrap_or_default();
                format!("✅ {symbol}: sold {size}{pnl}")
            }
            CloseOutcome::Failed { error } => {
                format!("❌ {symbol} ({size}): error — {}", escape(error))
            }
        });
    }
    plain_lines(&lines)
}

/// What reconciliation changed, one line per difference.
pub fn reconciliation_report(report: &ReconciliationReport) -> Outgoing {
    if report.actions.is_empty() {
        return plain_lines(&["🔄 <b>Reconciliation</b>: store and exchange agree.".to_string()]);
    }
    let mut lines =
        vec![format!("🔄 <b>Reconciliation</b>: {} difference(s) settled", report.actions.len())];
    lines.extend(report.actions.iter().map(|a| format!("• {}", escape(a))));
    plain_lines(&lines)
}

/// An order whose outcome is unknown; it is looked up by its client order id, never re-sent
/// blindly.
pub fn entry_unknown_alert(a: &EntryUnknownAlert) -> Outgoing {
    plain_lines(&[
        format!("⚠️ <b>Order outcome unknown: {}</b>", escape(&a.symbol)),
        format!(
            "Order <code>{}</code> got no clear answer from the exchange: {}",
            escape(&a.client_order_id),
            escape(&a.detail)
        ),
        "The service looks it up by this client order id before sending anything again; \
         reconciliation reports the outcome."
            .to_string(),
    ])
}
