//! Exchange B's WebSocket followed by the host, against the simulator's `/ws` on its REST
//! port: both links go live on their acknowledgements, a take-profit the market fills at the
//! exchange closes the trade on the pushed order update (no protection run), a watched stop is
//! exited on the pushed mids, a dropped connection comes back, catches up and settles what
//! happened meanwhile — once, and a long silence is an outage the boss hears of.

use std::time::{Duration, Instant};

use serde_json::Value;
use spotbot_sim::{StreamFault, StreamFaultKind, StreamService};

use crate::trading_support::{Trading, Venue};

/// The polled watch would look every 200 ms if the price link were down.
const FAST_WATCH: &str = "\n[protection]\nwatch_interval_ms = 200\n";

async fn start() -> Trading {
    let t = Trading::start_streaming_on(Venue::B, FAST_WATCH).await;
    t.until_streams(Duration::from_secs(5), both_live).await;
    t
}

fn both_live(s: &Value) -> bool {
    s["account"] == "live" && s["prices"] == "live"
}

async fn reason_of_the_closed_trade(t: &Trading) -> Value {
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["trades"].as_array().map(Vec::len), Some(1), "settled once: {history}");
    history["trades"][0]["reason"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_profit_filled_at_the_exchange_closes_the_trade_on_the_pushed_update() {
    let t = start().await;
    let (_, health) = t.get("/api/health").await;
    assert_eq!(health["streams"]["reconnects"], 0, "{health}");
    t.buy("ETHUSDT").await;

    // The market reaches the take-profit (5 % up) at the exchange; nobody asks the service.
    t.set_price("ETHUSDT", "3200");
    t.time_to_close(Duration::from_secs(2)).await;
    assert_eq!(t.orders_b_of("Gtc", "A")[0]["status"], "filled");
    assert!(t.orders_b_of("Ioc", "A").is_empty(), "nothing was sold at market");
    assert_eq!(reason_of_the_closed_trade(&t).await, "take_profit");
    t.message_containing("Take-profit hit: ETHUSDT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crossed_watched_stop_is_exited_on_the_pushed_mids() {
    let t = start().await;
    t.buy("ETHUSDT").await;
    // The open trade's symbol is followed within a second.
    tokio::time::sleep(Duration::from_millis(1100)).await;

    let crossed = Instant::now();
    t.set_price("ETHUSDT", "2930"); // below the watched stop (2 % under the entry)
    let deadline = crossed + Duration::from_secs(1);
    while t.orders_b_of("Ioc", "A").is_empty() {
        assert!(Instant::now() < deadline, "no exit within 1 s: {:?}", t.orders_b());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    t.time_to_close(Duration::from_secs(2)).await;
    assert_eq!(t.orders_b_of("Ioc", "A").len(), 1, "sold once: {:?}", t.orders_b());
    assert_eq!(t.orders_b_of("Gtc", "A")[0]["status"], "canceled", "the take-profit went first");
    assert_eq!(reason_of_the_closed_trade(&t).await, "stop_loss");
    t.message_containing("Stop-loss hit: ETHUSDT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_comes_back_and_what_happened_meanwhile_is_settled_once() {
    let t = start().await;
    t.buy("ETHUSDT").await;

    // The connection goes without a close frame; the take-profit fills right away, while the
    // host is reconnecting (its update is never pushed to the new subscription).
    let mut drop = StreamFault::new(StreamFaultKind::Drop);
    drop.service = Some(StreamService::ExchangeB);
    t.sim.sim.stream_fault(drop);
    t.set_price("ETHUSDT", "3200");
    let back = t
        .until_streams(Duration::from_secs(5), |s| {
            both_live(s) && s["reconnects"].as_u64() >= Some(1)
        })
        .await;
    assert!(back["reconnects"].as_u64() >= Some(1), "{back}");
    t.time_to_close(Duration::from_secs(3)).await;
    assert_eq!(reason_of_the_closed_trade(&t).await, "take_profit");
    let (_, report) = t.get("/api/trailing").await;
    assert_eq!(report["exits"], serde_json::json!([]), "settled once: {report}");
    assert_eq!(reason_of_the_closed_trade(&t).await, "take_profit");
}

/// A silent connection is dropped, the polled paths take over, and the boss hears of a long
/// outage once and of its end — exchange-neutral, on exchange B's one WebSocket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_boss_hears_of_a_long_outage_once_and_of_its_end() {
    let t =
        Trading::start_streaming_on(Venue::B, "\n[protection]\nstream_outage_alert_s = 10\n").await;
    t.until_streams(Duration::from_secs(5), both_live).await;
    let mut silence = StreamFault::new(StreamFaultKind::Silence { ms: 6000 });
    silence.service = Some(StreamService::ExchangeB);
    t.sim.sim.stream_fault(silence);
    t.until_streams(Duration::from_secs(3), |s| s["account"] == "reconnecting").await;
    // Seen down at the frozen test clock's time; ten seconds later it is an outage.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    t.rig.clock.advance(chrono::Duration::seconds(11));
    let down = t.message_containing("Exchange stream down").await;
    assert!(down.text.contains("polling"), "{}", down.text);
    let back = t.message_containing("Exchange stream back").await;
    assert!(back.text.contains("after 11 s"), "{}", back.text);
    let alerts =
        t.messenger.sent().iter().filter(|m| m.text.contains("Exchange stream down")).count();
    assert_eq!(alerts, 1, "one message per outage");
}
