//! The dashboard's live view over real HTTP: `GET /api/dashboard/events` says first which path
//! protection is on, then announces each change (a trade opened, an agent's report) and streams
//! the open trades' prices with their unrealised pnl as the simulator trades — each within a
//! second — and ends when the service stops, so stopping never waits for an open page. The
//! page itself is driven in Chromium by `dashboard_page::`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::trading_support::Trading;

/// One server-sent event: its name and its JSON data.
#[derive(Debug)]
struct LiveEvent {
    name: String,
    data: Value,
}

/// A reader of the event stream.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn open(t: &Trading) -> Events {
        let response = reqwest::Client::new()
            .get(t.host.url("/api/dashboard/events"))
            .send()
            .await
            .expect("the stream opens");
        assert_eq!(response.status(), 200);
        let content_type = response.headers()["content-type"].to_str().unwrap().to_string();
        assert!(content_type.starts_with("text/event-stream"), "{content_type}");
        Events { response, buffer: String::new() }
    }

    /// The next event (comments skipped), or none when the stream ended; panics after `within`.
    async fn next(&mut self, within: Duration) -> Option<LiveEvent> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = None;
                let mut data = None;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = Some(v.trim().to_string());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data = Some(serde_json::from_str(v.trim()).expect("JSON data"));
                    }
                }
                if let (Some(name), Some(data)) = (name, data) {
                    return Some(LiveEvent { name, data });
                }
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let chunk = tokio::time::timeout(left, self.response.chunk())
                .await
                .unwrap_or_else(|_| {
                    panic!("no event within {within:?}; buffered {:?}", self.buffer)
                })
                .expect("the stream reads");
            match chunk {
                Some(bytes) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                None => return None,
            }
        }
    }

    /// The first event named `name` for which `check` holds, within `within`.
    async fn until(
        &mut self,
        name: &str,
        within: Duration,
        check: impl Fn(&Value) -> bool,
    ) -> (Value, Duration) {
        let start = Instant::now();
        loop {
            let left = within.saturating_sub(start.elapsed());
            let event = self.next(left).await.expect("the stream is open");
            if event.name == name && check(&event.data) {
                return (event.data, start.elapsed());
            }
        }
    }
}

fn names_panel(data: &Value, panel: &str) -> bool {
    data["panels"].as_array().is_some_and(|p| p.iter().any(|x| x == panel))
}

const SECOND: Duration = Duration::from_secs(1);

/// Trades ETHUSDT at the simulator until the live view streams its price (the price link has
/// subscribed to the symbol).
async fn prices_flow(t: &Trading, events: &mut Events) {
    let deadline = Instant::now() + Duration::from_secs(5);
    // The simulator trades on a change of price only.
    for price in ["3001", "3002"].into_iter().cycle() {
        t.set_price("ETHUSDT", price);
        let mut seen = false;
        let until = Instant::now() + Duration::from_millis(400);
        while let Ok(Some(event)) = tokio::time::timeout(
            until.saturating_duration_since(Instant::now()),
            events.next(SECOND),
        )
        .await
        {
            seen |= event.name == "prices";
        }
        if seen {
            return;
        }
        assert!(Instant::now() < deadline, "no price reached the live view");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_view_tells_a_page_what_changed_and_streams_prices_within_a_second() {
    let t = Trading::start_streaming("").await;
    let mut events = Events::open(&t).await;
    let first = events.next(SECOND).await.expect("a first event");
    assert_eq!(first.name, "path", "{first:?}");
    // Wait for the account link; the path event follows every change of the links.
    if first.data["fills"] != "stream" {
        events.until("path", Duration::from_secs(5), |p| p["fills"] == "stream").await;
    }

    t.buy("ETHUSDT").await;
    let (changed, took) = events
        .until("changed", SECOND, |d| names_panel(d, "trades") && names_panel(d, "orders"))
        .await;
    println!("trade opened -> changed {changed} after {took:?}");
    let (_, trade) = t.get("/api/dashboard/trades").await;
    let trade = &trade["trades"][0];
    let (size, entry) = (trade["size"].as_f64().unwrap(), trade["entry_px"].as_f64().unwrap());
    events.until("path", Duration::from_secs(5), |p| p["prices"] == "stream").await;
    // The price link subscribes to a new trade's symbol within a second of the trade.
    prices_flow(&t, &mut events).await;

    // A trade at the exchange: the price and its unrealised pnl arrive within a second.
    t.set_price("ETHUSDT", "3040");
    let (prices, took) = events
        .until("prices", SECOND, |d| {
            d["trades"].as_array().is_some_and(|ts| ts.iter().any(|x| x["price"] == 3040.0))
        })
        .await;
    let eth =
        prices["trades"].as_array().unwrap().iter().find(|x| x["symbol"] == "ETHUSDT").unwrap();
    let pnl = eth["unrealised_pnl"].as_f64().unwrap();
    assert!((pnl - (3040.0 - entry) * size).abs() < 1e-6, "{eth} with entry {entry} size {size}");
    let pct = eth["unrealised_pct"].as_f64().unwrap();
    assert!((pct - (3040.0 - entry) / entry * 100.0).abs() < 1e-3, "{eth}");
    println!("price at the simulator -> prices event after {took:?}");

    // An agent's report reaches the activity panel.
    let (status, _) =
        t.post("/api/agent/scout", json!({"status": "running", "action": "scanning"})).await;
    assert_eq!(status, 200);
    events.until("changed", SECOND, |d| names_panel(d, "activity")).await;

    // The take-profit fills at the exchange: the trade, the pnl curve and the footer change.
    t.set_price("ETHUSDT", "3160");
    events
        .until("changed", Duration::from_secs(2), |d| {
            names_panel(d, "trades") && names_panel(d, "pnl") && names_panel(d, "footer")
        })
        .await;

    // Stopping the service ends the stream instead of waiting for the page to leave.
    let stopping = tokio::spawn(async move {
        let started = Instant::now();
        t.host.stop().await;
        started.elapsed()
    });
    while events.next(Duration::from_secs(5)).await.is_some() {}
    let took = stopping.await.unwrap();
    assert!(took < Duration::from_secs(5), "stop waited {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_streams_the_live_view_says_protection_polls_and_still_announces_changes() {
    let t = Trading::start_with("").await;
    let mut events = Events::open(&t).await;
    let first = events.next(SECOND).await.expect("a first event");
    assert_eq!(first.name, "path");
    assert_eq!(first.data, json!({"fills": "polled", "prices": "polled", "streams": null}));
    t.buy("SOLUSDT").await;
    events.until("changed", SECOND, |d| names_panel(d, "trades")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_cannot_open_more_than_the_bounded_number_of_streams() {
    let t = Trading::start_with("").await;
    let max = spotbot::dashboard::live::MAX_STREAMS;
    let mut open = Vec::new();
    for _ in 0..max {
        open.push(Events::open(&t).await);
    }
    let refused = reqwest::get(t.host.url("/api/dashboard/events")).await.unwrap();
    assert_eq!(refused.status(), 503);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "too_many_streams", "{body}");
    assert!(body["detail"].as_str().unwrap().contains(&max.to_string()), "{body}");

    // A closed page gives its place back.
    drop(open.pop());
    let deadline = Instant::now() + SECOND;
    while t.host.app.state.live.open_streams() == max && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut again = Events::open(&t).await;
    assert_eq!(again.next(SECOND).await.expect("a first event").name, "path");
    drop(open);
    t.host.stop().await;
}
