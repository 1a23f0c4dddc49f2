//! The active exchange as the config names it (`[exchange] active` and `mode`): its client
//! for testnet or mainnet with the keys from the environment, or the in-process simulator in
//! paper mode ([`super::paper`]); then its streams ([`ConnectedExchange::start_streams`]).
//! Switching `active` and restarting is all an operator does to trade on the other exchange.

use std::sync::Arc;

use spotbot_exchange_b_protocol::{Address, Network, PrivateKey};
use spotbot_sim::{RunningSim, RunningStreams};

use super::exchange_a::stream::{
    self, MAINNET_STREAMS, MAINNET_WS_API, StreamSettings, TESTNET_STREAMS, TESTNET_WS_API,
};
use super::exchange_a::{self, ExchangeAClient, Signer};
use super::exchange_b::{self, ExchangeBClient};
use super::feed::Feed;
use super::links::StreamTasks;
use super::paper::{self, PaperSettings};
use super::{Exchange, ExchangeError};
use crate::clock::SharedClock;
use crate::config::{ExchangeConfig, ExchangeMode, ExchangeName, Secrets};
use crate::metrics::Metrics;

/// The active exchange of a running service, plus the simulator when in paper mode. The rest
/// of the host only ever sees `exchange` as an `Arc<dyn Exchange>`.
pub struct ConnectedExchange {
    pub exchange: Arc<dyn Exchange>,
    /// The in-process simulator (paper mode only); dropping the last handle stops it.
    pub paper: Option<Arc<RunningSim>>,
    /// What the exchange's stream links need besides the trait.
    client: Client,
}

/// The concrete client behind `exchange`, for what only its own links and start-up use.
enum Client {
    /// Exchange A: the account's keys sign the account stream's subscription.
    ExchangeA { signer: Option<Signer> },
    /// Exchange B: its symbol map, client order ids and nonces.
    ExchangeB(Arc<ExchangeBClient>),
}

impl ConnectedExchange {
    fn new(exchange: Arc<dyn Exchange>, paper: Option<Arc<RunningSim>>, client: Client) -> Self {
        Self { exchange, paper, client }
    }

    /// Exchange B's client, when it is the active exchange (start-up hands it the order
    /// journal's client ids and the persisted nonce mark).
    pub fn exchange_b(&self) -> Option<&Arc<ExchangeBClient>> {
        match &self.client {
            Client::ExchangeB(client) => Some(client),
            Client::ExchangeA { .. } => None,
        }
    }

    /// Starts following the exchange's streams (`[exchange] streams`): in paper mode the
    /// simulator serves them; otherwise the URLs come from `mode` or the config (exchange B:
    /// `stream_url`, else derived from the REST base). `None` when streams are off or there
    /// is nothing to connect to.
    pub async fn start_streams(
        &self,
        config: &ExchangeConfig,
        clock: SharedClock,
    ) -> Result<Option<Streams>, ExchangeError> {
        if !config.streams {
            return Ok(None);
        }
        let silence = std::time::Duration::from_millis(config.stream_silence_ms);
        let signer = match &self.client {
            Client::ExchangeA { signer } => signer.clone(),
            Client::ExchangeB(client) => {
                let url = match &self.paper {
                    Some(sim) => exchange_b::stream::ws_url(&sim.base_url()),
                    None => given(&config.stream_url)
                        .unwrap_or_else(|| exchange_b::stream::ws_url(client.base_url())),
                };
                let settings = exchange_b::stream::StreamSettings::new(url, silence);
                let feed = Arc::new(Feed::default());
                let links =
                    exchange_b::stream::start(feed.clone(), settings, client.clone(), clock);
                return Ok(Some(Streams { feed, _links: links, _served: None }));
            }
        };
        let (settings, served) = match (&self.paper, stream_urls(config)) {
            (Some(sim), _) => {
                let served = spotbot_sim::serve_streams(sim.sim.clone(), "127.0.0.1:0")
                    .await
                    .map_err(|e| ExchangeError::NotConfigured {
                        detail: format!("paper simulator streams: {e}"),
                    })?;
                let base = served.base_url();
                (StreamSettings::new(format!("{base}/ws-api/v3"), base, silence), Some(served))
            }
            (None, Some((ws_api, streams))) => {
                (StreamSettings::new(ws_api, streams, silence), None)
            }
            (None, None) => return Ok(None),
        };
        let feed = Arc::new(Feed::default());
        let links = stream::start(feed.clone(), settings, signer, self.exchange.clone(), clock);
        Ok(Some(Streams { feed, _links: links, _served: served }))
    }
}

impl std::fmt::Debug for ConnectedExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectedExchange")
            .field("exchange", &self.exchange.name())
            .field("paper", &self.paper.as_ref().map(|p| p.addr))
            .finish()
    }
}

/// The exchange's streams as the host follows them: the feed, and what keeps it running.
pub struct Streams {
    pub feed: Arc<Feed>,
    _links: StreamTasks,
    /// The simulator's WebSocket services (paper mode).
    _served: Option<RunningStreams>,
}

/// The stream URLs for a mode: both overrides when set; none when only `base_url` is
/// overridden (a custom REST base says nothing about its streams); else mainnet or testnet.
pub fn stream_urls(config: &ExchangeConfig) -> Option<(String, String)> {
    if let (Some(ws_api), Some(streams)) = (given(&config.ws_api_url), given(&config.stream_url)) {
        return Some((ws_api, streams));
    }
    if given(&config.base_url).is_some() {
        return None;
    }
    match config.mode {
        ExchangeMode::Mainnet => Some((MAINNET_WS_API.into(), MAINNET_STREAMS.into())),
        ExchangeMode::Testnet => Some((TESTNET_WS_API.into(), TESTNET_STREAMS.into())),
        ExchangeMode::Paper => None,
    }
}

/// A configured URL, unless empty.
fn given(url: &Option<String>) -> Option<String> {
    url.clone().filter(|u| !u.trim().is_empty())
}

/// The REST base for a mode and the active exchange: `base_url` when set, else its mainnet
/// or testnet; `None` in paper mode.
pub fn base_url(config: &ExchangeConfig) -> Option<String> {
    let (mainnet, testnet) = match config.active {
        ExchangeName::ExchangeA => (exchange_a::MAINNET_URL, exchange_a::TESTNET_URL),
        ExchangeName::ExchangeB => (exchange_b::MAINNET_URL, exchange_b::TESTNET_URL),
    };
    config.base_url.clone().filter(|u| !u.trim().is_empty()).or(match config.mode {
        ExchangeMode::Mainnet => Some(mainnet.to_string()),
        ExchangeMode::Testnet => Some(testnet.to_string()),
        ExchangeMode::Paper => None,
    })
}

/// What exchange B's actions are signed for: mainnet only in mainnet mode.
pub(super) fn network_of(mode: ExchangeMode) -> Network {
    match mode {
        ExchangeMode::Mainnet => Network::Mainnet,
        ExchangeMode::Paper | ExchangeMode::Testnet => Network::Testnet,
    }
}

/// Exchange A's client settings of `config` for the REST base `url`.
fn client_config_a(config: &ExchangeConfig, url: String) -> exchange_a::ClientConfig {
    let mut c = exchange_a::ClientConfig::new(url);
    c.timeout = std::time::Duration::from_millis(config.request_timeout_ms);
    c.read_share_pct = config.read_share_pct;
    c
}

/// Exchange B's client settings of `config` for the REST base `url`.
fn client_config_b(config: &ExchangeConfig, url: String) -> exchange_b::ClientConfig {
    let mut c = exchange_b::ClientConfig::new(url, network_of(config.mode));
    c.timeout = std::time::Duration::from_millis(config.request_timeout_ms);
    c.read_share_pct = config.read_share_pct;
    c
}

/// Builds the active exchange from the config: paper mode starts the simulator and signs with
/// its account's keys; testnet and mainnet use the keys from the environment (public
/// endpoints work without them). Every client is built here, once; it counts its requests in
/// `metrics`.
pub async fn connect(
    config: &ExchangeConfig,
    secrets: &Secrets,
    clock: SharedClock,
    metrics: Metrics,
) -> Result<ConnectedExchange, ExchangeError> {
    let (url, keys, paper) = match base_url(config) {
        Some(url) => (url, keys_from_env(config, secrets)?, None),
        None => {
            let settings = PaperSettings {
                exchange: config.active,
                seed: config.paper_seed,
                usdt: config.paper_usdt.round_dp(8),
            };
            let started = paper::start_paper(&settings).await?;
            let keys =
                Keys { signer: Some(started.signer), b_key: Some(started.b_key), account: None };
            (started.sim.base_url(), keys, Some(Arc::new(started.sim)))
        }
    };
    match config.active {
        ExchangeName::ExchangeA => {
            let client_config = client_config_a(config, url);
            let client = ExchangeAClient::new(client_config, keys.signer.clone(), clock, metrics)?;
            let client_kind = Client::ExchangeA { signer: keys.signer };
            Ok(ConnectedExchange::new(Arc::new(client), paper, client_kind))
        }
        ExchangeName::ExchangeB => {
            let client_config = client_config_b(config, url);
            let client = Arc::new(ExchangeBClient::new(
                client_config,
                keys.b_key,
                keys.account,
                clock,
                metrics,
            )?);
            Ok(ConnectedExchange::new(client.clone(), paper, Client::ExchangeB(client)))
        }
    }
}

/// What the active exchange's client signs with.
struct Keys {
    /// Exchange A: the API key and secret.
    signer: Option<Signer>,
    /// Exchange B: the private key, and the account it trades for when that is not the key's
    /// own address (an agent wallet).
    b_key: Option<PrivateKey>,
    account: Option<Address>,
}

/// The active exchange's keys from the environment (only the active exchange's are read); a
/// missing key leaves public market data working, with a warning.
fn keys_from_env(config: &ExchangeConfig, secrets: &Secrets) -> Result<Keys, ExchangeError> {
    match config.active {
        ExchangeName::ExchangeA => {
            let signer = match (&secrets.exchange_api_key, &secrets.exchange_api_secret) {
                (Some(k), Some(s)) => Some(Signer::new(k.clone(), s.clone())),
                _ => {
                    tracing::warn!(
                        "EXCHANGE_API_KEY / EXCHANGE_API_SECRET not set: only public market data \
                         works"
                    );
                    None
                }
            };
            Ok(Keys { signer, b_key: None, account: None })
        }
        ExchangeName::ExchangeB => {
            let b_key = match &secrets.exchange_private_key {
                Some(secret) => Some(PrivateKey::from_hex(secret.expose()).map_err(|e| {
                    ExchangeError::NotConfigured { detail: format!("EXCHANGE_PRIVATE_KEY: {e}") }
                })?),
                None => {
                    tracing::warn!("EXCHANGE_PRIVATE_KEY not set: only public market data works");
                    None
                }
            };
            let account = match config.account_address.as_deref().filter(|a| !a.is_empty()) {
                Some(text) => {
                    Some(text.parse::<Address>().map_err(|e| ExchangeError::NotConfigured {
                        detail: format!("[exchange] account_address: {e}"),
                    })?)
                }
                None => None,
            };
            if let Some(key) = &b_key {
                tracing::info!(signer = %key.address(), account = ?account.map(|a| a.to_string()), "exchange B: signing key loaded");
            }
            Ok(Keys { signer: None, b_key, account })
        }
    }
}
