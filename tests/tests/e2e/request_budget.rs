//! The request budget over HTTP against the simulator: a burst of agent reads (scans, market
//! context, portfolio) spends only the reads' share of the exchange's request weight and then
//! answers our own `429 rate_limited` with `Retry-After` — never a 5xx — while trailing, a
//! confirm and a close still reach the exchange, and the exchange never answers 429 or 418 —
//! on both exchanges (exchange B's budget is its 1200 weight a minute).

use crate::plugin_support::workspace_plugins;
use crate::trading_support::{Trading, Venue, d, good_signal};
use futures_util::future::join_all;

const READS: [(&str, &str); 4] = [
    ("GET", "/api/portfolio"),
    ("POST", "/api/pump-momentum/scan"),
    ("GET", "/api/market/scan"),
    ("GET", "/scan?bot=ta_trend"),
];

/// Sends `n` reads, 25 at a time, and returns (status, Retry-After) of each.
async fn burst(t: &Trading, n: usize) -> Vec<(u16, Option<u64>)> {
    let mut answers = Vec::with_capacity(n);
    for batch in (0..n).collect::<Vec<_>>().chunks(25) {
        let calls = batch.iter().map(|i| {
            let (method, path) = READS[i % READS.len()];
            let request = match method {
                "GET" => t.host.http.get(t.host.url(path)),
                _ => t.host.http.post(t.host.url(path)).json(&serde_json::json!(null)),
            };
            async move {
                let response = request.send().await.expect("the host answers");
                let retry = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse().ok());
                (response.status().as_u16(), retry)
            }
        });
        answers.extend(join_all(calls).await);
    }
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_reads_gets_429_while_trailing_a_confirm_and_a_close_reach_the_exchange() {
    burst_then_money_paths(Venue::A).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_exchange_b_a_burst_of_reads_gets_429_while_the_money_paths_reach_it() {
    burst_then_money_paths(Venue::B).await;
}

async fn burst_then_money_paths(venue: Venue) {
    let (_plugins, plugins_toml) = workspace_plugins(&["ta_trend.wasm", "pump_momentum.wasm"]);
    let t = Trading::start_on(venue, &format!("\n{plugins_toml}")).await;
    t.buy("ETHUSDT").await;

    let answers = burst(&t, 400).await;
    let server_errors: Vec<_> = answers.iter().filter(|(s, _)| *s >= 500).collect();
    assert!(server_errors.is_empty(), "no 5xx among the reads: {server_errors:?}");
    let limited: Vec<_> = answers.iter().filter(|(s, _)| *s == 429).collect();
    assert!(!limited.is_empty(), "the reads' share was spent: {answers:?}");
    assert!(limited.iter().all(|(_, retry)| retry.is_some_and(|s| (1..=60).contains(&s))));
    // The portfolio answers in its own shape (spec: `ok: false` with the reason).
    let (status, body) = t.get("/api/portfolio").await;
    assert_eq!(status, 200, "{body}");
    if body["ok"] == false {
        assert!(body["error"].as_str().unwrap().contains("weight for reads is spent"), "{body}");
    }

    // Money paths still reach the exchange.
    t.set_price("ETHUSDT", "3100");
    let (status, trailing) = t.get("/api/trailing").await;
    assert_eq!(status, 200, "{trailing}");
    assert_eq!(trailing["updated"].as_array().unwrap().len(), 1, "{trailing}");
    assert!(trailing["errors"].as_array().unwrap().is_empty(), "{trailing}");
    let stop = match venue {
        Venue::A => {
            let stops: Vec<_> = t
                .orders_of("STOP_LOSS_LIMIT", "SELL")
                .into_iter()
                .filter(|o| o["status"] == "NEW")
                .collect();
            d(stops[0]["stopPrice"].as_str().unwrap())
        }
        // The watched stop moves in the service; nothing is sent for it.
        Venue::B => d(&t.open_trades().await[0]["sl_px"].to_string()),
    };
    assert_eq!(stop.normalize(), d("3069"), "the raised stop");

    t.set_price("SOLUSDT", "150");
    t.create_signal(good_signal("SOLUSDT")).await;
    let (status, confirmed) = t.confirm("SOLUSDT").await;
    assert_eq!(status, 200, "{confirmed}");
    assert_eq!(confirmed["trade"]["opened"]["symbol"], "SOLUSDT", "{confirmed}");
    let (status, closed) = t.post_empty("/api/close?symbol=ETH").await;
    assert_eq!(status, 200, "{closed}");
    let (buys, sells) = match venue {
        Venue::A => (t.orders_of("MARKET", "BUY").len(), t.orders_of("MARKET", "SELL").len()),
        Venue::B => (t.orders_b_of("Ioc", "B").len(), t.orders_b_of("Ioc", "A").len()),
    };
    // ETH's and SOL's entries, and ETH's close.
    assert_eq!((buys, sells), (2, 1), "the confirmed entry and the close reached the exchange");

    let refused: Vec<_> =
        t.sim.sim.requests().into_iter().filter(|r| r.status == 429 || r.status == 418).collect();
    assert!(refused.is_empty(), "the exchange never refused a request: {refused:?}");
}
