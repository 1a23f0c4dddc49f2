//! Confirm to OCO accepted: the time of `POST /api/signal/{symbol}/confirm` on a whole host —
//! gates, MARKET BUY, fill, trade recorded, OCO placed through the order journal — against
//! the exchange round trips it cannot avoid, all in-process on loopback (exchange simulator,
//! license server, host started with `spotbot::app::start`).
//!
//! `cargo bench -p spotbot --bench confirm_latency` prints p50/p99 of the confirm, the
//! exchange requests one confirm makes, the raw signed round trips to the simulator (the
//! measurement of `exchange_roundtrip`) and the overhead beyond them, plus the cost of one
//! durable store write; the numbers go to docs/benchmarks.md.
//!
//! Each iteration: a hand-signed sequence of the confirm's own exchange requests on a second
//! simulator account (timed), `GET /api/health` on the host (timed), `POST /api/signal`,
//! the confirm (timed), `POST /api/close` so the next iteration can buy again, then one
//! durable and one non-durable write to a scratch store (timed). The
//! simulator's request weight (6000 a minute) allows about 90 iterations a minute; the bench
//! waits for the next minute rather than let the host's client wait inside a timed confirm.
//!
//! `BENCH_ITERATIONS` and `BENCH_WARMUP` change the counts (300 and 20; together at most 1000,
//! the most `max_trades_per_day` accepts, as every confirm is a buy); `BENCH_SAMPLES=<file>`
//! writes every measured confirm (wall-clock window and times) as CSV for profiling.

mod support;

use support::{load_average, percentile, post, signal};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use serde_json::{Value, json};
use spotbot::clock::{SharedClock, SystemClock};
use spotbot::config::{Config, Secret};
use spotbot::exchange::exchange_a::signer::hmac_sha256_hex;
use spotbot::store::{Store, tables};
use spotbot_sim::SimConfig;

/// The host's exchange account.
const KEY: &str = "confirm-bench-key";
const SECRET: &str = "confirm-bench-secret";
/// A second account for the raw round trips, so they never touch the host's balances.
const RAW_KEY: &str = "confirm-bench-raw-key";
const RAW_SECRET: &str = "confirm-bench-raw-secret";
/// Symbols the confirms rotate over, with the fixed simulator price.
const SYMBOLS: &[(&str, i64)] =
    &[("ETHUSDT", 3000), ("SOLUSDT", 150), ("BNBUSDT", 600), ("BTCUSDT", 60_000)];
/// The host's client waits for the next minute when its orders would take the minute's weight
/// (shared by both accounts: the simulator counts per IP, like exchange A) past 90 % of 6000
/// (5400, `exchange::budget::MONEY_CEILING_PCT`); an iteration costs about 65, so start one
/// only below this.
const WEIGHT_BUDGET: u64 = 5300;
/// The host sends at most 90 orders in 10 s (its 90 % share of exchange A's 100, counted as
/// the exchange's last reported count plus its orders in flight; the simulator counts over the
/// last 10 s). An iteration sends 4 (the entry, the OCO's two legs, the close's sell), so
/// iterations start at least this far apart: 20 in any 10 s, 80 orders. Back to back, every
/// 23rd confirm would wait inside the host's order budget for the next window, rightly.
const ITERATION_SPACING: Duration = Duration::from_millis(500);
/// Durable store writes one confirm commits: the entry's journal row before it is sent, which
/// also names the OCO's client id; the OCO's row and both settlements (with the trade) commit
/// without waiting for the disk (host/src/execution/journal.rs).
const WRITES_PER_CONFIRM: usize = 1;

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// p50 and p99 of a sample, in µs.
fn stats(samples: &[Duration]) -> (f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort();
    (micros(percentile(&sorted, 0.50)), micros(percentile(&sorted, 0.99)))
}

fn unix_micros() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros())
}

/// Bare HTTP to the simulator, signed by hand as `exchange_roundtrip` does: the floor of what
/// any client can do. Only the send and the body read are timed.
struct Raw {
    http: reqwest::Client,
    base: String,
}

struct RawAnswer {
    elapsed: Duration,
    body: Value,
    used_weight: u64,
}

impl Raw {
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &str,
        signed: bool,
    ) -> RawAnswer {
        let url = if signed {
            let ts = chrono::Utc::now().timestamp_millis();
            let q = format!("{query}&recvWindow=5000&timestamp={ts}");
            let sig = hmac_sha256_hex(RAW_SECRET, &q);
            format!("{}{path}?{q}&signature={sig}", self.base)
        } else {
            format!("{}{path}?{query}", self.base)
        };
        let request = self.http.request(method, url).header("X-MBX-APIKEY", RAW_KEY);
        let started = Instant::now();
        let response = request.send().await.expect("raw send");
        let status = response.status();
        let used_weight = response
            .headers()
            .get("x-mbx-used-weight-1m")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let bytes = response.bytes().await.expect("raw body");
        let elapsed = started.elapsed();
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        assert!(status.is_success(), "raw {path} failed: {status} {body}");
        RawAnswer { elapsed, body, used_weight }
    }
}

/// One hand-signed copy of the exchange requests a confirm makes (price, balances, MARKET
/// BUY, OCO), on BTCUSDT; the OCO is cancelled afterwards, untimed.
struct RawSequence {
    ticker: Duration,
    account: Duration,
    order: Duration,
    oco: Duration,
}

async fn raw_sequence(raw: &Raw, i: usize) -> RawSequence {
    use reqwest::Method;
    let ticker = raw.send(Method::GET, "/api/v3/ticker/price", "symbol=BTCUSDT", false).await;
    let account = raw.send(Method::GET, "/api/v3/account", "omitZeroBalances=true", true).await;
    let order = raw
        .send(
            Method::POST,
            "/api/v3/order",
            &format!(
                "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.001&newClientOrderId=rawE{i}&newOrderRespType=FULL"
            ),
            true,
        )
        .await;
    assert_eq!(order.body["status"], "FILLED", "{}", order.body);
    // 0.001 less the 0.1 % fee in BTC, to the step: what the buy delivered.
    let oco = raw
        .send(
            Method::POST,
            "/api/v3/orderList/oco",
            &format!(
                "symbol=BTCUSDT&listClientOrderId=rawO{i}&side=SELL&quantity=0.00099\
                 &aboveType=LIMIT_MAKER&abovePrice=63000&aboveClientOrderId=rawO{i}T\
                 &belowType=STOP_LOSS_LIMIT&belowStopPrice=58800&belowPrice=58682.4\
                 &belowTimeInForce=GTC&belowClientOrderId=rawO{i}S&newOrderRespType=FULL"
            ),
            true,
        )
        .await;
    let list_id = oco.body["orderListId"].as_i64().expect("orderListId");
    raw.send(
        Method::DELETE,
        "/api/v3/orderList",
        &format!("symbol=BTCUSDT&orderListId={list_id}"),
        true,
    )
    .await;
    RawSequence {
        ticker: ticker.elapsed,
        account: account.elapsed,
        order: order.elapsed,
        oco: oco.elapsed,
    }
}

/// A scratch store next to the host's data (same file system), written once per iteration
/// so that its timings see the same disk and load as the confirms: a durable `Store::write`
/// of a journal-sized document, and the same commit through redb with `Durability::None`
/// (no fsync) — the difference is what the journal's durability costs per write.
struct ScratchStores {
    durable: Store,
    none: redb::Database,
    doc: Value,
    bytes: Vec<u8>,
    _dir: tempfile::TempDir,
}

const SCRATCH: redb::TableDefinition<'static, &'static str, &'static [u8]> =
    redb::TableDefinition::new("bench");

impl ScratchStores {
    fn open(parent: &std::path::Path) -> Self {
        let doc = json!({
            "client_order_id": "SE_1kq2x9z_ETHUSDT", "kind": "entry", "symbol": "ETHUSDT",
            "cause": "signal 1kq2x9z ETHUSDT confirmed",
            "request": {"side": "BUY", "type": "MARKET", "quantity": "0.3333"},
            "outcome": {"state": "placed", "id": 123456, "status": "Filled"},
            "created_at": "2026-11-22T10:00:00+00:00", "updated_at": "2026-11-22T10:00:00+00:00",
            "plan": {"symbol": "ETHUSDT", "bot": "mr_combined", "sl_pct": "2", "tp_pct": "5"},
        });
        let dir = tempfile::tempdir_in(parent).expect("tempdir");
        let durable = Store::open(&dir.path().join("durable")).expect("store");
        let none = redb::Database::create(dir.path().join("none.redb")).expect("redb");
        let bytes = serde_json::to_vec(&doc).expect("encode");
        Self { durable, none, doc, bytes, _dir: dir }
    }

    fn durable_write(&self, i: usize) -> Duration {
        let key = format!("bench{i}");
        let started = Instant::now();
        self.durable.write(|w| w.put(tables::JOURNAL_INDEX, &key, &self.doc)).expect("write");
        started.elapsed()
    }

    fn none_write(&self, i: usize) -> Duration {
        let key = format!("bench{i}");
        let started = Instant::now();
        let mut tx = self.none.begin_write().expect("begin");
        tx.set_durability(redb::Durability::None).expect("durability");
        {
            let mut table = tx.open_table(SCRATCH).expect("table");
            table.insert(key.as_str(), self.bytes.as_slice()).expect("insert");
        }
        tx.commit().expect("commit");
        started.elapsed()
    }
}

fn main() {
    support::main_with(300, 20, run);
}

async fn run(iterations: usize, warmup: usize) {
    spotbot::exchange::exchange_a::client::ensure_crypto_provider();
    let load_before = load_average();
    let wall = Instant::now();

    let mut sim_config = SimConfig::new(17, KEY, SECRET);
    sim_config.initial_funds = vec![("USDT".into(), Decimal::from(10_000_000))];
    let sim = spotbot_sim::serve(sim_config, "127.0.0.1:0").await.expect("simulator");
    sim.sim.add_account(RAW_KEY, RAW_SECRET);
    sim.sim.fund(Some(RAW_KEY), "USDT", Decimal::from(10_000_000)).expect("fund raw account");
    for (symbol, price) in SYMBOLS {
        sim.sim.set_price(symbol, Decimal::from(*price)).expect("price");
    }
    let (_license_dir, license) = support::license_server().await;

    let data = tempfile::tempdir().expect("tempdir");
    let toml = format!(
        "[exchange]\nmode = \"testnet\"\nbase_url = \"{}\"\n\
         [strategy.mr_combined]\nsize_pct = 0.01\nmax_trades_per_day = 1000\n\
         [risk]\nmax_consecutive_losses = 0\n\
         [scheduler]\nenabled = false\n\
         [plugins]\ndir = {:?}\n\
         [license]\nserver_url = \"http://{}\"\npublic_key = \"{}\"\npoll_seconds = 0\n",
        sim.base_url(),
        data.path().join("plugins").display().to_string(),
        license.addr(),
        license.public_key_hex()
    );
    let mut config = Config::parse(&toml, "confirm-bench.toml".as_ref()).expect("config");
    config.server.addr = "127.0.0.1:0".into();
    config.server.data_dir = data.path().join("data").display().to_string();
    config.secrets.exchange_api_key = Some(Secret::new(KEY));
    config.secrets.exchange_api_secret = Some(Secret::new(SECRET));
    let clock: SharedClock = Arc::new(SystemClock);
    let app = spotbot::app::start(config, clock).await.expect("host starts");
    let host = app.base_url();
    let http = reqwest::Client::builder().tcp_nodelay(true).build().expect("http");
    let (status, registered) = post(
        &http,
        format!("{host}/api/license/register"),
        Some(json!({"email": "bench@example.com", "name": "Confirm Bench"})),
    )
    .await;
    assert_eq!((status, &registered["ok"]), (200, &json!(true)), "{registered}");

    let raw = Raw {
        http: reqwest::Client::builder().tcp_nodelay(true).build().expect("http"),
        base: sim.base_url(),
    };
    let mut confirm = Vec::with_capacity(iterations);
    let mut health = Vec::with_capacity(iterations);
    let (mut ticker, mut account, mut order, mut oco, mut sequence) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut requests_per_confirm: BTreeMap<usize, usize> = BTreeMap::new();
    let mut by_endpoint: BTreeMap<String, usize> = BTreeMap::new();
    let (mut durable, mut none) = (Vec::new(), Vec::new());
    let scratch = ScratchStores::open(data.path());
    let mut windows = Vec::with_capacity(iterations);
    let mut used_weight = 0u64;
    let mut weight_waits = 0u32;
    let mut last_start: Option<Instant> = None;
    for i in 0..(iterations + warmup) {
        if used_weight >= WEIGHT_BUDGET {
            // Let the simulator's weight minute roll over, outside every timed section.
            let to_next_minute = 60_000 - sim.sim.now_ms().rem_euclid(60_000);
            tokio::time::sleep(Duration::from_millis(to_next_minute as u64 + 200)).await;
            weight_waits += 1;
        }
        if let Some(last) = last_start {
            tokio::time::sleep_until((last + ITERATION_SPACING).into()).await;
        }
        last_start = Some(Instant::now());
        let (symbol, price) = SYMBOLS[i % SYMBOLS.len()];

        let raw_seq = raw_sequence(&raw, i).await;

        let started = Instant::now();
        let response = http.get(format!("{host}/api/health")).send().await.expect("health");
        let _ = response.bytes().await.expect("health body");
        let health_elapsed = started.elapsed();

        let (status, created) =
            post(&http, format!("{host}/api/signal"), Some(signal(symbol, price))).await;
        assert_eq!((status, &created["ok"]), (200, &json!(true)), "{created}");

        let before = sim.sim.requests().len();
        let request = http
            .post(format!("{host}/api/signal/{symbol}/confirm"))
            .header("content-type", "application/json");
        let window_start = unix_micros();
        let started = Instant::now();
        let response = request.send().await.expect("confirm");
        let status = response.status().as_u16();
        let bytes = response.bytes().await.expect("confirm body");
        let confirm_elapsed = started.elapsed();
        let window_end = unix_micros();
        let after = sim.sim.requests();
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["ok"], true, "{answer}");
        assert_eq!(answer["trade"]["opened"]["protection"], "protected", "{answer}");

        let (status, closed) = post(&http, format!("{host}/api/close?symbol={symbol}"), None).await;
        assert_eq!(status, 200, "{closed}");
        used_weight = raw.send(reqwest::Method::GET, "/api/v3/ping", "", false).await.used_weight;
        let durable_elapsed = scratch.durable_write(i);
        let none_elapsed = scratch.none_write(i);

        if i >= warmup {
            confirm.push(confirm_elapsed);
            windows.push((window_start, window_end));
            health.push(health_elapsed);
            durable.push(durable_elapsed);
            none.push(none_elapsed);
            ticker.push(raw_seq.ticker);
            account.push(raw_seq.account);
            order.push(raw_seq.order);
            oco.push(raw_seq.oco);
            sequence.push(raw_seq.ticker + raw_seq.account + raw_seq.order + raw_seq.oco);
            *requests_per_confirm.entry(after.len() - before).or_default() += 1;
            for r in &after[before..] {
                *by_endpoint.entry(format!("{} {}", r.method, r.path)).or_default() += 1;
            }
        }
    }
    let load_after = load_average();
    if let Ok(path) = std::env::var("BENCH_SAMPLES") {
        // Profiling aid: one line per measured confirm, to line up with e.g.
        // `strace -f -ttt -T -e trace=fdatasync` of the same run.
        let mut csv =
            String::from("start_unix_us,end_unix_us,confirm_us,sequence_us,durable_write_us\n");
        for (k, (start, end)) in windows.iter().enumerate() {
            csv += &format!(
                "{start},{end},{:.1},{:.1},{:.1}\n",
                micros(confirm[k]),
                micros(sequence[k]),
                micros(durable[k])
            );
        }
        std::fs::write(&path, csv).expect("write BENCH_SAMPLES");
    }
    let wall = wall.elapsed();

    let (c50, c99) = stats(&confirm);
    let (o50, o99) = stats(&order);
    let (s50, s99) = stats(&sequence);
    let (d50, d99) = stats(&durable);
    let (n50, n99) = stats(&none);
    let total_requests: usize = requests_per_confirm.iter().map(|(n, count)| n * count).sum();
    let n = total_requests as f64 / iterations as f64;

    println!(
        "Confirm to OCO accepted on loopback, {iterations} iterations (after {warmup} warm-up), \
         symbols {}",
        SYMBOLS.iter().map(|(s, _)| *s).collect::<Vec<_>>().join(" ")
    );
    println!(
        "load average before {load_before}, after {load_after}; wall time {:.0} s, {weight_waits} \
         waits for the simulator's weight minute",
        wall.as_secs_f64()
    );
    println!("exchange requests per confirm: {n:.2} (histogram {requests_per_confirm:?})");
    for (endpoint, count) in &by_endpoint {
        println!("    {endpoint:<32} {:.2} per confirm", *count as f64 / iterations as f64);
    }
    println!();
    println!("{:<58} {:>10} {:>10}", "", "p50 µs", "p99 µs");
    let row = |name: &str, (p50, p99): (f64, f64)| println!("{name:<58} {p50:>10.1} {p99:>10.1}");
    row("confirm (POST /api/signal/{symbol}/confirm, HTTP)", (c50, c99));
    row("raw signed MARKET order (exchange_roundtrip's raw)", (o50, o99));
    row("raw GET /api/v3/ticker/price", stats(&ticker));
    row("raw signed GET /api/v3/account", stats(&account));
    row("raw signed POST /api/v3/orderList/oco", stats(&oco));
    row("raw sequence: the confirm's 4 requests, back to back", (s50, s99));
    row("host HTTP floor (GET /api/health)", stats(&health));
    row("durable Store::write (redb, immediate durability)", (d50, d99));
    row("redb commit with Durability::None (no fsync)", (n50, n99));
    println!();
    println!("overhead beyond the exchange's own round trips (target < 3000 µs):");
    let verdict = |us: f64| if us < 3000.0 { "met" } else { "MISSED" };
    let lines = [
        ("p50: confirm p50 - requests x raw order p50", c50 - n * o50),
        ("p99: confirm p99 - requests x raw order p99", c99 - n * o99),
        ("p50: confirm p50 - raw sequence p50", c50 - s50),
        ("p99: confirm p99 - raw sequence p99", c99 - s99),
    ];
    for (name, us) in lines {
        println!("  {name:<56} {us:>10.1} µs  {}", verdict(us));
    }
    println!(
        "  of which {WRITES_PER_CONFIRM} durable store writes at p50: {:.1} µs (fsync share {:.1} µs)",
        WRITES_PER_CONFIRM as f64 * d50,
        WRITES_PER_CONFIRM as f64 * (d50 - n50)
    );

    app.stop().await.expect("host stops");
    license.stop().await.expect("license server stops");
    sim.stop().await;
}
