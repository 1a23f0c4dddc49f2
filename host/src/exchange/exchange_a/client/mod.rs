//! Exchange A's REST client: signed requests with a server-time offset (resync and one retry
//! on -1021), the request budget (every request counted by its documented weight before it is
//! sent and corrected by the response headers; reads refused past their share), short caches
//! for the 24 h tickers, 429 back-off that honours Retry-After, a full stop on 418, filters
//! checked before any order is sent, typed errors, and the rule that an ambiguous order
//! outcome is resolved by client order id before anything is re-sent.
//!
//! One file per job, the shape an adapter for another exchange mirrors: `transport` (time
//! sync, the budget, one round trip, retries), `errors` (error answers as typed errors),
//! `market` (exchangeInfo, prices, tickers), `orders` (orders, OCO lists, lookups by client
//! order id) and `trait_impl` (the [`Exchange`](crate::exchange::Exchange) trait over them);
//! this file holds the client itself and the rules every part shares.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use rust_decimal::Decimal;

use super::filters::SymbolRules;
use super::signer::Signer;
use crate::clock::SharedClock;
use crate::exchange::budget::Budget;
use crate::exchange::{ExchangeError, Price, ShortCache, Ticker24h};
use crate::metrics::Metrics;

mod errors;
mod market;
mod orders;
mod trait_impl;
mod transport;

pub use errors::map_error;

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
}

#[cfg(test)]
mod tests {
    use super::*;

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
