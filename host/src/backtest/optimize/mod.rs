//! `spotbot optimize`: searches a plugin's parameters over the same `.wasm` and the same
//! replay as `spotbot backtest`, walk-forward: each window chooses its parameters in sample
//! and is measured out of sample with them; the report leads with the out-of-sample result.
//!
//! - [`space`]: the searched keys from the author's TOML file; [`sampler`]: TPE, random or
//!   grid; [`objective`]: what a trial scores and what rules it out;
//! - [`windows`]: the walk-forward cut; [`search`]: one window's trials on every core;
//!   [`trial`]: one trial's replay; [`report`]: the run's result; [`html`]: its page.
//!
//! The history is read once and shared read-only by every trial; each trial loads the plugin
//! under its own config (the compiled artifact comes from the cache) with its own simulator
//! and in-memory store, so trials share nothing they could change.
//!
//! `docs/backtest.md` ("Optimise") is the user's documentation.

pub mod html;
pub mod objective;
pub mod report;
pub mod sampler;
mod search;
pub mod space;
mod trial;
pub mod windows;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;

pub use objective::{Constraints, Objective};
pub use report::OptimizeReport;
pub use sampler::Method;
pub use search::Plan;
pub use windows::Walk;

use super::market::Served;
use super::progress::Progress;
use super::replay::prepare;
use super::session::Session;
use super::setup::check;
use crate::config::Config;
use search::Searcher;
use trial::Bench;

/// What to search.
#[derive(Debug, Clone)]
pub struct OptimizeSpec {
    /// The plugin, symbols, whole span and candles, as for a backtest.
    pub backtest: super::Spec,
    /// The search space's TOML text.
    pub space: String,
    pub plan: Plan,
    pub walk: Walk,
    pub windows: usize,
    /// Share of each window in sample, percent.
    pub in_sample_pct: f64,
    /// Trials replayed at once (0: one per core).
    pub workers: usize,
}

/// Runs the search of `spec` with the operator's `config` (as `spotbot backtest` does); builds
/// its own runtime, so it is called outside one.
pub fn run(
    config: &Config,
    spec: &OptimizeSpec,
    progress: &mut Progress,
) -> anyhow::Result<OptimizeReport> {
    let backtest = &spec.backtest;
    check(config, backtest)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let (session, prepared) = runtime.block_on(async {
        let session =
            Session::start(config, &backtest.plugin, backtest.from_ms, Served::AsLive).await?;
        let prepared = prepare(backtest, &session, 1, progress).await?;
        anyhow::Ok((session, prepared))
    })?;
    let space = space::Space::parse(&spec.space, &session.loaded.manifest.default_config)
        .context("the search space")?;
    let finest = prepared.finest();
    let step_ms = finest.duration_ms();
    let (first, last) = super::replay::steps_between(finest, backtest.from_ms, backtest.to_ms)?;
    let windows =
        windows::windows(first, last, step_ms, spec.windows, spec.in_sample_pct, spec.walk)?;
    let workers = match spec.workers {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(|i| format!("optimize-{i}"))
        .build()
        .context("cannot start the trials' threads")?;
    let steps_per_year = 365.0 * 24.0 * 3_600_000.0 / step_ms as f64;
    let searcher = Searcher {
        pool,
        runtime: runtime.handle().clone(),
        bench: Bench {
            config,
            plugin: &backtest.plugin,
            name: &session.name,
            symbols: &backtest.symbols,
            prepared: &prepared,
            space: &space,
            steps_per_year,
        },
        plan: spec.plan,
    };
    progress.note(&format!(
        "optimize {}: {} trial(s) x {} window(s), {:?} over {} key(s), {} worker(s)",
        session.name,
        spec.plan.trials,
        windows.len(),
        spec.plan.method,
        space.params.len(),
        workers
    ));
    let started = Instant::now();
    progress.start(spec.plan.trials * windows.len());
    let mut searched = Vec::with_capacity(windows.len());
    for (number, window) in windows.iter().enumerate() {
        let of = windows.len();
        searched.push(searcher.search_window(*window, (number, of), progress, started)?);
    }
    progress.finish();
    let elapsed_s = started.elapsed().as_secs_f64();
    let report = OptimizeReport::new(report::Inputs {
        session: &session,
        spec,
        space: &space,
        config,
        steps_per_year,
        searched: &searched,
        elapsed_s,
        source: prepared.source(),
        timeframe: finest,
    });
    drop(searcher);
    drop(runtime);
    Ok(report)
}

/// The default place of a run's report of type `extension` (`json`, `html`):
/// `<data_dir>/backtests/optimize-<plugin>.<extension>`, the two side by side.
pub fn default_report_path(config: &Config, plugin: &str, extension: &str) -> PathBuf {
    PathBuf::from(&config.server.data_dir)
        .join("backtests")
        .join(format!("optimize-{plugin}.{extension}"))
}
