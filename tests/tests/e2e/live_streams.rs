//! The exchange's streams, followed by the host, against the simulator's WebSocket services:
//! a take-profit the market fills at the exchange closes the trade within a second without a
//! protection run, a watched stop exits on the price stream, and a stream that goes silent
//! falls back to the polled path (health says so), comes back and catches up with what it
//! missed — each fill settled exactly once.

use std::time::{Duration, Instant};

use serde_json::Value;
use spotbot_sim::{StreamFault, StreamFaultKind, StreamService};

use crate::trading_support::Trading;

async fn until_account_live(t: &Trading) {
    t.until_streams(Duration::from_secs(5), |s| s["account"] == "live").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_profit_filled_at_the_exchange_closes_the_trade_within_a_second() {
    let t = Trading::start_streaming("").await;
    until_account_live(&t).await;
    t.buy("ETHUSDT").await;
    t.until_streams(Duration::from_secs(5), |s| s["prices"] == "live").await;

    // The market reaches the take-profit (3150) at the exchange; nobody asks the service.
    t.set_price("ETHUSDT", "3160");
    let took = t.time_to_close(Duration::from_secs(1)).await;
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert!(!t.seen("GET", "/api/v3/openOrderList").is_empty(), "settled through the usual path");

    let (_, history) = t.get("/api/trades/history").await;
    let closed = &history["trades"][0];
    assert_eq!(closed["symbol"], "ETHUSDT", "{history}");
    assert_eq!(closed["reason"], "take_profit", "{history}");
    t.message_containing("ETHUSDT").await;
    // Settled once: a protection run afterwards finds nothing more to do.
    let (_, report) = t.get("/api/trailing").await;
    assert_eq!(report["exits"], serde_json::json!([]), "{report}");
    assert_eq!(t.get("/api/trades/history").await.1["trades"].as_array().map(Vec::len), Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_account_stream_falls_back_comes_back_and_catches_up() {
    let t = Trading::start_streaming("").await;
    until_account_live(&t).await;
    t.buy("ETHUSDT").await;

    // The account stream service goes silent for 4 s; the host notices after 1.5 s, and its
    // new connections get no answer either until the silence ends.
    let mut silence = StreamFault::new(StreamFaultKind::Silence { ms: 4000 });
    silence.service = Some(StreamService::UserData);
    t.sim.sim.stream_fault(silence);
    let down = t.until_streams(Duration::from_secs(3), |s| s["account"] != "live").await;
    assert_eq!(down["account"], "reconnecting", "{down}");

    // Meanwhile the take-profit fills; its events are lost with the silence.
    t.set_price("ETHUSDT", "3160");
    // Back after the silence: the host resubscribes and catches up.
    let back = t.until_streams(Duration::from_secs(6), |s| s["account"] == "live").await;
    assert!(back["reconnects"].as_u64() >= Some(1), "{back}");
    t.time_to_close(Duration::from_secs(3)).await;
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["trades"].as_array().map(Vec::len), Some(1), "{history}");
    assert_eq!(history["trades"][0]["reason"], "take_profit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_stop_exits_on_the_price_stream() {
    let t =
        Trading::start_streaming("\n[protection]\nstop = \"service\"\nwatch_interval_ms = 200\n")
            .await;
    until_account_live(&t).await;
    t.buy("ETHUSDT").await;
    t.until_streams(Duration::from_secs(5), |s| s["prices"] == "live").await;

    // While prices stream, the polled watch asks the exchange nothing.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let polled = t.seen("GET", "/api/v3/ticker/price").len();
    let crossed = Instant::now();
    t.set_price("ETHUSDT", "2930"); // below the watched stop (2940)
    let deadline = Instant::now() + Duration::from_secs(1);
    while t.orders_of("MARKET", "SELL").is_empty() {
        assert!(Instant::now() < deadline, "no exit within 1 s: {:?}", t.orders());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let exit_after = crossed.elapsed();
    assert_eq!(t.orders_of("MARKET", "SELL").len(), 1, "sold once");
    t.time_to_close(Duration::from_secs(2)).await;
    assert!(exit_after < Duration::from_secs(1), "{exit_after:?}");
    assert_eq!(t.seen("GET", "/api/v3/ticker/price").len(), polled, "the stream's price did it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_stream_urls_the_host_polls_and_says_so() {
    let t = Trading::start().await;
    let (_, health) = t.get("/api/health").await;
    assert!(health["streams"].is_null(), "{health}");
}

/// Arms `kind` on the account stream, fills the take-profit right away, and checks the host
/// reconnects and settles the fill exactly once.
async fn survives(kind: StreamFaultKind) {
    let t = Trading::start_streaming("").await;
    until_account_live(&t).await;
    t.buy("ETHUSDT").await;
    let mut fault = StreamFault::new(kind);
    fault.service = Some(StreamService::UserData);
    t.sim.sim.stream_fault(fault);
    t.set_price("ETHUSDT", "3160");
    let back = t
        .until_streams(Duration::from_secs(5), |s| {
            s["account"] == "live" && s["reconnects"].as_u64() >= Some(1)
        })
        .await;
    assert_eq!(back["account"], "live");
    t.time_to_close(Duration::from_secs(3)).await;
    let (_, report) = t.get("/api/trailing").await;
    assert_eq!(report["exits"], serde_json::json!([]), "settled once: {report}");
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["trades"].as_array().map(Vec::len), Some(1), "{history}");
    assert_eq!(history["trades"][0]["reason"], "take_profit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_account_stream_reconnects_and_settles_the_fill_once() {
    survives(StreamFaultKind::Drop).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_shutdown_notice_is_a_reconnect_and_nothing_is_missed() {
    survives(StreamFaultKind::ServerShutdown).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trailing_follows_streamed_prices_at_most_once_per_interval() {
    let t = Trading::start_streaming("\n[protection]\ntrail_interval_ms = 1500\n").await;
    until_account_live(&t).await;
    t.buy("ETHUSDT").await;
    t.until_streams(Duration::from_secs(5), |s| s["prices"] == "live").await;
    let stops = |t: &Trading| t.orders_of("STOP_LOSS_LIMIT", "SELL");
    let open_stop = |t: &Trading| {
        stops(t).into_iter().find(|o| o["status"] == "NEW").map(|o| o["stopPrice"].clone())
    };

    // 3100 is 3.3 % up: the stop moves to 1 % below without a protection run.
    t.set_price("ETHUSDT", "3100");
    let deadline = Instant::now() + Duration::from_secs(1);
    while open_stop(&t) != Some(Value::from("3069.00000000")) {
        assert!(Instant::now() < deadline, "not raised on the stream: {:?}", stops(&t));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A higher price right away waits for the interval: one replacement per 1.5 s at most.
    t.set_price("ETHUSDT", "3120");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(open_stop(&t), Some(Value::from("3069.00000000")), "{:?}", stops(&t));
    assert_eq!(stops(&t).len(), 2, "one replacement so far");
    // Once the interval has passed on the service's clock it follows; the next run tells the
    // boss of the raised stops, one row per symbol from its first stop to its latest.
    t.rig.clock.advance(chrono::Duration::milliseconds(1500));
    let deadline = Instant::now() + Duration::from_secs(3);
    while open_stop(&t) != Some(Value::from("3088.80000000")) {
        assert!(Instant::now() < deadline, "not raised again: {:?}", stops(&t));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (_, report) = t.get("/api/trailing").await;
    assert_eq!(report["updated"].as_array().map(Vec::len), Some(1), "{report}");
    let row = &report["updated"][0];
    let first_stop: f64 = stops(&t)[0]["stopPrice"].as_str().unwrap().parse().unwrap();
    assert_eq!((row["old_sl"].as_f64(), row["new_sl"].as_f64()), (Some(first_stop), Some(3088.8)));
    t.message_containing("3088.8").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gapped_stop_is_exited_on_the_price_that_gapped() {
    let t = Trading::start_streaming("").await;
    until_account_live(&t).await;
    t.buy("ETHUSDT").await;
    t.until_streams(Duration::from_secs(5), |s| s["prices"] == "live").await;

    // Through the stop (2940) and its limit (2934.12): the stop triggers and cannot fill.
    t.set_price("ETHUSDT", "2900");
    let deadline = Instant::now() + Duration::from_secs(2);
    while t.orders_of("MARKET", "SELL").is_empty() {
        assert!(Instant::now() < deadline, "the gap was not exited: {:?}", t.orders());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    t.time_to_close(Duration::from_secs(2)).await;
    assert_eq!(t.orders_of("MARKET", "SELL").len(), 1, "sold once");
    t.message_containing("ETHUSDT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_entry_filled_at_the_exchange_gets_its_oco_on_the_fill_event() {
    let t = Trading::start_streaming("").await;
    until_account_live(&t).await;
    let entry = "/api/trade/manual?symbol=ETHUSDT&direction=buy&entry_px=2950&sl_pct=2&rr=1:2.5";
    let (status, placed) = t.post_empty(entry).await;
    assert_eq!(status, 200, "{placed}");

    // The market comes down through 2950: the LIMIT fills; nobody runs the pending check.
    let filled = Instant::now();
    t.set_price("ETHUSDT", "2940");
    let deadline = Instant::now() + Duration::from_secs(1);
    while t.orders_of("LIMIT_MAKER", "SELL").is_empty() {
        assert!(Instant::now() < deadline, "no OCO within 1 s: {:?}", t.orders());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(filled.elapsed() < Duration::from_secs(1));
    assert_eq!(t.orders_of("STOP_LOSS_LIMIT", "SELL").len(), 1, "one OCO");
    let trades = t.open_trades().await;
    assert_eq!(trades.len(), 1, "{trades:?}");
    let (_, pending) = t.get("/api/pending-entries").await;
    assert_eq!(pending["count"], 0, "{pending}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_boss_hears_of_a_long_outage_once_and_of_its_end() {
    let t = Trading::start_streaming("\n[protection]\nstream_outage_alert_s = 10\n").await;
    until_account_live(&t).await;
    let mut silence = StreamFault::new(StreamFaultKind::Silence { ms: 6000 });
    silence.service = Some(StreamService::UserData);
    t.sim.sim.stream_fault(silence);
    t.until_streams(Duration::from_secs(3), |s| s["account"] == "reconnecting").await;
    // Seen down at the frozen test clock's time; ten seconds later it is an outage.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    t.rig.clock.advance(chrono::Duration::seconds(11));
    let down = t.message_containing("Exchange stream down").await;
    assert!(down.text.contains("order updates") && down.text.contains("polling"), "{}", down.text);
    let back = t.message_containing("Exchange stream back").await;
    assert!(back.text.contains("after 11 s"), "{}", back.text);
    let alerts =
        t.messenger.sent().iter().filter(|m| m.text.contains("Exchange stream down")).count();
    assert_eq!(alerts, 1, "one message per outage");
    let (_, state) = t.get("/api/state").await;
    assert!(state["log"].to_string().contains("exchange stream down for 11 s"), "{state}");
}
