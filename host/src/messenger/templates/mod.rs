//! Every message the service sends, worded in one place so the boss sees one voice and a
//! reviewer can check the escaping at a glance: each dynamic value passes through
//! [`escape`] here, nowhere else. Inputs are plain structs, so callers in any area fill them
//! without depending on each other's types.

mod exits;
mod scans;

pub use exits::{ExitFilled, exit_filled};
pub use scans::{AutoConfirmed, PumpAlertNote, auto_confirmed, pump_alert};

use super::html::escape;
use super::{Button, Outgoing};

/// A new pending signal waiting for the boss's YES or NO.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    pub symbol: String,
    pub direction: String,
    pub bot: String,
    pub price: Option<f64>,
    pub sl_pct: Option<f64>,
    pub tp_pct: Option<f64>,
    pub sl_px: Option<f64>,
    pub tp_px: Option<f64>,
    /// (name, pass, detail) per checklist item.
    pub checklist: Vec<(String, bool, String)>,
    pub passed: Option<u32>,
    pub total: Option<u32>,
    pub ev: f64,
    pub confidence: u32,
    pub expires_in_minutes: u32,
}

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
    /// `closed` or `error`.
    pub status: String,
    pub size: String,
    pub pnl: Option<String>,
    pub error: Option<String>,
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

/// The approval request: summary, checklist, gates, the typed reply forms and YES/NO buttons
/// whose `callback_data` are exactly the reply forms, so a press and a typed answer read alike.
pub fn approval_request(r: &ApprovalRequest) -> Outgoing {
    let symbol = escape(&r.symbol);
    let mut lines = vec![
        format!("🔔 <b>Approve {} {symbol}?</b>", escape(&r.direction.to_uppercase())),
        format!("Strategy: {}", escape(&r.bot)),
    ];
    if let Some(price) = r.price {
        lines.push(format!("Price: {}", number(price)));
    }
    lines.extend(level("Stop-loss", r.sl_px, r.sl_pct));
    lines.extend(level("Take-profit", r.tp_px, r.tp_pct));
    let passed = r.passed.unwrap_or_else(|| r.checklist.iter().filter(|c| c.1).count() as u32);
    let total = r.total.unwrap_or(r.checklist.len() as u32);
    if total > 0 || !r.checklist.is_empty() {
        lines.push(format!("Checklist: <b>{passed}/{total}</b> passed"));
    }
    for (name, pass, detail) in &r.checklist {
        let mark = if *pass { "✅" } else { "❌" };
        lines.push(if detail.is_empty() {
            format!("{mark} {}", escape(name))
        } else {
            format!("{mark} {} — <i>{}</i>", escape(name), escape(detail))
        });
    }
    lines.push(format!("EV: <b>{}</b> · confidence: <b>{}</b>", number(r.ev), r.confidence));
    let yes = format!("1-YES {}", r.symbol);
    let no = format!("0-NO {}", r.symbol);
    lines.push(format!(
        "Reply <code>{}</code> to approve or <code>{}</code> to reject (expires in {} min).",
        escape(&yes),
        escape(&no),
        r.expires_in_minutes
    ));
    Outgoing {
        html: lines.join("\n"),
        buttons: vec![
            Button { text: "✅ YES".into(), callback_data: yes },
            Button { text: "❌ NO".into(), callback_data: no },
        ],
    }
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
    let closed = report.rows.iter().filter(|r| r.status == "closed").count();
    let mut lines = vec![format!("<b>Close</b>: {closed} of {} closed", report.rows.len())];
    for row in &report.rows {
        let symbol = escape(&row.symbol);
        let size = escape(&row.size);
        lines.push(if row.status == "closed" {
            let pnl =
                row.pnl.as_deref().map(|p| format!(", PnL {}", escape(p))).unwrap_or_default();
            format!("✅ {symbol}: sold {size}{pnl}")
        } else {
            let error = escape(row.error.as_deref().unwrap_or("unknown error"));
            format!("❌ {symbol} ({size}): {} — {error}", escape(&row.status))
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

/// A stop could not be moved; the old levels protect the position again.
#[derive(Debug, Clone, PartialEq)]
pub struct StopMoveFailed {
    pub symbol: String,
    pub wanted_sl: String,
    pub kept_sl: String,
    pub reason: String,
}

pub fn stop_move_failed(f: &StopMoveFailed) -> Outgoing {
    plain_lines(&[
        format!("⚠️ <b>Stop not moved: {}</b>", escape(&f.symbol)),
        format!(
            "The new OCO with the stop at {} was refused: {}",
            escape(&f.wanted_sl),
            escape(&f.reason)
        ),
        format!("The position is protected again at the old stop {}.", escape(&f.kept_sl)),
    ])
}

/// Stops raised by a trailing run, one line each.
#[derive(Debug, Clone, PartialEq)]
pub struct StopRaised {
    pub symbol: String,
    pub old_sl: String,
    pub new_sl: String,
    pub profit_pct: String,
}

pub fn stops_raised(rows: &[StopRaised]) -> Outgoing {
    let mut lines = vec![format!("📈 <b>Trailing stop</b>: {} stop(s) moved", rows.len())];
    lines.extend(rows.iter().map(|r| {
        format!(
            "• {}: {} → {} (profit {}%)",
            escape(&r.symbol),
            escape(&r.old_sl),
            escape(&r.new_sl),
            escape(&r.profit_pct)
        )
    }));
    plain_lines(&lines)
}

/// A stop that triggered without filling: the market gapped beyond its limit.
#[derive(Debug, Clone, PartialEq)]
pub struct StopGapped {
    pub symbol: String,
    pub stop_px: String,
    pub price: String,
    /// What the service did: closed at market, or only this alert.
    pub action: String,
}

pub fn stop_gapped(g: &StopGapped) -> Outgoing {
    plain_lines(&[
        format!("🚨 <b>Stop gapped: {}</b>", escape(&g.symbol)),
        format!(
            "The stop at {} triggered but did not fill: the price {} is beyond its limit, the \
             position is still open.",
            escape(&g.stop_px),
            escape(&g.price)
        ),
        escape(&g.action),
    ])
}

/// Arbitrary text from `GET /api/notify`, shown as written.
pub fn plain(text: &str) -> Outgoing {
    Outgoing { html: escape(text), buttons: Vec::new() }
}

fn plain_lines(lines: &[String]) -> Outgoing {
    Outgoing { html: lines.join("\n"), buttons: Vec::new() }
}

/// `Stop-loss: 63700 (2%)`, with whichever of price and percent is known.
fn level(label: &str, px: Option<f64>, pct: Option<f64>) -> Option<String> {
    match (px, pct) {
        (Some(px), Some(pct)) => Some(format!("{label}: {} ({})", number(px), percent(pct))),
        (Some(px), None) => Some(format!("{label}: {}", number(px))),
        (None, Some(pct)) => Some(format!("{label}: {}", percent(pct))),
        (None, None) => None,
    }
}

/// A price or amount as plain digits: 8 significant digits, never scientific notation,
/// trailing zeros trimmed (`65000.5`, `0.00001234`).
fn number(x: f64) -> String {
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

fn percent(x: f64) -> String {
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

/// The boss's answer to an approval request, typed or pressed in the chat, and what it came
/// to (`[messenger] handle_replies`).
#[derive(Debug, Clone, PartialEq)]
pub struct BossReply {
    pub symbol: String,
    /// `YES` or `NO`.
    pub decision: String,
    /// The answer took effect: confirmed (or already confirmed) for YES, rejected for NO.
    pub ok: bool,
    /// What happened, in one sentence.
    pub detail: String,
}

/// The outcome of the boss's reply, sent back to the chat: one line.
pub fn boss_reply(r: &BossReply) -> Outgoing {
    let mark = match (r.ok, r.decision == "YES") {
        (false, _) => "⚠️",
        (true, true) => "✅",
        (true, false) => "❌",
    };
    plain_lines(&[format!(
        "{mark} <b>{} {}</b>: {}",
        escape(&r.decision),
        escape(&r.symbol),
        escape(&r.detail)
    )])
}

/// The approval request once decided, as the edit of that message: its text as the boss saw
/// it (the messenger hands it back without markup), the outcome below, and no buttons.
pub fn approval_decided(request_text: &str, r: &BossReply) -> Outgoing {
    // The outcome line must fit under the Bot API's 4096 characters as well.
    let request: String = request_text.chars().take(3500).collect();
    Outgoing {
        html: format!("{}\n\n{}", escape(&request), boss_reply(r).html),
        buttons: Vec::new(),
    }
}

/// The short notice on a pressed button (plain text; the Bot API takes up to 200 characters).
pub fn button_toast(symbol: &str, decision: &str) -> String {
    let text = format!("{decision} {symbol}: received");
    text.chars().take(200).collect()
}

/// The answer to a message from the boss that is not one of the reply forms.
pub fn reply_help() -> Outgoing {
    plain_lines(&["Reply <code>1-YES SYMBOL</code> to approve a pending signal or \
                   <code>0-NO SYMBOL</code> to reject it, e.g. <code>1-YES BTCUSDT</code>."
        .to_string()])
}

/// The account equity fell further below its high-water mark than `[protection]
/// max_drawdown_pct`. Amounts are formatted by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawdownAlert {
    pub equity: String,
    pub high_water_mark: String,
    pub drawdown_pct: String,
    pub max_drawdown_pct: String,
    pub currency: String,
}

/// Loud on purpose: automated entries stay stopped until someone decides to resume them.
pub fn drawdown_alert(a: &DrawdownAlert) -> Outgoing {
    let currency = escape(&a.currency);
    plain_lines(&[
        format!("🚨 <b>DRAWDOWN {}%: new entries paused</b>", escape(&a.drawdown_pct)),
        format!(
            "Equity {} {currency} is {}% below its high-water mark {} {currency} (limit {}%).",
            escape(&a.equity),
            escape(&a.drawdown_pct),
            escape(&a.high_water_mark),
            escape(&a.max_drawdown_pct)
        ),
        "Open positions keep their stop-loss and take-profit. No new trade is entered until \
         entries are resumed (ask coo: <code>POST /api/protection/resume</code>)."
            .to_string(),
    ])
}

/// The end-of-day PnL summary (`POST /api/status/report`, 21:00 in `[market] timezone`).
#[derive(Debug, Clone, PartialEq)]
pub struct DailyReport {
    /// YYYY-MM-DD in `timezone`.
    pub date: String,
    pub timezone: String,
    pub currency: String,
    /// Trades closed that day, in the order they closed.
    pub closed: Vec<ReportTrade>,
    pub wins: usize,
    pub losses: usize,
    pub breakeven: usize,
    pub realized_pnl: String,
    pub open: Vec<ReportPosition>,
    /// None when the prices could not be read.
    pub unrealized_pnl: Option<String>,
    /// None when the exchange could not be read.
    pub equity: Option<String>,
    pub drawdown_pct: Option<String>,
    /// New entries are paused by the drawdown limit.
    pub paused: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReportTrade {
    pub symbol: String,
    pub direction: String,
    pub pnl: String,
    /// `take_profit`, `stop_loss` or `market`.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReportPosition {
    pub symbol: String,
    pub direction: String,
    pub size: String,
    pub entry_px: String,
    /// None when the price could not be read.
    pub price: Option<String>,
    pub unrealized_pnl: Option<String>,
}

/// One message (split by the client when long): the day's closed trades, the open positions,
/// equity and drawdown.
pub fn daily_report(r: &DailyReport) -> Outgoing {
    let currency = escape(&r.currency);
    let mut lines = vec![
        format!("📊 <b>Daily PnL {}</b> ({})", escape(&r.date), escape(&r.timezone)),
        format!(
            "Closed: {} ({} won, {} lost, {} even) · PnL <b>{} {currency}</b>",
            r.closed.len(),
            r.wins,
            r.losses,
            r.breakeven,
            escape(&r.realized_pnl)
        ),
    ];
    for t in &r.closed {
        lines.push(format!(
            "• {} {}: {} {currency} ({})",
            escape(&t.symbol),
            escape(&t.direction),
            escape(&t.pnl),
            escape(&t.reason)
        ));
    }
    let unavailable = || "unavailable".to_string();
    if r.open.is_empty() {
        lines.push("Open positions: none".to_string());
    } else {
        lines.push(format!(
            "Open positions: {} · unrealized {}",
            r.open.len(),
            r.unrealized_pnl
                .as_deref()
                .map_or_else(unavailable, |p| format!("{} {currency}", escape(p)))
        ));
    }
    for p in &r.open {
        lines.push(format!(
            "• {} {} {} at {} → {}: {}",
            escape(&p.symbol),
            escape(&p.direction),
            escape(&p.size),
            escape(&p.entry_px),
            p.price.as_deref().map_or_else(unavailable, escape),
            p.unrealized_pnl
                .as_deref()
                .map_or_else(unavailable, |u| format!("{} {currency}", escape(u)))
        ));
    }
    lines.push(match (&r.equity, &r.drawdown_pct) {
        (Some(equity), Some(drawdown)) => {
            format!("Equity {} {currency} · drawdown {}%", escape(equity), escape(drawdown))
        }
        _ => "Equity: unavailable (the exchange could not be read)".to_string(),
    });
    if r.paused {
        lines.push(
            "⏸ New entries are paused by the drawdown limit (resume: \
             <code>POST /api/protection/resume</code>)."
                .to_string(),
        );
    }
    plain_lines(&lines)
}

/// What the hourly health check found wrong, one sentence per anomaly.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemAlert {
    pub anomalies: Vec<String>,
}

pub fn system_alert(a: &SystemAlert) -> Outgoing {
    let mut lines = vec![format!(
        "⚠️ <b>System alert</b>: the health check found {} problem(s)",
        a.anomalies.len()
    )];
    lines.extend(a.anomalies.iter().map(|line| format!("• {}", escape(line))));
    plain_lines(&lines)
}

#[cfg(test)]
mod tests {
    use super::super::html::to_plain;
    use super::*;

    fn approval() -> ApprovalRequest {
        ApprovalRequest {
            symbol: "BTCUSDT".into(),
            direction: "buy".into(),
            bot: "a<b&c>".into(),
            price: Some(65000.5),
            sl_pct: Some(2.0),
            tp_pct: Some(4.0),
            sl_px: Some(63700.49),
            tp_px: None,
            checklist: vec![
                ("rsi < 30".into(), true, "rsi 27.1".into()),
                ("volume".into(), false, String::new()),
            ],
            passed: None,
            total: None,
            ev: 31.25,
            confidence: 8,
            expires_in_minutes: 5,
        }
    }

    #[test]
    fn approval_request_has_reply_forms_buttons_and_escaped_values() {
        let out = approval_request(&approval());
        assert!(out.html.contains("a&lt;b&amp;c&gt;"), "{}", out.html);
        assert!(out.html.contains("rsi &lt; 30"), "{}", out.html);
        let text = to_plain(&out.html);
        for expected in [
            "1-YES BTCUSDT",
            "0-NO BTCUSDT",
            "Strategy: a<b&c>",
            "Price: 65000.5",
            "Stop-loss: 63700.49 (2%)",
            "Take-profit: 4%",
            "Checklist: 1/2 passed",
            "✅ rsi < 30 — rsi 27.1",
            "❌ volume",
            "EV: 31.25 · confidence: 8",
            "expires in 5 min",
        ] {
            assert!(text.contains(expected), "{expected:?} missing in {text}");
        }
        let data: Vec<&str> = out.buttons.iter().map(|b| b.callback_data.as_str()).collect();
        assert_eq!(data, ["1-YES BTCUSDT", "0-NO BTCUSDT"]);
    }

    #[test]
    fn dynamic_values_are_escaped_in_every_template() {
        let nasty = "<x>&".to_string();
        let outs = [
            trade_opened(&TradeOpened {
                symbol: nasty.clone(),
                direction: nasty.clone(),
                bot: nasty.clone(),
                size: nasty.clone(),
                entry_px: nasty.clone(),
                sl_px: nasty.clone(),
                tp_px: nasty.clone(),
                entry_order_id: 1,
                oco_list_id: Some(2),
                sl_oid: Some(3),
                tp_oid: None,
                stop_watched: false,
                exchange: nasty.clone(),
            }),
            unprotected_alert(&UnprotectedAlert {
                symbol: nasty.clone(),
                size: nasty.clone(),
                entry_px: nasty.clone(),
                reason: nasty.clone(),
                exchange: nasty.clone(),
            }),
            close_result(&CloseReport {
                rows: vec![CloseRow {
                    symbol: nasty.clone(),
                    status: "error".into(),
                    size: nasty.clone(),
                    pnl: None,
                    error: Some(nasty.clone()),
                }],
            }),
            reconciliation_report(&ReconciliationReport { actions: vec![nasty.clone()] }),
            entry_unknown_alert(&EntryUnknownAlert {
                symbol: nasty.clone(),
                client_order_id: nasty.clone(),
                detail: nasty.clone(),
            }),
            plain(&nasty),
        ];
        for out in outs {
            assert!(!out.html.contains("<x>"), "{}", out.html);
            assert!(out.html.contains("&lt;x&gt;&amp;"), "{}", out.html);
        }
    }

    #[test]
    fn close_result_lists_every_position() {
        let out = close_result(&CloseReport {
            rows: vec![
                CloseRow {
                    symbol: "BTCUSDT".into(),
                    status: "closed".into(),
                    size: "0.0015".into(),
                    pnl: Some("+1.20 USDT".into()),
                    error: None,
                },
                CloseRow {
                    symbol: "ETHUSDT".into(),
                    status: "error".into(),
                    size: "0.5".into(),
                    pnl: None,
                    error: Some("-2010 insufficient balance".into()),
                },
            ],
        });
        let text = to_plain(&out.html);
        assert!(text.contains("1 of 2 closed"), "{text}");
        assert!(text.contains("✅ BTCUSDT: sold 0.0015, PnL +1.20 USDT"), "{text}");
        assert!(text.contains("❌ ETHUSDT (0.5): error — -2010 insufficient balance"), "{text}");
    }

    #[test]
    fn numbers_are_plain_digits() {
        assert_eq!(number(65000.5), "65000.5");
        assert_eq!(number(65000.0), "65000");
        assert_eq!(number(0.00001234), "0.00001234");
        assert_eq!(number(1.0e-9), "0.000000001");
        assert_eq!(number(123456789.0), "123456789");
        assert_eq!(number(-0.5), "-0.5");
        assert_eq!(number(f64::NAN), "n/a");
        assert_eq!(percent(2.5), "2.5%");
        assert_eq!(percent(3.0), "3%");
    }
}
