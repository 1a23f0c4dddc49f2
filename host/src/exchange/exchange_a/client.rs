//! Exchange A's REST client: signed requests with a server-time offset (resync and one retry
//! on -1021), the request budget (every request counted by its documented weight before it is
//! sent and corrected by the response headers; reads refused past their share), short caches
//! for the 24 h tickers, 429 back-off that honours Retry-After, a full stop on 418, filters checked before any order is sent, typed errors, and
//! the rule that an ambiguous order outcome is resolved by client order id before anything is
//! re-sent.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use rust_decimal::Decimal;
use serde::de::DeserializeOwned;

use super::filters::SymbolRules;
use super::signer::{Params, Signer};
use super::weights;
use super::wire::{self, ErrorBody};
use crate::clock::SharedClock;
use crate::exchange::budget::{self, Admission, Budget, BudgetUse, Limits, Reported};
use crate::exchange::{
    Balance, BoxFuture, Exchange, ExchangeError, Fill, Kline, NewOco, NewOrder, Order, OrderList,
    OrderRef, OrderType, Price, Protection, ShortCache, Side, Ticker24h, Trade,
};
use crate::metrics::{ExchangeOutcome, Metrics};

/// REST base of exchange A's mainnet.
pub const MAINNET_URL: &str = "https://api.binance.com";
/// REST base of exchange A's spot testnet.
pub const TESTNET_URL: &str = "https://testnet.binance.vision";

/// Tunables of the client; the defaults suit the real exchange.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub base_url: String,
    /// recvWindow sent with every signed request (ms, at most 60000).
    pub recv_window_ms: u64,
    /// Whole-request timeout; past it an order's outcome is unknown.
    pub timeout: Duration,
    /// Longest Retry-After the client waits out by itself before answering RateLimited.
    pub max_auto_wait: Duration,
    /// Percent of the request weight agent reads may use (`[exchange] read_share_pct`).
    pub read_share_pct: u64,
    /// How long a 24 h ticker answer is shared between callers, ms.
    pub ticker_cache_ms: i64,
    /// How many times an ambiguous order is looked up by client order id.
    pub lookup_attempts: u32,
    /// Pause before each lookup (the exchange may still be processing the order).
    pub lookup_delay: Duration,
    /// How long cached exchangeInfo (symbol rules, rate limits) is trusted.
    pub exchange_info_ttl: Duration,
}

impl ClientConfig {
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_string(),
            recv_window_ms: 5000,
            timeout: Duration::from_secs(10),
            max_auto_wait: Duration::from_secs(10),
            read_share_pct: 60,
            ticker_cache_ms: 10_000,
            lookup_attempts: 5,
            lookup_delay: Duration::from_millis(250),
            exchange_info_ttl: Duration::from_secs(3600),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Security {
    Public,
    Signed,
}

/// How old the cached listing must be before a symbol missing from it makes the client load
/// exchangeInfo again (see [`ExchangeAClient::rules_for`]).
pub const MISS_RELOAD_AFTER: Duration = Duration::from_secs(60);

/// Installs the ring crypto provider for rustls once (reqwest is built without a default one).
pub fn ensure_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Client order ids must be 1-36 characters of `[.A-Z:/a-z0-9_-]`: the set every exchange A
/// endpoint accepts. Without a usable id an ambiguous outcome could not be resolved, so such an
/// order is refused before sending.
pub fn check_client_id(id: &str) -> Result<(), ExchangeError> {
    let ok = !id.is_empty()
        && id.len() <= 36
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b':' | b'/' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(ExchangeError::Refused {
            reason: format!("client order id {id:?} must be 1-36 characters of [.A-Z:/a-z0-9_-]"),
        })
    }
}

/// Formats a decimal as plain text (never scientific notation), as the exchange requires.
pub fn fmt_decimal(d: Decimal) -> String {
    d.normalize().to_string()
}

/// Exchange A's REST client.
pub struct ExchangeAClient {
    http: reqwest::Client,
    config: ClientConfig,
    signer: Option<Signer>,
    clock: SharedClock,
    time_offset_ms: AtomicI64,
    time_synced: AtomicBool,
    budget: Budget,
    /// Where every request is counted and timed (`GET /metrics`).
    metrics: Metrics,
    /// 24 h tickers per symbol list: scans repeat them, and all symbols cost weight 80.
    tickers: ShortCache<Vec<String>, Vec<Ticker24h>>,
    blocked_until: Mutex<Option<Instant>>,
    banned_until: Mutex<Option<Instant>>,
    /// Parsed rules per symbol; `Err` keeps why a listed symbol's filters are unusable.
    rules: RwLock<HashMap<String, Result<SymbolRules, String>>>,
    rules_fetched: Mutex<Option<Instant>>,
    /// Last prices seen (tickers, fills), for the MARKET notional check without a round trip.
    last_prices: RwLock<HashMap<String, (Price, Instant)>>,
}

impl std::fmt::Debug for ExchangeAClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExchangeAClient")
            .field("base_url", &self.config.base_url)
            .field("signed", &self.signer.is_some())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Maps an exchange error answer onto the typed error, keeping code and message.
pub fn map_error(status: StatusCode, code: i64, msg: String) -> ExchangeError {
    match code {
        -2010 if msg.contains("insufficient balance") => {
            ExchangeError::InsufficientBalance { code, msg }
        }
        -2010 => ExchangeError::OrderRejected { code, msg },
        -1013 => ExchangeError::FilterFailure { code, msg },
        -2013 => ExchangeError::UnknownOrder { code, msg },
        -2011 if msg.starts_with("Unknown order") => ExchangeError::UnknownOrder { code, msg },
        -2011 => ExchangeError::CancelRejected { code, msg },
        -1121 => ExchangeError::InvalidSymbol { code, msg },
        -1021 => ExchangeError::InvalidTimestamp { code, msg },
        -1022 => ExchangeError::InvalidSignature { code, msg },
        -2014 | -2015 => ExchangeError::Unauthorized { code, msg },
        // The exchange's own "execution status unknown" answers.
        -1007 | -1000 | -1001 | -1006 | -1008 => {
            ExchangeError::Unknown { detail: format!("{code}: {msg}") }
        }
        _ if status.is_server_error() => {
            ExchangeError::Unknown { detail: format!("HTTP {status}, {code}: {msg}") }
        }
        _ => ExchangeError::BadRequest { code, msg },
    }
}

impl ExchangeAClient {
    /// A client for `config.base_url`; without a signer only public endpoints work.
    pub fn new(
        config: ClientConfig,
        signer: Option<Signer>,
        clock: SharedClock,
        metrics: Metrics,
    ) -> Result<Self, ExchangeError> {
        ensure_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .tcp_nodelay(true)
            .pool_idle_timeout(Duration::from_secs(50))
            .build()
            .map_err(|e| ExchangeError::NotConfigured { detail: format!("HTTP client: {e}") })?;
        Ok(Self {
            budget: Budget::new(config.read_share_pct),
            metrics,
            tickers: ShortCache::new(config.ticker_cache_ms, clock.clone()),
            http,
            config,
            signer,
            clock,
            time_offset_ms: AtomicI64::new(0),
            time_synced: AtomicBool::new(false),
            blocked_until: Mutex::new(None),
            banned_until: Mutex::new(None),
            rules: RwLock::new(HashMap::new()),
            rules_fetched: Mutex::new(None),
            last_prices: RwLock::new(HashMap::new()),
        })
    }

    pub fn base_url(&self) -> &str {
        &self.config.base_url
    }

    /// The exchange's time now, as far as this client knows it.
    fn server_now_ms(&self) -> i64 {
        self.clock.now_ms() + self.time_offset_ms()
    }

    /// Request weight used in the current minute (the larger of what was sent and what the
    /// last response reported).
    pub fn used_weight(&self) -> u64 {
        self.budget.usage(self.server_now_ms()).weight_used
    }

    /// Orders placed in the current 10 s window.
    pub fn order_count_10s(&self) -> u64 {
        self.budget.usage(self.server_now_ms()).orders_10s
    }

    /// Server time minus local time, ms (as measured at the last sync).
    pub fn time_offset_ms(&self) -> i64 {
        self.time_offset_ms.load(Ordering::Relaxed)
    }

    /// Measures the offset between the exchange's clock and ours.
    pub async fn sync_time(&self) -> Result<i64, ExchangeError> {
        let before = self.clock.now_ms();
        let body =
            self.send_once(&Method::GET, "/api/v3/time", &Params::new(), Security::Public).await?;
        let t: wire::ServerTime = serde_json::from_slice(&body)
            .map_err(|e| ExchangeError::Decode { detail: format!("/api/v3/time: {e}") })?;
        let after = self.clock.now_ms();
        let offset = t.server_time - (before + after) / 2;
        self.time_offset_ms.store(offset, Ordering::Relaxed);
        self.time_synced.store(true, Ordering::Relaxed);
        Ok(offset)
    }

    /// Refuses locally while banned or inside a Retry-After window that is too long to wait,
    /// then asks the request budget: a read past its share is refused without sending, a money
    /// request at its ceiling waits for the window to roll over. A request held back unsent
    /// comes with its outcome for the metrics.
    async fn respect_limits(
        &self,
        method: &Method,
        path: &str,
        params: &Params,
    ) -> Result<u64, (ExchangeOutcome, ExchangeError)> {
        let now = Instant::now();
        if let Some(until) = *lock(&self.banned_until)
            && until > now
        {
            return Err((
                ExchangeOutcome::Banned,
                ExchangeError::Banned { retry_after: until - now },
            ));
        }
        let blocked = *lock(&self.blocked_until);
        if let Some(until) = blocked.filter(|u| *u > now) {
            let wait = until - now;
            if wait > self.config.max_auto_wait {
                let error = ExchangeError::RateLimited { retry_after: wait };
                return Err((ExchangeOutcome::RateLimited, error));
            }
            tokio::time::sleep(wait).await;
        }
        let weight = weights::weight(method, path, params);
        let order = weights::places_order(method, path);
        let refused = |error| Err((ExchangeOutcome::BudgetRefused, error));
        match self.budget.admit(budget::current_class(), weight, order, self.server_now_ms()) {
            Admission::Go => Ok(weight),
            Admission::Refuse(retry_after) if budget::current_class() == budget::Class::Read => {
                refused(budget::refused(retry_after))
            }
            Admission::Refuse(retry_after) => refused(ExchangeError::RateLimited { retry_after }),
            Admission::Wait(wait) if wait > self.config.max_auto_wait => {
                refused(ExchangeError::RateLimited { retry_after: wait })
            }
            Admission::Wait(wait) => {
                tracing::warn!(
                    wait_ms = wait.as_millis() as u64,
                    path,
                    "request budget: money paths at their ceiling; waiting for the window"
                );
                tokio::time::sleep(wait + Duration::from_millis(50)).await;
                self.budget.count_after_wait(weight, order, self.server_now_ms());
                Ok(weight)
            }
        }
    }

    /// One HTTP exchange, no retries. Signed requests carry timestamp, recvWindow and the
    /// signature; every parameter travels in the query string. Counted in the metrics by its
    /// outcome, also when the limits hold it back unsent.
    async fn send_once(
        &self,
        method: &Method,
        path: &'static str,
        params: &Params,
        security: Security,
    ) -> Result<axum::body::Bytes, ExchangeError> {
        let weight = match self.respect_limits(method, path, params).await {
            Ok(weight) => weight,
            Err((outcome, refused)) => {
                self.metrics.exchange_request(self.name(), method, path, outcome, None);
                return Err(refused);
            }
        };
        let mut in_flight =
            InFlight { budget: &self.budget, weight, now_ms: || self.server_now_ms() };
        let mut params = params.clone();
        let mut request = match security {
            Security::Public => None,
            Security::Signed => {
                let signer = self.signer.as_ref().ok_or_else(|| ExchangeError::NotConfigured {
                    detail: "EXCHANGE_API_KEY and EXCHANGE_API_SECRET are not set".into(),
                })?;
                let ts = self.clock.now_ms() + self.time_offset_ms();
                signer.sign_params(&mut params, ts, self.config.recv_window_ms);
                Some(signer.api_key().to_string())
            }
        };
        let url = if params.is_empty() {
            format!("{}{}", self.config.base_url, path)
        } else {
            format!("{}{}?{}", self.config.base_url, path, params.as_str())
        };
        let mut builder = self.http.request(method.clone(), url);
        if let Some(key) = request.take() {
            builder = builder.header("X-MBX-APIKEY", key);
        }
        let started = Instant::now();
        let answer = round_trip(builder, &mut in_flight).await;
        let outcome = match &answer {
            Ok((status, ..)) => ExchangeOutcome::of_status(*status),
            Err(failure) => ExchangeOutcome::of_transport(failure.error()),
        };
        self.metrics.exchange_request(self.name(), method, path, outcome, Some(started.elapsed()));
        let (status, headers, body) = answer.map_err(Transport::into_exchange_error)?;
        let retry_after = headers
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        if status.is_success() {
            return Ok(body);
        }
        if status == StatusCode::IM_A_TEAPOT {
            let wait = retry_after.unwrap_or(Duration::from_secs(120));
            *lock(&self.banned_until) = Some(Instant::now() + wait);
            tracing::error!(
                retry_after_s = wait.as_secs(),
                "exchange A banned this IP (418); all requests stop until it ends"
            );
            return Err(ExchangeError::Banned { retry_after: wait });
        }
        if status == StatusCode::TOO_MANY_REQUESTS {
            let wait = retry_after.unwrap_or(Duration::from_secs(1));
            *lock(&self.blocked_until) = Some(Instant::now() + wait);
            tracing::warn!(retry_after_s = wait.as_secs(), "exchange A rate limit (429)");
            return Err(ExchangeError::RateLimited { retry_after: wait });
        }
        match serde_json::from_slice::<ErrorBody>(&body) {
            Ok(e) => Err(map_error(status, e.code, e.msg)),
            Err(_) if status.is_server_error() => {
                Err(ExchangeError::Unknown { detail: format!("HTTP {status}") })
            }
            Err(_) => Err(ExchangeError::Decode {
                detail: format!("HTTP {status} without an error body"),
            }),
        }
    }

    /// A request with the protocol's retries: -1021 resyncs the clock and retries once; a
    /// Retry-After short enough is waited out (a 429 means nothing was executed); GETs are also
    /// retried on transport trouble. Anything else is returned as is.
    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &'static str,
        params: Params,
        security: Security,
    ) -> Result<T, ExchangeError> {
        if security == Security::Signed && !self.time_synced.load(Ordering::Relaxed) {
            self.sync_time().await?;
        }
        let idempotent = method == Method::GET;
        let mut resynced = false;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match self.send_once(&method, path, &params, security).await {
                Ok(body) => {
                    return serde_json::from_slice(&body).map_err(|e| {
                        if idempotent {
                            ExchangeError::Decode { detail: format!("{path}: {e}") }
                        } else {
                            // Executed, but the answer is unreadable: treat as unknown.
                            ExchangeError::Unknown {
                                detail: format!("{path}: unreadable answer: {e}"),
                            }
                        }
                    });
                }
                Err(ExchangeError::InvalidTimestamp { .. })
                    if !resynced && security == Security::Signed =>
                {
                    resynced = true;
                    tracing::warn!(
                        path,
                        "timestamp outside recvWindow (-1021): resyncing server time and retrying once"
                    );
                    self.sync_time().await?;
                }
                Err(ExchangeError::RateLimited { retry_after })
                    if retry_after <= self.config.max_auto_wait && attempt < 4 =>
                {
                    tokio::time::sleep(retry_after).await;
                }
                Err(ExchangeError::Unknown { .. } | ExchangeError::Unreachable { .. })
                    if idempotent && attempt < 3 =>
                {
                    tokio::time::sleep(Duration::from_millis(100 * u64::from(attempt))).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn load_exchange_info(&self) -> Result<(), ExchangeError> {
        let info: wire::ExchangeInfo =
            self.call(Method::GET, "/api/v3/exchangeInfo", Params::new(), Security::Public).await?;
        self.budget.set_limits(limits_of(&info.rate_limits));
        let map: HashMap<String, Result<SymbolRules, String>> =
            info.symbols.iter().map(|s| (s.symbol.clone(), SymbolRules::from_info(s))).collect();
        for (symbol, reason) in map.iter().filter_map(|(s, r)| Some((s, r.as_ref().err()?))) {
            tracing::warn!(%symbol, %reason, "unusable filters: orders of this symbol are refused");
        }
        *self.rules.write().unwrap_or_else(|e| e.into_inner()) = map;
        *lock(&self.rules_fetched) = Some(Instant::now());
        Ok(())
    }

    /// Symbol rules from the cached exchangeInfo (refreshed when stale or missing). A listed
    /// symbol with unusable filters is `Refused` with the reason; an unlisted one is
    /// `InvalidSymbol`. A symbol missing from a listing younger than [`MISS_RELOAD_AFTER`] is
    /// unlisted without asking again, so unknown symbols (typos, garbage from a caller) cost
    /// at most one exchangeInfo (weight 20) a minute instead of one each.
    pub async fn rules_for(&self, symbol: &str) -> Result<SymbolRules, ExchangeError> {
        let age = lock(&self.rules_fetched).map(|t| t.elapsed());
        let fresh = age.is_some_and(|age| age < self.config.exchange_info_ttl);
        let cached = || self.rules.read().unwrap_or_else(|e| e.into_inner()).get(symbol).cloned();
        let rules = match cached().filter(|_| fresh) {
            Some(rules) => rules,
            None => {
                let recent = age.is_some_and(|age| age < MISS_RELOAD_AFTER);
                if !(fresh && recent) {
                    self.load_exchange_info().await?;
                }
                cached().ok_or_else(|| ExchangeError::InvalidSymbol {
                    code: -1121,
                    msg: "Invalid symbol.".into(),
                })?
            }
        };
        rules.map_err(|reason| ExchangeError::Refused {
            reason: format!("{symbol} cannot be traded: {reason}"),
        })
    }

    fn order_params(o: &NewOrder) -> Params {
        let mut p = Params::new();
        p.push("symbol", &o.symbol)
            .push("side", wire::side_str(o.side))
            .push("type", wire::type_str(o.order_type))
            .push_opt("timeInForce", o.time_in_force.map(wire::tif_str))
            .push_opt("quantity", o.qty.map(|q| fmt_decimal(q.0)))
            .push_opt("quoteOrderQty", o.quote_qty.map(fmt_decimal))
            .push_opt("price", o.price.map(|p| fmt_decimal(p.0)))
            .push_opt("stopPrice", o.stop_price.map(|p| fmt_decimal(p.0)))
            .push("newClientOrderId", &o.client_order_id)
            .push("newOrderRespType", "FULL");
        p
    }

    fn oco_params(o: &NewOco) -> Params {
        let (above_is_tp, side) = (o.side == Side::Sell, wire::side_str(o.side));
        let tp = |p: &mut Params, prefix: &str| {
            p.push(&format!("{prefix}Type"), "LIMIT_MAKER")
                .push(&format!("{prefix}Price"), fmt_decimal(o.take_profit.0))
                .push_opt(
                    &format!("{prefix}ClientOrderId"),
                    o.take_profit_client_order_id.as_ref(),
                );
        };
        let sl = |p: &mut Params, prefix: &str| {
            p.push(&format!("{prefix}Type"), "STOP_LOSS_LIMIT")
                .push(&format!("{prefix}StopPrice"), fmt_decimal(o.stop_price.0))
                .push(&format!("{prefix}Price"), fmt_decimal(o.stop_limit_price.0))
                .push(&format!("{prefix}TimeInForce"), "GTC")
                .push_opt(&format!("{prefix}ClientOrderId"), o.stop_client_order_id.as_ref());
        };
        let mut p = Params::new();
        p.push("symbol", &o.symbol)
            .push("listClientOrderId", &o.list_client_order_id)
            .push("side", side)
            .push("quantity", fmt_decimal(o.qty.0));
        if above_is_tp {
            tp(&mut p, "above");
            sl(&mut p, "below");
        } else {
            sl(&mut p, "above");
            tp(&mut p, "below");
        }
        p.push("newOrderRespType", "FULL");
        p
    }

    fn order_ref(p: &mut Params, id: &OrderRef, client_name: &str) {
        match id {
            OrderRef::Id(i) => p.push("orderId", i.to_string()),
            OrderRef::Client(c) => p.push(client_name, c),
        };
    }

    /// Looks an order up by client order id after an ambiguous outcome. `Ok(None)` means the
    /// exchange says it does not exist (twice, a moment apart).
    async fn resolve_order(
        &self,
        symbol: &str,
        client_id: &str,
    ) -> Result<Option<Order>, ExchangeError> {
        let id = OrderRef::Client(client_id.to_string());
        let mut not_found = 0;
        let mut last_err = None;
        for attempt in 0..self.config.lookup_attempts.max(1) {
            tokio::time::sleep(self.config.lookup_delay * attempt.min(4)).await;
            match self.get_order(symbol, &id).await {
                Ok(o) => return Ok(Some(o)),
                Err(ExchangeError::UnknownOrder { .. }) => {
                    not_found += 1;
                    if not_found >= 2 {
                        return Ok(None);
                    }
                }
                Err(e) => last_err = Some(e),
            }
        }
        Err(ExchangeError::Unknown {
            detail: format!(
                "order {client_id} could not be looked up: {}",
                last_err.map_or_else(|| "no answer".to_string(), |e| e.to_string())
            ),
        })
    }

    async fn get_order(&self, symbol: &str, id: &OrderRef) -> Result<Order, ExchangeError> {
        let mut p = Params::new();
        p.push("symbol", symbol);
        Self::order_ref(&mut p, id, "origClientOrderId");
        let o: wire::OrderJson =
            self.call(Method::GET, "/api/v3/order", p, Security::Signed).await?;
        o.into_order(None)
    }

    /// Adds the fills of an order that was found by lookup (queries carry none).
    async fn with_fills(&self, mut o: Order) -> Order {
        if o.executed_qty.0.is_zero() || !o.fills.is_empty() {
            return o;
        }
        if let Ok(trades) = self.trades(&o.symbol, Some(o.order_id)).await {
            o.fills = trades.into_iter().map(Fill::from).collect();
        }
        o
    }

    async fn trades(
        &self,
        symbol: &str,
        order_id: Option<i64>,
    ) -> Result<Vec<Trade>, ExchangeError> {
        let mut p = Params::new();
        p.push("symbol", symbol).push_opt("orderId", order_id.map(|i| i.to_string()));
        let v: Vec<wire::TradeJson> =
            self.call(Method::GET, "/api/v3/myTrades", p, Security::Signed).await?;
        Ok(v.into_iter().map(Trade::from).collect())
    }

    async fn submit_order(&self, o: &NewOrder) -> Result<Order, ExchangeError> {
        check_client_id(&o.client_order_id)?;
        let rules = self.rules_for(&o.symbol).await?;
        let rounded = rules.round_order(o);
        let o = &rounded;
        let last = if o.order_type == OrderType::Market && o.qty.is_some() {
            Some(self.recent_price(&o.symbol).await?)
        } else {
            None
        };
        rules.check_order(o, last)?;
        let params = Self::order_params(o);
        // At most two sends, and the second only after the exchange said the first does not
        // exist: an order is never placed twice.
        for send in 0..2 {
            match self
                .call::<wire::OrderJson>(
                    Method::POST,
                    "/api/v3/order",
                    params.clone(),
                    Security::Signed,
                )
                .await
            {
                Ok(j) => {
                    let placed = j.into_order(Some(o))?;
                    if let Some(p) = placed.avg_price() {
                        self.remember_price(&o.symbol, p);
                    }
                    return Ok(placed);
                }
                Err(ExchangeError::Unknown { detail }) => {
                    tracing::warn!(client_order_id = %o.client_order_id, %detail, "order outcome unknown; looking it up by client order id");
                    match self.resolve_order(&o.symbol, &o.client_order_id).await? {
                        Some(found) => return Ok(self.with_fills(found).await),
                        None if send == 0 => {
                            tracing::warn!(client_order_id = %o.client_order_id, "order not on the exchange; sending it again");
                        }
                        None => return Err(ExchangeError::Unknown { detail }),
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(ExchangeError::Unknown { detail: "order outcome unresolved".into() })
    }

    async fn get_list(&self, id: &OrderRef) -> Result<OrderList, ExchangeError> {
        let mut p = Params::new();
        match id {
            OrderRef::Id(i) => p.push("orderListId", i.to_string()),
            OrderRef::Client(c) => p.push("origClientOrderId", c),
        };
        let l: wire::OrderListJson =
            self.call(Method::GET, "/api/v3/orderList", p, Security::Signed).await?;
        l.into_list()
    }

    /// A list found by lookup carries no leg reports: fetch the legs.
    async fn with_legs(&self, mut l: OrderList) -> Result<OrderList, ExchangeError> {
        if l.orders.is_empty() {
            for (id, _) in l.legs.clone() {
                l.orders.push(self.get_order(&l.symbol, &OrderRef::Id(id)).await?);
            }
        }
        Ok(l)
    }

    async fn submit_oco(&self, o: &NewOco) -> Result<OrderList, ExchangeError> {
        check_client_id(&o.list_client_order_id)?;
        for id in [&o.take_profit_client_order_id, &o.stop_client_order_id].into_iter().flatten() {
            check_client_id(id)?;
        }
        let rules = self.rules_for(&o.symbol).await?;
        let rounded = rules.round_oco(o);
        let o = &rounded;
        rules.check_oco(o)?;
        let params = Self::oco_params(o);
        for send in 0..2 {
            match self
                .call::<wire::OrderListJson>(
                    Method::POST,
                    "/api/v3/orderList/oco",
                    params.clone(),
                    Security::Signed,
                )
                .await
            {
                Ok(j) => return j.into_list(),
                Err(ExchangeError::Unknown { detail }) => {
                    tracing::warn!(list_client_order_id = %o.list_client_order_id, %detail, "OCO outcome unknown; looking it up");
                    let mut found = None;
                    let mut not_found = 0;
                    for attempt in 0..self.config.lookup_attempts.max(1) {
                        tokio::time::sleep(self.config.lookup_delay * attempt.min(4)).await;
                        match self.get_list(&OrderRef::Client(o.list_client_order_id.clone())).await
                        {
                            Ok(l) => {
                                found = Some(l);
                                break;
                            }
                            Err(ExchangeError::UnknownOrder { .. }) => {
                                not_found += 1;
                                if not_found >= 2 {
                                    break;
                                }
                            }
                            Err(_) => {}
                        }
                    }
                    match (found, not_found >= 2) {
                        (Some(l), _) => return self.with_legs(l).await,
                        (None, true) if send == 0 => {
                            tracing::warn!(list_client_order_id = %o.list_client_order_id, "OCO not on the exchange; sending it again");
                        }
                        _ => return Err(ExchangeError::Unknown { detail }),
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(ExchangeError::Unknown { detail: "OCO outcome unresolved".into() })
    }

    async fn last_price(&self, symbol: &str) -> Result<Price, ExchangeError> {
        let mut p = Params::new();
        p.push("symbol", symbol);
        let v: wire::PriceJson =
            self.call(Method::GET, "/api/v3/ticker/price", p, Security::Public).await?;
        self.remember_price(symbol, Price(v.price));
        Ok(Price(v.price))
    }

    fn remember_price(&self, symbol: &str, p: Price) {
        self.last_prices
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(symbol.to_string(), (p, Instant::now()));
    }

    /// A price seen in the last 10 seconds, else a fresh one from the ticker.
    async fn recent_price(&self, symbol: &str) -> Result<Price, ExchangeError> {
        let cached =
            self.last_prices.read().unwrap_or_else(|e| e.into_inner()).get(symbol).copied();
        match cached {
            Some((p, at)) if at.elapsed() < Duration::from_secs(10) => Ok(p),
            _ => self.last_price(symbol).await,
        }
    }
}

/// A request that got no complete answer.
enum Transport {
    /// No answer at all (connection, timeout).
    Send(reqwest::Error),
    /// An answer with `StatusCode` whose body was lost.
    Body(StatusCode, reqwest::Error),
}

impl Transport {
    fn error(&self) -> &reqwest::Error {
        match self {
            Transport::Send(e) | Transport::Body(_, e) => e,
        }
    }

    fn into_exchange_error(self) -> ExchangeError {
        match self {
            Transport::Send(e) if e.is_connect() => {
                ExchangeError::Unreachable { detail: e.without_url().to_string() }
            }
            Transport::Send(e) => ExchangeError::Unknown { detail: e.without_url().to_string() },
            Transport::Body(status, e) => ExchangeError::Unknown {
                detail: format!("HTTP {status}, body lost: {}", e.without_url()),
            },
        }
    }
}

/// Sends `request` and reads its answer; the budget takes the counts of the answer's headers
/// as soon as they arrive.
async fn round_trip<F: Fn() -> i64>(
    request: reqwest::RequestBuilder,
    in_flight: &mut InFlight<'_, F>,
) -> Result<(StatusCode, reqwest::header::HeaderMap, axum::body::Bytes), Transport> {
    let response = request.send().await.map_err(Transport::Send)?;
    let status = response.status();
    let headers = response.headers().clone();
    let header = |name: &str| {
        headers.get(name).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok())
    };
    in_flight.answered(Reported {
        weight_1m: header("x-mbx-used-weight-1m"),
        orders_10s: header("x-mbx-order-count-10s"),
        orders_day: header("x-mbx-order-count-1d"),
    });
    let body = response.bytes().await.map_err(|e| Transport::Body(status, e))?;
    Ok((status, headers, body))
}

/// A request the budget admitted: when it is answered, or dropped on any early return, it
/// leaves the budget's in-flight count.
struct InFlight<'a, F: Fn() -> i64> {
    budget: &'a Budget,
    weight: u64,
    now_ms: F,
}

impl<F: Fn() -> i64> InFlight<'_, F> {
    fn answered(&mut self, counts: Reported) {
        self.budget.answered(std::mem::take(&mut self.weight), counts, (self.now_ms)());
    }
}

impl<F: Fn() -> i64> Drop for InFlight<'_, F> {
    fn drop(&mut self) {
        if self.weight > 0 {
            self.budget.answered(self.weight, Reported::default(), (self.now_ms)());
        }
    }
}

impl ExchangeAClient {
    /// 24 h tickers of `symbols` (all when empty) from the exchange, uncached.
    async fn fetch_tickers(&self, symbols: &[String]) -> Result<Vec<Ticker24h>, ExchangeError> {
        let mut p = Params::new();
        match symbols {
            [] => {}
            [one] => {
                p.push("symbol", one);
                let t: wire::Ticker24hJson =
                    self.call(Method::GET, "/api/v3/ticker/24hr", p, Security::Public).await?;
                return Ok(vec![t.into()]);
            }
            many => {
                let list = serde_json::to_string(many).unwrap_or_default();
                p.push("symbols", list);
            }
        }
        let v: Vec<wire::Ticker24hJson> =
            self.call(Method::GET, "/api/v3/ticker/24hr", p, Security::Public).await?;
        Ok(v.into_iter().map(Ticker24h::from).collect())
    }
}

/// The budget's limits from exchangeInfo's `rateLimits` (the documented values where one is
/// missing).
fn limits_of(rate_limits: &[wire::RateLimit]) -> Limits {
    let find = |kind: &str, interval: &str, num: u32| {
        rate_limits
            .iter()
            .find(|l| l.rate_limit_type == kind && l.interval == interval && l.interval_num == num)
            .map(|l| l.limit)
    };
    let documented = Limits::default();
    Limits {
        weight_per_minute: find("REQUEST_WEIGHT", "MINUTE", 1)
            .unwrap_or(documented.weight_per_minute),
        orders_per_10s: find("ORDERS", "SECOND", 10).unwrap_or(documented.orders_per_10s),
        orders_per_day: find("ORDERS", "DAY", 1).unwrap_or(documented.orders_per_day),
    }
}

impl Exchange for ExchangeAClient {
    fn name(&self) -> &'static str {
        "exchange_a"
    }

    fn protection(&self) -> Protection {
        Protection::Native
    }

    fn budget_use(&self) -> Option<BudgetUse> {
        Some(self.budget.usage(self.server_now_ms()))
    }

    fn refused_reads(&self) -> u64 {
        self.budget.refused_reads()
    }

    fn reads_blocked_for(&self) -> Option<Duration> {
        self.budget.reads_blocked_for(self.server_now_ms())
    }

    fn server_time(&self) -> BoxFuture<'_, Result<i64, ExchangeError>> {
        Box::pin(async move {
            let t: wire::ServerTime =
                self.call(Method::GET, "/api/v3/time", Params::new(), Security::Public).await?;
            Ok(t.server_time)
        })
    }

    fn symbol_rules<'a>(
        &'a self,
        symbol: &'a str,
    ) -> BoxFuture<'a, Result<SymbolRules, ExchangeError>> {
        Box::pin(self.rules_for(symbol))
    }

    fn klines<'a>(
        &'a self,
        symbol: &'a str,
        interval: &'a str,
        limit: u32,
        end_time: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Kline>, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push("symbol", symbol)
                .push("interval", interval)
                .push("limit", limit.clamp(1, 1000).to_string())
                .push_opt("endTime", end_time.map(|t| t.to_string()));
            let rows: Vec<wire::KlineRow> =
                self.call(Method::GET, "/api/v3/klines", p, Security::Public).await?;
            Ok(rows.into_iter().map(Kline::from).collect())
        })
    }

    fn tickers_24h<'a>(
        &'a self,
        symbols: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Ticker24h>, ExchangeError>> {
        Box::pin(self.tickers.get_or_fetch(symbols.to_vec(), self.fetch_tickers(symbols)))
    }

    fn prices(&self) -> BoxFuture<'_, Result<Vec<(String, Price)>, ExchangeError>> {
        Box::pin(async move {
            let v: Vec<wire::PriceJson> = self
                .call(Method::GET, "/api/v3/ticker/price", Params::new(), Security::Public)
                .await?;
            for p in &v {
                self.remember_price(&p.symbol, Price(p.price));
            }
            Ok(v.into_iter().map(|p| (p.symbol, Price(p.price))).collect())
        })
    }

    fn price<'a>(&'a self, symbol: &'a str) -> BoxFuture<'a, Result<Price, ExchangeError>> {
        Box::pin(self.last_price(symbol))
    }

    fn balances(&self) -> BoxFuture<'_, Result<Vec<Balance>, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push("omitZeroBalances", "true");
            let a: wire::AccountJson =
                self.call(Method::GET, "/api/v3/account", p, Security::Signed).await?;
            Ok(a.balances.into_iter().map(Balance::from).collect())
        })
    }

    fn place_order<'a>(
        &'a self,
        order: &'a NewOrder,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        Box::pin(self.submit_order(order))
    }

    fn place_oco<'a>(&'a self, oco: &'a NewOco) -> BoxFuture<'a, Result<OrderList, ExchangeError>> {
        Box::pin(self.submit_oco(oco))
    }

    fn order<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        Box::pin(self.get_order(symbol, id))
    }

    fn cancel_order<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push("symbol", symbol);
            Self::order_ref(&mut p, id, "origClientOrderId");
            let o: wire::OrderJson =
                self.call(Method::DELETE, "/api/v3/order", p, Security::Signed).await?;
            o.into_order(None)
        })
    }

    fn order_list<'a>(
        &'a self,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<OrderList, ExchangeError>> {
        Box::pin(self.get_list(id))
    }

    fn cancel_order_list<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<OrderList, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push("symbol", symbol);
            match id {
                OrderRef::Id(i) => p.push("orderListId", i.to_string()),
                OrderRef::Client(c) => p.push("listClientOrderId", c),
            };
            let l: wire::OrderListJson =
                self.call(Method::DELETE, "/api/v3/orderList", p, Security::Signed).await?;
            l.into_list()
        })
    }

    fn open_orders<'a>(
        &'a self,
        symbol: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push_opt("symbol", symbol);
            let v: Vec<wire::OrderJson> =
                self.call(Method::GET, "/api/v3/openOrders", p, Security::Signed).await?;
            v.into_iter().map(|o| o.into_order(None)).collect()
        })
    }

    fn open_order_lists(&self) -> BoxFuture<'_, Result<Vec<OrderList>, ExchangeError>> {
        Box::pin(async move {
            let v: Vec<wire::OrderListJson> = self
                .call(Method::GET, "/api/v3/openOrderList", Params::new(), Security::Signed)
                .await?;
            v.into_iter().map(wire::OrderListJson::into_list).collect()
        })
    }

    fn all_orders<'a>(
        &'a self,
        symbol: &'a str,
        limit: u32,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push("symbol", symbol).push("limit", limit.clamp(1, 1000).to_string());
            let v: Vec<wire::OrderJson> =
                self.call(Method::GET, "/api/v3/allOrders", p, Security::Signed).await?;
            v.into_iter().map(|o| o.into_order(None)).collect()
        })
    }

    fn my_trades<'a>(
        &'a self,
        symbol: &'a str,
        order_id: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Trade>, ExchangeError>> {
        Box::pin(self.trades(symbol, order_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_map_to_typed_variants_keeping_code_and_message() {
        let e = map_error(
            StatusCode::BAD_REQUEST,
            -2010,
            "Account has insufficient balance for requested action.".into(),
        );
        assert!(matches!(e, ExchangeError::InsufficientBalance { code: -2010, .. }));
        assert!(e.to_string().contains("insufficient balance for requested action"));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -2010, "Duplicate order sent.".into()),
            ExchangeError::OrderRejected { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -1013, "Filter failure: LOT_SIZE".into()),
            ExchangeError::FilterFailure { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -2013, "Order does not exist.".into()),
            ExchangeError::UnknownOrder { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -2011, "Unknown order sent.".into()),
            ExchangeError::UnknownOrder { .. }
        ));
        assert!(matches!(
            map_error(
                StatusCode::BAD_REQUEST,
                -2011,
                "Order was not canceled due to cancel restrictions.".into()
            ),
            ExchangeError::CancelRejected { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -1121, "Invalid symbol.".into()),
            ExchangeError::InvalidSymbol { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -1021, "x".into()),
            ExchangeError::InvalidTimestamp { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -1022, "x".into()),
            ExchangeError::InvalidSignature { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::UNAUTHORIZED, -2015, "x".into()),
            ExchangeError::Unauthorized { .. }
        ));
        assert!(map_error(StatusCode::BAD_REQUEST, -1007, "Timeout".into()).is_unknown_outcome());
        assert!(map_error(StatusCode::SERVICE_UNAVAILABLE, -9999, "x".into()).is_unknown_outcome());
        assert_eq!(map_error(StatusCode::BAD_REQUEST, -1100, "x".into()).code(), Some(-1100));
    }

    #[test]
    fn client_order_ids_are_checked_before_sending() {
        assert!(check_client_id("MT_BTCUSDT_1700000000").is_ok());
        assert!(check_client_id("").is_err());
        assert!(check_client_id("has space").is_err());
        assert!(check_client_id(&"x".repeat(37)).is_err());
    }

    #[test]
    fn decimals_are_sent_as_plain_text() {
        assert_eq!(fmt_decimal(Decimal::new(1, 8)), "0.00000001");
        assert_eq!(fmt_decimal(Decimal::new(150_000, 4)), "15");
        assert_eq!(fmt_decimal(Decimal::new(-0, 0)), "0");
    }
}
