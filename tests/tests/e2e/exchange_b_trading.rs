//! The money flow on exchange B, over HTTP against the simulator's exchange B front end:
//! entries are IOC limits 5 % through the mid (exchange B has no market orders), the bracket
//! is a resting GTC take-profit plus the stop the service watches (no exchange-side stop on
//! spot), a crossed stop exits with an IOC 5 % below the mid after cancelling the take-profit,
//! and every order carries a 16-byte cloid derived from the service's client order id. Each
//! test asserts what the simulator received, in exchange B's own terms (`coin`, `side` B/A,
//! `tif`, `limitPx`, `origSz`, `cloid`).

use std::time::{Duration, Instant};

use crate::trading_support::{Trading, Venue, d, good_signal, signal_with};
use rust_decimal::Decimal;
use serde_json::Value;
use spotbot_sim::FaultKind;

/// The watched stop is checked every 200 ms in these tests.
const FAST_WATCH: &str = "\n[protection]\nwatch_interval_ms = 200\n";

async fn start() -> Trading {
    Trading::start_on(Venue::B, FAST_WATCH).await
}

/// Orders the simulator holds, as exchange B shows them, oldest first.
fn orders(t: &Trading) -> Vec<Value> {
    t.orders_b()
}

fn field(o: &Value, name: &str) -> String {
    o["order"][name].as_str().map(String::from).unwrap_or_else(|| o["order"][name].to_string())
}

/// The IOC and GTC orders of one side (`B` buy, `A` sell).
fn of(t: &Trading, tif: &str, side: &str) -> Vec<Value> {
    orders(t).into_iter().filter(|o| field(o, "tif") == tif && field(o, "side") == side).collect()
}

/// The mid of the simulator's synthetic book at `price` (best bid = price, ask one tick up).
fn mid(price: &str) -> Decimal {
    d(price) + d("0.005")
}

/// `price` rounded as exchange B allows for a pair with `sz_decimals`.
fn slip(mid: Decimal, buy: bool) -> Decimal {
    spotbot_exchange_b_protocol::numbers::slippage_price(mid, buy, d("0.05"), 4)
}

async fn until_closed(t: &Trading) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !t.open_trades().await.is_empty() {
        assert!(Instant::now() < deadline, "still open: {:?}", orders(t));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmed_signal_enters_with_an_ioc_and_rests_only_the_take_profit() {
    let t = start().await;
    t.create_signal(good_signal("ETHUSDT")).await;
    let (status, answer) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 200, "{answer}");
    let opened = &answer["trade"]["opened"];
    assert_eq!(opened["protection"], "protected", "{answer}");
    assert_eq!(opened["stop"], "service", "exchange B has no stop on spot: {opened}");

    let entries = of(&t, "Ioc", "B");
    assert_eq!(entries.len(), 1, "{:?}", orders(&t));
    let entry = &entries[0];
    assert_eq!(field(entry, "coin"), "@1", "ETHUSDT is pair @1 (UETH/USDC)");
    assert_eq!(d(&field(entry, "limitPx")), slip(mid("3000"), true), "mid + 5 %, 5 figures");
    assert_eq!(field(entry, "origSz"), "0.3333", "1000 USDC at 3000, 4 size decimals");
    assert_eq!(entry["status"], "filled");
    assert!(field(entry, "cloid").starts_with("0x53455f"), "SE_ packed in the cloid: {entry}");

    let take_profits = of(&t, "Gtc", "A");
    assert_eq!(take_profits.len(), 1, "{:?}", orders(&t));
    let tp = &take_profits[0];
    assert_eq!(tp["status"], "open");
    assert_eq!(d(&field(tp, "limitPx")), d(&opened["tp_px"].to_string()));
    assert_eq!(d(&field(tp, "origSz")), d(&opened["size"].to_string()), "the whole position");
    assert_eq!(opened["tp_oid"].to_string(), field(tp, "oid"));
    assert!(orders(&t).len() == 2, "nothing else was sent: {:?}", orders(&t));
    let (_, balances) = t.get("/api/portfolio").await;
    assert!(balances.to_string().contains("USDC"), "{balances}");
    t.message_containing("ETHUSDT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crossed_watched_stop_cancels_the_take_profit_and_exits_with_an_ioc_below_the_mid() {
    let t = start().await;
    let opened = t.buy("ETHUSDT").await["trade"].clone();
    let size = d(&opened["size"].to_string());
    t.set_price("ETHUSDT", "2939");
    until_closed(&t).await;

    let tp = &of(&t, "Gtc", "A")[0];
    assert_eq!(tp["status"], "canceled", "the take-profit was cancelled first: {tp}");
    let exits = of(&t, "Ioc", "A");
    assert_eq!(exits.len(), 1, "{:?}", orders(&t));
    let exit = &exits[0];
    assert_eq!(d(&field(exit, "limitPx")), slip(mid("2939"), false), "mid − 5 %");
    assert_eq!(d(&field(exit, "origSz")), size, "never more than the held size");
    assert_eq!(exit["status"], "filled");
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["trades"][0]["reason"], "stop_loss", "{history}");
    t.message_containing("Stop-loss hit: ETHUSDT").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(of(&t, "Ioc", "A").len(), 1, "one exit only");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_and_closeall_cancel_the_take_profit_then_sell_what_is_held() {
    let t = start().await;
    t.buy("ETHUSDT").await;
    t.buy("SOLUSDT").await;
    let (status, closed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_eq!(status, 200, "{closed}");
    assert_eq!(closed["status"], "closed", "{closed}");
    let (status, all) = t.post_empty("/api/closeall").await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(all["status"], "ok", "{all}");
    assert!(t.open_trades().await.is_empty());
    for tp in of(&t, "Gtc", "A") {
        assert_eq!(tp["status"], "canceled", "{tp}");
    }
    let exits = of(&t, "Ioc", "A");
    assert_eq!(exits.len(), 2, "{:?}", orders(&t));
    assert!(exits.iter().all(|e| e["status"] == "filled"), "{exits:?}");
    let refused: Vec<_> =
        t.seen("POST", "/exchange").into_iter().filter(|r| r.status != 200).collect();
    assert!(refused.is_empty(), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_profit_that_fills_at_the_exchange_closes_the_trade() {
    let t = start().await;
    t.buy("ETHUSDT").await;
    t.set_price("ETHUSDT", "3200");
    let (status, report) = t.get("/api/trailing").await;
    assert_eq!(status, 200, "{report}");
    until_closed(&t).await;
    assert_eq!(of(&t, "Gtc", "A")[0]["status"], "filled");
    assert!(of(&t, "Ioc", "A").is_empty(), "nothing was sold at market");
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["trades"][0]["reason"], "take_profit", "{history}");
    t.message_containing("Take-profit hit: ETHUSDT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_whose_answer_is_lost_is_found_by_its_cloid_not_sent_again() {
    let t = start().await;
    t.fault(FaultKind::DropAfterExecute, 1, Some("/exchange"));
    let (status, answer) = t
        .post_empty(
            "/api/trade?symbol=ETHUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9",
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(of(&t, "Ioc", "B").len(), 1, "one entry at the exchange: {:?}", orders(&t));
    assert_eq!(t.open_trades().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trailing_moves_the_watched_stop_up_only_and_sends_nothing() {
    let t = start().await;
    t.buy("ETHUSDT").await;
    let sent = orders(&t).len();
    t.set_price("ETHUSDT", "3100");
    let (status, report) = t.get("/api/trailing").await;
    assert_eq!(status, 200, "{report}");
    let raised = report["updated"][0]["new_sl"].as_f64().unwrap();
    assert!(raised > 2940.0, "{report}");
    t.set_price("ETHUSDT", "3050");
    t.get("/api/trailing").await;
    let (_, trades) = t.get("/api/trades").await;
    assert_eq!(trades["trades"][0]["sl_px"].as_f64(), Some(raised), "never down: {trades}");
    assert_eq!(orders(&t).len(), sent, "moving a watched stop sends nothing to exchange B");
    t.set_price("ETHUSDT", "3040");
    until_closed(&t).await;
    let (_, history) = t.get("/api/trades/history").await;
    assert!(history["trades"][0]["pnl"].as_f64().unwrap() > 0.0, "{history}");
}

const MANUAL: &str =
    "/api/trade/manual?symbol=ETHUSDT&direction=buy&entry_px=2950&sl_pct=2&rr=1:2.5";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manual_limit_entry_rests_as_gtc_and_expires_with_its_ttl() {
    let t = start().await;
    let (status, placed) = t.post_empty(&format!("{MANUAL}&ttl_hours=1")).await;
    assert_eq!(status, 200, "{placed}");
    let entries = of(&t, "Gtc", "B");
    assert_eq!(entries.len(), 1, "{:?}", orders(&t));
    assert_eq!(
        (field(&entries[0], "limitPx"), field(&entries[0], "origSz")),
        ("2950".into(), "0.3389".into())
    );
    assert!(field(&entries[0], "cloid").starts_with("0x4d545f"), "MT_ in the cloid");
    t.rig.advance_minutes(61);
    let (_, report) = t.get("/api/pending-entries/check").await;
    assert_eq!(report["expired"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(of(&t, "Gtc", "B")[0]["status"], "canceled");
    t.message_containing("expired and cancelled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filled_manual_entry_is_protected_and_a_lost_one_is_recovered_after_a_restart() {
    let t = start().await;
    let (_, placed) = t.post_empty(MANUAL).await;
    let t = t.restart().await;
    t.set_price("ETHUSDT", "2940");
    let (_, report) = t.get("/api/pending-entries/check").await;
    assert_eq!(report["filled"].as_array().unwrap().len(), 1, "{report}");
    let trades = t.open_trades().await;
    assert_eq!(trades[0]["protection"], "protected", "{trades:?}");
    assert_eq!(of(&t, "Gtc", "A").len(), 1, "the take-profit rests: {:?}", orders(&t));

    // An MT_ order the store lost is rebuilt from the journal's plan: the cloid on the
    // exchange is named by the journal's client id after the restart.
    let (_, sol) = t
        .post_empty("/api/trade/manual?symbol=SOLUSDT&direction=buy&entry_px=140&sl_pct=2&tp_pct=4")
        .await;
    let id = sol["client_order_id"].as_str().unwrap().to_string();
    let t = t.restart().await;
    t.forget_pending_entry(&id);
    let (status, recovered) = t.get("/api/pending-entries/recover").await;
    assert_eq!(status, 200, "{recovered}");
    assert_eq!(recovered["recovered"].as_u64(), Some(1), "{recovered}");
    assert_eq!(recovered["entries"][0]["client_order_id"], id.as_str());
    assert_ne!(placed["client_order_id"], sol["client_order_id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_restarts_a_take_profit_filled_while_down_closes_and_a_missing_one_comes_back() {
    let t = Trading::start_streaming_on(Venue::B, FAST_WATCH).await;
    t.buy("ETHUSDT").await;
    t.set_price("ETHUSDT", "3200");
    let t = t.restart().await;
    until_closed(&t).await;
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["trades"][0]["reason"], "take_profit", "{history}");
    assert!(of(&t, "Ioc", "A").is_empty(), "nothing sold at market");

    // A take-profit cancelled at the exchange while the service was down is placed again:
    // the position is protected once more, and the watched stop still watches.
    t.set_price("ETHUSDT", "3000");
    t.buy("ETHUSDT").await;
    let tp = of(&t, "Gtc", "A").into_iter().find(|o| o["status"] == "open").unwrap();
    let oid: i64 = field(&tp, "oid").parse().unwrap();
    let by_hand = t.by_hand_b();
    let t = t
        .restart_after(async {
            use spotbot::exchange::{Exchange, OrderRef};
            by_hand.cancel_order("ETHUSDT", &OrderRef::Id(oid)).await.expect("cancel by hand");
        })
        .await;
    let (status, recovered) = t.get("/api/trades/recover").await;
    assert_eq!(status, 200, "{recovered}");
    let resting: Vec<_> =
        of(&t, "Gtc", "A").into_iter().filter(|o| o["status"] == "open").collect();
    assert_eq!(
        resting.len(),
        1,
        "a take-profit rests again: {recovered} {:?}",
        t.open_trades().await
    );
    let trades = t.open_trades().await;
    assert_eq!(trades[0]["protection"], "protected", "{trades:?}");
    t.set_price("ETHUSDT", "2900");
    until_closed(&t).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_portfolio_and_the_history_sync_read_exchange_b() {
    let t = start().await;
    t.buy("ETHUSDT").await;
    let (status, portfolio) = t.get("/api/portfolio").await;
    assert_eq!(status, 200, "{portfolio}");
    let text = portfolio.to_string();
    assert!(text.contains("USDC") && text.contains("ETH"), "{portfolio}");
    // The account's quote is USDC on exchange B: counted one for one, not as an unpriced coin.
    assert_eq!(portfolio["currency"], "USDC", "{portfolio}");
    // Every other figure names the same currency: the dashboard's tiles, curve and footer,
    // protection and the statistics.
    for route in
        ["/api/protection", "/api/dashboard/footer", "/api/dashboard/pnl", "/api/trades/stats"]
    {
        let (_, body) = t.get(route).await;
        assert_eq!(body["currency"], "USDC", "{route}: {body}");
    }
    let balance = portfolio["balance"].as_f64().unwrap();
    assert!((9_990.0..10_000.0).contains(&balance), "10 000 less the fees: {portfolio}");
    let (status, synced) = t.post_empty("/api/trades/sync").await;
    assert_eq!(status, 200, "{synced}");
    assert_eq!(synced["ok"], true, "{synced}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmed_sell_signal_exits_with_an_ioc() {
    let t = start().await;
    t.create_signal(good_signal("ETHUSDT")).await;
    let (_, answer) = t.confirm("ETHUSDT").await;
    assert_eq!(answer["ok"], true, "{answer}");
    t.create_signal(signal_with("ETHUSDT", "sell", 9, 10)).await;
    let (status, answer) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["trade"]["closed"]["status"], "closed", "{answer}");
    assert_eq!(of(&t, "Gtc", "A")[0]["status"], "canceled");
    assert_eq!(of(&t, "Ioc", "A").len(), 1, "{:?}", orders(&t));
    assert!(t.open_trades().await.is_empty());
}

/// Exchange B's IOC gives up what the book does not hold inside the 5 % band: with a thin
/// book the exit fills in parts, the rest is offered again, and the boss is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ioc_exit_the_thin_book_fills_in_part_is_completed_and_reported() {
    let t = start().await;
    let opened = t.buy("ETHUSDT").await["trade"].clone();
    let size = d(&opened["size"].to_string());
    // 20 levels of 25 USDC a side, 0.05 % apart: one IOC sells about 500 USDC of 1000.
    t.sim.sim.engine().config.level_notional = d("25");
    let (status, closed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_eq!(status, 200, "{closed}");
    let exits = of(&t, "Ioc", "A");
    assert!((2..=4).contains(&exits.len()), "{exits:?}");
    let mut asked = size;
    for exit in &exits {
        assert_eq!(d(&field(exit, "origSz")), asked, "each asks for what is left");
        asked -= d(&field(exit, "origSz")) - d(&field(exit, "sz"));
    }
    assert!(asked * d("3000") < d("10"), "all but dust sold: {asked} left");
    assert!(t.open_trades().await.is_empty());
    t.message_containing("Exit filled in parts: ETHUSDT").await;
}
