//! Backtest: one strategy plugin artifact, unmodified, replayed over history, its buy results
//! placed as bracket orders in the exchange simulator's matching engine, without approval.
//!
//! The replay uses the service's own parts: the plugins area scans through `Plugins::scan`
//! (the live scan path; only the market data source is the history, see [`market`]), and
//! execution opens, protects and settles trades against `spotbot-sim` over loopback exactly as
//! it does against the exchange (sizing, MARKET entry, OCO, fees, daily limits, the order
//! journal, the closed-trade history). Time is a manual clock shared by the host areas and the
//! simulator: nothing in the replay reads the wall clock, so the same candles give the same
//! trades.
//!
//! - [`history`]: candles from CSV files, cut and aggregated; [`klines`]: the same from the
//!   exchange's klines, cached on disk under `<data_dir>/backtest-cache/`.
//! - [`market`]: the history as the plugins area's market data source.
//! - [`replay`]: the run's wiring and the time loop; `setup`: what it reads and lists first;
//!   `scans`: the plugin's scans, run ahead of the replay on the second core.
//! - [`report`]: statistics; [`why`]: why results did not become trades; [`html`]: the
//!   self-contained report page; [`progress`]: stderr.
//!
//! Owns: the run's temporary store, plugins folder and simulator. Must never: touch the
//! service's database or plugins folder, message the boss, or trade on a real exchange (the
//! configured exchange is only read for klines and symbol rules).
//!
//! `docs/backtest.md` is the user's documentation.

pub mod bias;
pub mod history;
pub mod html;
pub mod klines;
pub mod market;
pub mod optimize;
pub mod progress;
pub mod replay;
pub mod report;
pub mod robustness;
mod scans;
mod session;
mod setup;
pub mod why;

use std::path::PathBuf;

pub use progress::Progress;
pub use report::{EquityPoint, GappedStop, Report, SignalCounts, TimeSplit, TradeRow};
pub use why::{NoTrade, WhyNoTrade};

use crate::config::Config;

/// What to replay.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The plugin's `.wasm` file.
    pub plugin: PathBuf,
    /// Symbols scanned and traded (quoted in `[market] quote_asset`).
    pub symbols: Vec<String>,
    /// First and last step, epoch ms (rounded onto the plugin's finest timeframe).
    pub from_ms: i64,
    pub to_ms: i64,
    /// A folder of `<SYMBOL>_<timeframe>.csv` files; `None` reads the configured exchange's
    /// klines through the on-disk cache.
    pub candles: Option<PathBuf>,
}

/// Runs the backtest of `spec` with the operator's `config` (its `[strategy.<name>]`
/// section, `[risk]`, `[exchange] paper_usdt` / `paper_seed`, `[market]` apply).
pub async fn run(config: &Config, spec: &Spec, progress: &mut Progress) -> anyhow::Result<Report> {
    replay::run(config, spec, progress).await
}
