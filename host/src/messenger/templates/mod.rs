//! Every message the service sends, worded in one place so the boss sees one voice and a
//! reviewer can check the escaping at a glance: each dynamic value passes through
//! [`escape`] here, nowhere else. Inputs are plain structs, so callers in any area fill them
//! without depending on each other's types.
//!
//! One file per area the messages are about: `approval` (the request and the boss's
//! replies), `trades` (opened, unprotected, closed, reconciled, unknown entry), `pending`
//! (manual LIMIT entries), `protection` (stops moved or gapped, the drawdown pause),
//! `exits` (a leg that filled at the exchange), `scans` (auto-confirmed signals, pump
//! alerts), `report` (the day's PnL) and `system` (health anomalies, free text); `format`
//! holds the number and level formatting they share.

mod approval;
mod exits;
mod format;
mod pending;
mod protection;
mod report;
mod scans;
mod system;
mod trades;

pub use approval::{
    ApprovalRequest, BossReply, approval_decided, approval_request, boss_reply, button_toast,
    reply_help,
};
pub use exits::{ExitFilled, ExitShort, exit_filled, exit_short};
pub use pending::{
    PendingEntryNote, pending_entry_cancelled, pending_entry_expired, pending_entry_filled,
    pending_entry_placed,
};
pub use protection::{
    DrawdownAlert, StopGapped, StopMoveFailed, StopRaised, StreamDown, drawdown_alert, stop_gapped,
    stop_move_failed, stops_raised, stream_back, stream_down,
};
pub use report::{DailyReport, ReportPosition, ReportTrade, daily_report};
pub use scans::{AutoConfirmed, PumpAlertNote, auto_confirmed, pump_alert};
pub use system::{SystemAlert, plain, system_alert};
pub use trades::{
    CloseOutcome, CloseReport, CloseRow, EntryUnknownAlert, ReconciliationReport, TradeOpened,
    UnprotectedAlert, close_result, entry_unknown_alert, reconciliation_report, trade_opened,
    unprotected_alert,
};

use super::html::escape;
use format::{number, percent, plain_lines};

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
            signal_id: "mi2k3x9z".into(),
            origin: "posted by agent <scout>, checklist written by the agent".into(),
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
            "Source: posted by agent <scout>, checklist written by the agent",
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
        assert_eq!(data, ["1-YES BTCUSDT mi2k3x9z", "0-NO BTCUSDT mi2k3x9z"]);
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
                    size: nasty.clone(),
                    outcome: CloseOutcome::Failed { error: nasty.clone() },
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
                    size: "0.0015".into(),
                    outcome: CloseOutcome::Sold { pnl: Some("+1.20 USDT".into()) },
                },
                CloseRow {
                    symbol: "ETHUSDT".into(),
                    size: "0.5".into(),
                    outcome: CloseOutcome::Failed { error: "-2010 insufficient balance".into() },
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
