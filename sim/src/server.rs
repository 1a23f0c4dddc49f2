//! The simulator as a running thing: how to build one ([`SimConfig`]), the handle its owner
//! and its handlers share ([`Sim`]: the core behind a lock, the clock, faults and the random
//! mode of damaged answers, the request log and the weight meter), and serving it on a socket
//! ([`serve`], [`RunningSim`]).

use crate::admin;
use crate::clock::{Clock, Millis, SystemClock};
use crate::core::{Engine, EngineConfig};
use crate::exchange_a::{self, errors::default_msg, params::ApiError, render, wire::to_value};
use crate::exchange_b::{self, ExchangeBConfig};
use crate::faults::mutation::{Mutation, MutationConfig, MutationStatus};
use crate::faults::{Fault, FaultKind, StreamFault, StreamFaultKind, StreamService};
use crate::limits::Limits;
use crate::market::Market;
use crate::symbols::{self, SymbolRules};
use crate::transport::{Conn, KillableListener};
use axum::Router;
use axum::http::Method;
use axum::routing::{get, post};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use spotbot_exchange_b_protocol::{Address, PrivateKey};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::broadcast;

/// What the simulator saw: one record per request to an `/api/` path (exchange A) or to
/// `/info` and `/exchange` (exchange B).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestRecord {
    pub time: Millis,
    pub method: String,
    pub path: String,
    /// newClientOrderId / listClientOrderId / origClientOrderId if sent (exchange A); the
    /// first cloid of an order or cancelByCloid action (exchange B).
    pub client_order_id: Option<String>,
    /// Exchange B: the request's `type` — the action of an `/exchange` request (`order`,
    /// `cancel`, `cancelByCloid`), the read of an `/info` one (`orderStatus`, ...) — so a
    /// cancel by cloid is not mistaken for a placement with that cloid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// HTTP status answered (0 when the connection was dropped).
    pub status: u16,
    /// Whether the engine executed the request (also when its answer was then damaged).
    pub executed: bool,
    /// The fault armed for this request or the damage the random mode drew for it, in its
    /// `Debug` spelling (`Damage { damage: Truncated, seed: 7, ms: None, retry_after: None }`,
    /// `DropAfterExecute`).
    pub fault: Option<String>,
}

/// Everything a running simulator shares between its handlers and its owner.
pub struct Shared {
    pub engine: Mutex<Engine>,
    pub clock: Arc<dyn Clock>,
    faults: Mutex<Vec<Fault>>,
    mutation: Mutex<Mutation>,
    log: Mutex<std::collections::VecDeque<RequestRecord>>,
    log_capacity: Option<usize>,
    limits: Mutex<Limits>,
    streams: StreamConfig,
    stream_faults: broadcast::Sender<StreamFault>,
    /// Until when new connections of a service start silent (the last silence fault).
    silent_until: Mutex<Vec<(tokio::time::Instant, Option<StreamService>)>>,
    pub api_key: String,
    pub api_secret: String,
    exchange_b: exchange_b::state::State,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How to build a simulator.
pub struct SimConfig {
    pub seed: u64,
    pub api_key: String,
    pub api_secret: String,
    pub clock: Arc<dyn Clock>,
    pub engine: EngineConfig,
    pub rules: Vec<SymbolRules>,
    /// Free balances the default account starts with.
    pub initial_funds: Vec<(String, Decimal)>,
    /// Rules of the WebSocket connections (exchange values by default).
    pub streams: StreamConfig,
    /// Exchange B: the address owning the default account, the signing network, the weight
    /// limit.
    pub exchange_b: ExchangeBConfig,
    /// Requests the log keeps, the newest (`None`: all of them, for tests that assert on what
    /// reached the exchange; a simulator that serves for months keeps a few).
    pub request_log: Option<usize>,
}

/// Rules of the simulator's WebSocket connections. The defaults are the exchange's; tests
/// shorten them.
#[derive(Debug, Clone)]
pub struct StreamConfig {
    /// How often the server pings each connection (exchange: 20 s).
    pub ping_interval: Duration,
    /// How long the server waits for a pong before it closes (exchange: 60 s).
    pub pong_timeout: Duration,
    /// The longest a connection lives, on the simulator's clock (exchange: 24 h).
    pub max_lifetime_ms: Millis,
    /// How often the engine catches up with the market while streams are served, and market
    /// streams look at the prices (real time).
    pub tick: Duration,
    /// Time from a `serverShutdown` event to the close.
    pub shutdown_grace: Duration,
}

impl Default for StreamConfig {
    fn default() -> Self {
        Self {
            ping_interval: Duration::from_secs(20),
            pong_timeout: Duration::from_secs(60),
            max_lifetime_ms: 24 * 3_600_000,
            tick: Duration::from_millis(50),
            shutdown_grace: Duration::from_secs(1),
        }
    }
}

impl SimConfig {
    /// Seeded synthetic market, wall clock, the default listing, 10 000 USDT.
    pub fn new(seed: u64, api_key: impl Into<String>, api_secret: impl Into<String>) -> Self {
        Self {
            seed,
            api_key: api_key.into(),
            api_secret: api_secret.into(),
            clock: Arc::new(SystemClock::new()),
            engine: EngineConfig::default(),
            rules: symbols::default_listing(),
            initial_funds: vec![("USDT".to_string(), Decimal::from(10_000))],
            streams: StreamConfig::default(),
            exchange_b: ExchangeBConfig::from_seed(seed),
            request_log: None,
        }
    }

    /// Key and secret from EXCHANGE_API_KEY / EXCHANGE_API_SECRET, or generated from the seed
    /// and the time (the binary prints them at start); exchange B's default account owned by
    /// the address of EXCHANGE_PRIVATE_KEY, or of the seed's key (see [`exchange_b::seed_key`]).
    /// An EXCHANGE_PRIVATE_KEY that is not a key is an error; the key itself is never kept.
    pub fn from_env(seed: u64) -> Result<Self, spotbot_exchange_b_protocol::KeyError> {
        let make = |salt: u64| {
            let t = SystemClock::new().now_ms() as u64;
            let mut z = seed ^ t.rotate_left(17) ^ salt ^ u64::from(std::process::id());
            (0..4)
                .map(|_| {
                    z = crate::market::mix(z);
                    format!("{z:016x}")
                })
                .collect::<String>()
        };
        let key = std::env::var("EXCHANGE_API_KEY")
            .ok()
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| make(1));
        let secret = std::env::var("EXCHANGE_API_SECRET")
            .ok()
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| make(2));
        let mut config = Self::new(seed, key, secret);
        if let Some(text) = std::env::var("EXCHANGE_PRIVATE_KEY").ok().filter(|k| !k.is_empty()) {
            config.exchange_b.account = PrivateKey::from_hex(&text)?.address();
        }
        Ok(config)
    }
}

/// A handle to a simulator (cheap to clone): the admin operations as Rust methods.
#[derive(Clone)]
pub struct Sim {
    pub shared: Arc<Shared>,
}

impl Sim {
    pub fn new(config: SimConfig) -> Self {
        let mut engine = Engine::new(config.rules, Market::new(config.seed), config.engine);
        let acc = engine.add_account(&config.api_key, &config.api_secret);
        for (asset, amount) in &config.initial_funds {
            engine.fund(acc, asset, *amount, config.clock.now_ms());
        }
        let exchange_b = exchange_b::state::State::new(&config.exchange_b, acc);
        Self {
            shared: Arc::new(Shared {
                engine: Mutex::new(engine),
                clock: config.clock,
                faults: Mutex::new(Vec::new()),
                mutation: Mutex::new(Mutation::default()),
                log: Mutex::new(std::collections::VecDeque::new()),
                log_capacity: config.request_log,
                limits: Mutex::new(Limits::default()),
                streams: config.streams,
                stream_faults: broadcast::channel(64).0,
                silent_until: Mutex::new(Vec::new()),
                api_key: config.api_key,
                api_secret: config.api_secret,
                exchange_b,
            }),
        }
    }

    pub fn now_ms(&self) -> Millis {
        self.shared.clock.now_ms()
    }
    pub fn engine(&self) -> MutexGuard<'_, Engine> {
        lock(&self.shared.engine)
    }
    pub fn set_price(&self, symbol: &str, price: Decimal) -> Result<(), ApiError> {
        let now = self.now_ms();
        let mut e = self.engine();
        e.rules(symbol)?;
        e.catch_up(now);
        e.market.set_price(symbol, now, price);
        e.catch_up(now);
        Ok(())
    }
    /// Fills part of a resting limit order at its price (see `Engine::fill_partially`).
    pub fn fill_partially(&self, order_id: i64, qty: Decimal) -> Result<(), ApiError> {
        let now = self.now_ms();
        let mut e = self.engine();
        e.catch_up(now);
        Ok(e.fill_partially(order_id, qty, now)?)
    }
    pub fn set_path(&self, symbol: &str, points: Vec<(Millis, Decimal)>) -> Result<(), ApiError> {
        self.set_paths(vec![(symbol.to_string(), points)])
    }
    /// [`Sim::set_path`] of several symbols at once: the market is caught up to now once,
    /// then every script is replaced (a backtest scripts every symbol at every step).
    pub fn set_paths(&self, paths: Vec<(String, Vec<(Millis, Decimal)>)>) -> Result<(), ApiError> {
        let now = self.now_ms();
        let mut e = self.engine();
        for (symbol, _) in &paths {
            e.rules(symbol)?;
        }
        e.catch_up(now);
        for (symbol, points) in paths {
            e.market.set_path(&symbol, points);
        }
        Ok(())
    }
    /// Scripts the traded volume of `symbol`: (time, base volume) points; a candle's volume
    /// becomes the sum of the points inside it.
    pub fn set_volumes(
        &self,
        symbol: &str,
        points: Vec<(Millis, Decimal)>,
    ) -> Result<(), ApiError> {
        let mut e = self.engine();
        e.rules(symbol)?;
        e.market.set_volumes(symbol, points);
        Ok(())
    }
    pub fn advance(&self, ms: Millis) {
        self.shared.clock.advance(ms);
        let now = self.now_ms();
        self.engine().catch_up(now);
    }
    /// Adds free balance to the account of `api_key` (the default account if None).
    pub fn fund(
        &self,
        api_key: Option<&str>,
        asset: &str,
        amount: Decimal,
    ) -> Result<(), ApiError> {
        let mut e = self.engine();
        let key = api_key.unwrap_or(&self.shared.api_key);
        let acc =
            e.account_by_key(key).ok_or_else(|| ApiError::new(401, -2015, default_msg(-2015)))?;
        e.fund(acc, asset, amount, self.now_ms());
        Ok(())
    }
    pub fn add_account(&self, api_key: &str, secret: &str) {
        self.engine().add_account(api_key, secret);
    }
    /// Gives the account of `api_key` the exchange B address `address`; without a key, a new
    /// account whose API key is the address's text (so `fund` reaches it by that text).
    pub fn add_exchange_b_account(
        &self,
        address: Address,
        api_key: Option<&str>,
    ) -> Result<(), ApiError> {
        let account = {
            let mut e = self.engine();
            match api_key {
                Some(key) => e
                    .account_by_key(key)
                    .ok_or_else(|| ApiError::new(401, -2015, default_msg(-2015)))?,
                None => {
                    let secret = e.new_client_id();
                    e.add_account(&address.to_string(), &secret)
                }
            }
        };
        self.shared.exchange_b.wallets().add_user(address, account);
        Ok(())
    }
    /// Lets API wallet `agent` sign exchange B actions for the account of address `user`.
    pub fn add_exchange_b_agent(&self, agent: Address, user: Address) -> Result<(), ApiError> {
        let mut wallets = self.shared.exchange_b.wallets();
        let account = wallets
            .user(&user)
            .ok_or_else(|| ApiError::bad(-2015, format!("no account has the address {user}")))?;
        wallets.add_agent(agent, account);
        Ok(())
    }
    /// Exchange B's front-end state: the address book, nonces, the weight meter.
    pub(crate) fn exchange_b(&self) -> &exchange_b::state::State {
        &self.shared.exchange_b
    }
    pub fn inject(&self, fault: Fault) {
        lock(&self.shared.faults).push(fault);
    }
    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }
    /// Turns the random mode of damaged answers on (its counts start afresh) or, with None,
    /// off. Settings out of range (share outside 0..=1, an empty list) are refused (-1100)
    /// and leave the mode as it was.
    pub fn set_mutation(&self, config: Option<MutationConfig>) -> Result<(), ApiError> {
        lock(&self.shared.mutation).set(config).map_err(|problem| ApiError::bad(-1100, problem))
    }
    /// The random mode's settings (None: off) and what it damaged since it was last set.
    pub fn mutation_status(&self) -> MutationStatus {
        lock(&self.shared.mutation).status()
    }
    /// The random mode's damage for the answer of a request on `path` that ran, if any.
    pub(crate) fn draw_damage(&self, path: &str) -> Option<FaultKind> {
        lock(&self.shared.mutation).draw(path)
    }
    pub fn requests(&self) -> Vec<RequestRecord> {
        lock(&self.shared.log).iter().cloned().collect()
    }
    /// Every order the engine accepted (any status), in the query shape plus nothing else.
    pub fn orders(&self) -> Vec<serde_json::Value> {
        let e = self.engine();
        e.orders.iter().map(|o| to_value(&render::query(o))).collect()
    }
    /// Every order the engine accepted on a listed pair, as exchange B's `orderStatus` shows
    /// it, with the `user` address of its account (null for an account without one).
    pub fn exchange_b_orders(&self) -> Vec<serde_json::Value> {
        let e = self.engine();
        let listing = exchange_b::listing::Listing::new(&e.rules);
        let wallets = self.shared.exchange_b.wallets();
        e.orders
            .iter()
            .filter_map(|o| {
                let pair = listing.pair_by_symbol(&o.symbol)?;
                let mut v = exchange_b::render::order_with_status(pair, o);
                v["user"] = serde_json::json!(wallets.address_of(o.account).map(|a| a.to_string()));
                Some(v)
            })
            .collect()
    }
    pub fn price(&self, symbol: &str) -> Result<Decimal, ApiError> {
        let now = self.now_ms();
        Ok(self.engine().price(symbol, now)?)
    }
    /// Arms a fault on the WebSocket connections open now; a silence also holds for the
    /// connections opened while it lasts (the service stalled, not one connection).
    pub fn stream_fault(&self, fault: StreamFault) {
        if let StreamFaultKind::Silence { ms } = fault.kind {
            let until = tokio::time::Instant::now() + Duration::from_millis(ms);
            lock(&self.shared.silent_until).push((until, fault.service));
        }
        let _ = self.shared.stream_faults.send(fault);
    }
    /// Until when a new connection of `service` stays silent, if a silence holds.
    pub(crate) fn silent_until(&self, service: StreamService) -> Option<tokio::time::Instant> {
        let now = tokio::time::Instant::now();
        let mut windows = lock(&self.shared.silent_until);
        windows.retain(|(until, _)| *until > now);
        windows.iter().filter(|(_, s)| s.is_none_or(|s| s == service)).map(|(u, _)| *u).max()
    }
    pub(crate) fn stream_faults(&self) -> broadcast::Receiver<StreamFault> {
        self.shared.stream_faults.subscribe()
    }
    pub(crate) fn stream_config(&self) -> &StreamConfig {
        &self.shared.streams
    }
    /// The request-weight meter.
    pub(crate) fn limits(&self) -> MutexGuard<'_, Limits> {
        lock(&self.shared.limits)
    }
    pub(crate) fn faults(&self) -> Vec<Fault> {
        lock(&self.shared.faults).clone()
    }

    pub(crate) fn take_fault(&self, method: &Method, path: &str) -> Option<Fault> {
        let mut faults = lock(&self.shared.faults);
        let i = faults.iter().position(|f| f.count > 0 && f.matches(method, path))?;
        if faults[i].skip > 0 {
            faults[i].skip -= 1;
            return None;
        }
        faults[i].count -= 1;
        let f = faults[i].clone();
        if faults[i].count == 0 {
            faults.remove(i);
        }
        Some(f)
    }

    pub(crate) fn record(&self, r: RequestRecord) {
        let mut log = lock(&self.shared.log);
        if self.shared.log_capacity.is_some_and(|keep| log.len() >= keep) {
            log.pop_front();
        }
        log.push_back(r);
    }
}

/// A simulator serving on a socket.
pub struct RunningSim {
    pub addr: SocketAddr,
    pub sim: Sim,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl RunningSim {
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for RunningSim {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Binds `addr` and serves the simulator in a background task.
pub async fn serve(config: SimConfig, addr: &str) -> io::Result<RunningSim> {
    let sim = Sim::new(config);
    serve_sim(sim, addr).await
}

/// Serves an existing simulator handle.
pub async fn serve_sim(sim: Sim, addr: &str) -> io::Result<RunningSim> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let app = router(sim.clone());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(
            KillableListener { inner: listener },
            app.into_make_service_with_connect_info::<Conn>(),
        )
        .with_graceful_shutdown(async {
            let _ = rx.await;
        })
        .await;
    });
    Ok(RunningSim { addr: local, sim, shutdown: Some(tx), task })
}

/// The simulator's HTTP app: the admin API under `/sim/`, exchange B's `POST /info`,
/// `POST /exchange` and WebSocket `GET /ws`, exchange A's REST paths elsewhere.
pub fn router(sim: Sim) -> Router {
    admin::routes()
        .route(exchange_b::rest::INFO_PATH, post(exchange_b::rest::info))
        .route(exchange_b::rest::EXCHANGE_PATH, post(exchange_b::rest::exchange))
        .route(exchange_b::ws::WS_PATH, get(exchange_b::ws::upgrade))
        .fallback(exchange_a::rest::api)
        .with_state(sim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_request_log_keeps_the_newest_requests() {
        let mut config = SimConfig::new(1, "key", "secret");
        config.request_log = Some(3);
        let sim = Sim::new(config);
        for i in 0..5 {
            sim.record(RequestRecord {
                time: i,
                method: "GET".into(),
                path: format!("/p{i}"),
                client_order_id: None,
                kind: None,
                status: 200,
                executed: true,
                fault: None,
            });
        }
        let paths: Vec<String> = sim.requests().into_iter().map(|r| r.path).collect();
        assert_eq!(paths, ["/p2", "/p3", "/p4"]);
    }
}
