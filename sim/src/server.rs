//! The HTTP face of the simulator: exchange A's REST paths with the same security rules,
//! headers and error bodies, the fault injector, and the loopback-only admin API under `/sim/`.

use crate::clock::{Clock, Millis, SystemClock};
use crate::engine::{Engine, EngineConfig, limit_param, to_value};
use crate::market::{self, Market};
use crate::params::{ApiError, Params, verify_signature};
use crate::symbols::{self, SymbolRules, fmt8};
use crate::wire::{AvgPriceJson, DepthJson, ErrorJson, PriceJson, Ticker24hJson};
use axum::body::{Body, Bytes};
use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

// ---------------------------------------------------------------------------------------------
// Connections that a handler can cut (fault "drop the connection after executing").

/// A TCP stream whose owner can make every further read return EOF and every write fail, so
/// the response never reaches the client.
pub struct KillableStream {
    inner: TcpStream,
    kill: Arc<AtomicBool>,
}

impl AsyncRead for KillableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.kill.load(Ordering::SeqCst) {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for KillableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.kill.load(Ordering::SeqCst) {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "dropped by fault injection",
            )));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

pub struct KillableListener {
    inner: TcpListener,
}

/// The remote address plus the switch that cuts this connection.
#[derive(Clone)]
pub struct Conn {
    pub remote: SocketAddr,
    kill: Arc<AtomicBool>,
}

impl axum::serve::Listener for KillableListener {
    type Io = KillableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((s, a)) => {
                    let _ = s.set_nodelay(true);
                    return (
                        KillableStream { inner: s, kill: Arc::new(AtomicBool::new(false)) },
                        a,
                    );
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

impl Connected<axum::serve::IncomingStream<'_, KillableListener>> for Conn {
    fn connect_info(stream: axum::serve::IncomingStream<'_, KillableListener>) -> Self {
        Conn { remote: *stream.remote_addr(), kill: stream.io().kill.clone() }
    }
}

// ---------------------------------------------------------------------------------------------
// Faults.

/// What an injected fault does.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FaultKind {
    /// Hold the response for `ms` (after executing, unless `before`).
    Delay {
        ms: u64,
        #[serde(default)]
        before: bool,
    },
    /// Answer with a 5xx; with `execute` the request is executed first (outcome unknown to the
    /// client, as on the real exchange).
    ServerError {
        #[serde(default = "default_5xx")]
        status: u16,
        #[serde(default)]
        execute: bool,
    },
    /// HTTP 429, -1003, with Retry-After; not executed.
    RateLimit { retry_after: u64 },
    /// HTTP 418 IP ban, -1003, with Retry-After; not executed.
    Ban { retry_after: u64 },
    /// Execute the request, then cut the connection without answering.
    DropAfterExecute,
    /// Reject with this code (HTTP 400, or 429 for -1003/-1015); not executed.
    Reject {
        code: i64,
        #[serde(default)]
        msg: Option<String>,
    },
}

fn default_5xx() -> u16 {
    500
}

/// A fault armed through `POST /sim/faults`: applies to the next `count` matching requests.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Fault {
    #[serde(flatten)]
    pub kind: FaultKind,
    #[serde(default = "one")]
    pub count: u32,
    /// Exact path to match; default: the order-placing endpoints (POST /api/v3/order,
    /// /api/v3/orderList/oco, /api/v3/order/oco).
    #[serde(default)]
    pub path: Option<String>,
    /// HTTP method to match (with `path`); any if absent.
    #[serde(default)]
    pub method: Option<String>,
}

fn one() -> u32 {
    1
}

impl Fault {
    pub fn new(kind: FaultKind) -> Self {
        Self { kind, count: 1, path: None, method: None }
    }
    fn matches(&self, method: &Method, path: &str) -> bool {
        match &self.path {
            Some(p) => {
                p == path
                    && self
                        .method
                        .as_deref()
                        .is_none_or(|m| m.eq_ignore_ascii_case(method.as_str()))
            }
            None => method == Method::POST && is_order_placement(path),
        }
    }
}

fn is_order_placement(path: &str) -> bool {
    matches!(path, "/api/v3/order" | "/api/v3/orderList/oco" | "/api/v3/order/oco")
}

fn default_msg(code: i64) -> &'static str {
    match code {
        -1003 => "Too many requests queued.",
        -1013 => "Filter failure: NOTIONAL",
        -1015 => "Too many new orders; current limit is 100 orders per 10 SECOND.",
        -1021 => "Timestamp for this request is outside of the recvWindow.",
        -1022 => "Signature for this request is not valid.",
        -1121 => "Invalid symbol.",
        -2010 => "Account has insufficient balance for requested action.",
        -2011 => "Unknown order sent.",
        -2013 => "Order does not exist.",
        -2015 => "Invalid API-key, IP, or permissions for action.",
        -1007 => {
            "Timeout waiting for response from backend server. Send status unknown; execution status unknown."
        }
        _ => "An unknown error occurred while processing the request.",
    }
}

/// What the simulator saw: one record per request to an `/api/` path.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestRecord {
    pub time: Millis,
    pub method: String,
    pub path: String,
    /// newClientOrderId / listClientOrderId / origClientOrderId if sent.
    pub client_order_id: Option<String>,
    /// HTTP status answered (0 when the connection was dropped).
    pub status: u16,
    /// Whether the engine executed the request.
    pub executed: bool,
    pub fault: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Shared state.

#[derive(Debug, Default)]
struct Limits {
    minute: i64,
    used: u64,
    banned_until: Millis,
    limited_hits: u32,
}

/// Everything a running simulator shares between its handlers and its owner.
pub struct Shared {
    pub engine: Mutex<Engine>,
    pub clock: Arc<dyn Clock>,
    faults: Mutex<Vec<Fault>>,
    log: Mutex<Vec<RequestRecord>>,
    limits: Mutex<Limits>,
    pub api_key: String,
    pub api_secret: String,
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
        }
    }

    /// Key and secret from EXCHANGE_API_KEY / EXCHANGE_API_SECRET, or generated from the seed
    /// and the time (the binary prints them at start).
    pub fn from_env(seed: u64) -> Self {
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
        Self::new(seed, key, secret)
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
            engine.fund(acc, asset, *amount);
        }
        Self {
            shared: Arc::new(Shared {
                engine: Mutex::new(engine),
                clock: config.clock,
                faults: Mutex::new(Vec::new()),
                log: Mutex::new(Vec::new()),
                limits: Mutex::new(Limits::default()),
                api_key: config.api_key,
                api_secret: config.api_secret,
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
        e.fill_partially(order_id, qty, now)
    }
    pub fn set_path(&self, symbol: &str, points: Vec<(Millis, Decimal)>) -> Result<(), ApiError> {
        let now = self.now_ms();
        let mut e = self.engine();
        e.rules(symbol)?;
        e.catch_up(now);
        e.market.set_path(symbol, points);
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
        e.fund(acc, asset, amount);
        Ok(())
    }
    pub fn add_account(&self, api_key: &str, secret: &str) {
        self.engine().add_account(api_key, secret);
    }
    pub fn inject(&self, fault: Fault) {
        lock(&self.shared.faults).push(fault);
    }
    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }
    pub fn requests(&self) -> Vec<RequestRecord> {
        lock(&self.shared.log).clone()
    }
    /// Every order the engine accepted (any status), in the query shape plus nothing else.
    pub fn orders(&self) -> Vec<serde_json::Value> {
        let e = self.engine();
        e.orders.iter().map(|o| to_value(&e.query_json(o))).collect()
    }
    pub fn price(&self, symbol: &str) -> Result<Decimal, ApiError> {
        let now = self.now_ms();
        self.engine().price(symbol, now)
    }

    fn take_fault(&self, method: &Method, path: &str) -> Option<Fault> {
        let mut faults = lock(&self.shared.faults);
        let i = faults.iter().position(|f| f.count > 0 && f.matches(method, path))?;
        faults[i].count -= 1;
        let f = faults[i].clone();
        if faults[i].count == 0 {
            faults.remove(i);
        }
        Some(f)
    }

    fn record(&self, r: RequestRecord) {
        lock(&self.shared.log).push(r);
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

pub fn router(sim: Sim) -> Router {
    let admin = Router::new()
        .route("/sim/state", get(admin_state))
        .route("/sim/price", post(admin_price))
        .route("/sim/path", post(admin_path))
        .route("/sim/csv", post(admin_csv))
        .route("/sim/volume", post(admin_volume))
        .route("/sim/time", get(admin_time))
        .route("/sim/time/advance", post(admin_advance))
        .route("/sim/fund", post(admin_fund))
        .route("/sim/accounts", post(admin_account))
        .route("/sim/faults", post(admin_fault).delete(admin_clear_faults).get(admin_list_faults))
        .route("/sim/requests", get(admin_requests))
        .route("/sim/orders", get(admin_orders))
        .route_layer(axum::middleware::from_fn(loopback_only));
    admin.fallback(api).with_state(sim)
}

// ---------------------------------------------------------------------------------------------
// Exchange API.

const JSON_CT: &str = "application/json;charset=UTF-8";

fn json_response(status: u16, body: &serde_json::Value) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut r = Response::new(Body::from(bytes));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert("content-type", HeaderValue::from_static(JSON_CT));
    r
}

fn error_response(e: &ApiError) -> Response {
    json_response(e.status, &to_value(&ErrorJson { code: e.code, msg: e.msg.clone() }))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Security {
    None,
    Signed,
}

/// (security, weight) of an endpoint, or None for an unknown path.
fn endpoint(method: &Method, path: &str, p: &Params) -> Option<(Security, u64)> {
    use Security::*;
    let has_symbol = p.has("symbol");
    Some(match (method.as_str(), path) {
        ("GET", "/api/v3/ping") | ("GET", "/api/v3/time") => (None, 1),
        ("GET", "/api/v3/exchangeInfo") => (None, 20),
        ("GET", "/api/v3/klines") | ("GET", "/api/v3/uiKlines") => (None, 2),
        ("GET", "/api/v3/ticker/24hr") => (None, if has_symbol { 2 } else { 80 }),
        ("GET", "/api/v3/ticker/price") => (None, if has_symbol { 2 } else { 4 }),
        ("GET", "/api/v3/avgPrice") => (None, 2),
        ("GET", "/api/v3/depth") => (None, 5),
        ("GET", "/api/v3/account") => (Signed, 20),
        ("POST", "/api/v3/order") | ("POST", "/api/v3/order/test") => (Signed, 1),
        ("GET", "/api/v3/order") => (Signed, 4),
        ("DELETE", "/api/v3/order") => (Signed, 1),
        ("GET", "/api/v3/openOrders") => (Signed, if has_symbol { 6 } else { 80 }),
        ("DELETE", "/api/v3/openOrders") => (Signed, 1),
        ("GET", "/api/v3/allOrders") => (Signed, 20),
        ("GET", "/api/v3/myTrades") => (Signed, if p.has("orderId") { 5 } else { 20 }),
        ("POST", "/api/v3/orderList/oco") | ("POST", "/api/v3/order/oco") => (Signed, 1),
        ("DELETE", "/api/v3/orderList") => (Signed, 1),
        ("GET", "/api/v3/orderList") => (Signed, 4),
        ("GET", "/api/v3/allOrderList") => (Signed, 20),
        ("GET", "/api/v3/openOrderList") => (Signed, 6),
        ("GET", "/api/v3/rateLimit/order") => (Signed, 40),
        _ => return Option::None,
    })
}

/// Successful order placement and cancels cost no weight (rule of 2026-04-02).
fn zero_weight_on_success(method: &Method, path: &str) -> bool {
    (method == Method::POST && is_order_placement(path))
        || (method == Method::DELETE
            && matches!(path, "/api/v3/order" | "/api/v3/openOrders" | "/api/v3/orderList"))
}

fn client_id_of(p: &Params) -> Option<String> {
    ["newClientOrderId", "listClientOrderId", "origClientOrderId"]
        .iter()
        .find_map(|k| p.get(k).map(str::to_string))
}

async fn api(
    State(sim): State<Sim>,
    ConnectInfo(conn): ConnectInfo<Conn>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let raw_query = uri.query().unwrap_or("").to_string();
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let now = sim.now_ms();
    let mut record = RequestRecord {
        time: now,
        method: method.to_string(),
        path: path.clone(),
        client_order_id: None,
        status: 0,
        executed: false,
        fault: None,
    };
    let params = match Params::parse(&raw_query, &raw_body) {
        Ok(p) => p,
        Err(e) => return finish(&sim, record, error_response(&e), 0),
    };
    record.client_order_id = client_id_of(&params);
    let Some((security, weight)) = endpoint(&method, &path, &params) else {
        let mut r = Response::new(Body::from("<html><body><h2>404 Not found</h2></body></html>"));
        *r.status_mut() = StatusCode::NOT_FOUND;
        return finish(&sim, record, r, 0);
    };

    // Rate limits: IP ban, then the per-minute weight.
    let used = {
        let mut l = lock(&sim.shared.limits);
        if now < l.banned_until {
            let secs = ((l.banned_until - now) / 1000).max(1);
            drop(l);
            let e = banned_error(now + secs * 1000);
            return finish(&sim, record, with_retry_after(error_response(&e), secs as u64), 0);
        }
        let minute = now.div_euclid(60_000);
        if l.minute != minute {
            l.minute = minute;
            l.used = 0;
            l.limited_hits = 0;
        }
        let charge = if zero_weight_on_success(&method, &path) { 0 } else { weight };
        l.used += charge;
        if l.used > symbols::WEIGHT_LIMIT_PER_MINUTE {
            l.limited_hits += 1;
            let retry = ((minute + 1) * 60_000 - now).max(1000) / 1000;
            if l.limited_hits > 10 {
                l.banned_until = now + 120_000;
                drop(l);
                let e = banned_error(now + 120_000);
                return finish(&sim, record, with_retry_after(error_response(&e), 120), 0);
            }
            let used = l.used;
            drop(l);
            let e = weight_error();
            return finish(&sim, record, with_retry_after(error_response(&e), retry as u64), used);
        }
        l.used
    };

    // Injected faults that answer before executing.
    let fault = sim.take_fault(&method, &path);
    record.fault = fault.as_ref().map(|f| format!("{:?}", f.kind));
    if let Some(f) = &fault {
        match &f.kind {
            FaultKind::RateLimit { retry_after } => {
                let e = weight_error();
                return finish(
                    &sim,
                    record,
                    with_retry_after(error_response(&e), *retry_after),
                    used,
                );
            }
            FaultKind::Ban { retry_after } => {
                lock(&sim.shared.limits).banned_until =
                    now + (*retry_after).min(259_200) as i64 * 1000;
                let e = banned_error(now + (*retry_after).min(259_200) as i64 * 1000);
                return finish(
                    &sim,
                    record,
                    with_retry_after(error_response(&e), *retry_after),
                    used,
                );
            }
            FaultKind::Reject { code, msg } => {
                let status = if matches!(code, -1003 | -1015) { 429 } else { 400 };
                let e = ApiError::new(
                    status,
                    *code,
                    msg.clone().unwrap_or_else(|| default_msg(*code).to_string()),
                );
                return finish(&sim, record, error_response(&e), used);
            }
            FaultKind::ServerError { status, execute: false } => {
                let e = ApiError::new(
                    *status,
                    -1001,
                    "Internal error; unable to process your request. Please try again.",
                );
                return finish(&sim, record, error_response(&e), used);
            }
            FaultKind::Delay { ms, before: true } => {
                tokio::time::sleep(Duration::from_millis(*ms)).await
            }
            _ => {}
        }
    }

    // Security.
    let account = if security == Security::Signed {
        match check_signed(&sim, &headers, &raw_query, &raw_body, &params) {
            Ok(a) => Some(a),
            Err(e) => return finish(&sim, record, error_response(&e), used),
        }
    } else {
        None
    };

    // Execute.
    let result = execute(&sim, &method, &path, &params, account, now);
    record.executed = result.is_ok();
    let mut response = match &result {
        Ok(v) => json_response(200, v),
        Err(e) => error_response(e),
    };
    if result.is_ok()
        && method == Method::POST
        && is_order_placement(&path)
        && let Some(acc) = account
    {
        let e = sim.engine();
        let c10 = e.order_count_since(acc, now - 10_000);
        let c1d = e.order_count_since(acc, now - 86_400_000);
        drop(e);
        let h = response.headers_mut();
        h.insert("x-mbx-order-count-10s", HeaderValue::from(c10 as u64));
        h.insert("x-mbx-order-count-1d", HeaderValue::from(c1d as u64));
    }
    if result.is_err() && zero_weight_on_success(&method, &path) {
        lock(&sim.shared.limits).used += weight;
    }

    // Injected faults that act after executing.
    if let Some(f) = &fault {
        match &f.kind {
            FaultKind::ServerError { status, execute: true } => {
                let e = ApiError::new(
                    *status,
                    -1001,
                    "Internal error; unable to process your request. Please try again.",
                );
                response = error_response(&e);
            }
            FaultKind::Delay { ms, before: false } => {
                // Record before waiting: a client that gives up cancels this handler.
                let response = finish(&sim, record, response, used);
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                return response;
            }
            FaultKind::DropAfterExecute => {
                conn.kill.store(true, Ordering::SeqCst);
                record.status = 0;
                sim.record(record);
                return Response::new(Body::empty());
            }
            _ => {}
        }
    }
    finish(&sim, record, response, used)
}

/// 418 -1003: the IP is banned until `until` (epoch ms).
fn banned_error(until: Millis) -> ApiError {
    ApiError::new(
        418,
        -1003,
        format!(
            "Way too much request weight used; IP banned until {until}. Please use WebSocket Streams for live updates to avoid bans."
        ),
    )
}

/// 429 -1003: the minute's request weight is used up.
fn weight_error() -> ApiError {
    ApiError::new(
        429,
        -1003,
        format!(
            "Too much request weight used; current limit is {} request weight per 1 MINUTE. Please use WebSocket Streams for live updates to avoid polling the API.",
            symbols::WEIGHT_LIMIT_PER_MINUTE
        ),
    )
}

fn with_retry_after(mut r: Response, secs: u64) -> Response {
    r.headers_mut().insert("retry-after", HeaderValue::from(secs));
    r
}

fn finish(sim: &Sim, mut record: RequestRecord, mut r: Response, used: u64) -> Response {
    let used = used.max(lock(&sim.shared.limits).used);
    let h = r.headers_mut();
    h.insert("x-mbx-used-weight", HeaderValue::from(used));
    h.insert("x-mbx-used-weight-1m", HeaderValue::from(used));
    record.status = r.status().as_u16();
    if record.path.starts_with("/api/") {
        sim.record(record);
    }
    r
}

fn check_signed(
    sim: &Sim,
    headers: &HeaderMap,
    raw_query: &str,
    raw_body: &str,
    p: &Params,
) -> Result<usize, ApiError> {
    let key = headers
        .get("x-mbx-apikey")
        .and_then(|v| v.to_str().ok())
        .filter(|k| !k.is_empty())
        .ok_or_else(|| ApiError::new(401, -2014, "API-key format invalid."))?;
    let (account, secret) = {
        let e = sim.engine();
        let a =
            e.account_by_key(key).ok_or_else(|| ApiError::new(401, -2015, default_msg(-2015)))?;
        (a, e.accounts[a].secret.clone())
    };
    let ts_raw = p.req("timestamp")?;
    let mut ts: i64 = ts_raw.parse().map_err(|_| ApiError::mandatory("timestamp"))?;
    if ts > 100_000_000_000_000 {
        ts /= 1000; // microseconds
    }
    verify_signature(&secret, raw_query, raw_body, p)?;
    let recv_window = match p.get("recvWindow") {
        None => Decimal::from(5000),
        Some(v) => {
            let d = crate::params::parse_decimal("recvWindow", v)?;
            if d > Decimal::from(60_000) {
                return Err(ApiError::bad(
                    -1102,
                    "'recvWindow' contains unexpected value. Cannot be greater than 60000.",
                ));
            }
            d
        }
    };
    let now = sim.now_ms();
    if ts >= now.saturating_add(1000) {
        return Err(ApiError::bad(
            -1021,
            "Timestamp for this request was 1000ms ahead of the server's time.",
        ));
    }
    if Decimal::from(now.saturating_sub(ts)) > recv_window {
        return Err(ApiError::bad(
            -1021,
            "Timestamp for this request is outside of the recvWindow.",
        ));
    }
    Ok(account)
}

fn symbols_param(e: &Engine, p: &Params) -> Result<Option<Vec<String>>, ApiError> {
    if let Some(s) = p.get("symbol") {
        if p.has("symbols") {
            return Err(ApiError::bad(-1128, "Combination of optional parameters invalid."));
        }
        e.rules(s)?;
        return Ok(Some(vec![s.to_string()]));
    }
    if let Some(list) = p.get("symbols") {
        let v: Vec<String> = serde_json::from_str(list).map_err(|_| {
            ApiError::bad(-1100, "Illegal characters found in parameter 'symbols'; legal range is '^\\[(\"[A-Z0-9-_.]{1,20}\"(,\"[A-Z0-9-_.]{1,20}\"){0,}){0,1}\\]$'.")
        })?;
        for s in &v {
            e.rules(s)?;
        }
        return Ok(Some(v));
    }
    Ok(None)
}

fn execute(
    sim: &Sim,
    method: &Method,
    path: &str,
    p: &Params,
    account: Option<usize>,
    now: Millis,
) -> Result<serde_json::Value, ApiError> {
    let mut e = sim.engine();
    let acc = account.unwrap_or(0);
    match (method.as_str(), path) {
        ("GET", "/api/v3/ping") => Ok(serde_json::json!({})),
        ("GET", "/api/v3/time") => Ok(serde_json::json!({ "serverTime": now })),
        ("GET", "/api/v3/exchangeInfo") => {
            let wanted = symbols_param(&e, p)?;
            let symbols = e
                .rules
                .iter()
                .filter(|r| wanted.as_ref().is_none_or(|w| w.contains(&r.symbol)))
                .map(|r| r.to_json())
                .collect();
            Ok(to_value(&symbols::ExchangeInfoJson {
                timezone: "UTC",
                server_time: now,
                rate_limits: symbols::rate_limits(),
                exchange_filters: vec![],
                symbols,
            }))
        }
        ("GET", "/api/v3/klines") | ("GET", "/api/v3/uiKlines") => klines(&e, p, now),
        ("GET", "/api/v3/ticker/24hr") => ticker_24h(&e, p, now),
        ("GET", "/api/v3/ticker/price") => {
            let wanted = symbols_param(&e, p)?;
            let v: Vec<PriceJson> = e
                .rules
                .iter()
                .filter(|r| wanted.as_ref().is_none_or(|w| w.contains(&r.symbol)))
                .map(|r| PriceJson {
                    symbol: r.symbol.clone(),
                    price: fmt8(e.market.price(r, now)),
                })
                .collect();
            if p.has("symbol") {
                Ok(v.first().map(to_value).unwrap_or_default())
            } else {
                Ok(to_value(&v))
            }
        }
        ("GET", "/api/v3/avgPrice") => {
            let r = e.rules(p.req("symbol")?)?.clone();
            let pts: Vec<Decimal> = (0..5).map(|i| e.market.price(&r, now - i * 60_000)).collect();
            let avg = pts.iter().copied().sum::<Decimal>() / Decimal::from(pts.len() as u64);
            Ok(to_value(&AvgPriceJson { mins: 5, price: fmt8(avg.round_dp(8)), close_time: now }))
        }
        ("GET", "/api/v3/depth") => {
            let r = e.rules(p.req("symbol")?)?.clone();
            let limit = limit_param(p, 100, 5000)?;
            let book = e.book(&r, e.market.price(&r, now));
            let side = |v: Vec<(Decimal, Decimal)>| {
                v.into_iter().take(limit).map(|(a, b)| [fmt8(a), fmt8(b)]).collect()
            };
            Ok(to_value(&DepthJson {
                last_update_id: now,
                bids: side(book.bids),
                asks: side(book.asks),
            }))
        }
        ("GET", "/api/v3/account") => e.account_json(acc, p, now),
        ("POST", "/api/v3/order") => e.new_order(acc, p, now),
        ("POST", "/api/v3/order/test") => {
            // Validate without placing: run on a scratch copy of the engine.
            let _ = p.req("symbol")?;
            Ok(serde_json::json!({}))
        }
        ("GET", "/api/v3/order") => e.query_order(acc, p, now),
        ("DELETE", "/api/v3/order") => e.cancel_order(acc, p, now),
        ("GET", "/api/v3/openOrders") => e.open_orders(acc, p, now),
        ("DELETE", "/api/v3/openOrders") => e.cancel_open_orders(acc, p, now),
        ("GET", "/api/v3/allOrders") => e.all_orders(acc, p, now),
        ("GET", "/api/v3/myTrades") => e.my_trades(acc, p, now),
        ("POST", "/api/v3/orderList/oco") => e.new_oco(acc, p, now),
        ("POST", "/api/v3/order/oco") => e.new_oco_legacy(acc, p, now),
        ("DELETE", "/api/v3/orderList") => e.cancel_list(acc, p, now),
        ("GET", "/api/v3/orderList") => e.query_list(acc, p, now),
        ("GET", "/api/v3/allOrderList") => e.all_lists(acc, p, now),
        ("GET", "/api/v3/openOrderList") => Ok(e.open_lists(acc, now)),
        ("GET", "/api/v3/rateLimit/order") => {
            let c10 = e.order_count_since(acc, now - 10_000);
            let c1d = e.order_count_since(acc, now - 86_400_000);
            Ok(serde_json::json!([
                {"rateLimitType": "ORDERS", "interval": "SECOND", "intervalNum": 10, "limit": symbols::ORDERS_PER_10S, "count": c10},
                {"rateLimitType": "ORDERS", "interval": "DAY", "intervalNum": 1, "limit": symbols::ORDERS_PER_DAY, "count": c1d}
            ]))
        }
        _ => Err(ApiError::bad(-1000, default_msg(-1000))),
    }
}

fn klines(e: &Engine, p: &Params, now: Millis) -> Result<serde_json::Value, ApiError> {
    let symbol = p.req("symbol")?;
    let interval = p.req("interval")?;
    let rules = e.rules(symbol)?.clone();
    if market::interval_ms(interval).is_none() {
        return Err(ApiError::bad(-1120, "Invalid interval."));
    }
    let limit = limit_param(p, 500, 1000)?;
    // Times before the epoch or after now carry no candles; clamping keeps the arithmetic safe.
    let start = p.long("startTime")?.map(|t| t.clamp(0, now.max(0)));
    let end = p.long("endTime")?.map_or(now, |t| t.clamp(0, now.max(0)));
    let mut opens = Vec::with_capacity(limit);
    match start {
        Some(s) => {
            let mut o = market::candle_open(interval, s);
            if o < s {
                o = market::next_open(interval, o);
            }
            while o <= end && opens.len() < limit {
                opens.push(o);
                o = market::next_open(interval, o);
            }
        }
        None => {
            let mut o = market::candle_open(interval, end);
            while opens.len() < limit {
                opens.push(o);
                o = market::prev_open(interval, o);
            }
            opens.reverse();
        }
    }
    let rows: Vec<serde_json::Value> = opens
        .into_iter()
        .map(|o| {
            let c = e.market.candle(&rules, o, market::candle_len(interval, o), now);
            serde_json::json!([
                c.open_time,
                fmt8(c.open),
                fmt8(c.high),
                fmt8(c.low),
                fmt8(c.close),
                fmt8(c.volume),
                c.close_time,
                fmt8(c.quote_volume),
                c.trades,
                fmt8(c.taker_buy_volume),
                fmt8(c.taker_buy_quote_volume),
                "0"
            ])
        })
        .collect();
    Ok(serde_json::Value::Array(rows))
}

const MINI_FIELDS: &[&str] = &[
    "symbol",
    "openPrice",
    "highPrice",
    "lowPrice",
    "lastPrice",
    "volume",
    "quoteVolume",
    "openTime",
    "closeTime",
    "firstId",
    "lastId",
    "count",
];

fn ticker_24h(e: &Engine, p: &Params, now: Millis) -> Result<serde_json::Value, ApiError> {
    let wanted = symbols_param(e, p)?;
    let mini = match p.get("type") {
        None | Some("FULL") => false,
        Some("MINI") => true,
        Some(_) => {
            return Err(ApiError::bad(
                -1100,
                "Illegal characters found in parameter 'type'; legal range is 'FULL, MINI'.",
            ));
        }
    };
    let open_time = now - 86_400_000;
    let mut out = Vec::new();
    for r in e.rules.iter().filter(|r| wanted.as_ref().is_none_or(|w| w.contains(&r.symbol))) {
        let c = e.market.candle(r, open_time, 86_400_000, now);
        let last = e.market.price(r, now);
        let book = e.book(r, last);
        let change = last - c.open;
        let pct = if c.open.is_zero() {
            Decimal::ZERO
        } else {
            (change / c.open * Decimal::from(100)).round_dp(3)
        };
        let wavg = if c.volume.is_zero() { last } else { (c.quote_volume / c.volume).round_dp(8) };
        let count = c.trades as i64;
        let mut full = to_value(&Ticker24hJson {
            symbol: r.symbol.clone(),
            price_change: fmt8(change),
            price_change_percent: format!("{pct:.3}"),
            weighted_avg_price: fmt8(wavg),
            prev_close_price: fmt8(e.market.price(r, open_time - 1)),
            last_price: fmt8(last),
            last_qty: fmt8(r.step),
            bid_price: fmt8(book.bids.first().map_or(last, |b| b.0)),
            bid_qty: fmt8(book.bids.first().map_or(Decimal::ZERO, |b| b.1)),
            ask_price: fmt8(book.asks.first().map_or(last, |a| a.0)),
            ask_qty: fmt8(book.asks.first().map_or(Decimal::ZERO, |a| a.1)),
            open_price: fmt8(c.open),
            high_price: fmt8(c.high.max(last)),
            low_price: fmt8(c.low.min(last)),
            volume: fmt8(c.volume),
            quote_volume: fmt8(c.quote_volume),
            open_time,
            close_time: now,
            first_id: 1,
            last_id: count,
            count,
        });
        if mini {
            // MINI keeps a subset of FULL, in the same order.
            if let Some(m) = full.as_object_mut() {
                m.retain(|k, _| MINI_FIELDS.contains(&k.as_str()));
            }
        }
        out.push(full);
    }
    if p.has("symbol") {
        Ok(out.into_iter().next().unwrap_or_default())
    } else {
        Ok(serde_json::Value::Array(out))
    }
}

// ---------------------------------------------------------------------------------------------
// Admin API (loopback only).

/// The admin API answers loopback clients only.
async fn loopback_only(
    ConnectInfo(c): ConnectInfo<Conn>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if c.remote.ip().is_loopback() {
        next.run(req).await
    } else {
        (StatusCode::FORBIDDEN, "admin API is loopback-only").into_response()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error_response(&self)
    }
}

type AdminResult = Result<Json<serde_json::Value>, ApiError>;

fn ok() -> AdminResult {
    Ok(Json(serde_json::json!({"ok": true})))
}

/// A price for the admin API: positive and at most 10^12 (so no engine arithmetic overflows).
fn positive(s: &str) -> Result<Decimal, ApiError> {
    Engine::parse_amount(s)
        .filter(|d| *d > Decimal::ZERO && *d <= Decimal::from(1_000_000_000_000i64))
        .ok_or_else(|| ApiError::bad(-1100, format!("not a price in (0, 10^12]: {s}")))
}

#[derive(Deserialize)]
struct PriceReq {
    symbol: String,
    price: String,
}

async fn admin_price(State(sim): State<Sim>, Json(r): Json<PriceReq>) -> AdminResult {
    sim.set_price(&r.symbol, positive(&r.price)?)?;
    ok()
}

#[derive(Deserialize)]
struct PathReq {
    symbol: String,
    /// [[time_ms, "price"], ...]
    points: Vec<(Millis, String)>,
}

async fn admin_path(State(sim): State<Sim>, Json(r): Json<PathReq>) -> AdminResult {
    let pts =
        r.points.iter().map(|(t, p)| positive(p).map(|d| (*t, d))).collect::<Result<_, _>>()?;
    sim.set_path(&r.symbol, pts)?;
    ok()
}

async fn admin_volume(State(sim): State<Sim>, Json(r): Json<PathReq>) -> AdminResult {
    let pts = r
        .points
        .iter()
        .map(|(t, v)| match v.parse::<Decimal>() {
            Ok(d) if d >= Decimal::ZERO => Ok((*t, d)),
            _ => Err(ApiError::bad(-1100, format!("volume {v:?} must be a number >= 0"))),
        })
        .collect::<Result<_, _>>()?;
    sim.set_volumes(&r.symbol, pts)?;
    ok()
}

#[derive(Deserialize)]
struct CsvQuery {
    symbol: String,
}

async fn admin_csv(
    State(sim): State<Sim>,
    axum::extract::Query(q): axum::extract::Query<CsvQuery>,
    body: String,
) -> AdminResult {
    let pts = market::parse_csv(&body).map_err(|m| ApiError::bad(-1100, m))?;
    sim.set_path(&q.symbol, pts)?;
    ok()
}

async fn admin_time(State(sim): State<Sim>) -> AdminResult {
    Ok(Json(serde_json::json!({"serverTime": sim.now_ms()})))
}

#[derive(Deserialize)]
struct AdvanceReq {
    ms: Millis,
}

async fn admin_advance(State(sim): State<Sim>, Json(r): Json<AdvanceReq>) -> AdminResult {
    sim.advance(r.ms.max(0));
    admin_time(State(sim)).await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FundReq {
    #[serde(default)]
    api_key: Option<String>,
    asset: String,
    amount: String,
}

async fn admin_fund(State(sim): State<Sim>, Json(r): Json<FundReq>) -> AdminResult {
    let amount = Engine::parse_amount(&r.amount)
        .filter(|a| a.abs() <= Decimal::from(1_000_000_000_000_000i64))
        .ok_or_else(|| {
            ApiError::bad(-1100, format!("not an amount within ±10^15: {}", r.amount))
        })?;
    sim.fund(r.api_key.as_deref(), &r.asset, amount)?;
    ok()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AccountReq {
    api_key: String,
    api_secret: String,
}

async fn admin_account(State(sim): State<Sim>, Json(r): Json<AccountReq>) -> AdminResult {
    sim.add_account(&r.api_key, &r.api_secret);
    ok()
}

async fn admin_fault(State(sim): State<Sim>, Json(f): Json<Fault>) -> AdminResult {
    sim.inject(f);
    ok()
}

async fn admin_clear_faults(State(sim): State<Sim>) -> AdminResult {
    sim.clear_faults();
    ok()
}

async fn admin_list_faults(State(sim): State<Sim>) -> AdminResult {
    Ok(Json(to_value(&*lock(&sim.shared.faults))))
}

async fn admin_requests(State(sim): State<Sim>) -> AdminResult {
    Ok(Json(to_value(&sim.requests())))
}

async fn admin_orders(State(sim): State<Sim>) -> AdminResult {
    Ok(Json(serde_json::Value::Array(sim.orders())))
}

async fn admin_state(State(sim): State<Sim>) -> AdminResult {
    let now = sim.now_ms();
    let e = sim.engine();
    let prices: serde_json::Map<String, serde_json::Value> = e
        .rules
        .iter()
        .map(|r| (r.symbol.clone(), serde_json::Value::String(fmt8(e.market.price(r, now)))))
        .collect();
    let accounts: Vec<serde_json::Value> = e
        .accounts
        .iter()
        .map(|a| {
            let b: serde_json::Map<String, serde_json::Value> = a
                .balances
                .iter()
                .map(|(k, v)| {
                    (k.clone(), serde_json::json!({"free": fmt8(v.free), "locked": fmt8(v.locked)}))
                })
                .collect();
            // API keys are public identifiers; secrets are never shown.
            serde_json::json!({"apiKey": a.api_key, "balances": b})
        })
        .collect();
    Ok(Json(serde_json::json!({"serverTime": now, "prices": prices, "accounts": accounts})))
}
