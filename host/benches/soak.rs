//! Footprint over time: does the service stay small, and does anything grow? The release
//! `spotbot serve` runs as its own process (the binary an operator runs, with its allocator
//! settings) on exchange A's wire against a simulator, with the shipped plugins of `plugins/`
//! (`cargo xtask plugins`) and the license server, both in this process so that the service's
//! figures are its own.
//!
//! `cargo bench -p spotbot --bench soak` first measures the idle service (`BENCH_WARMUP`
//! seconds, 20 by default, scheduler on as shipped), then drives it for `BENCH_ITERATIONS`
//! seconds (1800) at many times its normal rate, all at once:
//! - trading: a signal, its confirm (MARKET BUY and the OCO at the simulator) and later its
//!   close, one symbol after another, about one a second (a day of a busy agent is ten);
//! - prices: the simulator's prices swing ±2.5 % every 90 s, streamed to the service, so open
//!   trades' stops are hit at the exchange and the service notices the exits;
//! - scans: every loaded plugin, the market scan and the pump scan, every 2 s (the request
//!   budget answers 429 to what does not fit; those are counted, not errors);
//! - reads: status, dashboard panels, trades, history, signals, audit, equity, metrics,
//!   every 100 ms;
//! - the dashboard's event stream: three clients opening it, reading 1–3 s, closing;
//! - MCP: initialize, tools/list and a tool call, every 300 ms.
//!
//! Every 5 s it records the service's resident memory, open file descriptors, threads, live
//! tokio tasks and the candles its cache holds (`spotbot_runtime_alive_tasks` and
//! `spotbot_candle_cache_candles` from `/metrics`), prints a line a minute
//! and at the end the least-squares slope of each over the last half of the run, which must be
//! flat within noise (the verdict line). The figures go to docs/benchmarks.md.
//!
//! Thirty minutes, not ten: at this rate the allocator's pages take about fifteen minutes to
//! settle (resident memory rises about 0.6 MB a minute, then stays near 54 MB), so a ten-minute
//! run's last half still shows the settling, not whether anything grows.

mod support;

use support::{load_average, percentile, post, signal};

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use serde_json::{Value, json};
use spotbot_sim::SimConfig;

const KEY: &str = "soak-key";
const SECRET: &str = "soak-secret";
/// The symbols traded, with their simulator price at the middle of the swing.
const SYMBOLS: [(&str, f64); 4] =
    [("ETHUSDT", 3000.0), ("SOLUSDT", 150.0), ("BNBUSDT", 600.0), ("BTCUSDT", 60_000.0)];
/// Period and amplitude of the price swing (a −2 % stop is hit near the swing's bottom).
const SWING: (f64, f64) = (90.0, 0.025);
const SAMPLE_EVERY: Duration = Duration::from_secs(5);
/// Sections of examples/config.toml the soak replaces with its own.
const REPLACED: [&str; 5] = ["exchange", "license", "plugins", "risk", "strategy.mr_combined"];

fn main() {
    support::main_with(1800, 20, run);
}

/// One reading of the service process.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: f64,
    rss_mb: f64,
    anon_mb: f64,
    fds: f64,
    threads: f64,
    tasks: f64,
    /// Candles the candle cache holds (`spotbot_candle_cache_candles`), a bounded cache that
    /// fills as the request budget lets scans through.
    candles: f64,
}

/// The service's process: killed when dropped, so a failed run leaves nothing behind.
struct Service {
    child: std::process::Child,
    base: String,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Service {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn sample(&self, at: f64, gauges: Gauges) -> Sample {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the service is running");
        let field = |name: &str| -> f64 {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(f64::NAN)
        };
        let fds = std::fs::read_dir(format!("/proc/{}/fd", self.pid())).map_or(0, |d| d.count());
        Sample {
            at,
            rss_mb: field("VmRSS:") / 1024.0,
            anon_mb: field("RssAnon:") / 1024.0,
            fds: fds as f64,
            threads: field("Threads:"),
            tasks: gauges.tasks,
            candles: gauges.candles,
        }
    }
}

/// examples/config.toml without the `REPLACED` sections.
fn example_config_without_replaced() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/config.toml");
    let text = std::fs::read_to_string(&path).expect("examples/config.toml");
    let mut keep = true;
    let mut out = String::new();
    for line in text.lines() {
        if let Some(name) = line.trim().strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            keep = !REPLACED.contains(&name);
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The price of `base` at `secs` seconds into the run.
fn swing_price(base: f64, secs: f64) -> f64 {
    base * (1.0 + SWING.1 * (std::f64::consts::TAU * secs / SWING.0).sin())
}

/// What every load driver shares: the client, the service, the stop flag and the counts.
#[derive(Clone)]
struct Load {
    http: reqwest::Client,
    base: String,
    stop: Arc<AtomicBool>,
    counts: Arc<Counts>,
}

impl Load {
    fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// Counts by what happened, for the summary.
#[derive(Default)]
struct Counts(std::sync::Mutex<BTreeMap<String, u64>>);

impl Counts {
    fn add(&self, what: impl Into<String>) {
        *self.0.lock().unwrap().entry(what.into()).or_default() += 1;
    }
}

async fn run(seconds: usize, idle_seconds: usize) {
    spotbot::exchange::exchange_a::client::ensure_crypto_provider();
    let load_before = load_average();
    let plugins_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins");
    let plugins_dir = plugins_dir.canonicalize().expect("plugins/ (cargo xtask plugins)");
    let shipped = std::fs::read_dir(&plugins_dir)
        .expect("plugins/")
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "wasm")))
        .count();
    assert!(
        shipped > 0,
        "no plugins in {}: run `cargo xtask plugins` first",
        plugins_dir.display()
    );

    let mut sim_config = SimConfig::new(23, KEY, SECRET);
    sim_config.initial_funds = vec![("USDT".into(), Decimal::from(10_000_000))];
    let sim = spotbot_sim::serve(sim_config, "127.0.0.1:0").await.expect("simulator");
    let streams =
        spotbot_sim::serve_streams(sim.sim.clone(), "127.0.0.1:0").await.expect("streams");
    for (symbol, base) in SYMBOLS {
        sim.sim.set_price(symbol, Decimal::try_from(base).expect("price")).expect("price");
    }
    let (_license_dir, license) = support::license_server().await;

    let work = tempfile::tempdir().expect("tempdir");
    let config = format!(
        "{}\n[exchange]\nmode = \"testnet\"\nbase_url = \"{}\"\nws_api_url = \"{}/ws-api/v3\"\n\
         stream_url = \"{}\"\n\
         [risk]\nmax_consecutive_losses = 0\n\
         [strategy.mr_combined]\nsize_pct = 0.01\nmax_trades_per_day = 1000\n\
         [plugins]\ndir = {:?}\n\
         [license]\nserver_url = \"http://{}\"\npublic_key = \"{}\"\n",
        example_config_without_replaced(),
        sim.base_url(),
        streams.base_url(),
        streams.base_url(),
        plugins_dir.display().to_string(),
        license.addr(),
        license.public_key_hex()
    );
    let config_path = work.path().join("config.toml");
    std::fs::write(&config_path, config).expect("config");
    let port =
        std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().unwrap().port();
    let log = work.path().join("service.log");
    let service = spawn_service(&config_path, &work.path().join("data"), &log, port);
    let http = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().expect("http");
    let started = Instant::now();
    wait_healthy(&http, &service.base).await;
    println!(
        "soak: spotbot serve (pid {}), {shipped} plugins, load before {load_before}; \
         started in {:.1} s",
        service.pid(),
        started.elapsed().as_secs_f64()
    );

    // Idle: as started, the scheduler on.
    let idle_started = Instant::now();
    while idle_started.elapsed() < Duration::from_secs(idle_seconds as u64) {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let idle = service.sample(0.0, gauges(&http, &service.base).await);
    println!(
        "idle after {idle_seconds} s: VmRSS {:.1} MB (anonymous {:.1} MB), {} fds, {} threads, \
         {} tasks, {} candles cached",
        idle.rss_mb, idle.anon_mb, idle.fds, idle.threads, idle.tasks, idle.candles
    );

    let (status, registered) = post(
        &http,
        format!("{}/api/license/register", service.base),
        Some(json!({"email": "soak@example.com", "name": "Soak"})),
    )
    .await;
    assert_eq!((status, &registered["ok"]), (200, &json!(true)), "{registered}");

    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let load = Load { http: http.clone(), base: service.base.clone(), stop: stop.clone(), counts };
    let confirm_times = Arc::new(std::sync::Mutex::new(Vec::<Duration>::new()));
    let origin = Instant::now();
    let mut drivers = vec![
        tokio::spawn(move_prices(sim.sim.clone(), origin, load.clone())),
        tokio::spawn(trade(load.clone(), origin, confirm_times.clone())),
        tokio::spawn(scan(load.clone())),
        tokio::spawn(read(load.clone())),
        tokio::spawn(mcp(load.clone())),
    ];
    for client in 0..3u64 {
        drivers.push(tokio::spawn(watch_events(load.clone(), client)));
    }

    let mut samples = Vec::new();
    println!(
        "{:>6} {:>9} {:>9} {:>5} {:>8} {:>6}",
        "s", "VmRSS MB", "anon MB", "fds", "threads", "tasks"
    );
    while origin.elapsed() < Duration::from_secs(seconds as u64) {
        tokio::time::sleep(SAMPLE_EVERY).await;
        let at = origin.elapsed().as_secs_f64();
        let s = service.sample(at, gauges(&http, &service.base).await);
        if samples.len() % 12 == 11 {
            print_sample(&s);
        }
        samples.push(s);
    }
    stop.store(true, Ordering::Relaxed);
    for driver in drivers {
        driver.await.expect("driver");
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    let after = service.sample(origin.elapsed().as_secs_f64(), gauges(&http, &service.base).await);

    println!("\nwhat the load did:");
    for (what, n) in load.counts.0.lock().unwrap().iter() {
        println!("  {what}: {n}");
    }
    let mut confirms = confirm_times.lock().unwrap().clone();
    confirms.sort();
    if !confirms.is_empty() {
        println!(
            "  confirm latency p50 {:.1} ms, p99 {:.1} ms",
            percentile(&confirms, 0.5).as_secs_f64() * 1e3,
            percentile(&confirms, 0.99).as_secs_f64() * 1e3
        );
    }
    println!("\n5 s after the load stopped:");
    print_sample(&after);
    summarise(&idle, &samples);
    let errors = std::fs::read_to_string(&log).unwrap_or_default();
    println!("service errors logged: {}", errors.lines().count());
    for (kind, n) in error_kinds(&errors) {
        println!("  {n} × {kind}");
    }
    println!("load after: {}", load_average());
}

/// Starts the service with its errors logged to `log`.
fn spawn_service(config: &Path, data: &Path, log: &Path, port: u16) -> Service {
    let log = std::fs::File::create(log).expect("service log");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_spotbot"))
        .args(["serve", "--config"])
        .arg(config)
        .args(["--addr", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(data)
        .env("EXCHANGE_API_KEY", KEY)
        .env("EXCHANGE_API_SECRET", SECRET)
        .env("RUST_LOG", "error")
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .expect("spotbot serve starts");
    Service { child, base: format!("http://127.0.0.1:{port}") }
}

async fn wait_healthy(http: &reqwest::Client, base: &str) {
    for _ in 0..600 {
        if http.get(format!("{base}/api/health")).send().await.is_ok_and(|r| r.status() == 200) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the service did not answer /api/health within a minute");
}

/// The service's own gauges a sample records.
#[derive(Debug, Clone, Copy)]
struct Gauges {
    tasks: f64,
    candles: f64,
}

/// `spotbot_runtime_alive_tasks` and `spotbot_candle_cache_candles` from `/metrics`.
async fn gauges(http: &reqwest::Client, base: &str) -> Gauges {
    let text = match http.get(format!("{base}/metrics")).send().await {
        Ok(answer) => answer.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    let value = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(f64::NAN)
    };
    Gauges {
        tasks: value("spotbot_runtime_alive_tasks"),
        candles: value("spotbot_candle_cache_candles"),
    }
}

fn print_sample(s: &Sample) {
    println!(
        "{:>6.0} {:>9.1} {:>9.1} {:>5} {:>8} {:>6} {:>8}",
        s.at, s.rss_mb, s.anon_mb, s.fds, s.threads, s.tasks, s.candles
    );
}

/// A series of the samples: its name and how to read it from a sample.
type Series = (&'static str, fn(&Sample) -> f64);

/// Least-squares slope of `value` over `at`, per minute.
fn slope_per_minute(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = points.iter().fold((0.0, 0.0), |(x, y), p| (x + p.0 / n, y + p.1 / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(sxy, sxx), p| {
        (sxy + (p.0 - mx) * (p.1 - my), sxx + (p.0 - mx).powi(2))
    });
    if sxx == 0.0 { 0.0 } else { sxy / sxx * 60.0 }
}

/// Start, end, max and the slope over the last half of each series, and the verdict: a
/// series is flat when what its slope adds over the last half stays within twice the spread
/// of its samples around their mean there (or within one unit: a file descriptor, a task, a
/// megabyte). Only growth counts: a series that shrinks is flat.
fn summarise(idle: &Sample, samples: &[Sample]) {
    let half = &samples[samples.len() / 2..];
    let minutes = (half.last().map_or(0.0, |s| s.at) - half[0].at) / 60.0;
    println!(
        "\nover the run ({} samples; slope over the last half, {minutes:.1} min):",
        samples.len()
    );
    println!(
        "{:>10} {:>8} {:>8} {:>8} {:>8} {:>12} {:>10}  verdict",
        "", "idle", "start", "end", "max", "slope/min", "spread"
    );
    let series: [Series; 6] = [
        ("VmRSS MB", |s| s.rss_mb),
        ("anon MB", |s| s.anon_mb),
        ("fds", |s| s.fds),
        ("threads", |s| s.threads),
        ("tasks", |s| s.tasks),
        ("candles", |s| s.candles),
    ];
    let mut all_flat = true;
    for (name, value) in series {
        let points: Vec<(f64, f64)> = half.iter().map(|s| (s.at, value(s))).collect();
        let slope = slope_per_minute(&points);
        let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
        let spread =
            (points.iter().map(|p| (p.1 - mean).powi(2)).sum::<f64>() / points.len() as f64).sqrt();
        let flat = slope * minutes <= (2.0 * spread).max(1.0);
        // The candle cache is bounded by design and fills as the budget lets scans through:
        // shown beside the others, not judged.
        let judged = name != "candles";
        all_flat &= flat || !judged;
        let max = samples.iter().map(value).fold(f64::MIN, f64::max);
        println!(
            "{name:>10} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>12.3} {:>10.2}  {}",
            value(idle),
            value(&samples[0]),
            value(samples.last().expect("samples")),
            max,
            slope,
            spread,
            match (judged, flat) {
                (false, true) => "flat",
                (false, false) => "fills (bounded)",
                (true, true) => "flat",
                (true, false) => "GROWS",
            }
        );
    }
    println!("verdict: {}", if all_flat { "flat within noise" } else { "something grows" });
}

/// Swings every traded symbol's price (see [`SWING`]) ten times a second.
async fn move_prices(sim: spotbot_sim::Sim, origin: Instant, load: Load) {
    while load.running() {
        let secs = origin.elapsed().as_secs_f64();
        for (i, (symbol, base)) in SYMBOLS.iter().enumerate() {
            let price = swing_price(*base, secs + i as f64 * SWING.0 / 4.0);
            let price = Decimal::try_from(price).expect("price").round_dp(2);
            sim.set_price(symbol, price).expect("price");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The service's error lines grouped by their `code="…"` (or the whole line without its
/// timestamp when it has none), most frequent first: the request budget's refusals are
/// expected by the hundreds, anything else is worth reading.
fn error_kinds(log: &str) -> Vec<(String, usize)> {
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for line in log.lines() {
        let kind = match line.split_once("code=\"") {
            Some((_, rest)) => rest.split('"').next().unwrap_or(rest).to_string(),
            None => line.split_once(' ').map_or(line, |(_, rest)| rest).to_string(),
        };
        *kinds.entry(kind).or_default() += 1;
    }
    let mut kinds: Vec<_> = kinds.into_iter().collect();
    kinds.sort_by_key(|kind| std::cmp::Reverse(kind.1));
    kinds
}

/// Signal, confirm, and the previous trade of that symbol closed first: about one a second.
async fn trade(load: Load, origin: Instant, confirm_times: Arc<std::sync::Mutex<Vec<Duration>>>) {
    let Load { http, counts, .. } = &load;
    let mut round = 0usize;
    while load.running() {
        let (symbol, mid) = SYMBOLS[round % SYMBOLS.len()];
        round += 1;
        let (status, answer) =
            post(http, load.url(&format!("/api/close?symbol={symbol}")), None).await;
        if status >= 500 {
            eprintln!("soak: close {symbol} answered {status}: {answer}");
        }
        let code = answer["error"].as_str().unwrap_or("");
        counts.add(format!("close {status} {code}").trim_end().to_string());
        let secs = origin.elapsed().as_secs_f64();
        let index = SYMBOLS.iter().position(|(s, _)| *s == symbol).unwrap_or(0) as f64;
        let price = swing_price(mid, secs + index * SWING.0 / 4.0).round() as i64;
        let (status, _) = post(http, load.url("/api/signal"), Some(signal(symbol, price))).await;
        counts.add(format!("signal {status}"));
        let sent = Instant::now();
        let (status, answer) =
            post(http, load.url(&format!("/api/signal/{symbol}/confirm")), None).await;
        if status == 200 {
            confirm_times.lock().unwrap().push(sent.elapsed());
        }
        let code = answer["error"].as_str().unwrap_or("");
        counts.add(format!("confirm {status} {code}").trim_end().to_string());
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
}

/// Every plugin's scan, the market scan and the pump scan, every 2 s.
async fn scan(load: Load) {
    let Load { http, counts, .. } = &load;
    let strategies: Value = http
        .get(load.url("/api/strategies"))
        .send()
        .await
        .expect("strategies")
        .json()
        .await
        .expect("strategies JSON");
    let names: Vec<String> = strategies["plugins"]
        .as_array()
        .map(|list| list.iter().filter_map(|s| s["name"].as_str().map(String::from)).collect())
        .unwrap_or_default();
    assert!(!names.is_empty(), "no plugin loaded: {strategies}");
    while load.running() {
        for name in &names {
            let (status, _) =
                post(http, load.url(&format!("/api/strategies/{name}/scan")), None).await;
            counts.add(format!("scan {status}"));
        }
        for path in ["/api/market/scan", "/api/pump-momentum/scan"] {
            let status = http.get(load.url(path)).send().await.map_or(0, |r| r.status().as_u16());
            counts.add(format!("scan {status}"));
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// The reads an agent and the dashboard make, one every 100 ms in turn.
async fn read(load: Load) {
    const PATHS: [&str; 12] = [
        "/api/status",
        "/api/dashboard",
        "/api/dashboard/trades",
        "/api/dashboard/pnl",
        "/api/dashboard/footer",
        "/api/trades",
        "/api/trades/history",
        "/api/trades/stats",
        "/api/signal/list",
        "/api/audit",
        "/api/equity?days=1",
        "/metrics",
    ];
    let mut i = 0;
    while load.running() {
        let path = PATHS[i % PATHS.len()];
        i += 1;
        let status = match load.http.get(load.url(path)).send().await {
            Ok(answer) => {
                let status = answer.status().as_u16();
                let _ = answer.bytes().await;
                status
            }
            Err(_) => 0,
        };
        load.counts.add(format!("read {status}"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Opens the dashboard's event stream, reads it for 1–3 s, drops it; again.
async fn watch_events(load: Load, client: u64) {
    let Load { http, counts, .. } = &load;
    let mut round = client;
    while load.running() {
        round += 1;
        let hold = Duration::from_millis(1000 + (round * 700) % 2000);
        match http.get(load.url("/api/dashboard/events")).send().await {
            Ok(mut answer) => {
                let opened = Instant::now();
                while let Some(left) = hold.checked_sub(opened.elapsed()) {
                    if !matches!(tokio::time::timeout(left, answer.chunk()).await, Ok(Ok(Some(_))))
                    {
                        break;
                    }
                }
                counts.add(format!("event stream {}", answer.status().as_u16()));
            }
            Err(_) => counts.add("event stream failed"),
        }
    }
}

/// An MCP client's session: initialize, list the tools, call one (stateless transport: each
/// POST stands alone), every 300 ms.
async fn mcp(load: Load) {
    let Load { http, counts, .. } = &load;
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "soak", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "bot_status", "arguments": {}}}),
    ];
    while load.running() {
        for message in &messages {
            let answer = http
                .post(load.url("/mcp"))
                .header("accept", "application/json, text/event-stream")
                .json(message)
                .send()
                .await;
            let status = match answer {
                Ok(answer) => {
                    let status = answer.status().as_u16();
                    let body: Value = answer.json().await.unwrap_or(Value::Null);
                    if body["result"]["isError"] == json!(true) || body.get("error").is_some() {
                        eprintln!("soak: MCP {} answered an error: {body}", message["method"]);
                        counts.add(format!("mcp {} error", message["method"]));
                    }
                    status
                }
                Err(_) => 0,
            };
            counts.add(format!("mcp {} {status}", message["method"].as_str().unwrap_or("")));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}
