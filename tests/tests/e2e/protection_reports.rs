//! The protection loop over HTTP against the exchange simulator and the fake messenger, on the
//! test clock: the drawdown pause (one alert per breach, every entry path refused, the pause
//! survives a restart, resume clears it), the daily PnL report counting only today's trades
//! in a non-UTC time zone, and the health check flagging an unprotected trade, a skewed
//! clock, an unreachable messenger and an unreachable exchange.

use std::time::Duration;

use crate::trading_support::{Trading, d, good_signal};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use spotbot_sim::FaultKind;
use spotbot_tests::fake_messenger::Fault as MessengerFault;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close_to(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

/// A bracketed buy through `POST /api/trade` with the stop `sl` percent below the entry.
async fn buy(t: &Trading, symbol: &str, sl: &str) -> Value {
    let (status, body) = t
        .post_empty(&format!(
            "/api/trade?symbol={symbol}&direction=buy&bot=mr_combined&sl={sl}&tp=5&ev=30&confidence=9"
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    body["trade"].clone()
}

/// Buys at `entry`, moves the price to `exit` and closes at market; the close answer.
async fn round_trip(t: &Trading, symbol: &str, entry: &str, exit: &str) -> Value {
    t.set_price(symbol, entry);
    buy(t, symbol, "2").await;
    t.set_price(symbol, exit);
    let (status, closed) = t.post_empty(&format!("/api/close?symbol={symbol}")).await;
    assert_eq!(status, 200, "{closed}");
    t.rig.advance_minutes(1);
    closed
}

/// Texts the fake messenger accepted that contain `needle`.
fn sent_with(t: &Trading, needle: &str) -> Vec<String> {
    t.messenger.sent().into_iter().map(|m| m.text).filter(|text| text.contains(needle)).collect()
}

/// Waits until `n` accepted messages contain `needle` (alerts are sent in the background).
async fn wait_for_text(t: &Trading, needle: &str, n: usize) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let found = sent_with(t, needle);
        if found.len() >= n || tokio::time::Instant::now() >= deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Equity as the simulator holds it: USDT free + locked plus each position's size at `prices`.
fn simulator_equity(t: &Trading, positions: &[(&Value, &str)]) -> f64 {
    let (free, locked) = t.balance("USDT");
    let coins: Decimal =
        positions.iter().map(|(trade, price)| d(&trade["size"].to_string()) * d(price)).sum();
    (free + locked + coins).to_string().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drawdown_above_15_percent_alerts_once_and_pauses_entries_until_resumed() {
    let mut t = Trading::start().await;
    let (status, first) = t.get("/api/protection").await;
    assert_eq!(status, 200, "{first}");
    assert_eq!((first["ok"].as_bool(), first["paused"].as_bool()), (Some(true), Some(false)));
    assert_eq!(first["high_water_mark"], 10_000.0, "the first measurement sets the mark: {first}");
    assert_eq!(
        (first["max_drawdown_pct"].as_f64(), first["currency"].as_str()),
        (Some(15.0), Some("USDT"))
    );

    // Two positions of 1000 USDT each, stops far below so the fall leaves them open.
    let eth = buy(&t, "ETHUSDT", "90").await;
    let sol = buy(&t, "SOLUSDT", "90").await;
    let (_, open) = t.get("/api/protection").await;
    assert!(f(&open["drawdown_pct"]) < 0.1, "only the entry fees: {open}");

    // Both fall by 80 %: 1600 of 10 000 lost, a drawdown of about 16 %.
    t.set_price("ETHUSDT", "600");
    t.set_price("SOLUSDT", "30");
    let (_, breach) = t.get("/api/protection").await;
    assert_eq!(
        (breach["paused"].as_bool(), breach["newly_paused"].as_bool()),
        (Some(true), Some(true)),
        "{breach}"
    );
    let pct = f(&breach["drawdown_pct"]);
    assert!((15.0..17.0).contains(&pct), "{breach}");
    let expected = simulator_equity(&t, &[(&eth, "600"), (&sol, "30")]);
    assert!(close_to(f(&breach["equity"]), expected, 1e-6), "{breach} vs {expected}");
    let reason = breach["reason"].as_str().unwrap().to_string();
    assert!(reason.starts_with("drawdown_paused:"), "{reason}");
    let since = breach["paused_since"].clone();
    assert_eq!(since, json!(t.rig.now().to_rfc3339()));

    let alerts = wait_for_text(&t, "DRAWDOWN", 1).await;
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert!(
        alerts[0].contains("new entries paused") && alerts[0].contains("limit 15%"),
        "{}",
        alerts[0]
    );

    // Further checks while paused send nothing more.
    for _ in 0..2 {
        let (_, again) = t.get("/api/protection").await;
        assert_eq!(
            (again["paused"].as_bool(), again["newly_paused"].as_bool()),
            (Some(true), Some(false))
        );
    }

    // Every entry path refuses with the pause, and nothing reaches the exchange.
    // A signal is not even put to the boss while paused.
    let orders_before = t.orders().len();
    let (status, skipped) = t.post("/api/signal", good_signal("BNBUSDT")).await;
    assert_eq!(status, 200, "{skipped}");
    assert_eq!(
        (skipped["ok"].as_bool(), skipped["status"].as_str()),
        (Some(false), Some("drawdown_paused_skipped"))
    );
    assert!(skipped["reason"].as_str().unwrap().starts_with("drawdown_paused:"), "{skipped}");
    let trade =
        "/api/trade?symbol=BNBUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9";
    let (status, refused) = t.post_empty(trade).await;
    assert_eq!((status, refused["error"].as_str()), (409, Some("drawdown_paused")), "{refused}");
    assert_eq!(refused["detail"], json!(reason));
    let manual = "/api/trade/manual?symbol=BNBUSDT&direction=buy&entry_px=570&sl_pct=2&tp_pct=4";
    let (status, refused) = t.post_empty(manual).await;
    assert_eq!((status, refused["error"].as_str()), (409, Some("drawdown_paused")), "{refused}");
    assert_eq!(t.orders().len(), orders_before, "no order was sent");

    // Exits stay possible while paused.
    let (status, closed) = t.post_empty("/api/close?symbol=SOLUSDT").await;
    assert_eq!(status, 200, "{closed}");

    // The pause survives a restart, and the restart sends no second alert.
    t = t.restart().await;
    let (_, after) = t.get("/api/protection").await;
    assert_eq!(
        (after["paused"].as_bool(), after["newly_paused"].as_bool()),
        (Some(true), Some(false)),
        "{after}"
    );
    assert_eq!(after["paused_since"], since);
    let (status, refused) = t.post_empty(trade).await;
    assert_eq!((status, refused["error"].as_str()), (409, Some("drawdown_paused")), "{refused}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(sent_with(&t, "DRAWDOWN").len(), 1);

    // Resume: entries allowed again, the mark is the equity of now.
    let (status, resumed) = t.post_empty("/api/protection/resume").await;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["was_paused"], true);
    let state = &resumed["protection"];
    assert_eq!(
        (state["paused"].as_bool(), state["reason"].as_str()),
        (Some(false), None),
        "{state}"
    );
    assert_eq!(state["high_water_mark"], state["equity"], "{state}");
    assert_eq!(state["drawdown_pct"], 0.0);
    let (_, log) = t.get("/api/state").await;
    let entry = &log["log"][0];
    assert_eq!(
        (entry["agent"].as_str(), entry["status"].as_str()),
        (Some("coo"), Some("ok")),
        "{log}"
    );
    assert!(entry["action"].as_str().unwrap().contains("entries resumed"), "{entry}");
    let (status, placed) = t.post_empty(trade).await;
    assert_eq!(status, 200, "{placed}");
    let (_, calm) = t.get("/api/protection").await;
    assert_eq!(calm["paused"], false, "{calm}");
    assert_eq!(sent_with(&t, "DRAWDOWN").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daily_report_counts_only_the_trades_closed_today_in_tokyo() {
    // 08:00 UTC on the test clock is 17:00 in Tokyo.
    let t = Trading::start_with("[market]\ntimezone = \"Asia/Tokyo\"\n").await;
    round_trip(&t, "SOLUSDT", "150", "155").await;
    // 16:00 UTC, still March 2nd in UTC, is 01:00 on March 3rd in Tokyo.
    t.rig.advance_hours(8);
    let win = f(&round_trip(&t, "ETHUSDT", "3000", "3060").await["pnl"]);
    let loss = f(&round_trip(&t, "ETHUSDT", "3000", "2970").await["pnl"]);
    assert!(win > 0.0 && loss < 0.0, "win {win}, loss {loss}");
    t.set_price("SOLUSDT", "150");
    let open = buy(&t, "SOLUSDT", "2").await;
    t.set_price("SOLUSDT", "156");

    let (_, history) = t.get("/api/trades/history").await;
    let days: Vec<&str> = history["trades"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["closed_at"].as_str().unwrap()[..10])
        .collect();
    assert_eq!(days, ["2026-03-02"; 3], "one UTC day: {history}");

    let (status, answer) = t.post_empty("/api/status/report").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (answer["ok"].as_bool(), answer["sent"].as_bool(), answer["messages"].as_u64()),
        (Some(true), Some(true), Some(1))
    );
    let report = &answer["report"];
    assert_eq!(
        (report["date"].as_str(), report["timezone"].as_str()),
        (Some("2026-03-03"), Some("Asia/Tokyo"))
    );
    let closed = &report["closed"];
    assert_eq!(
        (closed["count"].as_u64(), closed["wins"].as_u64(), closed["losses"].as_u64()),
        (Some(2), Some(1), Some(1)),
        "{report}"
    );
    assert!(close_to(f(&closed["total_pnl"]), win + loss, 1e-6), "{report}");
    let symbols: Vec<&str> = report["trades"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["symbol"].as_str().unwrap())
        .collect();
    assert_eq!(symbols, ["ETHUSDT", "ETHUSDT"], "yesterday's SOL trade in Tokyo is left out");
    assert_eq!(report["trades_today"], 3, "{report}");

    let position = &report["open_positions"][0];
    assert_eq!(
        (position["symbol"].as_str(), position["price"].as_f64()),
        (Some("SOLUSDT"), Some(156.0))
    );
    // Unrealized: the size at 156 minus what the entry cost (the simulator's fill), for the
    // coin the trade holds: the sub-step remainder of what the fill received net of the 0.1 %
    // fee stays in the account at its own cost.
    let entry = t
        .orders_with_prefix("TE_")
        .into_iter()
        .filter(|o| o["symbol"] == "SOLUSDT")
        .max_by_key(|o| o["orderId"].as_i64())
        .unwrap();
    let spent: f64 = entry["cummulativeQuoteQty"].as_str().unwrap().parse().unwrap();
    let executed: f64 = entry["executedQty"].as_str().unwrap().parse().unwrap();
    let received = executed * 0.999;
    let cost = spent * f(&open["size"]) / received;
    let unrealized = f(&open["size"]) * 156.0 - cost;
    assert!(
        close_to(f(&position["unrealized_pnl"]), unrealized, 1e-6),
        "{position} vs {unrealized}"
    );
    assert!(close_to(f(&report["unrealized_pnl"]), unrealized, 1e-6));
    assert!(report["drawdown"]["equity"].as_f64().is_some_and(|e| e > 9_000.0), "{report}");

    let text = &wait_for_text(&t, "Daily PnL", 1).await[0];
    for expected in [
        "Daily PnL 2026-03-03 (Asia/Tokyo)",
        "Closed: 2 (1 won, 1 lost, 0 even)",
        "ETHUSDT buy: ",
        "Open positions: 1",
        "SOLUSDT buy ",
    ] {
        assert!(text.contains(expected), "{expected:?} missing in {text}");
    }
    assert!(!text.contains("SOLUSDT buy: "), "no closed SOL line: {text}");

    // A messenger that refuses: still 200, with the report and the reason.
    t.messenger.fail_next(
        MessengerFault::Error { code: 400, description: "Bad Request: chat not found".into() },
        1,
    );
    let (status, refused) = t.post_empty("/api/status/report?agent=finance").await;
    assert_eq!(status, 200, "{refused}");
    assert_eq!((refused["ok"].as_bool(), refused["sent"].as_bool()), (Some(false), Some(false)));
    assert!(refused["error"].as_str().unwrap().contains("chat not found"), "{refused}");
    assert_eq!(refused["report"]["closed"]["count"], 2);
}

/// Moves the test clock to the simulator's, so the clock check passes, and revalidates the
/// license on the new date.
async fn align_clocks(t: &Trading) {
    let behind = t.sim.sim.now_ms() - t.rig.now().timestamp_millis();
    assert!(behind >= 0, "the simulator runs on the wall clock, after the test clock's start");
    t.rig.clock.advance(chrono::Duration::milliseconds(behind));
    t.host.license().revalidate_now().await;
}

async fn health(t: &Trading) -> Value {
    let (status, report) = t.get("/api/health/check").await;
    assert_eq!(status, 200, "{report}");
    report
}

fn verdicts(report: &Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["check"].as_str().unwrap().into(), f["verdict"].as_str().unwrap().into()))
        .collect()
}

fn finding<'a>(report: &'a Value, check: &str) -> &'a Value {
    report["findings"].as_array().unwrap().iter().find(|f| f["check"] == check).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_check_flags_an_unprotected_trade_a_skewed_clock_and_unreachable_peers() {
    let t = Trading::start().await;
    align_clocks(&t).await;
    let healthy = health(&t).await;
    assert_eq!(
        (healthy["ok"].as_bool(), healthy["anomalies"].as_u64()),
        (Some(true), Some(0)),
        "{healthy}"
    );
    assert!(verdicts(&healthy).iter().all(|(_, v)| v == "ok"), "{healthy}");
    let checks: Vec<String> = verdicts(&healthy).into_iter().map(|(c, _)| c).collect();
    assert_eq!(checks, ["exchange", "clock", "license", "trades", "messenger"]);
    assert_eq!(healthy["alerted"], false);
    assert!(sent_with(&t, "System alert").is_empty());

    // A trade restored without its stop's order id is unprotected until reconciliation.
    let restore = json!({"symbol": "ETHUSDT", "direction": "buy", "size": 0.1, "entry_px": 3000.0,
        "sl_px": 2900.0, "tp_px": 3200.0});
    let (status, restored) = t.post("/api/trades/restore", restore).await;
    assert_eq!(
        (status, restored["trade"]["protection"].as_str()),
        (200, Some("unprotected")),
        "{restored}"
    );
    align_clocks(&t).await;
    let report = health(&t).await;
    assert_eq!(
        (report["ok"].as_bool(), report["anomalies"].as_u64()),
        (Some(false), Some(1)),
        "{report}"
    );
    let trades = finding(&report, "trades");
    assert_eq!(trades["verdict"], "anomaly");
    assert!(trades["detail"].as_str().unwrap().contains("ETHUSDT"), "{trades}");
    assert_eq!(report["alerted"], true);
    let alerts = sent_with(&t, "System alert");
    assert_eq!(alerts.len(), 1, "one alert per run: {alerts:?}");
    assert!(alerts[0].contains("trades: unprotected: ETHUSDT"), "{}", alerts[0]);
    let (_, state) = t.get("/api/state").await;
    let entry = &state["log"][0];
    assert_eq!(
        (entry["agent"].as_str(), entry["status"].as_str()),
        (Some("tech"), Some("error")),
        "{state}"
    );
    assert!(entry["action"].as_str().unwrap().contains("ETHUSDT"), "{entry}");

    // The exchange's clock an hour ahead of ours.
    t.sim.sim.advance(3_600_000);
    let skewed = health(&t).await;
    let clock = finding(&skewed, "clock");
    assert_eq!(clock["verdict"], "anomaly", "{skewed}");
    assert!(clock["detail"].as_str().unwrap().contains("behind"), "{clock}");

    // A messenger that refuses getMe: flagged, and the alert still goes out.
    align_clocks(&t).await;
    t.messenger
        .fail_next(MessengerFault::Error { code: 401, description: "Unauthorized".into() }, 1);
    let muted = health(&t).await;
    let messenger = finding(&muted, "messenger");
    assert_eq!(messenger["verdict"], "anomaly", "{muted}");
    assert!(messenger["detail"].as_str().unwrap().contains("Unauthorized"), "{messenger}");
    assert_eq!(muted["alerted"], true, "{muted}");

    // The exchange does not answer: flagged, and the clock cannot be measured.
    t.fault_on_read(FaultKind::ServerError { status: 503, execute: false }, 20, "/api/v3/time");
    let down = health(&t).await;
    let exchange = finding(&down, "exchange");
    assert_eq!(exchange["verdict"], "anomaly", "{down}");
    assert!(exchange["detail"].as_str().unwrap().contains("exchange_a unreachable"), "{exchange}");
    assert_eq!(finding(&down, "clock")["verdict"], "unknown");
    assert_eq!(down["anomalies"], 2, "exchange and the unprotected trade: {down}");
    let alerts = sent_with(&t, "System alert");
    assert_eq!(alerts.len(), 4, "{alerts:?}");
    assert!(alerts[3].contains("exchange: exchange_a unreachable"), "{}", alerts[3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_minute_s_equity_is_kept_and_read_back_as_a_series() {
    let t = Trading::start_synced("").await;
    t.buy("ETHUSDT").await;
    let state = t.host.app.state.clone();
    // Five minutes of the scheduler's drawdown check; ETH rises 1 % a minute.
    for minute in 1..=5 {
        t.rig.clock.advance(chrono::Duration::seconds(60));
        t.set_price("ETHUSDT", &(3000 + 30 * minute).to_string());
        state.scheduler.tick(&state).await;
    }
    let (status, series) = t.get("/api/equity?days=1").await;
    assert_eq!(status, 200, "{series}");
    assert_eq!(series["currency"], "USDT");
    let points = series["points"].as_array().unwrap();
    assert_eq!(points.len(), 5, "one point a minute: {series}");
    let times: Vec<i64> = points.iter().map(|p| p["time"].as_i64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[1] - w[0] == 60_000), "{times:?}");
    let equity: Vec<f64> = points.iter().map(|p| f(&p["equity"])).collect();
    assert!(equity.windows(2).all(|w| w[1] > w[0]), "equity rises with ETH: {equity:?}");
    let (_, measured) = t.get("/api/protection").await;
    assert!(close_to(f(&measured["equity"]), equity[4], 0.01), "{measured} vs {equity:?}");
    // Downsampled on request; bad ranges are named.
    let (_, thin) = t.get("/api/equity?days=1&points=10").await;
    assert!(thin["points"].as_array().unwrap().len() <= 10, "{thin}");
    let (status, refused) = t.get("/api/equity?days=0").await;
    assert_eq!((status, refused["error"].as_str()), (422, Some("invalid_query")), "{refused}");
    assert!(refused["detail"].as_str().unwrap().contains("days"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_boss_pauses_entries_until_resumed_and_exits_go_on() {
    let t = Trading::start_with("").await;
    t.buy("ETHUSDT").await;
    let (status, paused) = t.post_empty("/api/protection/pause").await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["newly_paused"], true, "{paused}");
    assert!(paused["reason"].as_str().unwrap().starts_with("entries_paused: "), "{paused}");
    let (_, again) = t.post_empty("/api/protection/pause").await;
    assert_eq!(
        (again["newly_paused"].clone(), again["since"].clone()),
        (json!(false), paused["since"].clone())
    );

    let trade =
        "/api/trade?symbol=SOLUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9";
    let (status, refused) = t.post_empty(trade).await;
    assert_eq!((status, refused["error"].as_str()), (409, Some("entries_paused")), "{refused}");
    let (_, skipped) = t.post("/api/signal", good_signal("SOLUSDT")).await;
    assert_eq!(skipped["status"], "entries_paused_skipped", "{skipped}");
    let (_, footer) = t.get("/api/dashboard/footer").await;
    assert!(footer["entries_blocked"].as_str().unwrap().starts_with("entries_paused"), "{footer}");
    // Exits go on while paused.
    let (status, closed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_eq!(status, 200, "{closed}");
    // A rising equity mark does not lift the boss's pause; resuming does.
    t.get("/api/protection").await;
    assert_eq!(t.post_empty(trade).await.0, 409);
    let (status, resumed) = t.post_empty("/api/protection/resume").await;
    assert_eq!((status, resumed["was_paused"].clone()), (200, json!(true)), "{resumed}");
    let (status, placed) = t.post_empty(trade).await;
    assert_eq!(status, 200, "{placed}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 2, "ETH's entry and SOL's after the resume");
}
