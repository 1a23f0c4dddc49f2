//! Reconciliation at start and on `GET /api/trades/recover`, and `POST /api/trades/restore`:
//! an OCO leg that filled while the service was down closes its trade with its pnl; an open
//! OCO the store does not know is adopted; a restored trade is tied to its OCO.

use crate::trading_support::{Trading, d};
use serde_json::json;
use spotbot::exchange::OrderLists as _;
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

/// The account's held `base`, free plus locked, at the simulator.
fn held(t: &Trading, base: &str) -> rust_decimal::Decimal {
    let (free, locked) = t.balance(base);
    free + locked
}

/// An entry whose answer said "refused" although it executed (what a damaged answer did before
/// answers were classified strictly; docs/execution.md, "A misbehaving exchange"): the coin
/// the account holds is adopted at the signal's levels and protected, and the boss is told.
/// Coin bought by hand, which the journal does not attribute to the service, is left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coin_of_an_entry_taken_as_refused_is_adopted_and_protected_at_the_signals_levels() {
    let t = Trading::start().await;
    t.create_signal(crate::trading_support::good_signal("ETHUSDT")).await;
    t.fault(spotbot_sim::FaultKind::Reject { code: -2010, msg: None }, 1, None);
    let (_, refused) = t.confirm("ETHUSDT").await;
    assert_eq!(refused["ok"], false, "{refused}");
    let hand = t.by_hand();
    hand.place_order(&NewOrder::market("ETHUSDT", Side::Buy, Qty(d("0.3")), "filled-anyway"))
        .await
        .unwrap();
    hand.place_order(&NewOrder::market("SOLUSDT", Side::Buy, Qty(d("2")), "bought-by-hand"))
        .await
        .unwrap();

    let (status, report) = t.get("/api/trades/recover").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["recovered"], 1, "only the service's coin: {report}");
    let trade = &report["trades"][0];
    assert_eq!(
        (trade["symbol"].as_str(), trade["source"].as_str()),
        (Some("ETHUSDT"), Some("recovered"))
    );
    assert_eq!(
        (trade["sl_pct"].as_f64(), trade["tp_pct"].as_f64()),
        (Some(2.0), Some(5.0)),
        "{trade}"
    );
    assert_eq!(trade["protection"], "protected", "{trade}");
    assert_eq!(crate::trading_support::decimal_of(&trade["size"]), held(&t, "ETH"));
    let oco = t.orders_of("LIMIT_MAKER", "SELL");
    assert_eq!(oco.len(), 1, "one OCO for the adopted coin: {oco:?}");
    assert_eq!(crate::trading_support::decimal_of(&oco[0]["origQty"]), held(&t, "ETH"));
    assert!(report["actions"].to_string().contains("adopted"), "{report}");
    t.message_containing("adopted").await;

    // A second run changes nothing, and the hand-bought SOL is still the operator's.
    let (_, again) = t.get("/api/trades/recover").await;
    assert_eq!(again["recovered"], 0, "{again}");
    assert_eq!(t.open_trades().await.len(), 1);
}

/// `[protection] adopt_holdings = "all"`: coin bought by hand is adopted too, at the
/// configured stop and target.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_adopt_holdings_all_coin_bought_by_hand_is_adopted_at_the_configured_levels() {
    let extra = "[protection]\nadopt_holdings = \"all\"\nadopt_sl_pct = 4.0\nadopt_tp_pct = 8.0\n";
    let t = Trading::start_with(extra).await;
    t.by_hand()
        .place_order(&NewOrder::market("SOLUSDT", Side::Buy, Qty(d("2")), "bought-by-hand"))
        .await
        .unwrap();
    let (status, report) = t.get("/api/trades/recover").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["recovered"], 1, "{report}");
    let trade = &report["trades"][0];
    assert_eq!(
        (trade["sl_pct"].as_f64(), trade["tp_pct"].as_f64()),
        (Some(4.0), Some(8.0)),
        "{trade}"
    );
    assert_eq!(trade["protection"], "protected", "{trade}");
    assert_eq!(trade["bot"], "recovered");
}

/// A trade whose coin the account no longer holds (its OCO cancelled and the coin sold by
/// hand, or by an exit whose answer was lost) is closed from the exchange's sells.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trade_whose_coin_was_sold_outside_is_closed_from_the_exchanges_sells() {
    let t = Trading::start().await;
    t.buy("ETHUSDT").await;
    let trade = t.open_trades().await.remove(0);
    let hand = t.by_hand();
    let list = spotbot::exchange::OrderRef::Id(trade["oco_list_id"].as_i64().unwrap());
    hand.cancel_order_list("ETHUSDT", &list).await.unwrap();
    let coin = held(&t, "ETH");
    let sell =
        NewOrder::market("ETHUSDT", Side::Sell, Qty(coin.trunc_with_scale(4)), "sold-by-hand");
    hand.place_order(&sell).await.unwrap();

    let (status, report) = t.get("/api/trades/recover").await;
    assert_eq!(status, 200, "{report}");
    assert!(t.open_trades().await.is_empty(), "{report}");
    assert_eq!(report["closed"].as_array().map(Vec::len), Some(1), "{report}");
    let history = t.host.app.state.execution.book().history(0, 10).unwrap();
    assert_eq!(format!("{:?}", history[0].reason), "Market");
    assert!(history[0].exit_px > d("2990") && history[0].exit_px < d("3010"), "{:?}", history[0]);
    assert_eq!(t.orders_of("MARKET", "SELL").len(), 1, "the service sold nothing itself");
    t.message_containing("no longer holds").await;
}
