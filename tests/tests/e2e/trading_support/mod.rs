//! The whole trading set-up on loopback: the exchange simulator, a fake messenger, the license
//! server and a licensed host pointed at both, on the license rig's test clock. Tests drive
//! the host over HTTP and assert what the simulator received.

mod at_the_exchange;

use std::time::Duration;

use rust_decimal::Decimal;
use serde_json::{Value, json};
use spotbot::config::Secret;
use spotbot_sim::{Fault, FaultKind, RunningSim, SimConfig};
use spotbot_tests::fake_messenger::FakeMessenger;
pub use spotbot_tests::venue::{B_KEY, Venue};

use super::license_support::{Host, Rig};

pub use at_the_exchange::Stage;

pub const KEY: &str = "trading-key";
pub const SECRET: &str = "trading-secret";

pub const BOT_TOKEN: &str = "4242:fake-token";
pub const CHAT_ID: i64 = 4242;

pub fn d(s: &str) -> Decimal {
    s.parse().expect("decimal")
}

/// A decimal of an API answer, written as a JSON number or string.
pub fn decimal_of(v: &Value) -> Decimal {
    d(v.to_string().trim_matches('"'))
}

/// The rig's test clock as the simulator's clock.
struct RigClock(spotbot::clock::TestClock);

impl spotbot_sim::Clock for RigClock {
    fn now_ms(&self) -> spotbot_sim::Millis {
        use spotbot::clock::Clock as _;
        self.0.now_ms()
    }

    fn advance(&self, ms: spotbot_sim::Millis) {
        self.0.advance(chrono::Duration::milliseconds(ms));
    }
}

pub struct Trading {
    pub rig: Rig,
    pub sim: RunningSim,
    /// The simulator's WebSocket services, when the host follows streams: held only so that
    /// they serve as long as the rig lives.
    _streams: Option<spotbot_sim::RunningStreams>,
    pub messenger: FakeMessenger,
    pub host: Host,
    pub venue: Venue,
    toml: String,
    registrations: u32,
}

impl Trading {
    /// 10 000 USDT on the exchange, ETHUSDT at 3000, size_pct 10 (1000 USDT per trade).
    pub async fn start() -> Self {
        Self::start_with("").await
    }

    /// As [`Trading::start`] with `extra` appended to the host's config (inside its
    /// `[strategy.mr_combined]` table until `extra` opens another).
    pub async fn start_with(extra: &str) -> Self {
        Self::start_inner(Venue::A, extra, false, false, |_| {}).await
    }

    /// As [`Trading::start_with`] on `venue`: on exchange B the host signs with [`B_KEY`],
    /// whose address owns the simulator's account (USDT shows as USDC there).
    pub async fn start_on(venue: Venue, extra: &str) -> Self {
        Self::start_inner(venue, extra, false, false, |_| {}).await
    }

    /// As [`Trading::start_with`], with the simulator's listing changed by `edit` first (a
    /// symbol's filters).
    pub async fn start_listing(
        extra: &str,
        edit: fn(&mut Vec<spotbot_sim::symbols::SymbolRules>),
    ) -> Self {
        Self::start_inner(Venue::A, extra, false, false, edit).await
    }

    /// As [`Trading::start_with`], with the simulator's WebSocket services on another port and
    /// the host following them (account stream and prices; silence after 1.5 s, the
    /// simulator pings every 300 ms).
    pub async fn start_streaming(extra: &str) -> Self {
        Self::start_inner(Venue::A, extra, false, true, |_| {}).await
    }

    /// As [`Trading::start_streaming`] on `venue`; on exchange B the host follows the
    /// simulator's `/ws` on its REST port (silence after 1.5 s, the host pings every 500 ms).
    pub async fn start_streaming_on(venue: Venue, extra: &str) -> Self {
        Self::start_inner(venue, extra, false, true, |_| {}).await
    }

    /// As [`Trading::start_with`], with the simulator on the rig's test clock: advancing the
    /// rig moves the exchange's candles too (scripted candle paths, market context, scans).
    pub async fn start_synced(extra: &str) -> Self {
        Self::start_inner(Venue::A, extra, true, false, |_| {}).await
    }

    /// As [`Trading::start_synced`] on `venue` (exchange B's simulator is always on the rig's
    /// clock).
    pub async fn start_synced_on(venue: Venue, extra: &str) -> Self {
        Self::start_inner(venue, extra, true, false, |_| {}).await
    }

    async fn start_inner(
        venue: Venue,
        extra: &str,
        synced: bool,
        streaming: bool,
        edit: fn(&mut Vec<spotbot_sim::symbols::SymbolRules>),
    ) -> Self {
        let rig = Rig::new().await;
        let mut sim_config = SimConfig::new(11, KEY, SECRET);
        let b_key = spotbot_exchange_b_protocol::PrivateKey::from_hex(B_KEY).expect("test key");
        sim_config.exchange_b = spotbot_sim::ExchangeBConfig::owned_by(b_key.address());
        edit(&mut sim_config.rules);
        // Exchange B checks an action's nonce (the host's clock) against its own time: the
        // simulator runs on the rig's clock for it.
        if synced || venue == Venue::B {
            sim_config.clock = std::sync::Arc::new(RigClock(rig.clock.clone()));
        }
        sim_config.initial_funds = vec![("USDT".into(), Decimal::from(10_000))];
        sim_config.streams = spotbot_sim::StreamConfig {
            ping_interval: Duration::from_millis(300),
            pong_timeout: Duration::from_secs(3),
            tick: Duration::from_millis(10),
            shutdown_grace: Duration::from_millis(200),
            ..spotbot_sim::StreamConfig::default()
        };
        let sim = spotbot_sim::serve(sim_config, "127.0.0.1:0").await.expect("simulator binds");
        sim.sim.set_price("ETHUSDT", d("3000")).expect("price");
        sim.sim.set_price("SOLUSDT", d("150")).expect("price");
        let streams = if streaming && venue == Venue::A {
            let served = spotbot_sim::serve_streams(sim.sim.clone(), "127.0.0.1:0").await;
            Some(served.expect("simulator streams bind"))
        } else {
            None
        };
        let stream_keys = match &streams {
            Some(s) => format!(
                "ws_api_url = \"{0}/ws-api/v3\"\nstream_url = \"{0}\"\nstream_silence_ms = 1500\n",
                s.base_url()
            ),
            // Exchange B: one WebSocket on the REST port. Without it the host polls only
            // (exchange B's streams would otherwise follow from the REST base).
            None if streaming => format!(
                "stream_url = \"{}/ws\"\nstream_silence_ms = 1500\n",
                sim.base_url().replacen("http", "ws", 1)
            ),
            None if venue == Venue::B => "streams = false\n".to_string(),
            None => String::new(),
        };
        let messenger = FakeMessenger::start(BOT_TOKEN, CHAT_ID).await;
        let active = venue.active();
        let toml = format!(
            "[exchange]\nactive = \"{active}\"\nmode = \"testnet\"\nbase_url = \"{}\"\nrequest_timeout_ms = 1500\n{stream_keys}\
             [messenger]\napi_base = \"{}\"\n\
             [strategy.mr_combined]\nsize_pct = 10.0\nmax_trades_per_day = 5\n{extra}\n",
            sim.base_url(),
            messenger.base_url()
        );
        let host = start_host(&rig, &toml, tempfile::tempdir().unwrap()).await;
        let mut trading =
            Trading { rig, sim, _streams: streams, messenger, host, venue, toml, registrations: 0 };
        trading.register().await;
        trading
    }

    async fn register(&mut self) {
        self.registrations += 1;
        let email = format!("trader{}-{}@example.com", self.registrations, std::process::id());
        self.host.register(&email).await;
    }

    /// Stops the host and starts it again on the same data folder (the license is cached).
    pub async fn restart(self) -> Self {
        self.restart_after(async {}).await
    }

    /// As [`Trading::restart`], running `while_down` while the host is stopped (what happens
    /// at the exchange without the service).
    pub async fn restart_after(
        mut self,
        while_down: impl std::future::Future<Output = ()>,
    ) -> Self {
        let dir = self.host.stop().await;
        while_down.await;
        self.host = start_host(&self.rig, &self.toml, dir).await;
        self
    }

    /// Stops the host and lets its data folder go: suites that start many rigs in one test
    /// end each, so their Wasm engines' reserved memory is returned at once.
    pub async fn stop(self) {
        self.host.stop().await;
    }

    /// Removes the pending entry of `client_order_id` from the host's store, as a lost store
    /// would (the order stays on the exchange, for recovery to find).
    pub fn forget_pending_entry(&self, client_order_id: &str) {
        let table = spotbot::store::tables::PENDING_ENTRIES;
        let store = &self.host.app.state.store;
        store.write(|w| w.remove(table, client_order_id).map(|_| ())).expect("store write");
    }

    pub fn set_price(&self, symbol: &str, price: &str) {
        self.sim.sim.set_price(symbol, d(price)).expect("set price");
    }

    /// Every order the simulator's engine holds, in the query shape.
    pub fn orders(&self) -> Vec<Value> {
        self.sim.sim.orders()
    }

    /// Orders whose client order id starts with `prefix`.
    pub fn orders_with_prefix(&self, prefix: &str) -> Vec<Value> {
        self.orders()
            .into_iter()
            .filter(|o| o["clientOrderId"].as_str().is_some_and(|c| c.starts_with(prefix)))
            .collect()
    }

    /// Every order the simulator's engine holds, as exchange B shows them (`coin`, `side`
    /// B/A, `limitPx`, `origSz`, `tif`, `cloid`, `status`, ...).
    pub fn orders_b(&self) -> Vec<Value> {
        self.sim.sim.exchange_b_orders()
    }

    /// Orders of one type (MARKET, LIMIT_MAKER, STOP_LOSS_LIMIT) and side.
    pub fn orders_of(&self, order_type: &str, side: &str) -> Vec<Value> {
        self.orders().into_iter().filter(|o| o["type"] == order_type && o["side"] == side).collect()
    }

    /// Requests the simulator answered on `method path`.
    pub fn seen(&self, method: &str, path: &str) -> Vec<spotbot_sim::RequestRecord> {
        self.sim
            .sim
            .requests()
            .into_iter()
            .filter(|r| r.method == method && r.path == path)
            .collect()
    }

    /// Arms a fault on the next `count` requests to `path` (default: order placement).
    pub fn fault(&self, kind: FaultKind, count: u32, path: Option<&str>) {
        let mut fault = Fault::new(kind);
        fault.count = count;
        fault.path = path.map(String::from);
        fault.method = path.map(|_| "POST".to_string());
        self.sim.sim.inject(fault);
    }

    /// Arms a fault on the next `count` GET requests to `path` (a read: the account, the
    /// server time, ...).
    pub fn fault_on_read(&self, kind: FaultKind, count: u32, path: &str) {
        let mut fault = Fault::new(kind);
        fault.count = count;
        fault.path = Some(path.to_string());
        fault.method = Some("GET".to_string());
        self.sim.sim.inject(fault);
    }

    /// Exchange A's client on the simulator with the host's keys, as an operator trading by
    /// hand next to the service.
    pub fn by_hand(&self) -> spotbot::exchange::exchange_a::ExchangeAClient {
        use spotbot::exchange::exchange_a::{ClientConfig, ExchangeAClient, Signer};
        let clock: spotbot::clock::SharedClock = std::sync::Arc::new(spotbot::clock::SystemClock);
        let signer = Signer::new(Secret::new(KEY), Secret::new(SECRET));
        let metrics = spotbot::metrics::Metrics::default();
        ExchangeAClient::new(ClientConfig::new(self.sim.base_url()), Some(signer), clock, metrics)
            .unwrap()
    }

    /// Exchange B's client on the simulator, trading the host's account as an API wallet of
    /// its own (its nonces never meet the host's), on the rig's clock: the boss in the
    /// exchange's app.
    pub fn by_hand_b(&self) -> spotbot::exchange::exchange_b::ExchangeBClient {
        use spotbot::exchange::exchange_b::{ClientConfig, ExchangeBClient};
        use spotbot_exchange_b_protocol::{Network, PrivateKey};
        let account = PrivateKey::from_hex(B_KEY).expect("test key").address();
        let agent = PrivateKey::from_hex(&format!("0x{}", "42".repeat(32))).expect("agent key");
        self.sim.sim.add_exchange_b_agent(agent.address(), account).expect("agent wallet");
        let clock: spotbot::clock::SharedClock = std::sync::Arc::new(self.rig.clock.clone());
        let config = ClientConfig::new(self.sim.base_url(), Network::Testnet);
        let metrics = spotbot::metrics::Metrics::default();
        ExchangeBClient::new(config, Some(agent), Some(account), clock, metrics).unwrap()
    }

    /// Orders of one time in force (`Ioc`, `Gtc`, `Alo`) and side (`B` buy, `A` sell), as
    /// exchange B shows them.
    pub fn orders_b_of(&self, tif: &str, side: &str) -> Vec<Value> {
        let field = |o: &Value, name: &str| o["order"][name].as_str().map(String::from);
        let orders = self.orders_b().into_iter();
        orders
            .filter(|o| field(o, "tif").as_deref() == Some(tif))
            .filter(|o| field(o, "side").as_deref() == Some(side))
            .collect()
    }

    /// Waits (up to `within`) until `check` holds for `GET /api/health`'s streams; answers
    /// them.
    pub async fn until_streams(&self, within: Duration, check: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + within;
        loop {
            let (_, health) = self.get("/api/health").await;
            if check(&health["streams"]) {
                return health["streams"].clone();
            }
            assert!(std::time::Instant::now() < deadline, "streams never got there: {health}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// How long until no trade is open (panics after `within`).
    pub async fn time_to_close(&self, within: Duration) -> Duration {
        let start = std::time::Instant::now();
        while !self.open_trades().await.is_empty() {
            let orders = if self.venue == Venue::B { self.orders_b() } else { self.orders() };
            assert!(start.elapsed() < within, "the trade is still open: {orders:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        start.elapsed()
    }

    /// Free and locked balance of an asset at the simulator.
    pub fn balance(&self, asset: &str) -> (Decimal, Decimal) {
        let engine = self.sim.sim.engine();
        engine
            .accounts
            .iter()
            .find(|a| a.api_key == KEY)
            .and_then(|a| a.balances.get(asset))
            .map_or((Decimal::ZERO, Decimal::ZERO), |b| (b.free, b.locked))
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.host.post(path, body).await
    }

    pub async fn post_empty(&self, path: &str) -> (u16, Value) {
        let response = self
            .host
            .http
            .post(self.host.url(path))
            .header("content-type", "application/json")
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.host.get(path).await
    }

    /// Opens a bracketed position through `POST /api/trade` (sl 2 %, tp 5 %, gates passed) and
    /// asserts it was accepted; returns the answer.
    pub async fn buy(&self, symbol: &str) -> Value {
        let path = format!(
            "/api/trade?symbol={symbol}&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9"
        );
        let (status, body) = self.post_empty(&path).await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// Creates a signal and asserts it is pending.
    pub async fn create_signal(&self, body: Value) -> Value {
        let (status, answer) = self.post("/api/signal", body).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["status"], "pending", "{answer}");
        answer
    }

    pub async fn confirm(&self, symbol: &str) -> (u16, Value) {
        self.post_empty(&format!("/api/signal/{symbol}/confirm")).await
    }

    pub async fn open_trades(&self) -> Vec<Value> {
        let (status, body) = self.get("/api/trades").await;
        assert_eq!(status, 200, "{body}");
        body["trades"].as_array().cloned().unwrap_or_default()
    }

    /// Waits (up to 10 s) for a message whose text contains `needle`: messages the service
    /// sends in the background arrive in no fixed order.
    pub async fn message_containing(
        &self,
        needle: &str,
    ) -> spotbot_tests::fake_messenger::SentRecord {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(found) = self.messenger.sent().into_iter().find(|m| m.text.contains(needle))
            {
                return found;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no message containing {needle:?}: {:?}",
                self.messenger.sent()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until `n` messages reached the fake messenger.
    pub async fn messages(&self, n: usize) -> Vec<spotbot_tests::fake_messenger::SentRecord> {
        self.messenger.wait_for_messages(n, Duration::from_secs(10)).await
    }
}

/// A signal whose checklist passes 9 of 10 with reward/risk 2.5 (passes both gates).
pub fn good_signal(symbol: &str) -> Value {
    signal_with(symbol, "buy", 9, 10)
}

pub fn signal_with(symbol: &str, direction: &str, passed: usize, total: usize) -> Value {
    let checklist: Vec<Value> = (0..total)
        .map(|i| json!({"name": format!("check {i}"), "pass": i < passed, "detail": "x"}))
        .collect();
    json!({
        "symbol": symbol, "direction": direction, "bot": "mr_combined", "price": 3000.0,
        "sl_pct": 2.0, "tp_pct": 5.0, "checklist": checklist, "rsi": 28.5, "adx": 18.0,
    })
}

async fn start_host(rig: &Rig, toml: &str, dir: tempfile::TempDir) -> Host {
    let mut config = rig.config_with(toml, dir.path(), None);
    // A test that names a plugins folder keeps it; the others get an empty one of their own.
    if config.plugins.dir == spotbot::config::PluginsConfig::default().dir {
        config.plugins.dir = dir.path().join("plugins").display().to_string();
    }
    config.secrets.exchange_api_key = Some(Secret::new(KEY));
    config.secrets.exchange_api_secret = Some(Secret::new(SECRET));
    config.secrets.exchange_private_key = Some(Secret::new(B_KEY));
    config.secrets.messenger_bot_token = Some(Secret::new(BOT_TOKEN));
    config.secrets.messenger_chat_id = Some(CHAT_ID.to_string());
    rig.start_config(config, dir).await
}
