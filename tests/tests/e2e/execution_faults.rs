//! Faults injected at the exchange simulator during the entry and during the OCO of a
//! confirmed signal: timeout, 5xx with and without execution, 429, connection dropped after
//! execution, -2010. Whatever happens: never a duplicate order, and never an unprotected
//! position without an alert to the boss.

use crate::trading_support::{Trading, good_signal};
use spotbot_sim::FaultKind;
use std::collections::BTreeSet;

const OCO: &str = "/api/v3/orderList/oco";

/// Distinct OCO lists the simulator holds.
fn oco_lists(t: &Trading) -> usize {
    t.orders_of("LIMIT_MAKER", "SELL")
        .iter()
        .map(|o| o["orderListId"].as_i64().unwrap())
        .collect::<BTreeSet<_>>()
        .len()
}

/// Confirms a good ETHUSDT signal with `fault` armed; returns the confirm answer.
async fn confirm_with_fault(
    kind: FaultKind,
    count: u32,
    path: Option<&str>,
) -> (Trading, serde_json::Value) {
    let t = Trading::start().await;
    t.create_signal(good_signal("ETHUSDT")).await;
    t.fault(kind, count, path);
    let (status, answer) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 200, "{answer}");
    (t, answer)
}

/// The entry filled once and the position is protected by exactly one OCO.
async fn assert_one_protected_position(t: &Trading, answer: &serde_json::Value) {
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1, "never a duplicate entry");
    assert_eq!(oco_lists(t), 1, "exactly one OCO");
    let trades = t.open_trades().await;
    assert_eq!(trades.len(), 1);
    assert_eq!(trades[0]["protection"], "protected", "{trades:?}");
}

async fn assert_unprotected_with_alert(t: &Trading) {
    let trades = t.open_trades().await;
    assert_eq!(trades.len(), 1, "the filled entry is a trade");
    assert_eq!(trades[0]["protection"], "unprotected", "{trades:?}");
    assert_eq!(trades[0]["sl_placed"], "failed");
    t.message_containing("UNPROTECTED POSITION: ETHUSDT").await;
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1, "never a duplicate entry");
}

// ---- during the entry -------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entry_timeout_after_execution_is_found_by_lookup_and_protected() {
    let (t, answer) =
        confirm_with_fault(FaultKind::Delay { ms: 2500, before: false }, 1, None).await;
    assert_one_protected_position(&t, &answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entry_5xx_after_execution_is_found_by_lookup_and_protected() {
    let (t, answer) =
        confirm_with_fault(FaultKind::ServerError { status: 500, execute: true }, 1, None).await;
    assert_one_protected_position(&t, &answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entry_5xx_without_execution_is_sent_again_only_after_the_lookup() {
    let (t, answer) =
        confirm_with_fault(FaultKind::ServerError { status: 503, execute: false }, 1, None).await;
    assert_one_protected_position(&t, &answer).await;
    assert_eq!(t.seen("POST", "/api/v3/order").len(), 2, "sent, looked up absent, sent once more");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entry_429_is_waited_out_and_sent_once() {
    let (t, answer) = confirm_with_fault(FaultKind::RateLimit { retry_after: 1 }, 1, None).await;
    assert_one_protected_position(&t, &answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entry_connection_dropped_after_execution_is_found_by_lookup() {
    let (t, answer) = confirm_with_fault(FaultKind::DropAfterExecute, 1, None).await;
    assert_one_protected_position(&t, &answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entry_refused_with_2010_places_nothing_and_keeps_the_signal() {
    let (t, answer) =
        confirm_with_fault(FaultKind::Reject { code: -2010, msg: None }, 1, None).await;
    assert_eq!(
        (answer["ok"].as_bool(), answer["status"].as_str()),
        (Some(false), Some("pending")),
        "{answer}"
    );
    assert!(answer["trade"]["error"].as_str().unwrap().contains("-2010"), "{answer}");
    assert!(t.orders().is_empty(), "nothing exists at the exchange");
    assert!(t.open_trades().await.is_empty());
    let (status, _) = t.get("/api/signal/ETHUSDT").await;
    assert_eq!(status, 200, "the signal is still pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entry_outcome_that_stays_unknown_is_never_sent_a_third_time() {
    // Every send times out before the exchange executes it, and every lookup says absent:
    // the client sends twice, then the journal holds the id unsettled.
    let (t, answer) =
        confirm_with_fault(FaultKind::Delay { ms: 2500, before: true }, 2, None).await;
    assert_eq!(answer["ok"], false, "{answer}");
    assert_eq!(answer["status"], "confirmed", "the signal is consumed: no retry may double it");
    assert!(t.seen("POST", "/api/v3/order").len() <= 2);
    let (_, again) = t.confirm("ETHUSDT").await;
    assert_eq!(again["already_confirmed"], true, "{again}");
    assert!(t.seen("POST", "/api/v3/order").len() <= 2, "the repeat sent nothing");
    t.message_containing("Order outcome unknown").await;
    // Reconciliation settles it by lookup: absent, nothing to protect.
    let (status, report) = t.get("/api/trades/recover").await;
    assert_eq!(status, 200, "{report}");
    assert!(report["actions"].to_string().contains("never placed"), "{report}");
    assert!(t.orders_of("MARKET", "BUY").is_empty());
}

// ---- during the OCO ---------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oco_timeout_after_execution_is_found_by_lookup() {
    let (t, answer) =
        confirm_with_fault(FaultKind::Delay { ms: 2500, before: false }, 1, Some(OCO)).await;
    assert_one_protected_position(&t, &answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oco_5xx_after_execution_is_found_by_lookup() {
    let (t, answer) =
        confirm_with_fault(FaultKind::ServerError { status: 502, execute: true }, 1, Some(OCO))
            .await;
    assert_one_protected_position(&t, &answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oco_5xx_without_execution_is_retried() {
    let (t, answer) =
        confirm_with_fault(FaultKind::ServerError { status: 503, execute: false }, 3, Some(OCO))
            .await;
    assert_one_protected_position(&t, &answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oco_429_is_waited_out() {
    let (t, answer) =
        confirm_with_fault(FaultKind::RateLimit { retry_after: 1 }, 1, Some(OCO)).await;
    assert_one_protected_position(&t, &answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oco_connection_dropped_after_execution_is_found_by_lookup() {
    let (t, answer) = confirm_with_fault(FaultKind::DropAfterExecute, 1, Some(OCO)).await;
    assert_one_protected_position(&t, &answer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oco_refused_with_2010_leaves_the_trade_unprotected_and_alerts_the_boss() {
    let (t, answer) =
        confirm_with_fault(FaultKind::Reject { code: -2010, msg: None }, 10, Some(OCO)).await;
    assert_eq!(answer["ok"], true, "the entry happened: {answer}");
    assert_eq!(answer["trade"]["opened"]["protection"], "unprotected", "{answer}");
    assert_eq!(oco_lists(&t), 0);
    assert_unprotected_with_alert(&t).await;

    // Once the exchange accepts OCOs again, reconciliation protects the position.
    t.sim.sim.clear_faults();
    let (status, report) = t.get("/api/trades/recover").await;
    assert_eq!(status, 200, "{report}");
    assert!(report["actions"].to_string().contains("OCO placed"), "{report}");
    assert_eq!(oco_lists(&t), 1);
    assert_eq!(t.open_trades().await[0]["protection"], "protected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oco_that_never_gets_an_answer_is_retried_then_reported_unprotected() {
    let (t, answer) =
        confirm_with_fault(FaultKind::Delay { ms: 2500, before: true }, 20, Some(OCO)).await;
    assert_eq!(answer["trade"]["opened"]["protection"], "unprotected", "{answer}");
    assert_eq!(oco_lists(&t), 0, "no OCO was executed");
    assert_unprotected_with_alert(&t).await;
}
