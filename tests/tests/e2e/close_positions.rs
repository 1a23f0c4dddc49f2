//! Closing with the OCO open: cancel the list, wait for the coin, sell the free quantity at
//! market — never -2010. Also the sell signal (spot exit) and closeall, asserted at the
//! exchange simulator.

use crate::trading_support::{Trading, d, good_signal, signal_with};
use rust_decimal::Decimal;
use serde_json::Value;
use spotbot_sim::FaultKind;

fn qty(v: &Value) -> Decimal {
    d(v.as_str().unwrap()).normalize()
}

/// No order request was refused for insufficient balance.
fn assert_no_2010(t: &Trading) {
    let refused: Vec<_> =
        t.seen("POST", "/api/v3/order").into_iter().filter(|r| r.status == 400).collect();
    assert!(refused.is_empty(), "order requests refused: {refused:?}");
}

async fn buy(t: &Trading, symbol: &str) -> Value {
    let body = t.buy(symbol).await;
    assert_eq!(body["trade"]["protection"], "protected", "{body}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_cancels_the_oco_then_sells_the_free_quantity_at_market() {
    let t = Trading::start().await;
    buy(&t, "ETHUSDT").await;
    let (_, locked) = t.balance("ETH");
    assert!(locked > Decimal::ZERO, "the OCO locks the coin");
    let oco_qty = qty(&t.orders_of("LIMIT_MAKER", "SELL")[0]["origQty"]);
    t.set_price("ETHUSDT", "3030");

    // `symbol` may be the base asset, as in the spec.
    let (status, closed) = t.post_empty("/api/close?symbol=ETH").await;
    assert_eq!(status, 200, "{closed}");
    assert_eq!((closed["ok"].as_bool(), closed["status"].as_str()), (Some(true), Some("closed")));
    assert_eq!(closed["symbol"], "ETHUSDT");
    assert!(closed["pnl"].as_f64().unwrap() > 0.0, "sold 1 % higher: {closed}");

    for leg in
        t.orders_of("LIMIT_MAKER", "SELL").iter().chain(&t.orders_of("STOP_LOSS_LIMIT", "SELL"))
    {
        assert_eq!(leg["status"], "CANCELED", "the OCO was cancelled first: {leg}");
    }
    let sells = t.orders_of("MARKET", "SELL");
    assert_eq!(sells.len(), 1);
    assert_eq!(sells[0]["status"], "FILLED");
    assert_eq!(qty(&sells[0]["origQty"]), oco_qty, "sold what the OCO protected");
    assert!(sells[0]["clientOrderId"].as_str().unwrap().starts_with("SX_"));
    assert_no_2010(&t);
    assert!(t.open_trades().await.is_empty());
    let (_, locked) = t.balance("ETH");
    assert_eq!(locked, Decimal::ZERO);

    let closed_note = t.message_containing("sold").await;
    assert!(closed_note.text.contains("ETHUSDT"), "{}", closed_note.text);
    let (status, body) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_eq!((status, body["error"].as_str()), (404, Some("no_position")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closeall_closes_every_position_and_reports_each() {
    let t = Trading::start().await;
    buy(&t, "ETHUSDT").await;
    buy(&t, "SOLUSDT").await;
    let (status, report) = t.post_empty("/api/closeall?agent=finance").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!((report["status"].as_str(), report["count"].as_u64()), (Some("ok"), Some(2)));
    let rows = report["closed"].as_array().unwrap();
    let mut symbols: Vec<&str> = rows.iter().map(|r| r["symbol"].as_str().unwrap()).collect();
    symbols.sort();
    assert_eq!(symbols, ["ETHUSDT", "SOLUSDT"]);
    assert!(
        rows.iter().all(|r| r["status"] == "closed" && r["size"].as_f64().unwrap() > 0.0),
        "{report}"
    );
    assert_eq!(t.orders_of("MARKET", "SELL").len(), 2);
    assert_no_2010(&t);
    assert!(t.open_trades().await.is_empty());
    let (_, empty) = t.post_empty("/api/closeall").await;
    assert_eq!((empty["status"].as_str(), empty["count"].as_u64()), (Some("ok"), Some(0)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmed_sell_signal_exits_the_position_like_close() {
    let t = Trading::start().await;
    t.create_signal(good_signal("ETHUSDT")).await;
    let (_, answer) = t.confirm("ETHUSDT").await;
    assert_eq!(answer["ok"], true, "{answer}");
    t.create_signal(signal_with("ETHUSDT", "sell", 9, 10)).await;
    let (status, answer) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["trade"]["closed"]["status"], "closed", "{answer}");
    assert_eq!(t.orders_of("MARKET", "SELL").len(), 1);
    assert_no_2010(&t);
    assert!(t.open_trades().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_profit_that_filled_closes_the_trade_at_its_price() {
    let t = Trading::start().await;
    buy(&t, "ETHUSDT").await;
    let tp = t.orders_of("LIMIT_MAKER", "SELL")[0].clone();
    t.set_price("ETHUSDT", "3200");
    // The exchange filled the take-profit; closing now finds it and sells nothing.
    let (status, closed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_eq!(status, 200, "{closed}");
    assert_eq!(
        closed["exit_px"].as_f64().unwrap(),
        d(tp["price"].as_str().unwrap()).to_string().parse::<f64>().unwrap()
    );
    assert!(closed["pnl"].as_f64().unwrap() > 0.0);
    assert!(t.orders_of("MARKET", "SELL").is_empty(), "nothing sold at market");
}

const ENTRY_ETH_2950: &str =
    "/api/trade/manual?symbol=ETHUSDT&direction=buy&entry_px=2950&sl_pct=2&tp_pct=5";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closeall_cancels_pending_entries_and_reports_them() {
    let t = Trading::start().await;
    buy(&t, "SOLUSDT").await;
    let (status, placed) = t.post_empty(ENTRY_ETH_2950).await;
    assert_eq!(status, 200, "{placed}");
    let (status, report) = t.post_empty("/api/closeall").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!((report["status"].as_str(), report["count"].as_u64()), (Some("ok"), Some(1)));
    assert_eq!(report["closed"][0]["symbol"], "SOLUSDT", "{report}");
    let entries = report["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{report}");
    assert_eq!(
        (entries[0]["symbol"].as_str(), entries[0]["status"].as_str()),
        (Some("ETHUSDT"), Some("cancelled"))
    );
    assert_eq!(entries[0]["client_order_id"], placed["client_order_id"]);
    assert_eq!(t.orders_of("LIMIT", "BUY")[0]["status"], "CANCELED", "cancelled at the exchange");
    let (_, pending) = t.get("/api/pending-entries").await;
    assert_eq!(pending["count"], 0, "{pending}");
    assert!(t.open_trades().await.is_empty());
    t.message_containing("LIMIT entry cancelled").await;
    // Later prices cannot open a position any more.
    t.set_price("ETHUSDT", "2900");
    assert_eq!(t.get("/api/pending-entries/check").await.1["checked"], 0);
    assert!(t.open_trades().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closeall_closes_the_position_of_an_entry_that_filled_before_its_cancel() {
    let t = Trading::start().await;
    t.post_empty(ENTRY_ETH_2950).await;
    t.set_price("ETHUSDT", "2940");
    let (status, report) = t.post_empty("/api/closeall").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["entries"][0]["status"], "filled", "{report}");
    assert_eq!((report["status"].as_str(), report["count"].as_u64()), (Some("ok"), Some(1)));
    assert_eq!(report["closed"][0]["symbol"], "ETHUSDT", "{report}");
    assert_eq!(report["closed"][0]["status"], "closed", "{report}");
    // The fill was protected, then closed like every position: OCO cancelled, sold at market.
    let tp = &t.orders_of("LIMIT_MAKER", "SELL")[0];
    assert_eq!(tp["status"], "CANCELED", "{tp}");
    let sells = t.orders_of("MARKET", "SELL");
    assert_eq!(sells.len(), 1);
    assert_eq!(qty(&sells[0]["origQty"]), qty(&tp["origQty"]));
    assert_no_2010(&t);
    assert!(t.open_trades().await.is_empty());
}

/// The pnl a flat round trip should book on the coin the trade held: the price difference
/// minus the fees (0.1 % of the coin on the buy, 0.1 % of the quote on the sell), nothing for
/// the sub-step remainder the buy left in the account.
fn minus_the_fees(buy: &Value, sell: &Value, held: Decimal) -> Decimal {
    let fee = d("0.001");
    let entry_px = qty(&buy["cummulativeQuoteQty"]) / qty(&buy["executedQty"]);
    let sold = qty(&sell["executedQty"]);
    let exit_px = qty(&sell["cummulativeQuoteQty"]) / sold;
    let entry_fee = held * entry_px * (Decimal::ONE / (Decimal::ONE - fee) - Decimal::ONE);
    let exit_fee = held * exit_px * fee;
    held * (exit_px - entry_px) - entry_fee - exit_fee
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flat_round_trip_books_the_fees_only_and_the_next_exit_sweeps_the_dust() {
    let t = Trading::start().await;
    let step = d("0.0001");
    let mut dust_before = Decimal::ZERO;
    for round in 0..2 {
        let held = d(&buy(&t, "ETHUSDT").await["trade"]["size"].to_string());
        let bought = t.orders_of("MARKET", "BUY")[round].clone();
        let received = qty(&bought["executedQty"]) * d("0.999");
        assert!(received - held > Decimal::ZERO && received - held < step, "{held} {received}");
        // Closed at the price it was bought at.
        let (status, closed) = t.post_empty("/api/close?symbol=ETH").await;
        assert_eq!(status, 200, "{closed}");
        let sold = t.orders_of("MARKET", "SELL")[round].clone();
        let expected = minus_the_fees(&bought, &sold, held);
        let pnl = d(&closed["pnl"].to_string());
        assert!((pnl - expected).abs() < d("0.0001"), "round {round}: {pnl} vs {expected}");
        assert!(pnl > d("-2.1"), "fees of ~1 USDT a side, no dust booked: {pnl}");
        // The exit sold the trade's coin and, once it adds up to a step, the dust left before.
        let dust = received - held + dust_before;
        let swept = (dust / step).floor() * step;
        assert_eq!(qty(&sold["origQty"]), held + swept, "round {round}: dust {dust}");
        let (free, locked) = t.balance("ETH");
        assert_eq!((free, locked), (dust - swept, Decimal::ZERO), "round {round}");
        dust_before = dust - swept;
        let told = format!("PnL {:.2}", closed["pnl"].as_f64().unwrap());
        let note = t.message_containing(&told).await.text;
        assert!(note.contains("ETHUSDT"), "{note}");
    }
    assert!(dust_before < step, "never a step of coin left behind: {dust_before}");
    let (_, history) = t.get("/api/trades/history").await;
    let rows = history["trades"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{history}");
    assert!(rows.iter().all(|r| r["pnl"].as_f64().unwrap() > -2.1), "{history}");
}

/// Makes the simulator's synthetic book hold `notional` quote per level (20 levels a side),
/// so a market order bigger than the book fills only part.
/// The price, stop price and quantity of an order, for comparing two placements.
fn levels(order: &Value) -> (Decimal, Decimal, Decimal) {
    let stop = order["stopPrice"].as_str().map_or(Decimal::ZERO, |s| d(s).normalize());
    (qty(&order["price"]), stop, qty(&order["origQty"]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_that_cannot_read_the_freed_coin_protects_the_position_again() {
    // Found by the soak benchmark: the OCO was cancelled, then the balance read that waits for
    // the coin failed (the exchange's rate limit), and the position stayed without protection.
    let t = Trading::start().await;
    buy(&t, "ETHUSDT").await;
    let take_profit = t.orders_of("LIMIT_MAKER", "SELL")[0].clone();
    let stop = t.orders_of("STOP_LOSS_LIMIT", "SELL")[0].clone();
    t.fault_on_read(FaultKind::Reject { code: -2015, msg: None }, 1, "/api/v3/account");

    let (status, failed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_ne!(status, 200, "{failed}");
    assert_eq!(failed["ok"], false, "{failed}");
    assert!(failed.to_string().contains("-2015"), "the reason is the exchange's: {failed}");

    // At the exchange: the first OCO cancelled, the same one placed again, nothing sold.
    assert!(t.orders_of("MARKET", "SELL").is_empty(), "nothing was sold");
    for (kind, first) in [("LIMIT_MAKER", &take_profit), ("STOP_LOSS_LIMIT", &stop)] {
        let legs = t.orders_of(kind, "SELL");
        assert_eq!(legs.len(), 2, "{kind}: cancelled and placed again: {legs:?}");
        assert_eq!(legs[0]["status"], "CANCELED", "{kind}: {}", legs[0]);
        assert_eq!(legs[1]["status"], "NEW", "{kind}: {}", legs[1]);
        assert_eq!(levels(&legs[1]), levels(first), "{kind}: the same levels and quantity");
        assert_ne!(legs[1]["clientOrderId"], first["clientOrderId"], "{kind}: a fresh id");
    }
    let (_, locked) = t.balance("ETH");
    assert_eq!(locked, qty(&take_profit["origQty"]), "the new OCO holds the coin");
    let trades = t.open_trades().await;
    assert_eq!(trades.len(), 1, "{trades:?}");
    assert_eq!(trades[0]["protection"], "protected", "{}", trades[0]);
    let note = t.message_containing("-2015").await;
    assert!(note.text.contains("ETHUSDT"), "the boss is told: {}", note.text);

    // The next close goes through.
    let (status, closed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_eq!((status, closed["status"].as_str()), (200, Some("closed")), "{closed}");
    assert_no_2010(&t);
}

fn thin_book(t: &Trading, notional: &str) {
    t.sim.sim.engine().config.level_notional = d(notional);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exit_the_book_fills_only_in_part_sells_the_rest_and_tells_the_boss() {
    let t = Trading::start().await;
    buy(&t, "ETHUSDT").await;
    let held = qty(&t.orders_of("LIMIT_MAKER", "SELL")[0]["origQty"]);
    // 20 levels of 25 USDT: about 500 USDT per order, the position is worth about 1000.
    thin_book(&t, "25");

    let (status, closed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_eq!(status, 200, "{closed}");
    assert_eq!(closed["status"], "closed", "{closed}");

    let sells = t.orders_of("MARKET", "SELL");
    assert!((2..=4).contains(&sells.len()), "{sells:?}");
    let first_id = sells[0]["clientOrderId"].as_str().unwrap().to_string();
    assert_eq!(qty(&sells[0]["origQty"]), held, "the first order asks for the whole position");
    let mut asked = held;
    for (n, sell) in sells.iter().enumerate() {
        assert_eq!(qty(&sell["origQty"]), asked, "attempt {n} asks for what is left");
        asked -= qty(&sell["executedQty"]);
        if n > 0 {
            assert_eq!(sell["clientOrderId"], format!("{first_id}{n}"), "an id per attempt");
        }
    }
    assert!(asked * d("3000") < d("5"), "everything but dust sold in the end: {asked} left");
    assert_eq!(d(&closed["size"].to_string()), held - asked, "the trade closed for what sold");
    assert!(t.open_trades().await.is_empty());
    let note = t.message_containing("Exit filled in parts").await;
    assert!(note.text.contains(&format!("of {held} ETH")), "{}", note.text);
    assert!(!note.text.contains("still held"), "{}", note.text);
    assert_no_2010(&t);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exit_that_cannot_sell_everything_says_how_much_is_still_held() {
    let t = Trading::start().await;
    buy(&t, "ETHUSDT").await;
    // 20 levels of 5 USDT: about 100 USDT per order, 4 orders sell about 400 of 1000.
    thin_book(&t, "5");

    let (status, closed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_eq!(status, 200, "{closed}");
    let sells = t.orders_of("MARKET", "SELL");
    assert_eq!(sells.len(), 4, "the first order and three more: {sells:?}");
    let sold: Decimal = sells.iter().map(|s| qty(&s["executedQty"])).sum();
    assert_eq!(d(&closed["size"].to_string()), sold, "the trade closed for what sold");
    let note = t.message_containing("still held").await;
    assert!(note.text.contains("sell them by hand"), "{}", note.text);
}
