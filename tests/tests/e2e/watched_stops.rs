//! The stop the service watches (`[protection] stop = "service"`), over HTTP against the
//! simulator: only the take-profit rests on the exchange; when the price crosses the stop the
//! service cancels the take-profit and sells at market once (one client order id, also after
//! an ambiguous answer); the stop trails like an exchange-side one without touching the
//! exchange, the watch survives a restart, and a take-profit fill is settled by the
//! protection run.

use std::time::{Duration, Instant};

use crate::trading_support::{Trading, d};
use serde_json::Value;
use spotbot_sim::FaultKind;

const SERVICE_STOP: &str = "\n[protection]\nstop = \"service\"\nwatch_interval_ms = 200\n";

async fn start() -> Trading {
    Trading::start_with(SERVICE_STOP).await
}

/// Waits (up to 5 s) until no trade is open.
async fn until_closed(t: &Trading) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !t.open_trades().await.is_empty() {
        assert!(Instant::now() < deadline, "the watched stop did not exit: {:?}", t.orders());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn market_sells(t: &Trading) -> Vec<Value> {
    t.orders_of("MARKET", "SELL")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_take_profit_rests_and_a_crossed_stop_sells_once_at_market() {
    let t = start().await;
    let opened = t.buy("ETHUSDT").await["trade"].clone();
    assert_eq!(
        (opened["stop"].as_str(), opened["protection"].as_str()),
        (Some("service"), Some("protected"))
    );
    let take_profits = t.orders_of("LIMIT", "SELL");
    assert_eq!(take_profits.len(), 1, "{:?}", t.orders());
    let tp = &take_profits[0];
    let tp_px = d(tp["price"].as_str().unwrap());
    assert_eq!(Some(tp_px.to_string().parse::<f64>().unwrap()), opened["tp_px"].as_f64(), "{tp}");
    assert_eq!(tp["origQty"].as_str().map(d), opened["size"].as_f64().map(|s| d(&s.to_string())));
    assert_eq!(opened["tp_oid"], tp["orderId"]);
    assert!(opened["sl_oid"].is_null() && opened["oco_list_id"].is_null(), "{opened}");
    assert!(t.orders_of("STOP_LOSS_LIMIT", "SELL").is_empty(), "no stop on the book");

    t.set_price("ETHUSDT", "2939");
    until_closed(&t).await;
    let sells = market_sells(&t);
    assert_eq!(sells.len(), 1, "{sells:?}");
    assert!(sells[0]["clientOrderId"].as_str().unwrap().ends_with('X'), "{sells:?}");
    assert_eq!(sells[0]["origQty"], tp["origQty"], "the whole position");
    let tp_after: Vec<_> =
        t.orders_of("LIMIT", "SELL").into_iter().filter(|o| o["status"] == "CANCELED").collect();
    assert_eq!(tp_after.len(), 1, "the take-profit was cancelled first");
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["trades"][0]["reason"], "stop_loss", "{history}");
    t.message_containing("Stop-loss hit: ETHUSDT").await;

    // Later ticks see no trade: nothing is sold twice.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(market_sells(&t).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exit_whose_answer_is_lost_is_looked_up_not_sent_again() {
    let t = start().await;
    t.buy("ETHUSDT").await;
    t.fault(FaultKind::DropAfterExecute, 1, Some("/api/v3/order"));
    t.set_price("ETHUSDT", "2900");
    until_closed(&t).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(market_sells(&t).len(), 1, "one exit at the exchange: {:?}", t.orders());
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["total"], 1, "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_stop_trails_without_orders_and_is_watched_again_after_a_restart() {
    let t = start().await;
    let opened = t.buy("ETHUSDT").await["trade"].clone();
    let orders_before = t.orders().len();
    t.set_price("ETHUSDT", "3100");
    let (status, report) = t.get("/api/trailing").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["updated"][0]["new_sl"].as_f64(), Some(3069.0), "{report}");
    assert_eq!(t.orders().len(), orders_before, "moving a watched stop sends nothing");
    let (_, trades) = t.get("/api/trades").await;
    assert_eq!(trades["trades"][0]["sl_px"].as_f64(), Some(3069.0), "{trades}");
    // The stop history shows both levels, from the journal.
    let (_, dashboard) = t.get("/api/dashboard/trades").await;
    let stops: Vec<f64> = dashboard["trades"][0]["trailing"]["stops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["price"].as_f64().unwrap())
        .collect();
    assert_eq!(stops, vec![opened["sl_px"].as_f64().unwrap(), 3069.0], "{dashboard}");

    let t = t.restart().await;
    t.set_price("ETHUSDT", "3060");
    until_closed(&t).await;
    let (_, history) = t.get("/api/trades/history").await;
    let row = &history["trades"][0];
    assert_eq!(row["reason"], "stop_loss", "{history}");
    assert!(row["pnl"].as_f64().unwrap() > 0.0, "the trailed stop locked in a gain: {row}");
    assert_eq!(market_sells(&t).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_trades_take_profit_fill_is_settled_by_the_protection_run() {
    let t = start().await;
    t.buy("ETHUSDT").await;
    t.set_price("ETHUSDT", "3200");
    let filled: Vec<_> =
        t.orders_of("LIMIT", "SELL").into_iter().filter(|o| o["status"] == "FILLED").collect();
    assert_eq!(filled.len(), 1, "{:?}", t.orders());
    let (_, report) = t.get("/api/trailing").await;
    assert_eq!(report["exits"][0]["reason"], "take_profit", "{report}");
    t.message_containing("Take-profit hit: ETHUSDT").await;
    assert!(market_sells(&t).is_empty(), "the take-profit sold it");
}
