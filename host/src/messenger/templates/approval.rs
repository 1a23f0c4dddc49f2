//! The approval flow in the chat: the request that asks the boss for YES or NO on a pending
//! signal, and what his answer (typed or pressed) came to.

use super::escape;
use super::format::{level, number, plain_lines};
use crate::messenger::{Button, Outgoing};

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
    /// The signal's id: the buttons carry it, so a press approves exactly this signal.
    pub signal_id: String,
    /// Where the checklist came from (`Origin::describe`).
    pub origin: String,
}

/// The approval request: summary, source, checklist, gates, the typed reply forms and YES/NO
/// buttons whose `callback_data` are the reply forms followed by the signal's id, so a press
/// answers exactly this signal (a typed answer, the current one of its symbol).
pub fn approval_request(r: &ApprovalRequest) -> Outgoing {
    let symbol = escape(&r.symbol);
    let mut lines = vec![
        format!("🔔 <b>Approve {} {symbol}?</b>", escape(&r.direction.to_uppercase())),
        format!("Strategy: {}", escape(&r.bot)),
        format!("Source: <i>{}</i>", escape(&r.origin)),
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
            Button { text: "✅ YES".into(), callback_data: format!("{yes} {}", r.signal_id) },
            Button { text: "❌ NO".into(), callback_data: format!("{no} {}", r.signal_id) },
        ],
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
