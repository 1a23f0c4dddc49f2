//! Benchmarks of the protection paths (ignored in the normal run; numbers in
//! docs/benchmarks.md): `cargo test -p spotbot-tests --test e2e protection_latency:: --
//! --ignored --nocapture --test-threads 1`.
//!
//! - watched stop: from the simulator's price crossing a watched stop to the market exit
//!   arriving at the simulator, with the 1 s check (target: p99 under 1.5 s);
//! - polled exit: from a stop-leg fill at the simulator to the trade closed in the service,
//!   once the protection run starts (the run itself; the run comes every minute).

use std::time::{Duration, Instant};

use crate::trading_support::Trading;

/// Forty losses in a row must not stop the entries.
const NO_LOSS_LIMIT: &str = "\n[risk]\nmax_consecutive_losses = 0\n";

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{what}: n={} p50={:?} p99={:?} max={:?}",
        samples.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.99),
        samples[samples.len() - 1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run with --ignored --nocapture"]
async fn watched_stop_exit_latency() {
    let t =
        Trading::start_with(&format!("{NO_LOSS_LIMIT}[protection]\nstop = \"service\"\n")).await;
    let mut samples = Vec::new();
    for i in 0..40u64 {
        t.set_price("ETHUSDT", "3000");
        t.buy("ETHUSDT").await;
        let sells_before = t.orders_of("MARKET", "SELL").len();
        // Cross at a different phase of the 1 s check each time.
        tokio::time::sleep(Duration::from_millis(137 * i % 1000)).await;
        let crossed = Instant::now();
        t.set_price("ETHUSDT", "2900");
        while t.orders_of("MARKET", "SELL").len() == sells_before {
            assert!(crossed.elapsed() < Duration::from_secs(5), "no exit");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        samples.push(crossed.elapsed());
        while !t.open_trades().await.is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        t.post_empty("/api/reset-daily").await;
    }
    report("watched stop: price crosses -> exit order at the simulator", samples);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run with --ignored --nocapture"]
async fn polled_exit_settlement_latency() {
    let t = Trading::start_with(NO_LOSS_LIMIT).await;
    let mut samples = Vec::new();
    for _ in 0..40 {
        t.set_price("ETHUSDT", "3000");
        t.buy("ETHUSDT").await;
        t.set_price("ETHUSDT", "2937");
        let run = Instant::now();
        let (status, report) = t.get("/api/trailing").await;
        assert_eq!(status, 200);
        assert_eq!(report["exits"].as_array().map(Vec::len), Some(1), "{report}");
        samples.push(run.elapsed());
        t.post_empty("/api/reset-daily").await;
    }
    report("polled exit: protection run settling a filled stop", samples);
}
