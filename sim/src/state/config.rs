//! How to build a simulator ([`SimConfig`]) and the rules of its WebSocket connections
//! ([`StreamConfig`]).

use super::exchange_b::ExchangeBConfig;
use crate::clock::{Clock, Millis, SystemClock};
use crate::core::EngineConfig;
use crate::symbols::{self, SymbolRules};
use rust_decimal::Decimal;
use spotbot_exchange_b_protocol::PrivateKey;
use std::sync::Arc;
use std::time::Duration;

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
    /// the address of EXCHANGE_PRIVATE_KEY, or of the seed's key (see
    /// [`seed_key`](super::exchange_b::seed_key)). An EXCHANGE_PRIVATE_KEY that is not a key is
    /// an error; the key itself is never kept.
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
