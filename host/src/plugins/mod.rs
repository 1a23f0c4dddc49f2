//! Strategy plugins: WebAssembly components that implement `wit/strategy.wit`, loaded from the
//! plugins folder, hot-reloaded, and run in a sandbox with no capability.
//!
//! Owns: the wasmtime engine and linker ([`runtime`]), the compiled-artifact cache
//! ([`cache`]), the registry of loaded files ([`registry`]) and the canary scan that gates a
//! version ([`canary`]), hot reload ([`watcher`]), and scan orchestration (config section and
//! preview overrides, persisted plugin state ([`state`]), response checks, the plugin's log
//! ([`logs`]), per-version scan statistics ([`stats`])). Must never: let a wasmtime type out
//! of this module, let a plugin touch files, network, environment or a real clock, or let one
//! plugin's failure affect another scan. [`Plugins`] is the public face.
//!
//! Around it: `limits` (what every call runs under), `errors` (why a file is refused or a
//! call failed), `calls` (one scan call and its response checks; [`StandalonePlugin`] outside
//! the registry) and `check` (`spotbot check-config`'s look at the folder).
//!
//! The contract's records are the SDK's own types ([`model`] re-exports `spotbot_sdk`'s), so
//! the host, the API and a strategy's native tests share one Rust and one JSON spelling;
//! `convert` is the one place that moves them in and out of the wasmtime bindings.

mod artifact;
pub mod bias;
mod cache;
mod calls;
pub mod canary;
mod check;
pub mod compiler;
mod convert;
mod errors;
mod limits;
pub mod logs;
pub mod market;
pub mod model;
mod needs;
pub mod registry;
mod runtime;
mod state;
pub mod stats;
mod validate;
mod watcher;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use arc_swap::ArcSwap;
use serde::Serialize;
use utoipa::ToSchema;

use crate::clock::SharedClock;
use crate::config::{Config, DEFAULT_STRATEGY, StrategyKeys};
use crate::metrics::MetricLabel;
use crate::store::Store;
pub use calls::StandalonePlugin;
use calls::run_scan;
use canary::CanaryInputs;
pub use check::check_folder;
pub(crate) use errors::describe_failure;
pub use errors::{LoadError, PluginError};
pub use limits::Limits;
pub use market::{ExchangeMarket, MarketData, MarketQuery, NoMarketData, SyntheticMarket};
pub use model::{Manifest, MarketSnapshot, ScanError, ScanRequest, ScanResponse, StateEntry};
use registry::{LoadOutcome, Registry};
pub use registry::{LoadedPlugin, PluginInfo, PluginStatus};
pub use runtime::{Compilation, Runtime, WIT_MAJOR};
pub use watcher::PluginWatcher;

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "strategy",
    });
}

/// The answer of a scan through the registry.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ScanOutcome {
    pub plugin: String,
    pub version: String,
    pub sha256: String,
    pub results: Vec<model::ScanResult>,
    pub alerts: Vec<model::ScannerAlert>,
    /// Number of state updates the plugin returned.
    pub state_updates: usize,
    /// Whether they were persisted: false for a preview with a config override, which
    /// persists nothing.
    pub state_persisted: bool,
    /// Wall time of the Wasm call, milliseconds.
    pub duration_ms: f64,
    /// What the plugin wrote to stderr during the call (the SDK's `log!`), one entry a line.
    pub logs: Vec<String>,
    /// Whether the per-call log buffer filled up and later lines were dropped.
    pub logs_truncated: bool,
}

/// How a scan through the registry treats its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScanMode {
    /// A scan of the service (a job, scan-and-signal, the scan route): persists the plugin's
    /// state and counts in its statistics.
    Serve,
    /// A preview with a config override: an experiment that persists nothing and leaves the
    /// statistics alone.
    Experiment,
}

/// Which thread runs a plugin call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CallThread {
    /// Tokio's blocking pool: the caller's runtime thread stays free for other tasks.
    Blocking,
    /// The caller's own thread (see [`Plugins::scan_on_this_thread`]).
    Caller,
}

struct Inner {
    runtime: Arc<Runtime>,
    dir: PathBuf,
    registry: ArcSwap<Registry>,
    /// Serializes registry changes (loads run outside of it only for the initial scan).
    load_lock: Mutex<()>,
    store: Store,
    clock: SharedClock,
    config: Arc<Config>,
    market: Arc<dyn MarketData>,
    permits: tokio::sync::Semaphore,
    watcher: Mutex<Option<PluginWatcher>>,
    /// Where every call's duration and failure is counted (`GET /metrics`).
    metrics: crate::metrics::Metrics,
}

/// The plugins area's public face. Cheap to clone.
#[derive(Clone)]
pub struct Plugins {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugins").field("dir", &self.inner.dir).finish()
    }
}

impl Plugins {
    /// Builds the engine, loads every `.wasm` of `[plugins] dir` and starts watching it.
    /// Compiled artifacts are cached under `<data_dir>/plugin-cache`. Scans are timed and
    /// counted in `metrics`.
    pub fn start(
        config: Arc<Config>,
        store: Store,
        clock: SharedClock,
        market: Arc<dyn MarketData>,
        metrics: crate::metrics::Metrics,
    ) -> anyhow::Result<Self> {
        let limits = Limits::from_config(&config.plugins);
        Self::start_with(config, limits, store, clock, market, metrics)
    }

    /// [`Self::start`] under other `limits` than `[plugins]` gives (a replay's, which keep
    /// more memory resident: [`Limits::for_replay`]).
    pub fn start_with(
        config: Arc<Config>,
        limits: Limits,
        store: Store,
        clock: SharedClock,
        market: Arc<dyn MarketData>,
        metrics: crate::metrics::Metrics,
    ) -> anyhow::Result<Self> {
        let cache_dir = Path::new(&config.server.data_dir).join("plugin-cache");
        let compiled = Compilation { cache_dir, compiler: config.plugins.compiler.clone() };
        let runtime = Runtime::new(limits.clone(), Some(compiled))?;
        let dir = PathBuf::from(&config.plugins.dir);
        std::fs::create_dir_all(&dir).map_err(|e| {
            anyhow::anyhow!("cannot create the plugins folder {}: {e}", dir.display())
        })?;
        let plugins = Plugins {
            inner: Arc::new(Inner {
                runtime,
                dir: dir.clone(),
                registry: ArcSwap::from_pointee(Registry::default()),
                load_lock: Mutex::new(()),
                store,
                clock,
                permits: tokio::sync::Semaphore::new(limits.max_concurrent_calls),
                config,
                market,
                watcher: Mutex::new(None),
                metrics,
            }),
        };
        // Watch first, then read the folder: a file written in between is seen either way.
        let watcher = watcher::watch(plugins.downgrade(), dir, limits.reload_debounce)?;
        *plugins.inner.watcher.lock().unwrap_or_else(|p| p.into_inner()) = Some(watcher);
        plugins.sync_dir();
        Ok(plugins)
    }

    fn downgrade(&self) -> WeakPlugins {
        WeakPlugins(Arc::downgrade(&self.inner))
    }

    /// Stops watching the folder (loaded plugins keep serving).
    pub fn stop_watching(&self) {
        self.inner.watcher.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// The plugins folder.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The shared runtime (for [`StandalonePlugin`]).
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.inner.runtime
    }

    /// Every file of the folder with its plugin and status, by file name.
    pub fn list(&self) -> Vec<PluginInfo> {
        self.inner.registry.load().infos()
    }

    /// The serving plugin called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<LoadedPlugin>> {
        self.inner.registry.load().plugin(name)
    }

    /// Re-reads every `.wasm` of the folder and forgets files that are gone.
    pub fn sync_dir(&self) {
        let mut paths: Vec<PathBuf> = match std::fs::read_dir(&self.inner.dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| registry::is_plugin_file(p))
                .collect(),
            Err(err) => {
                tracing::warn!(dir = %self.inner.dir.display(), %err, "cannot read the plugins folder");
                Vec::new()
            }
        };
        let known: Vec<PathBuf> =
            self.inner.registry.load().files.keys().map(|f| self.inner.dir.join(f)).collect();
        paths.extend(known);
        paths.sort();
        paths.dedup();
        self.sync_paths(&paths);
    }

    /// Loads, replaces or removes the given files (blocking: compiles).
    pub fn sync_paths(&self, paths: &[PathBuf]) {
        let _guard = self.inner.load_lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut removed_any = false;
        for path in paths {
            removed_any |= self.sync_one(path);
        }
        if removed_any {
            // A name conflict may have gone away with the removed file: retry refused files.
            let retry: Vec<PathBuf> = self
                .inner
                .registry
                .load()
                .files
                .iter()
                .filter(|(_, e)| e.serving.is_none())
                .map(|(f, _)| self.inner.dir.join(f))
                .collect();
            for path in retry {
                let mut reg = (**self.inner.registry.load()).clone();
                if let Some(e) = reg.files.get_mut(&registry::file_name(&path)) {
                    e.tried_sha256.clear();
                }
                self.inner.registry.store(Arc::new(reg));
                self.sync_one(&path);
            }
        }
    }

    /// Returns whether a file was removed.
    fn sync_one(&self, path: &Path) -> bool {
        let current = self.inner.registry.load_full();
        let file = registry::file_name(path);
        let started = Instant::now();
        let store = &self.inner.store;
        let persisted = |name: &str| -> Vec<StateEntry> {
            match state::stored(store, name) {
                Ok(state) => state::entries(state.unwrap_or_default()),
                Err(err) => {
                    tracing::warn!(name, %err, "the canary runs on empty state");
                    Vec::new()
                }
            }
        };
        let inputs = CanaryInputs {
            reference_symbol: &self.inner.config.market.reference_symbol,
            state: &persisted,
        };
        let (next, outcome) = registry::load_file(
            &self.inner.runtime,
            &current,
            path,
            &self.inner.config.strategy,
            &inputs,
            self.inner.clock.now(),
        );
        let removed = current.files.contains_key(&file) && !next.files.contains_key(&file);
        self.inner.registry.store(Arc::new(next));
        match outcome {
            LoadOutcome::Loaded(p) => tracing::info!(
                file, name = %p.manifest.name, version = %p.manifest.version, cached = p.from_cache,
                canary = %p.canary.outcome, canary_ms = p.canary.duration_ms,
                ms = started.elapsed().as_millis() as u64, "plugin loaded"
            ),
            LoadOutcome::Refused(err) => tracing::warn!(file, %err, "plugin file refused"),
            LoadOutcome::Unchanged if removed => tracing::info!(file, "plugin file removed"),
            LoadOutcome::Unchanged => {}
        }
        removed
    }

    /// Scans `symbols` (default: the watchlist) with the plugin `name`, fetching the market
    /// data its manifest asks for. A symbol the market source does not list is refused by name
    /// before anything is fetched. Persists the plugin's state updates; creates no signals.
    pub async fn scan(
        &self,
        name: &str,
        symbols: Option<Vec<String>>,
    ) -> Result<ScanOutcome, PluginError> {
        self.preview(name, symbols, None).await
    }

    /// [`Plugins::scan`] with an optional `config` override merged over the plugin's
    /// effective config for this scan only. The override is checked like a config section
    /// (every key one of the plugin's, of its type; `invalid_config` names the key). A scan
    /// with an override is an experiment: it persists no state update and is not counted in
    /// the plugin's statistics; without one it is an ordinary scan.
    pub async fn preview(
        &self,
        name: &str,
        symbols: Option<Vec<String>>,
        config: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<ScanOutcome, PluginError> {
        self.fetch_and_scan(name, symbols, config, CallThread::Blocking).await
    }

    /// [`Plugins::scan`] with the plugin called on the caller's thread instead of tokio's
    /// blocking pool, for a caller that has a thread of its own with nothing else to do (a
    /// backtest's scans, see `backtest::scans`): there, handing every call to another thread
    /// and back only costs two context switches.
    pub async fn scan_on_this_thread(
        &self,
        name: &str,
        symbols: Option<Vec<String>>,
    ) -> Result<ScanOutcome, PluginError> {
        self.fetch_and_scan(name, symbols, None, CallThread::Caller).await
    }

    async fn fetch_and_scan(
        &self,
        name: &str,
        symbols: Option<Vec<String>>,
        config: Option<serde_json::Map<String, serde_json::Value>>,
        thread: CallThread,
    ) -> Result<ScanOutcome, PluginError> {
        let plugin = self.get(name).ok_or_else(|| PluginError::NotFound(name.to_string()))?;
        let mode = if config.is_some() { ScanMode::Experiment } else { ScanMode::Serve };
        let config = self.scan_config(&plugin, config.as_ref())?;
        let request = self.build_request(&plugin, config, symbols).await?;
        self.scan_plugin(plugin, request, mode, thread).await
    }

    /// The exact request a scan of `symbols` (default: the watchlist) by plugin `name` would
    /// send now: the same market data, config, state and time. Runs nothing; a plugin switched
    /// off still answers (authors save it as a fixture, see `spotbot_sdk::testing`).
    pub async fn request(
        &self,
        name: &str,
        symbols: Option<Vec<String>>,
    ) -> Result<ScanRequest, PluginError> {
        let plugin = self.get(name).ok_or_else(|| PluginError::NotFound(name.to_string()))?;
        let config = self.config_with(&plugin, None)?;
        self.build_request(&plugin, config, symbols).await
    }

    /// Fetches the market data `plugin` asks for and builds its scan request.
    async fn build_request(
        &self,
        plugin: &LoadedPlugin,
        config: serde_json::Value,
        symbols: Option<Vec<String>>,
    ) -> Result<ScanRequest, PluginError> {
        let market = &self.inner.config.market;
        let symbols = symbols.unwrap_or_else(|| market.watchlist.clone());
        if let Some(unknown) =
            self.inner.market.unlisted(&symbols).await.map_err(PluginError::MarketData)?
        {
            return Err(PluginError::UnknownSymbol(unknown));
        }
        let candles = needs::effective(&plugin.manifest.candles, &config)
            .map_err(|e| PluginError::Plugin(ScanError::BadConfig(e)))?;
        let query = MarketQuery {
            symbols,
            candles,
            reference: plugin.manifest.needs_reference.then(|| market.reference_symbol.clone()),
            market_context: plugin.manifest.needs_market_context,
            now_ms: self.inner.clock.now_ms(),
        };
        let snapshot = self.inner.market.snapshot(query).await.map_err(PluginError::MarketData)?;
        self.request_for(&plugin.manifest.name, config, snapshot)
    }

    /// The request of a scan of `snapshot` with `config`, at the service clock's now.
    fn request_for(
        &self,
        name: &str,
        config: serde_json::Value,
        snapshot: MarketSnapshot,
    ) -> Result<ScanRequest, PluginError> {
        Ok(ScanRequest {
            now_ms: self.inner.clock.now_ms(),
            config: config.to_string(),
            symbols: snapshot.symbols,
            reference: snapshot.reference,
            state: state::entries(self.state(name)?),
        })
    }

    /// Scans market data the caller already has with the plugin `name`.
    pub async fn scan_with(
        &self,
        name: &str,
        snapshot: MarketSnapshot,
    ) -> Result<ScanOutcome, PluginError> {
        let plugin = self.get(name).ok_or_else(|| PluginError::NotFound(name.to_string()))?;
        let config = self.scan_config(&plugin, None)?;
        let request = self.request_for(name, config, snapshot)?;
        self.scan_plugin(plugin, request, ScanMode::Serve, CallThread::Blocking).await
    }

    /// The plugin's effective config for a scan, with `over` merged in; a plugin switched off
    /// (`enabled = false`) does not scan.
    fn scan_config(
        &self,
        plugin: &LoadedPlugin,
        over: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Result<serde_json::Value, PluginError> {
        let config = self.config_with(plugin, over)?;
        if config.get("enabled") == Some(&serde_json::Value::Bool(false)) {
            return Err(PluginError::Disabled(plugin.manifest.name.clone()));
        }
        Ok(config)
    }

    /// The plugin's effective config with `over` checked and merged over it.
    fn config_with(
        &self,
        plugin: &LoadedPlugin,
        over: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Result<serde_json::Value, PluginError> {
        let name = &plugin.manifest.name;
        let mut config = self.effective_config(name).unwrap_or_default();
        if let Some(over) = over {
            validate::keys("config", name, &plugin.manifest.default_config, over)
                .map_err(PluginError::InvalidConfig)?;
            match &mut config {
                serde_json::Value::Object(map) => map.extend(over.clone()),
                other => *other = serde_json::Value::Object(over.clone()),
            }
        }
        Ok(config)
    }

    async fn scan_plugin(
        &self,
        plugin: Arc<LoadedPlugin>,
        request: ScanRequest,
        mode: ScanMode,
        thread: CallThread,
    ) -> Result<ScanOutcome, PluginError> {
        let name = plugin.manifest.name.clone();
        let symbols = request.symbols.len();
        let closed = |_| PluginError::Internal("plugin runtime is shutting down".into());
        // The plugin's own share first, then a slot of the pool: a plugin's queued scans
        // never hold a slot another plugin could use.
        let _own = plugin.calls.acquire().await.map_err(closed)?;
        let _slot = self.inner.permits.acquire().await.map_err(closed)?;
        let runtime = self.inner.runtime.clone();
        let serving = plugin.clone();
        let started = Instant::now();
        let call = move || run_scan(&runtime, &serving.compiled, &serving.manifest, request);
        let (result, log) = match thread {
            CallThread::Blocking => tokio::task::spawn_blocking(call)
                .await
                .map_err(|e| PluginError::Internal(format!("plugin call panicked: {e}")))?,
            CallThread::Caller => call(),
        };
        let elapsed = started.elapsed();
        let duration_ms = elapsed.as_secs_f64() * 1000.0;
        log.emit(&name, if mode == ScanMode::Serve { "scan" } else { "preview" });
        let persist = mode == ScanMode::Serve;
        let result = result.and_then(|response| {
            if persist && !response.state_updates.is_empty() {
                let cap = self.inner.runtime.limits().max_state_bytes;
                state::apply(&self.inner.store, &name, &response.state_updates, cap)?;
            }
            Ok(response)
        });
        let outcome = result.as_ref().map(|_| ());
        self.inner.metrics.plugin_scan(&name, elapsed, outcome.map_err(|e| e as &dyn MetricLabel));
        if mode == ScanMode::Serve {
            plugin.stats.record(self.inner.clock.now(), duration_ms, symbols, outcome);
        }
        let response = result?;
        Ok(ScanOutcome {
            plugin: name,
            version: plugin.manifest.version.clone(),
            sha256: plugin.sha256.clone(),
            results: response.results,
            alerts: response.alerts,
            state_updates: response.state_updates.len(),
            state_persisted: persist,
            duration_ms,
            logs: log.lines,
            logs_truncated: log.truncated,
        })
    }

    /// The effective config of plugin `name`: its manifest's defaults overlaid with its
    /// `[strategy.<name>]` section; only the section when no plugin of that name is loaded;
    /// `None` when there is neither.
    pub fn effective_config(&self, name: &str) -> Option<serde_json::Value> {
        let section = self.inner.config.strategy.section_json(name);
        match self.get(name) {
            Some(plugin) => {
                let text = validate::effective_config(&plugin.manifest.default_config, section);
                serde_json::from_str(&text).ok()
            }
            None => section,
        }
    }

    /// The keys the host acts on for strategy `bot`: its effective config and section (which
    /// may set a host key the plugin does not declare), then [`DEFAULT_STRATEGY`]'s, then the
    /// host's fallbacks ([`StrategyKeys`]).
    pub fn strategy_keys(&self, bot: &str) -> StrategyKeys {
        let sections = &self.inner.config.strategy;
        let of = |name: &str| [self.effective_config(name), sections.section_json(name)];
        let default = if bot == DEFAULT_STRATEGY { [None, None] } else { of(DEFAULT_STRATEGY) };
        StrategyKeys::resolve(default.iter().chain(of(bot).iter()).flatten())
    }

    /// The persisted state of plugin `name` (empty when none is stored).
    pub fn state(&self, name: &str) -> Result<BTreeMap<String, String>, PluginError> {
        Ok(state::stored(&self.inner.store, name)?.unwrap_or_default())
    }

    /// The persisted state of plugin `name` for the API, loaded or not (the state of a removed
    /// plugin stays readable); `NoState` when none is stored (never scanned with an update, or
    /// reset).
    pub fn state_of(&self, name: &str) -> Result<PluginState, PluginError> {
        let state = state::stored(&self.inner.store, name)?
            .ok_or_else(|| PluginError::NoState(name.to_string()))?;
        Ok(PluginState {
            plugin: name.to_string(),
            bytes: state::size(&state),
            cap_bytes: self.inner.runtime.limits().max_state_bytes,
            state,
        })
    }

    /// Deletes the persisted state of plugin `name`; returns how many keys it had. The next
    /// scan starts from an empty state. `NoState` when none is stored.
    pub fn reset_state(&self, name: &str) -> Result<usize, PluginError> {
        let removed = state::reset(&self.inner.store, name)?
            .ok_or_else(|| PluginError::NoState(name.to_string()))?;
        tracing::info!(plugin = name, keys = removed, "plugin state reset");
        Ok(removed)
    }
}

/// A plugin's persisted state as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PluginState {
    pub plugin: String,
    /// Every key with its value, sorted by key (what the next scan's request carries).
    pub state: BTreeMap<String, String>,
    /// Bytes of keys and values, counted against `cap_bytes`.
    pub bytes: usize,
    /// `plugins.max_state_kib` in bytes.
    pub cap_bytes: usize,
}

/// A non-owning handle for the watcher thread, so dropping [`Plugins`] ends everything.
#[derive(Clone)]
pub(crate) struct WeakPlugins(Weak<Inner>);

impl WeakPlugins {
    fn upgrade(&self) -> Option<Plugins> {
        self.0.upgrade().map(|inner| Plugins { inner })
    }

    pub(crate) fn sync_paths(&self, paths: &[PathBuf]) {
        if let Some(p) = self.upgrade() {
            p.sync_paths(paths);
        }
    }

    pub(crate) fn sync_dir(&self) {
        if let Some(p) = self.upgrade() {
            p.sync_dir();
        }
    }
}
