//! Exchange B's REST client (wire reference §1-§5): `POST /info` reads and signed
//! `POST /exchange` actions, the request budget counted by exchange B's weights (base weight
//! before sending, the per-item surcharge after the answer), 429 back-off that honours
//! Retry-After, orders rounded and checked against the pair's rules before sending, typed
//! errors that keep the exchange's text, and the rule that an ambiguous order outcome is
//! resolved by looking the order up by its cloid — never by sending it again.
//!
//! Shaped like exchange A's client, one file per job: `transport` (the budget, one round
//! trip, retries, signing), `errors` (the exchange's texts as typed errors), `action_answer`
//! (what an `/exchange` answer says: only a well-formed, documented one is an outcome),
//! `market` (spotMeta and the symbol map, mids, candles, tickers), `account` (balances, open
//! orders, fills, order lookups), `orders` (placement, cancels, the lookup after an ambiguous
//! answer) and `trait_impl` (the [`Exchange`](crate::exchange::Exchange) trait over them);
//! this file holds the client itself.

use std::sync::atomic::AtomicI64;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rust_decimal::Decimal;
use spotbot_exchange_b_protocol::{Address, Network, PrivateKey};

use super::cloid::ClientIds;
use super::nonce::{NonceLease, Nonces};
use super::symbols::SymbolMap;
use super::weights;
use crate::clock::SharedClock;
use crate::exchange::budget::Budget;
use crate::exchange::exchange_a::client::ensure_crypto_provider;
use crate::exchange::{ExchangeError, ShortCache, Ticker24h};
use crate::metrics::Metrics;

mod account;
mod action_answer;
mod errors;
mod market;
mod orders;
mod trait_impl;
mod transport;

/// REST base of exchange B's mainnet.
pub const MAINNET_URL: &str = "https://api.hyperliquid.xyz";
/// REST base of exchange B's testnet.
pub const TESTNET_URL: &str = "https://api.hyperliquid-testnet.xyz";

/// Tunables of the client; the defaults suit the real exchange.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub base_url: String,
    /// What signatures are made for (from `[exchange] mode`, never guessed from the URL).
    pub network: Network,
    /// Whole-request timeout; past it an order's outcome is unknown.
    pub timeout: Duration,
    /// Longest Retry-After the client waits out by itself before answering RateLimited.
    pub max_auto_wait: Duration,
    /// Percent of the request weight agent reads may use (`[exchange] read_share_pct`).
    pub read_share_pct: u64,
    /// How long a 24 h ticker answer is shared between callers, ms.
    pub ticker_cache_ms: i64,
    /// How many times an ambiguous order is looked up by its cloid.
    pub lookup_attempts: u32,
    /// Pause before each lookup (the exchange may still be processing the order).
    pub lookup_delay: Duration,
    /// How long the cached listing (spotMeta: symbols, size decimals) is trusted.
    pub meta_ttl: Duration,
    /// How far from the mid a MARKET order's IOC limit is put (0.05 = 5 %, the SDK's).
    pub market_slippage: Decimal,
}

impl ClientConfig {
    pub fn new(base_url: impl Into<String>, network: Network) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_string(),
            network,
            timeout: Duration::from_secs(10),
            max_auto_wait: Duration::from_secs(10),
            read_share_pct: 60,
            ticker_cache_ms: 10_000,
            lookup_attempts: 5,
            lookup_delay: Duration::from_millis(250),
            meta_ttl: Duration::from_secs(3600),
            market_slippage: Decimal::new(5, 2),
        }
    }
}

/// How old the cached listing must be before a symbol missing from it makes the client load
/// spotMeta again (unknown symbols cost at most one spotMeta a minute).
const MISS_RELOAD_AFTER_MS: i64 = 60_000;

/// The listing as loaded, with the time it was loaded (service clock, ms).
#[derive(Debug, Clone)]
struct Listing {
    map: Arc<SymbolMap>,
    fetched_ms: i64,
}

/// Exchange B's REST client.
pub struct ExchangeBClient {
    http: reqwest::Client,
    config: ClientConfig,
    /// Signs actions; never printed (its `Debug` shows the address only).
    key: Option<PrivateKey>,
    /// The account `/info` reads: the configured one, else the key's own address.
    account: Option<Address>,
    clock: SharedClock,
    budget: Budget,
    metrics: Metrics,
    tickers: ShortCache<Vec<String>, Vec<Ticker24h>>,
    listing: RwLock<Option<Listing>>,
    /// While a 429's Retry-After runs: until when (service clock, ms).
    blocked_until_ms: AtomicI64,
    /// After the account's address budget refused an action: until when orders are held here
    /// instead of being sent to be refused (a refusal spends the budget too; service clock,
    /// ms). Cancels are not held: the exchange gives them a larger cap.
    orders_held_until_ms: AtomicI64,
    ids: ClientIds,
    nonces: Nonces,
}

impl std::fmt::Debug for ExchangeBClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExchangeBClient")
            .field("base_url", &self.config.base_url)
            .field("network", &self.config.network)
            .field("signed", &self.key.is_some())
            .field("account", &self.account)
            .finish()
    }
}

impl ExchangeBClient {
    /// A client for `config.base_url`. Without a key only public reads work; `account` is
    /// the account an API wallet key signs for (reference §3: `/info` must name the account,
    /// an agent's own address reads empty), else the key's address.
    pub fn new(
        config: ClientConfig,
        key: Option<PrivateKey>,
        account: Option<Address>,
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
        let budget = Budget::new(config.read_share_pct);
        budget.set_limits(weights::LIMITS);
        let account = account.or_else(|| key.as_ref().map(PrivateKey::address));
        Ok(Self {
            http,
            tickers: ShortCache::new(config.ticker_cache_ms, clock.clone()),
            config,
            key,
            account,
            clock,
            budget,
            metrics,
            listing: RwLock::new(None),
            blocked_until_ms: AtomicI64::new(0),
            orders_held_until_ms: AtomicI64::new(0),
            ids: ClientIds::default(),
            nonces: Nonces::default(),
        })
    }

    pub fn base_url(&self) -> &str {
        &self.config.base_url
    }

    /// The account the client reads and trades for, when a key or an account is configured.
    pub fn account(&self) -> Option<Address> {
        self.account
    }

    /// Teaches the client the service's client order ids (from the order journal at start),
    /// so orders found on the exchange by their cloid come back with the service's id.
    pub fn learn_client_ids(&self, ids: impl IntoIterator<Item = String>) {
        for id in ids {
            self.ids.learn(&id);
        }
    }

    /// Nonces from now on are above `written` (the mark read from `store` at start), and
    /// `store` gets every later mark before a nonce beyond it is signed (see [`super::nonce`]).
    pub fn lease_nonces(&self, store: Arc<dyn NonceLease>, written: u64) {
        self.nonces.lease(store, written);
    }

    fn account_or_refuse(&self) -> Result<Address, ExchangeError> {
        self.account.ok_or_else(|| ExchangeError::NotConfigured {
            detail:
                "exchange B needs EXCHANGE_PRIVATE_KEY (or an account address) for account reads"
                    .into(),
        })
    }
}
