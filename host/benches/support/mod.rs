//! What the whole-host latency benches (`confirm_latency`, `exchange_b_latency`) share: their
//! `main` (iterations from the environment, logs on request, the runtime), the percentile of
//! a sample, the machine's load, the license server, a signal that passes both gates, and a
//! POST to the host.

use std::time::Duration;

use serde_json::{Value, json};

/// The `p` percentile (0..=1) of a sorted sample.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` has them.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The reference license server on loopback, with its folder (kept until the server is done).
pub async fn license_server() -> (tempfile::TempDir, spotbot_license_server::LicenseServer) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = spotbot_license_server::LicenseServer::bind(
        spotbot_license_server::Config::new(dir.path()),
        "127.0.0.1:0".parse().expect("addr"),
    )
    .await
    .expect("license server");
    (dir, server)
}

/// A buy signal of `symbol` at `price` passing 9 of 10 checks (sl 2 %, tp 5 %).
pub fn signal(symbol: &str, price: i64) -> Value {
    let checklist: Vec<Value> = (0..10)
        .map(|i| json!({"name": format!("check {i}"), "pass": i < 9, "detail": "bench"}))
        .collect();
    json!({
        "symbol": symbol, "direction": "buy", "bot": "mr_combined", "price": price as f64,
        "sl_pct": 2.0, "tp_pct": 5.0, "checklist": checklist, "rsi": 28.5, "adx": 18.0,
    })
}

/// POSTs `body` (or nothing) to `url`: the status and the JSON answer.
pub async fn post(http: &reqwest::Client, url: String, body: Option<Value>) -> (u16, Value) {
    // The API requires the JSON media type on every POST, a body or not.
    let request = http.post(url).header("content-type", "application/json");
    let request = match body {
        Some(body) => request.json(&body),
        None => request,
    };
    let response = request.send().await.expect("host request");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Runs `bench(iterations, warmup)` on a two-worker runtime: `BENCH_ITERATIONS` and
/// `BENCH_WARMUP` override the defaults. Logs are off unless `RUST_LOG` is set (formatting
/// them is not part of the figures; `RUST_LOG=warn` shows why a confirm waited).
pub fn main_with<F: std::future::Future<Output = ()>>(
    iterations: usize,
    warmup: usize,
    bench: impl FnOnce(usize, usize) -> F,
) {
    let from_env = |name: &str, default: usize| {
        std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    let (iterations, warmup) =
        (from_env("BENCH_ITERATIONS", iterations), from_env("BENCH_WARMUP", warmup));
    if std::env::var_os("RUST_LOG").is_some() {
        spotbot::logging::init(spotbot::config::LogFormat::Human);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(bench(iterations, warmup));
}
