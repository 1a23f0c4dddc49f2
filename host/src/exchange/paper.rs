//! Paper mode: the exchange simulator runs inside the process on 127.0.0.1 with a synthetic
//! market, and the real exchange A client talks to it over loopback — the demo exercises the
//! same wire code as live trading and needs no keys. Also where the active exchange is built
//! for any mode ([`connect`]) and its streams are started ([`ConnectedExchange::start_streams`]).

use std::sync::Arc;

use rust_decimal::Decimal;
use spotbot_sim::{RunningSim, RunningStreams, SimConfig};

use super::exchange_a::stream::{
    self, MAINNET_STREAMS, MAINNET_WS_API, StreamSettings, StreamTasks, TESTNET_STREAMS,
    TESTNET_WS_API,
};
use super::exchange_a::{ClientConfig, ExchangeAClient, MAINNET_URL, Signer, TESTNET_URL};
use super::feed::Feed;
use super::{Exchange, ExchangeError};
use crate::clock::SharedClock;
use crate::config::{ExchangeConfig, ExchangeMode, ExchangeName, Secret, Secrets};
use crate::metrics::Metrics;

/// Settings of the in-process simulator.
#[derive(Debug, Clone)]
pub struct PaperSettings {
    pub seed: u64,
    /// USDT the paper account starts with.
    pub usdt: Decimal,
}

impl Default for PaperSettings {
    fn default() -> Self {
        Self { seed: 1, usdt: Decimal::from(10_000) }
    }
}

/// The active exchange of a running service, plus the simulator when in paper mode. The rest
/// of the host only ever sees `exchange` as an `Arc<dyn Exchange>`.
pub struct ConnectedExchange {
    pub exchange: Arc<dyn Exchange>,
    /// The in-process simulator (paper mode only); dropping the last handle stops it.
    pub paper: Option<Arc<RunningSim>>,
    /// The account's keys, for the account stream's subscription.
    signer: Option<Signer>,
}

/// The exchange's streams as the host follows them: the feed, and what keeps it running.
pub struct Streams {
    pub feed: Arc<Feed>,
    _links: StreamTasks,
    /// The simulator's WebSocket services (paper mode).
    _served: Option<RunningStreams>,
}

impl ConnectedExchange {
    /// Starts following the exchange's streams (`[exchange] streams`): in paper mode the
    /// simulator serves them on another loopback port; otherwise the URLs come from `mode`
    /// or the config. `None` when streams are off or there is nothing to connect to.
    pub async fn start_streams(
        &self,
        config: &ExchangeConfig,
        clock: SharedClock,
    ) -> Result<Option<Streams>, ExchangeError> {
        if !config.streams {
            return Ok(None);
        }
        let silence = std::time::Duration::from_millis(config.stream_silence_ms);
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
        let links = stream::start(
            feed.clone(),
            settings,
            self.signer.clone(),
            self.exchange.clone(),
            clock,
        );
        Ok(Some(Streams { feed, _links: links, _served: served }))
    }
}

/// The stream URLs for a mode: both overrides when set; none when only `base_url` is
/// overridden (a custom REST base says nothing about its streams); else mainnet or testnet.
pub fn stream_urls(config: &ExchangeConfig) -> Option<(String, String)> {
    let given = |u: &Option<String>| u.clone().filter(|u| !u.trim().is_empty());
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

impl std::fmt::Debug for ConnectedExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectedExchange")
            .field("exchange", &self.exchange.name())
            .field("paper", &self.paper.as_ref().map(|p| p.addr))
            .finish()
    }
}

/// Fresh random-looking credentials for the paper account (never leave the process).
fn paper_credentials(seed: u64) -> (String, String) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut z = seed ^ nanos ^ u64::from(std::process::id()).rotate_left(32);
    let mut word = || {
        z = spotbot_sim::market::mix(z);
        format!("{z:016x}")
    };
    (format!("paper{}{}", word(), word()), format!("{}{}{}{}", word(), word(), word(), word()))
}

/// The client settings of `config` for the REST base `url`.
fn client_config(config: &ExchangeConfig, url: String) -> ClientConfig {
    let mut c = ClientConfig::new(url);
    c.timeout = std::time::Duration::from_millis(config.request_timeout_ms);
    c.read_share_pct = config.read_share_pct;
    c
}

/// Starts the simulator on 127.0.0.1:0 and a client pointed at it, counting its requests in
/// `metrics`.
pub async fn start_paper(
    settings: &PaperSettings,
    client: &ExchangeConfig,
    clock: SharedClock,
    metrics: Metrics,
) -> Result<ConnectedExchange, ExchangeError> {
    let (key, secret) = paper_credentials(settings.seed);
    let mut config = SimConfig::new(settings.seed, key.clone(), secret.clone());
    config.initial_funds = vec![("USDT".to_string(), settings.usdt)];
    let sim = spotbot_sim::serve(config, "127.0.0.1:0")
        .await
        .map_err(|e| ExchangeError::NotConfigured { detail: format!("paper simulator: {e}") })?;
    let signer = Signer::new(Secret::new(key), Secret::new(secret));
    let client = ExchangeAClient::new(
        client_config(client, sim.base_url()),
        Some(signer.clone()),
        clock,
        metrics,
    )?;
    tracing::info!(addr = %sim.addr, seed = settings.seed, "paper mode: exchange simulator running in-process");
    Ok(ConnectedExchange {
        exchange: Arc::new(client),
        paper: Some(Arc::new(sim)),
        signer: Some(signer),
    })
}

/// The REST base for a mode: `base_url` when set, else mainnet or testnet.
pub fn base_url(config: &ExchangeConfig) -> Option<String> {
    config.base_url.clone().filter(|u| !u.trim().is_empty()).or(match config.mode {
        ExchangeMode::Mainnet => Some(MAINNET_URL.to_string()),
        ExchangeMode::Testnet => Some(TESTNET_URL.to_string()),
        ExchangeMode::Paper => None,
    })
}

/// Builds the active exchange from the config: paper mode starts the simulator; testnet and
/// mainnet use the keys from the environment (public endpoints work without them). `None` when
/// the active exchange is not exchange A (exchange B is a later issue). The client counts its
/// requests in `metrics`.
pub async fn connect(
    config: &ExchangeConfig,
    secrets: &Secrets,
    clock: SharedClock,
    metrics: Metrics,
) -> Result<Option<ConnectedExchange>, ExchangeError> {
    if config.active != ExchangeName::ExchangeA {
        tracing::warn!(
            exchange = config.active.as_str(),
            "no client for this exchange yet: market data and trading are unavailable"
        );
        return Ok(None);
    }
    let Some(url) = base_url(config) else {
        let settings =
            PaperSettings { seed: config.paper_seed, usdt: config.paper_usdt.round_dp(8) };
        return start_paper(&settings, config, clock, metrics).await.map(Some);
    };
    let signer = match (&secrets.exchange_api_key, &secrets.exchange_api_secret) {
        (Some(k), Some(s)) => Some(Signer::new(k.clone(), s.clone())),
        _ => {
            tracing::warn!(
                "EXCHANGE_API_KEY / EXCHANGE_API_SECRET not set: only public market data works"
            );
            None
        }
    };
    let client = ExchangeAClient::new(client_config(config, url), signer.clone(), clock, metrics)?;
    Ok(Some(ConnectedExchange { exchange: Arc::new(client), paper: None, signer }))
}
