//! Wires the areas together and serves the API. `main` and the tests start the service the
//! same way, through [`start`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::activity::Dashboard;
use crate::api;
use crate::background::Background;
use crate::clock::SharedClock;
use crate::config::Config;
use crate::execution::{Execution, Parts, Telling, Timing};
use crate::jobs::JOBS;
use crate::license::{self, License};
use crate::market::{CandleCache, MarketContexts};
use crate::messenger::Messenger;
use crate::news::News;
use crate::protection::{self, Protection};
use crate::scans::Scans;
use crate::scheduler::{self, Reporting, Scheduler};
use crate::signals::Signals;
use crate::signals::replies;
use crate::state::AppState;
use crate::store::Store;

/// A running service. Dropping it without [`RunningApp::stop`] leaves the server running until
/// the runtime ends.
pub struct RunningApp {
    /// The address actually bound (useful with port 0).
    pub addr: SocketAddr,
    pub state: AppState,
    shutdown: Option<oneshot::Sender<()>>,
    server: JoinHandle<std::io::Result<()>>,
    /// The reconciliation run at start, then after every unknown outcome (aborted by `stop`:
    /// the journal keeps every step restartable).
    reconciliation: Option<JoinHandle<()>>,
    /// The boss-reply loop (`[messenger] handle_replies`), when it runs.
    replies: Option<Background>,
    /// The built-in scheduler's loop (`[scheduler] enabled`, `poll_seconds > 0`), when it runs.
    scheduler: Option<Background>,
    /// The loop that checks the stops the service watches (with an exchange client).
    watch: Option<Background>,
    /// Protection's reactions to the exchange's streams, when they are followed.
    reactions: Option<Background>,
    /// The background bias checks of newly loaded strategies (`plugins::bias`).
    bias_checks: Option<Background>,
    /// The exchange's streams (`[exchange] streams`); dropping them closes the links.
    streams: Option<crate::exchange::connect::Streams>,
}

impl RunningApp {
    /// Stops accepting connections, lets requests in flight finish, waits for the server, stops
    /// hot reload, and waits until background work has let go of the store, so the database is
    /// closed when this returns (a restart in the same process can open it again).
    pub async fn stop(mut self) -> anyhow::Result<()> {
        // The dashboard's event streams never end on their own; the graceful shutdown would
        // wait for them.
        self.state.live.close();
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        (&mut self.server).await.context("server task failed")??;
        if let Some(scheduler) = self.scheduler.take() {
            scheduler.stop().await;
        }
        if let Some(watch) = self.watch.take() {
            watch.stop().await;
        }
        if let Some(reactions) = self.reactions.take() {
            reactions.stop().await;
        }
        if let Some(bias_checks) = self.bias_checks.take() {
            bias_checks.stop().await;
        }
        drop(self.streams.take());
        if let Some(replies) = self.replies.take() {
            replies.stop_within(replies::STOP_GRACE).await;
        }
        if let Some(reconciliation) = self.reconciliation.take() {
            reconciliation.abort();
            let _ = reconciliation.await;
        }
        let RunningApp { state, .. } = self;
        state.plugins.stop_watching();
        let store = state.store.clone();
        drop(state);
        if !store.wait_until_sole_handle(std::time::Duration::from_secs(30)).await {
            anyhow::bail!("background work still holds the store 30 s after shutdown");
        }
        Ok(())
    }

    /// `http://<addr>` of the API.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// The counter that holds exchange B's nonce mark.
const NONCE_LEASE: &str = "exchange_b_nonce_lease";

/// Exchange B's nonce mark in the store (the counters table), so nonces never repeat across
/// restarts (`exchange::exchange_b::nonce`).
struct StoredNonceLease(Store);

impl crate::exchange::exchange_b::nonce::NonceLease for StoredNonceLease {
    fn reserve(&self, until: u64) -> Result<(), String> {
        let value = i64::try_from(until).map_err(|_| format!("nonce mark {until} is too large"))?;
        self.0.write(|w| w.set_counter(NONCE_LEASE, value)).map_err(|e| e.to_string())
    }
}

/// Opens the store, builds every area, binds `config.server.addr` and serves.
pub async fn start(config: Config, clock: SharedClock) -> anyhow::Result<RunningApp> {
    let data_dir = PathBuf::from(&config.server.data_dir);
    // First: a service that needs tokens and has none stops before any area starts.
    let addr = &config.server.addr;
    let listener =
        TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
    let addr = listener.local_addr()?;
    let auth = crate::auth::Auth::start(&config.api, addr, &data_dir, clock.clone())
        .map_err(|why| anyhow::anyhow!("the API cannot start: {why}"))?;
    let store = Store::open(&data_dir)
        .with_context(|| format!("cannot open the store in {}", data_dir.display()))?;
    let license = Arc::new(
        License::open(&config, store.clone(), clock.clone()).context("cannot load the license")?,
    );
    license.start_up().await;
    license::spawn_background(
        &license,
        std::time::Duration::from_secs(config.license.poll_seconds),
    );
    let metrics = crate::metrics::Metrics::default();
    metrics.spawn_upkeep();
    let connected = crate::exchange::connect::connect(
        &config.exchange,
        &config.secrets,
        clock.clone(),
        metrics.clone(),
    )
    .await
    .context("cannot set up the exchange")?;
    if let Some(client) = connected.exchange_b() {
        let journal = crate::execution::journal::Journal::new(store.clone());
        client.learn_client_ids(journal.client_ids().context("cannot read the order journal")?);
        let written = store.read(|r| r.counter(NONCE_LEASE)).context("cannot read the store")?;
        client.lease_nonces(Arc::new(StoredNonceLease(store.clone())), written.max(0) as u64);
    }
    let streams = connected
        .start_streams(&config.exchange, clock.clone())
        .await
        .context("cannot start the exchange's streams")?;
    let feed = streams.as_ref().map(|s| s.feed.clone());
    let (exchange, paper) = (Some(connected.exchange), connected.paper);
    // Agent reads (market context, plugin candles, scans, portfolio) go through the read
    // handle: they draw from the read share of the request budget, so they can never eat the
    // weight orders and stops need. Execution and protection hold the exchange itself.
    let reads = exchange.clone().map(crate::exchange::ReadHandle::wrap);
    let market = reads.as_ref().map(|exchange| {
        let candles = Arc::new(CandleCache::new(exchange.clone()));
        Arc::new(MarketContexts::new(
            exchange.clone(),
            candles,
            store.clone(),
            clock.clone(),
            config.market.snapshot_retention_days,
        ))
    });
    let plugins = start_plugins(&config, &store, &clock, market.clone(), &metrics).await?;
    let config = Arc::new(config);
    let dashboard = Arc::new(Dashboard::new(clock.clone()));
    let messenger = Messenger::new(&config.messenger, &config.secrets, metrics.clone());
    let execution = Execution::new(Parts {
        exchange: exchange.clone(),
        store: store.clone(),
        messenger: messenger.clone(),
        dashboard: dashboard.clone(),
        config: config.clone(),
        plugins: plugins.clone(),
        clock: clock.clone(),
        timing: Timing::default(),
        metrics: metrics.clone(),
    });
    let signals = Signals::new(
        config.signals.clone(),
        execution.clone(),
        messenger.clone(),
        dashboard.clone(),
        clock.clone(),
    );
    let protection = Protection::new(protection::Parts {
        execution: execution.clone(),
        exchange: exchange.clone(),
        store: store.clone(),
        messenger: messenger.clone(),
        dashboard: dashboard.clone(),
        license: license.clone(),
        config: config.clone(),
        clock: clock.clone(),
        metrics: metrics.clone(),
    });
    let reconciliation = exchange.is_some().then(|| {
        let execution = execution.clone();
        tokio::spawn(async move {
            if let Err(err) = execution.reconcile().await {
                tracing::error!(%err, "reconciliation at start failed; run GET /api/trades/recover");
            }
            // Then again whenever an order's outcome was unknown: what the exchange holds is
            // protected without waiting for the minute's run.
            loop {
                execution.reconcile_wanted().await;
                if let Err(err) = execution.reconcile_telling(Telling::New).await {
                    tracing::error!(%err, "reconciliation after an unknown outcome failed");
                }
            }
        })
    });
    let scans = Scans::new(crate::scans::Parts {
        plugins: plugins.clone(),
        signals: signals.clone(),
        execution: execution.clone(),
        exchange: reads.clone(),
        store: store.clone(),
        messenger: messenger.clone(),
        dashboard: dashboard.clone(),
        config: config.clone(),
        clock: clock.clone(),
    });
    let tz = config.market.tz();
    let reporting = Reporting { dashboard: dashboard.clone(), metrics: metrics.clone() };
    let scheduler = Scheduler::new(&config.scheduler, tz, clock.clone(), JOBS, reporting);
    let news = Arc::new(News::new(&config.news, clock.clone()));
    let state = AppState::new(crate::state::Areas {
        auth: Arc::new(auth),
        audit: crate::audit::Audit::new(
            store.clone(),
            Arc::new(crate::execution::journal::Journal::new(store.clone())),
        ),
        scheduler,
        news,
        exchange: reads,
        market,
        paper,
        feed: feed.clone(),
        messenger,
        execution,
        signals,
        protection,
        scans,
        plugins,
        license,
        dashboard,
        live: Default::default(),
        config,
        clock,
        store,
        metrics,
    });
    let (shutdown, stopped) = oneshot::channel::<()>();
    let router = api::router(state.clone());
    let server = tokio::spawn(async move {
        // The peer's address: repeated bad tokens are counted per address.
        axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    tracing::info!(%addr, auth = state.auth.mode_now(), "serving the API");
    let replies = replies::spawn(replies::Parts {
        config: &state.config.messenger,
        secrets: &state.config.secrets,
        messenger: state.messenger.clone(),
        signals: state.signals.clone(),
        license: state.license.clone(),
        dashboard: state.dashboard.clone(),
        audit: state.audit.clone(),
        clock: state.clock.clone(),
    });
    let scheduler = scheduler::spawn(&state.config.scheduler, &state.scheduler, &state);
    let watch = crate::execution::protector::watch::spawn(
        &state.execution,
        std::time::Duration::from_millis(state.config.protection.watch_interval_ms),
        feed.clone(),
    );
    let reactions = feed.map(|feed| protection::reactions::spawn(&state.protection, feed));
    let bias_checks = Some(crate::plugins::bias::spawn(&state.plugins, &state.config));
    Ok(RunningApp {
        addr,
        state,
        shutdown: Some(shutdown),
        server,
        reconciliation,
        replies,
        scheduler,
        watch,
        reactions,
        bias_checks,
        streams,
    })
}

/// Loads the plugins folder (compiling on a blocking thread) and starts hot reload. Plugin
/// scans read the active exchange's klines through the market area's candle cache and get
/// its market contexts, or synthetic candles when configured.
async fn start_plugins(
    config: &Config,
    store: &Store,
    clock: &SharedClock,
    contexts: Option<Arc<MarketContexts>>,
    metrics: &crate::metrics::Metrics,
) -> anyhow::Result<crate::plugins::Plugins> {
    use crate::plugins::{ExchangeMarket, MarketData, NoMarketData, Plugins, SyntheticMarket};
    let market: Arc<dyn MarketData> = match (config.plugins.market_data.as_str(), contexts) {
        ("synthetic", _) => Arc::new(SyntheticMarket),
        (_, Some(contexts)) => Arc::new(ExchangeMarket::new(contexts)),
        (_, None) => Arc::new(NoMarketData),
    };
    let (config, store, clock) = (Arc::new(config.clone()), store.clone(), clock.clone());
    let metrics = metrics.clone();
    tokio::task::spawn_blocking(move || Plugins::start(config, store, clock, market, metrics))
        .await
        .context("plugin loading panicked")?
        .context("cannot start the plugin runtime")
}
