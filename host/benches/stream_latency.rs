//! Streams to protection: how long from a fill at the exchange to the trade closed in the
//! store, and from a price crossing a watched stop to the exit order at the exchange, on a
//! whole host following the simulator's WebSocket services over loopback (exchange
//! simulator, license server, host started with `spotbot::app::start`).
//!
//! `cargo bench -p spotbot --bench stream_latency` prints p50/p99/max of both; the numbers go
//! to docs/benchmarks.md. Each iteration opens a bracketed trade (`POST /api/trade`), waits
//! until both links are live, then moves the simulator's price (`Sim::set_price`, which fills
//! or crosses at once) and polls the host's store (trade closed) or the simulator's orders
//! (exit order received) every 200 µs. The simulator's streams tick every 5 ms (its
//! `StreamConfig::tick`): the exchange pushes in real time, so the simulator's polling
//! cadence should not dominate what is measured.
//!
//! `BENCH_ITERATIONS` changes the count (100 per measurement).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use serde_json::{Value, json};
use spotbot::app::RunningApp;
use spotbot::clock::{SharedClock, SystemClock};
use spotbot::config::{Config, Secret};
use spotbot_sim::{RunningSim, RunningStreams, SimConfig, StreamConfig};

const KEY: &str = "stream-bench-key";
const SECRET: &str = "stream-bench-secret";
const POLL: Duration = Duration::from_micros(200);

struct Rig {
    sim: RunningSim,
    _streams: RunningStreams,
    _license: spotbot_license_server::LicenseServer,
    _data: tempfile::TempDir,
    app: RunningApp,
    http: reqwest::Client,
}

async fn rig(stop: &str) -> Rig {
    let mut sim_config = SimConfig::new(23, KEY, SECRET);
    sim_config.initial_funds = vec![("USDT".into(), Decimal::from(10_000_000))];
    sim_config.streams = StreamConfig { tick: Duration::from_millis(5), ..StreamConfig::default() };
    let sim = spotbot_sim::serve(sim_config, "127.0.0.1:0").await.expect("simulator");
    sim.sim.set_price("ETHUSDT", Decimal::from(3000)).expect("price");
    let streams =
        spotbot_sim::serve_streams(sim.sim.clone(), "127.0.0.1:0").await.expect("streams");
    let license_dir = tempfile::tempdir().expect("tempdir");
    let license = spotbot_license_server::LicenseServer::bind(
        spotbot_license_server::Config::new(license_dir.path()),
        "127.0.0.1:0".parse().expect("addr"),
    )
    .await
    .expect("license server");
    let data = tempfile::tempdir().expect("tempdir");
    let toml = format!(
        "[exchange]\nmode = \"testnet\"\nbase_url = \"{}\"\nws_api_url = \"{}/ws-api/v3\"\n\
         stream_url = \"{}\"\n\
         [strategy.mr_combined]\nsize_pct = 0.1\nmax_trades_per_day = 1000\n\
         [risk]\nmax_consecutive_losses = 0\n\
         [protection]\nstop = \"{stop}\"\n\
         [scheduler]\nenabled = false\n\
         [plugins]\ndir = {:?}\n\
         [license]\nserver_url = \"http://{}\"\npublic_key = \"{}\"\npoll_seconds = 0\n",
        sim.base_url(),
        streams.base_url(),
        streams.base_url(),
        data.path().join("plugins").display().to_string(),
        license.addr(),
        license.public_key_hex()
    );
    let mut config = Config::parse(&toml, "stream-bench.toml".as_ref()).expect("config");
    config.server.addr = "127.0.0.1:0".into();
    config.server.data_dir = data.path().join("data").display().to_string();
    config.secrets.exchange_api_key = Some(Secret::new(KEY));
    config.secrets.exchange_api_secret = Some(Secret::new(SECRET));
    let clock: SharedClock = Arc::new(SystemClock);
    let app = spotbot::app::start(config, clock).await.expect("host starts");
    let http = reqwest::Client::builder().tcp_nodelay(true).build().expect("http");
    let registered = http
        .post(format!("{}/api/license/register", app.base_url()))
        .json(&json!({"email": "bench@example.com", "name": "Stream Bench"}))
        .send()
        .await
        .expect("register");
    assert!(registered.status().is_success());
    Rig { sim, _streams: streams, _license: license, _data: data, app, http }
}

impl Rig {
    async fn open(&self) {
        let url = format!(
            "{}/api/trade?symbol=ETHUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9",
            self.app.base_url()
        );
        let answer: Value = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .send()
            .await
            .expect("trade")
            .json()
            .await
            .expect("json");
        assert_eq!(answer["ok"], true, "{answer}");
    }

    fn open_trades(&self) -> usize {
        self.app.state.execution.book().open_trades().map(|t| t.len()).unwrap_or(0)
    }

    /// Until both links are live and the open trade's symbol is followed.
    async fn until_live(&self) {
        let feed = self.app.state.feed.clone().expect("streams followed");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !(feed.account_live() && feed.prices_live()) {
            assert!(Instant::now() < deadline, "streams not live: {:?}", feed.status());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The price link follows the open trades' symbols within a second.
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }

    fn market_sells(&self) -> usize {
        self.sim
            .sim
            .orders()
            .iter()
            .filter(|o| o["type"] == "MARKET" && o["side"] == "SELL")
            .count()
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name}: n={} p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        samples.len(),
        ms(percentile(&samples, 0.5)),
        ms(percentile(&samples, 0.99)),
        ms(*samples.last().unwrap_or(&Duration::ZERO))
    );
}

async fn fill_to_closed(iterations: usize) -> Vec<Duration> {
    let rig = rig("exchange").await;
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        rig.sim.sim.set_price("ETHUSDT", Decimal::from(3000)).expect("price");
        rig.open().await;
        rig.until_live().await;
        let start = Instant::now();
        rig.sim.sim.set_price("ETHUSDT", Decimal::from(3160)).expect("take-profit fills");
        while rig.open_trades() > 0 {
            assert!(start.elapsed() < Duration::from_secs(10), "not closed");
            tokio::time::sleep(POLL).await;
        }
        samples.push(start.elapsed());
    }
    samples
}

async fn cross_to_exit(iterations: usize) -> Vec<Duration> {
    let rig = rig("service").await;
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        rig.sim.sim.set_price("ETHUSDT", Decimal::from(3000)).expect("price");
        rig.open().await;
        rig.until_live().await;
        let sells = rig.market_sells();
        let start = Instant::now();
        rig.sim.sim.set_price("ETHUSDT", Decimal::from(2930)).expect("crosses the stop");
        while rig.market_sells() == sells {
            assert!(start.elapsed() < Duration::from_secs(10), "no exit order");
            tokio::time::sleep(POLL).await;
        }
        samples.push(start.elapsed());
        while rig.open_trades() > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    samples
}

fn main() {
    let iterations: usize =
        std::env::var("BENCH_ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        spotbot::exchange::exchange_a::client::ensure_crypto_provider();
        report(
            "fill at the simulator -> trade closed in the store",
            fill_to_closed(iterations).await,
        );
        report(
            "price crosses a watched stop -> exit order at the simulator",
            cross_to_exit(iterations).await,
        );
    });
}
