//! Exchange B, a whole host on loopback (`spotbot::app::start` trading exchange B in testnet
//! mode against the in-process simulator, the license server; one process, a 2-worker
//! runtime): how long a confirm takes until the trade is protected (IOC entry, its fills read
//! for the fee, the resting take-profit), beyond the exchange round trips it cannot avoid;
//! and how long the watched stop takes to react (the simulator's price crosses the stop →
//! the IOC exit arrives at the simulator).
//!
//! `cargo bench -p spotbot --bench exchange_b_latency` prints p50/p99 of both, the exchange
//! requests one confirm makes, and a hand-signed copy of those requests on a second exchange B
//! account (the floor any client has). `BENCH_ITERATIONS` (default 40) and `BENCH_WARMUP`
//! (default 3) change the counts. Exchange B allows 1200 request weight a minute and a
//! confirm plus its exit cost about 100 (the fills reads weigh 20 each), so the host's budget
//! paces the run at about 11 iterations a minute: the bench waits for the next minute
//! outside the timed sections rather than let a timed confirm wait inside the budget.

mod support;

use support::{load_average, percentile, post, signal};

use std::sync::Arc;
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use serde_json::{Value, json};
use spotbot::clock::{SharedClock, SystemClock};
use spotbot::config::{Config, Secret};
use spotbot_exchange_b_protocol::{
    Action, Grouping, OrderTypeWire, OrderWire, PrivateKey, Tif, WireDecimal,
};
use spotbot_sim::{ExchangeBConfig, SimConfig};

/// The host's exchange B key (the official SDK's test key) and the raw account's.
const HOST_KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";
const RAW_KEY: &str = "0x4242424242424242424242424242424242424242424242424242424242424242";
/// The confirms' symbol and its price; the raw sequence trades BTCUSDT (pair 0, asset 10000).
const SYMBOL: &str = "ETHUSDT";
const PRICE: i64 = 3000;
/// The price that crosses the 2 % stop of an entry at 3000.
const CROSSING: i64 = 2900;
/// The host's weight ceiling per minute is 90 % of 1200; an iteration takes about 100.
const WEIGHT_BUDGET: u64 = 850;
const WEIGHT_PER_ITERATION: u64 = 110;

/// p50, p99 and max of a sample, in ms.
fn stats(samples: &[Duration]) -> (f64, f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (
        ms(percentile(&sorted, 0.50)),
        ms(percentile(&sorted, 0.99)),
        ms(*sorted.last().unwrap_or(&Duration::ZERO)),
    )
}

/// Hand-signed exchange B requests from a second account: the floor of any client.
struct Raw {
    http: reqwest::Client,
    base: String,
    key: PrivateKey,
    nonce: u64,
}

impl Raw {
    async fn post(&self, path: &str, body: &Value) -> (Duration, Value) {
        let started = Instant::now();
        let response =
            self.http.post(format!("{}{path}", self.base)).json(body).send().await.expect("raw");
        let status = response.status();
        let bytes = response.bytes().await.expect("raw body");
        let elapsed = started.elapsed();
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        assert!(status.is_success(), "raw {path}: {status} {body}");
        (elapsed, body)
    }

    async fn info(&self, body: Value) -> Duration {
        self.post("/info", &body).await.0
    }

    /// One signed action; its answer must be `ok`.
    async fn act(&mut self, action: Action) -> (Duration, Value) {
        self.nonce = self.nonce.max(chrono::Utc::now().timestamp_millis() as u64) + 1;
        let signature = self
            .key
            .sign_l1(&action, self.nonce, None, spotbot_exchange_b_protocol::Network::Testnet)
            .expect("sign");
        let body = json!({"action": action, "nonce": self.nonce, "signature": signature,
                          "vaultAddress": null});
        let (elapsed, answer) = self.post("/exchange", &body).await;
        assert_eq!(answer["status"], "ok", "{answer}");
        (elapsed, answer)
    }
}

fn order(buy: bool, price: &str, size: &str, tif: Tif) -> Action {
    Action::Order {
        orders: vec![OrderWire {
            a: 10_000,
            b: buy,
            p: WireDecimal(price.parse().expect("price")),
            s: WireDecimal(size.parse().expect("size")),
            r: false,
            t: OrderTypeWire::Limit { tif },
            c: None,
        }],
        grouping: Grouping::Na,
    }
}

/// The requests a confirm makes before the trade is protected, by hand: the mid, the
/// balances, the IOC entry, its fills, the take-profit (cancelled afterwards, untimed).
async fn raw_sequence(raw: &mut Raw) -> Duration {
    let address = raw.key.address().to_string();
    let mut total = raw.info(json!({"type": "allMids"})).await;
    total += raw.info(json!({"type": "spotClearinghouseState", "user": address})).await;
    let (elapsed, _) = raw.act(order(true, "63000", "0.001", Tif::Ioc)).await;
    total += elapsed;
    total += raw.info(json!({"type": "userFills", "user": address})).await;
    let (elapsed, rested) = raw.act(order(false, "66000", "0.00099", Tif::Gtc)).await;
    total += elapsed;
    let oid = rested["response"]["data"]["statuses"][0]["resting"]["oid"].as_u64().expect("oid");
    raw.act(Action::Cancel {
        cancels: vec![spotbot_exchange_b_protocol::CancelWire { a: 10_000, o: oid }],
    })
    .await;
    total
}

fn main() {
    support::main_with(40, 3, run);
}

async fn run(iterations: usize, warmup: usize) {
    spotbot::exchange::exchange_a::client::ensure_crypto_provider();
    let load_before = load_average();
    let wall = Instant::now();
    let host_key = PrivateKey::from_hex(HOST_KEY).expect("host key");
    let raw_key = PrivateKey::from_hex(RAW_KEY).expect("raw key");

    let mut sim_config = SimConfig::new(17, "bench-b-a-key", "bench-b-a-secret");
    sim_config.initial_funds = vec![("USDT".into(), Decimal::from(10_000_000))];
    sim_config.exchange_b = ExchangeBConfig::owned_by(host_key.address());
    sim_config.streams.tick = Duration::from_millis(5);
    let sim = spotbot_sim::serve(sim_config, "127.0.0.1:0").await.expect("simulator");
    sim.sim.add_exchange_b_account(raw_key.address(), None).expect("raw account");
    let raw_address = raw_key.address().to_string();
    sim.sim.fund(Some(&raw_address), "USDT", Decimal::from(10_000_000)).expect("fund raw");
    sim.sim.set_price(SYMBOL, Decimal::from(PRICE)).expect("price");
    sim.sim.set_price("BTCUSDT", Decimal::from(60_000)).expect("price");
    let (_license_dir, license) = support::license_server().await;

    let data = tempfile::tempdir().expect("tempdir");
    let toml = format!(
        "[exchange]\nactive = \"exchange_b\"\nmode = \"testnet\"\nbase_url = \"{0}\"\n\
         stream_url = \"{1}/ws\"\n\
         [strategy.mr_combined]\nsize_pct = 0.5\nmax_trades_per_day = 1000\n\
         [risk]\nmax_consecutive_losses = 0\n\
         [scheduler]\nenabled = false\n\
         [plugins]\ndir = {2:?}\n\
         [license]\nserver_url = \"http://{3}\"\npublic_key = \"{4}\"\npoll_seconds = 0\n",
        sim.base_url(),
        sim.base_url().replacen("http", "ws", 1),
        data.path().join("plugins").display().to_string(),
        license.addr(),
        license.public_key_hex()
    );
    let mut config = Config::parse(&toml, "exchange-b-bench.toml".as_ref()).expect("config");
    config.server.addr = "127.0.0.1:0".into();
    config.server.data_dir = data.path().join("data").display().to_string();
    config.secrets.exchange_private_key = Some(Secret::new(HOST_KEY));
    let clock: SharedClock = Arc::new(SystemClock);
    let app = spotbot::app::start(config, clock).await.expect("host starts");
    let host = app.base_url();
    let http = reqwest::Client::builder().tcp_nodelay(true).build().expect("http");
    let (status, registered) = post(
        &http,
        format!("{host}/api/license/register"),
        Some(json!({"email": "bench@example.com", "name": "Exchange B Bench"})),
    )
    .await;
    assert_eq!((status, &registered["ok"]), (200, &json!(true)), "{registered}");
    let mut raw = Raw {
        http: reqwest::Client::builder().tcp_nodelay(true).build().expect("http"),
        base: sim.base_url(),
        key: raw_key,
        nonce: 0,
    };

    let (mut confirm, mut sequence, mut reaction) = (Vec::new(), Vec::new(), Vec::new());
    let mut requests_per_confirm = Vec::new();
    let mut used = 0u64;
    let mut waits = 0u32;
    let mut minute = Instant::now();
    for i in 0..(iterations + warmup) {
        if used + WEIGHT_PER_ITERATION > WEIGHT_BUDGET {
            // The host's budget and the simulator count per minute: let it roll over, untimed.
            tokio::time::sleep_until((minute + Duration::from_millis(60_500)).into()).await;
            minute = Instant::now();
            used = 0;
            waits += 1;
        }
        used += WEIGHT_PER_ITERATION;
        sim.sim.set_price(SYMBOL, Decimal::from(PRICE)).expect("price");
        let raw_elapsed = raw_sequence(&mut raw).await;

        let (status, created) =
            post(&http, format!("{host}/api/signal"), Some(signal(SYMBOL, PRICE))).await;
        assert_eq!((status, &created["ok"]), (200, &json!(true)), "{created}");
        let before = sim.sim.requests().len();
        let started = Instant::now();
        let (status, answer) =
            post(&http, format!("{host}/api/signal/{SYMBOL}/confirm"), None).await;
        let confirm_elapsed = started.elapsed();
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["trade"]["opened"]["protection"], "protected", "{answer}");
        let count = sim.sim.requests().len() - before;

        // The watched stop: move the price through it and wait for the IOC exit (the second
        // `/exchange` request after the move: the take-profit's cancel, then the exit).
        let before = sim.sim.requests().len();
        let moved = Instant::now();
        sim.sim.set_price(SYMBOL, Decimal::from(CROSSING)).expect("price");
        loop {
            let exits = sim.sim.requests()[before..]
                .iter()
                .filter(|r| r.path == "/exchange" && r.executed)
                .count();
            if exits >= 2 {
                break;
            }
            assert!(moved.elapsed() < Duration::from_secs(10), "no exit after the crossing");
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
        let reaction_elapsed = moved.elapsed();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let response = http.get(format!("{host}/api/trades")).send().await.expect("trades");
            let trades: Value = response.json().await.expect("trades body");
            if trades["trades"].as_array().is_some_and(|t| t.is_empty()) {
                break;
            }
            assert!(Instant::now() < deadline, "the trade did not close: {trades}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if i >= warmup {
            confirm.push(confirm_elapsed);
            sequence.push(raw_elapsed);
            reaction.push(reaction_elapsed);
            requests_per_confirm.push(count);
        }
    }
    let (c50, c99, cmax) = stats(&confirm);
    let (s50, s99, smax) = stats(&sequence);
    let (r50, r99, rmax) = stats(&reaction);
    let mean_requests =
        requests_per_confirm.iter().sum::<usize>() as f64 / requests_per_confirm.len() as f64;
    let (_, health) = {
        let response = http.get(format!("{host}/api/health")).send().await.expect("health");
        ((), response.json::<Value>().await.unwrap_or(Value::Null))
    };
    println!(
        "Exchange B on loopback, {iterations} iterations (after {warmup} warm-up); load \
         average before {load_before}, after {}; wall {:.0} s, {waits} waits for the weight \
         minute; streams {}",
        load_average(),
        wall.elapsed().as_secs_f64(),
        health["streams"]
    );
    println!("exchange requests per confirm: {mean_requests:.2}");
    println!("{:<64} {:>9} {:>9} {:>9}", "", "p50 ms", "p99 ms", "max ms");
    let row = |name: &str, (p50, p99, max): (f64, f64, f64)| {
        println!("{name:<64} {p50:>9.2} {p99:>9.2} {max:>9.2}")
    };
    row("confirm → protected (POST /api/signal/{symbol}/confirm)", (c50, c99, cmax));
    row("raw sequence: mid, balances, IOC, fills, take-profit", (s50, s99, smax));
    row("confirm beyond the raw sequence (p50 - p50, p99 - p99)", (c50 - s50, c99 - s99, 0.0));
    row("watched stop: price crosses at the simulator → IOC exit received", (r50, r99, rmax));

    app.stop().await.expect("host stops");
    license.stop().await.expect("license server stops");
    sim.stop().await;
}
