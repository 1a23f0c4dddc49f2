//! One plugin loaded for replays under one config: the run's temporary folder (a copy of the
//! `.wasm` in a plugins folder of its own), an in-memory store, the plugins area on a clock of
//! its own and the history as its market data source.
//!
//! A backtest starts one session; the optimiser starts one per trial (the trial's parameters
//! are its config), all reading the same prepared history. Loading a session compiles nothing
//! after the first: the compiled artifact comes from `<data_dir>/plugin-cache`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, bail};

use super::market::{BacktestMarket, Served};
use crate::clock::{SharedClock, TestClock};
use crate::config::{Config, Secrets};
use crate::plugins::registry::LoadedPlugin;
use crate::plugins::{Limits, MarketData, Plugins};
use crate::store::Store;

/// A temporary folder of one session, deleted when dropped.
pub(super) struct RunDir(PathBuf);

impl RunDir {
    fn new() -> anyhow::Result<Self> {
        static RUNS: AtomicU64 = AtomicU64::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("spotbot-backtest-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .with_context(|| format!("cannot create the run folder {}", path.display()))?;
        Ok(RunDir(path))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The plugin, loaded and serving, with what its replays share.
pub(super) struct Session {
    /// The run's config (see [`run_config`]).
    pub cfg: Arc<Config>,
    pub store: Store,
    pub market: Arc<BacktestMarket>,
    pub plugins: Plugins,
    /// The plugins area's clock: the scans run ahead of the replay on it.
    pub scan_clock: TestClock,
    pub name: String,
    pub loaded: Arc<LoadedPlugin>,
    /// Dropped last: the plugins folder the area read.
    _dir: RunDir,
}

impl Session {
    /// Loads `plugin` under `config` (its `[strategy.<name>]` section applies), its scans
    /// served the history `served`; fails with the plugins area's reason when the file is
    /// refused.
    pub async fn start(
        config: &Config,
        plugin: &Path,
        from_ms: i64,
        served: Served,
    ) -> anyhow::Result<Self> {
        let dir = RunDir::new()?;
        let cfg = Arc::new(run_config(config, plugin, &dir)?);
        let scan_clock = TestClock::new(datetime(from_ms));
        let store = Store::in_memory().context("cannot open the run's store")?;
        let market = Arc::new(BacktestMarket::serving(served));
        // A replay's counts are nobody's to scrape: its parts count into a recorder of their own.
        let metrics = crate::metrics::Metrics::default();
        let plugins = {
            let (cfg, store) = (cfg.clone(), store.clone());
            let shared: SharedClock = Arc::new(scan_clock.clone());
            let source: Arc<dyn MarketData> = market.clone();
            let limits = Limits::from_config(&cfg.plugins).for_replay();
            tokio::task::spawn_blocking(move || {
                Plugins::start_with(cfg, limits, store, shared, source, metrics)
            })
            .await
            .context("plugin loading panicked")?
            .context("cannot start the plugin runtime")?
        };
        plugins.stop_watching();
        let info = plugins.list().into_iter().next().context("the plugin file was not read")?;
        let Some(name) = info.name.clone().filter(|_| info.last_error.is_none()) else {
            bail!(
                "{} was refused: {}",
                plugin.display(),
                info.last_error.unwrap_or_else(|| "no reason given".into())
            );
        };
        let loaded = plugins.get(&name).context("the plugin is not serving")?;
        Ok(Session { cfg, store, market, plugins, scan_clock, name, loaded, _dir: dir })
    }
}

impl Session {
    /// What a run of this session's plugin over `symbols` from `from` to `to` replayed.
    pub fn replayed(
        &self,
        symbols: &[String],
        timeframe: crate::market::Timeframe,
        from: String,
        to: String,
    ) -> super::report::Replayed {
        super::report::Replayed {
            plugin: self.name.clone(),
            version: self.loaded.manifest.version.clone(),
            sha256: self.loaded.sha256.clone(),
            symbols: symbols.to_vec(),
            timeframe: timeframe.as_str().to_string(),
            from,
            to,
        }
    }
}

/// The run's config: the operator's, with the plugins folder of the copy, nobody to message,
/// and stops on the exchange: the replay has no watch loop, while the simulator's matching
/// engine executes exchange-side stops on the price path (a watched stop would exit at about
/// the same price, at market).
fn run_config(config: &Config, plugin: &Path, dir: &RunDir) -> anyhow::Result<Config> {
    let file = plugin.file_name().map(PathBuf::from).unwrap_or_default();
    if file.extension().and_then(|e| e.to_str()) != Some("wasm") {
        bail!("{} is not a .wasm file", plugin.display());
    }
    let plugins_dir = dir.0.join("plugins");
    std::fs::create_dir_all(&plugins_dir)?;
    std::fs::copy(plugin, plugins_dir.join(&file))
        .with_context(|| format!("cannot read {}", plugin.display()))?;
    let mut cfg = config.clone();
    cfg.plugins.dir = plugins_dir.display().to_string();
    cfg.messenger = Default::default();
    cfg.secrets = Secrets::default();
    cfg.protection.stop = crate::config::StopPlacement::Exchange;
    Ok(cfg)
}

/// The instant `ms` milliseconds after the epoch (the replay's clocks run on them).
pub(super) fn datetime(ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default()
}
