//! MARKET order round trip on loopback: the exchange A client (filters, signing, typed
//! decoding) against a bare signed HTTP request, both to the in-process simulator.
//!
//! `cargo bench -p spotbot --bench exchange_roundtrip` prints p50/p99 of each and the
//! client's overhead; the numbers go to docs/benchmarks.md.
//!
//! The iterations run in bursts of 40 (80 orders), 10.5 s apart: the exchange allows 100
//! orders per 10 s, and the client's request budget waits at its share of that — a wait the
//! round trip must not include. Within a burst the calls follow each other, warm, as before
//! the budget existed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use spotbot::clock::SystemClock;
use spotbot::config::Secret;
use spotbot::exchange::exchange_a::signer::hmac_sha256_hex;
use spotbot::exchange::exchange_a::{ClientConfig, ExchangeAClient, Signer};
use spotbot::exchange::{Exchange, NewOrder, OrderStatus, Qty, Side};
use spotbot_sim::SimConfig;

const KEY: &str = "bench-key";
const SECRET: &str = "bench-secret";

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let env = |name: &str, default: u64| -> u64 {
        std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    let iterations = env("BENCH_ITERATIONS", 300) as usize;
    const BURST: usize = 40;
    const WINDOW: Duration = Duration::from_millis(10_500);
    let warmup = iterations / 10;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let mut config = SimConfig::new(3, KEY, SECRET);
        config.initial_funds = vec![("USDT".into(), Decimal::from(100_000_000))];
        let sim = spotbot_sim::serve(config, "127.0.0.1:0").await.expect("simulator");
        sim.sim.set_price("BTCUSDT", Decimal::from(60_000)).expect("price");
        let base = sim.base_url();
        let client = ExchangeAClient::new(
            ClientConfig::new(base.clone()),
            Some(Signer::new(Secret::new(KEY), Secret::new(SECRET))),
            Arc::new(SystemClock),
            spotbot::metrics::Metrics::default(),
        )
        .expect("client");
        let raw = reqwest::Client::builder().tcp_nodelay(true).build().expect("http");

        let mut raw_times = Vec::with_capacity(iterations);
        let mut client_times = Vec::with_capacity(iterations);
        for i in 0..(iterations + warmup) {
            if i > 0 && i % BURST == 0 {
                tokio::time::sleep(WINDOW).await;
            }
            // Raw: the same order as a hand-signed request, body read, nothing decoded.
            let ts = chrono::Utc::now().timestamp_millis();
            let q = format!(
                "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.001&newClientOrderId=raw{i}&newOrderRespType=FULL&recvWindow=5000&timestamp={ts}"
            );
            let sig = hmac_sha256_hex(SECRET, &q);
            let started = Instant::now();
            let r = raw
                .post(format!("{base}/api/v3/order?{q}&signature={sig}"))
                .header("X-MBX-APIKEY", KEY)
                .send()
                .await
                .expect("raw send");
            let ok = r.status().is_success();
            let _ = r.bytes().await.expect("raw body");
            let raw_elapsed = started.elapsed();
            assert!(ok, "raw order failed");

            // Client: filters, signing, typed result.
            let order = NewOrder::market("BTCUSDT", Side::Buy, Qty(Decimal::new(1, 3)), &format!("cli{i}"));
            let started = Instant::now();
            let placed = client.place_order(&order).await.expect("client order");
            let client_elapsed = started.elapsed();
            assert_eq!(placed.status, OrderStatus::Filled);
            if i >= warmup {
                raw_times.push(raw_elapsed);
                client_times.push(client_elapsed);
            }
        }
        raw_times.sort();
        client_times.sort();
        let (r50, r99) = (percentile(&raw_times, 0.50), percentile(&raw_times, 0.99));
        let (c50, c99) = (percentile(&client_times, 0.50), percentile(&client_times, 0.99));
        println!("MARKET order round trip on loopback, {iterations} iterations (after {warmup} warm-up)");
        println!("raw signed HTTP : p50 {:8.1} us   p99 {:8.1} us", micros(r50), micros(r99));
        println!("exchange client : p50 {:8.1} us   p99 {:8.1} us", micros(c50), micros(c99));
        println!(
            "client overhead : p50 {:+8.1} us   p99 {:+8.1} us",
            micros(c50) - micros(r50),
            micros(c99) - micros(r99)
        );
        sim.stop().await;
    });
}
