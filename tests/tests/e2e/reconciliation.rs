//! Reconciliation at start and on `GET /api/trades/recover`, and `POST /api/trades/restore`:
//! an OCO leg that filled while the service was down closes its trade with its pnl; an open
//! OCO the store does not know is adopted; a restored trade is tied to its OCO.

use crate::trading_support::{Trading, d};
use serde_json::json;
use spotbot::exchange::{Exchange, NewOco, NewOrder, Price, Qty, Side};

/// Buys 2 SOL by hand and protects 1.99 with an OCO (tp 160, stop 140) whose list client id is
/// `list_id`; returns the entry and the list.
async fn position_by_hand(
    t: &Trading,
    list_id: &str,
) -> (spotbot::exchange::Order, spotbot::exchange::OrderList) {
    let client = t.by_hand();
    let entry_id = format!("{list_id}-entry");
    let bought = client
        .place_order(&NewOrder::market("SOLUSDT", Side::Buy, Qty(d("2")), &entry_id))
        .await
        .unwrap();
    let oco = NewOco {
        symbol: "SOLUSDT".into(),
        side: Side::Sell,
        qty: Qty(d("1.99")),
        take_profit: Price(d("160")),
        stop_price: Price(d("140")),
        stop_limit_price: Price(d("139.7")),
        list_client_order_id: list_id.into(),
        take_profit_client_order_id: None,
        stop_client_order_id: None,
    };
    (bought, client.place_oco(&oco).await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_profit_filled_while_down_closes_the_trade_at_restart() {
    let t = Trading::start().await;
    t.buy("ETHUSDT").await;
    t.set_price("ETHUSDT", "3200");
    let t = t.restart().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !t.open_trades().await.is_empty() {
        assert!(std::time::Instant::now() < deadline, "the trade was not closed");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let history = t.host.app.state.execution.book().history(0, 10).unwrap();
    assert_eq!(history.len(), 1);
    let closed = &history[0];
    assert_eq!(format!("{:?}", closed.reason), "TakeProfit");
    assert!(closed.pnl > d("40"), "about 5 % of 1000 USDT minus fees: {}", closed.pnl);
    assert!(t.orders_of("MARKET", "SELL").is_empty(), "nothing was sold at market");
    t.message_containing("Reconciliation").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_open_oco_is_adopted_as_a_recovered_trade() {
    let t = Trading::start().await;
    let (bought, list) = position_by_hand(&t, "hand-oco").await;

    let (status, report) = t.get("/api/trades/recover").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(
        (report["ok"].as_bool(), report["recovered"].as_u64()),
        (Some(true), Some(1)),
        "{report}"
    );
    let trade = &report["trades"][0];
    assert_eq!(trade["symbol"], "SOLUSDT");
    assert_eq!(trade["source"], "recovered");
    assert_eq!(trade["size"], 1.99);
    assert_eq!((trade["tp_px"].as_f64(), trade["sl_px"].as_f64()), (Some(160.0), Some(140.0)));
    let entry = bought.avg_price().unwrap().0.to_string().parse::<f64>().unwrap();
    assert_eq!(trade["entry_px"].as_f64(), Some(entry), "entry from the newest buy");
    assert_eq!(trade["oco_list_id"], list.order_list_id);

    // A second run adopts nothing more: the symbol is tracked.
    let (_, again) = t.get("/api/trades/recover").await;
    assert_eq!(again["recovered"], 0, "{again}");
    // And the adopted trade is managed like any other: close cancels its OCO first.
    let (status, closed) = t.post_empty("/api/close?symbol=SOL").await;
    assert_eq!(status, 200, "{closed}");
    assert!(t.seen("POST", "/api/v3/order").iter().all(|r| r.status == 200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_ties_a_trade_to_its_oco_and_names_bad_fields() {
    let t = Trading::start().await;
    let (_, list) = position_by_hand(&t, "hand-oco2").await;
    let stop = list
        .orders
        .iter()
        .find(|o| o.order_type == spotbot::exchange::OrderType::StopLossLimit)
        .unwrap()
        .order_id;
    let body = json!({"symbol": "SOLUSDT", "direction": "buy", "size": 1.99, "entry_px": 150.0,
        "sl_px": 140.0, "tp_px": 160.0, "sl_oid": stop, "date": "2026-03-01"});

    let mut bad = body.clone();
    bad["date"] = json!("2026-13-01");
    let (status, err) = t.post("/api/trades/restore", bad).await;
    assert_eq!(status, 422, "{err}");
    assert!(err["detail"].as_str().unwrap().contains("date"), "{err}");
    let mut bad = body.clone();
    bad["sl_px"] = json!(155.0);
    let (status, err) = t.post("/api/trades/restore", bad).await;
    assert_eq!(status, 422, "{err}");
    assert!(err["detail"].as_str().unwrap().contains("sl_px"), "{err}");
    let mut bad = body.clone();
    bad.as_object_mut().unwrap().remove("size");
    let (status, err) = t.post("/api/trades/restore", bad).await;
    assert_eq!(status, 422, "{err}");
    assert!(err["detail"].as_str().unwrap().contains("size"), "{err}");

    let (status, restored) = t.post("/api/trades/restore", body.clone()).await;
    assert_eq!(status, 200, "{restored}");
    let trade = &restored["trade"];
    assert_eq!(
        (trade["bot"].as_str(), trade["source"].as_str()),
        (Some("ta_trend"), Some("restored"))
    );
    assert_eq!(trade["protection"], "protected", "{restored}");
    assert_eq!(trade["oco_list_id"], list.order_list_id);
    assert_eq!(trade["date"], "2026-03-01");
    let (status, dup) = t.post("/api/trades/restore", body).await;
    assert_eq!((status, dup["error"].as_str()), (409, Some("trade_exists")), "{dup}");
}
