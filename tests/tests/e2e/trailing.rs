//! The trailing stop and the gapped stop over HTTP against the exchange simulator: the OCO is
//! replaced with the same take-profit and a raised stop, never lowered; a failed replacement
//! restores protection at the old levels; a stop that triggered without filling is exited.

use crate::trading_support::{Trading, d};
use rust_decimal::Decimal;
use serde_json::Value;
use spotbot_sim::FaultKind;

fn dec(v: &Value) -> Decimal {
    d(v.as_str().unwrap()).normalize()
}

async fn buy_eth(t: &Trading) -> Value {
    t.buy("ETHUSDT").await["trade"].clone()
}

async fn trail(t: &Trading) -> Value {
    let (status, body) = t.get("/api/trailing").await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The open OCO legs at the simulator: (take-profit, stop).
fn open_legs(t: &Trading) -> (Vec<Value>, Vec<Value>) {
    let open = |o: &Value| o["status"] == "NEW";
    (
        t.orders_of("LIMIT_MAKER", "SELL").into_iter().filter(open).collect(),
        t.orders_of("STOP_LOSS_LIMIT", "SELL").into_iter().filter(open).collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profitable_trade_gets_a_raised_stop_and_it_never_comes_down() {
    let t = Trading::start().await;
    let opened = buy_eth(&t).await;
    let (tp_before, _) = open_legs(&t);
    let tp_px = dec(&tp_before[0]["price"]);

    t.set_price("ETHUSDT", "3030");
    assert!(
        trail(&t).await["updated"].as_array().unwrap().is_empty(),
        "1 % is below the 2 % trigger"
    );

    t.set_price("ETHUSDT", "3100");
    let report = trail(&t).await;
    let updated = report["updated"].as_array().unwrap();
    assert_eq!(updated.len(), 1, "{report}");
    assert_eq!(updated[0]["old_sl"], opened["sl_px"]);
    assert_eq!(updated[0]["new_sl"].as_f64(), Some(3069.0), "1 % below 3100");

    let (tps, sls) = open_legs(&t);
    assert_eq!((tps.len(), sls.len()), (1, 1), "one OCO at a time");
    assert_eq!(dec(&tps[0]["price"]), tp_px, "the same take-profit");
    assert_eq!(dec(&sls[0]["stopPrice"]), d("3069"));
    assert_eq!(dec(&sls[0]["price"]), d("3062.86"), "3069 x 0.998 rounded down");
    assert_eq!(tps[0]["orderListId"], sls[0]["orderListId"]);
    let cancelled =
        t.orders_of("STOP_LOSS_LIMIT", "SELL").iter().filter(|o| o["status"] == "CANCELED").count();
    assert_eq!(cancelled, 1, "the old list was cancelled");
    let trade = &t.open_trades().await[0];
    assert_eq!(trade["sl_oid"], sls[0]["orderId"], "sl_oid follows the new list");
    assert_eq!(trade["tp_oid"], tps[0]["orderId"]);
    assert_eq!(trade["sl_px"].as_f64(), Some(3069.0));
    t.message_containing("Trailing stop").await;

    t.set_price("ETHUSDT", "3080");
    assert!(trail(&t).await["updated"].as_array().unwrap().is_empty(), "never lowered");
    let (_, sls) = open_legs(&t);
    assert_eq!(dec(&sls[0]["stopPrice"]), d("3069"));
    assert!(t.seen("POST", "/api/v3/order").iter().all(|r| r.status == 200), "no -2010");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_replacement_restores_protection_at_the_old_levels() {
    let t = Trading::start().await;
    let opened = buy_eth(&t).await;
    t.set_price("ETHUSDT", "3100");
    // The new OCO is refused (a definite rejection: no retry); the restore is accepted.
    t.fault(
        FaultKind::Reject { code: -2010, msg: Some("Order would immediately trigger.".into()) },
        1,
        Some("/api/v3/orderList/oco"),
    );
    let report = trail(&t).await;
    assert!(report["updated"].as_array().unwrap().is_empty(), "{report}");
    assert!(report["errors"][0].as_str().unwrap().contains("kept the old stop"), "{report}");
    let (tps, sls) = open_legs(&t);
    assert_eq!((tps.len(), sls.len()), (1, 1), "protected again: {sls:?}");
    assert_eq!(
        sls[0]["stopPrice"].as_str().map(|s| d(s).normalize()),
        Some(d(&opened["sl_px"].to_string()))
    );
    let trade = &t.open_trades().await[0];
    assert_eq!(trade["protection"], "protected", "{trade}");
    assert_eq!(trade["sl_oid"], sls[0]["orderId"]);
    t.message_containing("Stop not moved").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_that_gapped_is_exited_at_market() {
    let t = Trading::start().await;
    buy_eth(&t).await;
    // From 3000 straight to 2900: the stop (2940.01) triggers, its limit (2934.12) is above
    // the market, so it rests unfilled and the position stays open.
    t.set_price("ETHUSDT", "2900");
    let (_, sls) = open_legs(&t);
    assert_eq!(sls.len(), 1, "the stop is still working");
    let report = trail(&t).await;
    let gaps = report["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1, "{report}");
    assert!(gaps[0]["error"].is_null(), "{report}");
    assert_eq!(
        (gaps[0]["action"].as_str(), gaps[0]["price"].as_f64()),
        (Some("closed"), Some(2900.0))
    );
    assert_eq!(t.orders_of("MARKET", "SELL").len(), 1, "closed at market");
    assert!(t.open_trades().await.is_empty());
    t.message_containing("Stop gapped").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_gap_exit_alert_a_gapped_stop_is_only_reported() {
    let t = Trading::start_with("[protection]\ngap_exit = \"alert\"\n").await;
    buy_eth(&t).await;
    t.set_price("ETHUSDT", "2900");
    let report = trail(&t).await;
    assert_eq!(report["gaps"][0]["action"], "alerted", "{report}");
    assert!(t.orders_of("MARKET", "SELL").is_empty());
    assert_eq!(t.open_trades().await.len(), 1);
    let note = t.message_containing("Stop gapped").await;
    assert!(note.text.contains("gap_exit"), "{}", note.text);
}
