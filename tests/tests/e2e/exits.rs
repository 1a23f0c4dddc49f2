//! Exits the exchange makes on its own, over HTTP against the simulator: a stop-loss or a
//! take-profit that fills there is settled by the next protection run (`GET /api/trailing`,
//! the scheduler's minute job) without reconciliation — the trade closes with the leg's real
//! price and pnl, history and counters follow, the boss is told, the symbol is free again —
//! and a list cancelled outside the service leaves the trade unprotected with an alert. The
//! health check compares the store with the exchange's open protection, and the drawdown
//! monitor values positions from what the account holds.

use crate::trading_support::{Trading, d};
use rust_decimal::Decimal;
use serde_json::Value;
use spotbot::exchange::OrderLists as _;
use spotbot::exchange::{Exchange, NewOco, NewOrder, OrderRef, Qty, Side};

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The one order of `order_type` SELL at the simulator.
fn leg(t: &Trading, order_type: &str) -> Value {
    let legs = t.orders_of(order_type, "SELL");
    assert_eq!(legs.len(), 1, "{legs:?}");
    legs[0].clone()
}

/// Quote received for a filled order at the simulator, as a decimal.
fn quote_of(order: &Value) -> Decimal {
    d(order["cummulativeQuoteQty"].as_str().unwrap())
}

async fn protection_run(t: &Trading) -> Value {
    let (status, report) = t.get("/api/trailing").await;
    assert_eq!(status, 200, "{report}");
    report
}

async fn status(t: &Trading) -> Value {
    let (status, body) = t.get("/api/status").await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_loss_filled_at_the_exchange_closes_the_trade_at_the_next_protection_run() {
    let t = Trading::start().await;
    let opened = t.buy("ETHUSDT").await["trade"].clone();
    let entry = t.orders_of("MARKET", "BUY")[0].clone();

    // Between the stop (2940) and its limit (2934.12): the stop triggers and fills.
    t.set_price("ETHUSDT", "2937");
    let stop = leg(&t, "STOP_LOSS_LIMIT");
    assert_eq!(stop["status"], "FILLED", "{stop}");
    assert_eq!(leg(&t, "LIMIT_MAKER")["status"], "EXPIRED");

    // Before the run, equity already counts the sale, not the coin the exchange sold: only
    // the few steps of ETH the entry's rounding left in the account are still valued.
    let (_, protection) = t.get("/api/protection").await;
    let (usdt_free, usdt_locked) = t.balance("USDT");
    let simulator_usdt: f64 = (usdt_free + usdt_locked).to_string().parse().unwrap();
    assert!((f(&protection["quote_balance"]) - simulator_usdt).abs() < 1e-6, "{protection}");
    assert!(f(&protection["positions_value"]) < 1.0, "the sold coin is gone: {protection}");

    let report = protection_run(&t).await;
    let exits = report["exits"].as_array().unwrap();
    assert_eq!(exits.len(), 1, "{report}");
    let exit = &exits[0];
    assert_eq!(
        (exit["symbol"].as_str(), exit["reason"].as_str()),
        (Some("ETHUSDT"), Some("stop_loss"))
    );
    let sold = d(stop["executedQty"].as_str().unwrap());
    let exit_px = quote_of(&stop) / sold;
    assert!((f(&exit["exit_px"]) - exit_px.to_string().parse::<f64>().unwrap()).abs() < 1e-6);
    // pnl: what the stop received net of the 0.1 % fee, minus what the entry spent on the
    // coin the trade held (the sub-step rest of what it received stays in the account).
    let held = d(&opened["size"].to_string());
    let received = d(entry["executedQty"].as_str().unwrap()) * d("0.999");
    let expected = quote_of(&stop) * d("0.999") - quote_of(&entry) * held / received;
    let expected: f64 = expected.round_dp(4).to_string().parse().unwrap();
    assert!((f(&exit["pnl"]) - expected).abs() < 0.05, "pnl {} vs {expected}", exit["pnl"]);
    assert!(f(&exit["pnl"]) < -20.0, "about 2 % of 1000 USDT plus fees: {exit}");

    assert!(t.open_trades().await.is_empty(), "settled without reconciliation");
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["trades"][0]["reason"], "stop_loss", "{history}");
    assert_eq!(status(&t).await["consecutive_losses"], 1);
    assert!(t.orders_of("MARKET", "SELL").is_empty(), "nothing was sold at market");
    let message = t.message_containing("Stop-loss hit: ETHUSDT").await;
    assert!(message.text.contains("PnL -"), "{}", message.text);
    let (_, log) = t.get("/api/state").await;
    assert!(log.to_string().contains("stop-loss hit ETHUSDT"), "{log}");

    // Idempotent: the next run has nothing left to settle.
    assert!(protection_run(&t).await["exits"].as_array().unwrap().is_empty());
    // The symbol is free for a new trade, and the first one stays recorded once.
    t.buy("ETHUSDT").await;
    assert_eq!(opened["symbol"], "ETHUSDT");
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["total"], 1, "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_profit_filled_at_the_exchange_is_a_win_the_boss_hears_of() {
    let t = Trading::start().await;
    t.buy("ETHUSDT").await;
    t.set_price("ETHUSDT", "3200");
    assert_eq!(leg(&t, "LIMIT_MAKER")["status"], "FILLED");

    let report = protection_run(&t).await;
    let exit = &report["exits"][0];
    assert_eq!(exit["reason"], "take_profit", "{report}");
    assert!(f(&exit["pnl"]) > 40.0, "about 5 % of 1000 USDT minus fees: {exit}");
    assert!(report["updated"].as_array().unwrap().is_empty(), "nothing left to trail");
    assert_eq!(status(&t).await["consecutive_losses"], 0);
    t.message_containing("Take-profit hit: ETHUSDT").await;
    assert!(t.open_trades().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_cancelled_outside_the_service_leaves_the_trade_unprotected_and_alerts() {
    let t = Trading::start().await;
    let opened = t.buy("ETHUSDT").await["trade"].clone();
    let list_id = opened["oco_list_id"].as_i64().expect("an OCO list");
    t.by_hand().cancel_order_list("ETHUSDT", &OrderRef::Id(list_id)).await.expect("cancel");

    let report = protection_run(&t).await;
    assert_eq!(report["unprotected"].as_array().unwrap().len(), 1, "{report}");
    assert!(report["exits"].as_array().unwrap().is_empty());
    let trades = t.open_trades().await;
    assert_eq!(trades[0]["protection"], "unprotected", "{trades:?}");
    t.message_containing("UNPROTECTED POSITION: ETHUSDT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_check_reports_protection_the_store_and_the_exchange_disagree_on() {
    let t = Trading::start().await;
    t.buy("ETHUSDT").await;
    let (_, report) = t.get("/api/health/check").await;
    let trades = report["findings"].as_array().unwrap().iter().find(|f| f["check"] == "trades");
    assert_eq!(trades.unwrap()["verdict"], "ok", "{report}");

    // The stop fills at the exchange; before any protection run the check sees the mismatch.
    t.set_price("ETHUSDT", "2937");
    let (_, report) = t.get("/api/health/check").await;
    let trades = report["findings"].as_array().unwrap().iter().find(|f| f["check"] == "trades");
    let trades = trades.unwrap();
    assert_eq!(trades["verdict"], "anomaly", "{report}");
    assert!(trades["detail"].as_str().unwrap().contains("ETHUSDT: protected by order list"));
    t.message_containing("ETHUSDT: protected by order list").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_check_finds_an_order_list_of_no_trade_when_no_trade_is_open() {
    let t = Trading::start().await;
    // Bought and protected by hand at the exchange: the store tracks no trade at all.
    let ex = t.by_hand();
    let rules = ex.symbol_rules("ETHUSDT").await.expect("rules");
    let price = ex.price("ETHUSDT").await.expect("price").0;
    let qty = rules.floor_qty(rules.min_notional * d("3") / price).0.max(rules.min_qty);
    let buy = ex
        .place_order(&NewOrder::market("ETHUSDT", Side::Buy, Qty(qty), "byhand_buy"))
        .await
        .expect("market buy");
    let held = rules.floor_qty(buy.executed_qty.0 - buy.commission_in(&rules.base_asset));
    let stop = rules.floor_price(price * d("0.95"));
    let list = ex
        .place_oco(&NewOco {
            symbol: "ETHUSDT".into(),
            side: Side::Sell,
            qty: held,
            take_profit: rules.ceil_price(price * d("1.05")),
            stop_price: stop,
            stop_limit_price: rules.floor_price(stop.0 * d("0.998")),
            list_client_order_id: "byhand_oco".into(),
            take_profit_client_order_id: None,
            stop_client_order_id: None,
        })
        .await
        .expect("oco");

    let (_, report) = t.get("/api/health/check").await;
    let trades = report["findings"].as_array().unwrap().iter().find(|f| f["check"] == "trades");
    let trades = trades.unwrap();
    assert_eq!(trades["verdict"], "anomaly", "{report}");
    let expected =
        format!("order list {} is open on the exchange but belongs to no", list.order_list_id);
    assert!(trades["detail"].as_str().unwrap().contains(&expected), "{report}");
}
