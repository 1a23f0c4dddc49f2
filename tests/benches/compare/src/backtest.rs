//! `cargo xtask bench-backtest [--spotbot PATH]...`: the whole `spotbot backtest` command
//! against backtesting.py and Freqtrade, one tool at a time in the same run, on the same
//! strategy and data:
//!
//! - the strategy: SMA(10)/SMA(30) cross-up on closed 1h candles, stop 5 %, target 10 %,
//!   fee 0.1 % per side — the test guest `sma_cross` (`tests/guests/guest-sma-cross`) for
//!   spotbot, `python/backtesting_py.py` for backtesting.py, `python/freqtrade_run.py`
//!   for Freqtrade (which needs the exchange's market list even to backtest: the script serves
//!   it on loopback), each in a venv of its own ([`BENCH`], [`FREQTRADE`]);
//! - the data: [`SYMBOLS`] random walks of one year of 1h candles ([`STEPS`] steps each, after
//!   [`WARM_UP`] candles the SMA needs), 1 % hourly volatility, seeded, written once as the
//!   backtest's CSV files under `target/bench-backtest/candles/`.
//!
//! Each tool runs twice and the second run counts: the first fills spotbot's compiled-plugin
//! cache and Python's bytecode cache, as any second run of either has them. spotbot's time is
//! the wall clock of the process (start, config, plugin load, candles read, replay, report
//! files); a Python tool's is its script's, and its inner loop alone (`Backtest.run`,
//! Freqtrade's backtest). The trades are compared with backtesting.py's by symbol and entry
//! hour, so a speed-up that changed the results shows.
//!
//! `--spotbot PATH` (repeatable) times other builds of `spotbot` beside the release build of
//! the workspace (e.g. one of an earlier commit, for a before/after table). Numbers go to
//! `docs/benchmarks.md` ("Backtest against backtesting.py").

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::Value;

use xtask_support::{Cargo, path_str, plugins, venv};

use crate::{BENCH, FREQTRADE, script, sma_cross_guest};
use xtask_support::backtest::BacktestRun;
use xtask_support::backtest::rows::{self, Row};
use xtask_support::backtest::walk::walk;

/// Symbols traded, each its own random walk.
pub(crate) const SYMBOLS: usize = 20;
/// One year of hourly steps.
pub(crate) const STEPS: usize = 365 * 24;
/// Closed candles before the first step: SMA(30) one candle ago needs 31, so neither tool can
/// enter before the first step.
const WARM_UP: usize = 31;
/// The first step, 2025-01-01T00:00:00Z.
pub(crate) const FROM_MS: i64 = 1_735_689_600_000;
pub(crate) const HOUR_MS: i64 = 3_600_000;
/// Standard deviation of the hourly log returns.
const HOURLY_SD: f64 = 0.01;
/// Every walk starts here (a tick of 0.01 and a step of 0.001 in the listing derived from it).
const START_PRICE: f64 = 100.0;

/// The run's config: one position per symbol at 5 % of the capital (all 20 fit at once), no
/// daily trade or loss-streak limit and no trailing, as the other tool has none.
pub(crate) const CONFIG: &str = "[risk]\nmax_consecutive_losses = 0\n\n\
                                 [strategy.sma_cross]\nsize_pct = 5.0\nmax_trades_per_day = 1000\n\
                                 trailing_enabled = false\n";

/// What one timed run measured.
struct Timed {
    label: String,
    total_s: f64,
    detail: String,
    /// (symbol, entry time RFC 3339).
    entries: BTreeSet<(String, String)>,
}

/// `cargo xtask bench-backtest`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut others = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--spotbot" => {
                others.push(PathBuf::from(args.next().context("--spotbot needs a path")?))
            }
            other => bail!(
                "unknown argument {other:?} (usage: cargo xtask bench-backtest [--spotbot PATH]...)"
            ),
        }
    }
    Cargo::workspace().run(&["build", "--release", "--package", "spotbot"])?;
    let plugin = sma_cross_guest()?;
    let target = plugins::target_dir()?;
    let dir = target.join("bench-backtest");
    let candles = write_candles(&dir)?;
    let config = dir.join("config.toml");
    std::fs::write(&config, CONFIG)?;

    let mut binaries =
        vec![("spotbot (this tree)".to_string(), target.join("release").join("spotbot"))];
    binaries.extend(others.into_iter().map(|p| (format!("spotbot ({})", p.display()), p)));
    let mut rows = Vec::new();
    for (label, binary) in &binaries {
        spotbot(&dir, &config, &plugin, &candles, binary, label)?;
        rows.push(spotbot(&dir, &config, &plugin, &candles, binary, label)?);
    }
    for tool in &PYTHON_TOOLS {
        tool.run(&dir, &candles)?;
        rows.push(tool.run(&dir, &candles)?);
    }

    let reference = rows[rows.len() - PYTHON_TOOLS.len()].entries.clone();
    println!(
        "\nbench-backtest: {SYMBOLS} random walks x {STEPS} 1h steps, SMA(10)/SMA(30) cross-up, \
         stop 5 %, target 10 %, fee 0.1 %"
    );
    println!(
        "| tool | total (s) | µs per symbol-step | trades | same entry as backtesting.py | detail |"
    );
    println!("|---|---|---|---|---|---|");
    for r in &rows {
        let same = r.entries.intersection(&reference).count();
        println!(
            "| {} | {:.2} | {:.1} | {} | {} | {} |",
            r.label,
            r.total_s,
            r.total_s * 1e6 / (SYMBOLS * STEPS) as f64,
            r.entries.len(),
            same,
            r.detail
        );
    }
    Ok(())
}

/// The symbol names: `W01USDT` ...
pub(crate) fn symbols() -> Vec<String> {
    (1..=SYMBOLS).map(|i| format!("W{i:02}USDT")).collect()
}

/// Writes the walks once; returns their folder.
pub(crate) fn write_candles(dir: &Path) -> anyhow::Result<PathBuf> {
    let folder = dir.join("candles");
    std::fs::create_dir_all(&folder)?;
    let calendar: Vec<Row> = (0..WARM_UP + STEPS + 1)
        .map(|i| {
            let ms = FROM_MS + (i as i64 - WARM_UP as i64) * HOUR_MS;
            let time = chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default();
            Row {
                time: time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                open: 0.0,
                high: 0.0,
                low: 0.0,
                close: 0.0,
                volume: 1000.0,
            }
        })
        .collect();
    for (i, symbol) in symbols().iter().enumerate() {
        let file = folder.join(format!("{symbol}_1h.csv"));
        if !file.exists() {
            let candles = walk(&calendar, START_PRICE, HOURLY_SD, 1000 + i as u64);
            rows::write_atomically(&file, &rows::to_csv(&candles))?;
        }
    }
    Ok(folder)
}

/// One timed `spotbot backtest` of the whole year.
fn spotbot(
    dir: &Path,
    config: &Path,
    plugin: &Path,
    candles: &Path,
    binary: &Path,
    label: &str,
) -> anyhow::Result<Timed> {
    let last_ms = FROM_MS + (STEPS as i64 - 1) * HOUR_MS;
    let (report, total_s) = BacktestRun {
        binary,
        config,
        plugin,
        symbols: &symbols(),
        from: &FROM_MS.to_string(),
        to: &last_ms.to_string(),
        candles,
        work: dir,
        name: "spotbot",
    }
    .run()?;
    let timing = &report["timing"];
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let detail = format!(
        "replay {:.2} s: scan {:.2} s (plugin {:.2} s), execution {:.2} s, simulator {:.2} s",
        f(&report["elapsed_s"]),
        f(&timing["scan_s"]),
        f(&timing["plugin_call_s"]),
        f(&timing["execution_s"]),
        f(&timing["simulator_s"]),
    );
    let entries = entries(&report["trades"], "opened_at")?;
    Ok(Timed { label: label.to_string(), total_s, detail, entries })
}

/// A Python backtester of the race: its script under `python/`, the venv it runs in, and
/// the name of its inner loop in the detail column.
struct PythonTool {
    label: &'static str,
    script: &'static str,
    env: &'static venv::Env,
    run_name: &'static str,
}

const PYTHON_TOOLS: [PythonTool; 2] = [
    PythonTool {
        label: "backtesting.py 0.6.6",
        script: "backtesting_py.py",
        env: &BENCH,
        run_name: "Backtest.run",
    },
    PythonTool {
        label: "Freqtrade 2026.9",
        script: "freqtrade_run.py",
        env: &FREQTRADE,
        run_name: "backtest",
    },
];

impl PythonTool {
    /// One timed run over the same files (the script writes its timings and trades as JSON).
    fn run(&self, dir: &Path, candles: &Path) -> anyhow::Result<Timed> {
        let python = venv::ensure_env(self.env)?.join("python");
        let script = script(self.script);
        let json = dir.join(format!("{}.json", self.script.trim_end_matches(".py")));
        let args = [path_str(&script)?, path_str(candles)?, path_str(&json)?];
        println!("$ {} {}", python.display(), args.join(" "));
        let started = Instant::now();
        let status = Command::new(&python).args(args).status().context("cannot run python")?;
        let total_s = started.elapsed().as_secs_f64();
        if !status.success() {
            bail!("{} failed ({status})", self.script);
        }
        let result: Value = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
        let f = |k: &str| result[k].as_f64().unwrap_or(f64::NAN);
        let detail = format!(
            "import {:.2} s, read {:.2} s, {} {:.2} s",
            f("import_s"),
            f("read_s"),
            self.run_name,
            f("run_s")
        );
        let entries = entries(&result["trades"], "entry")?;
        Ok(Timed { label: self.label.to_string(), total_s, detail, entries })
    }
}

/// Each trade's (symbol, entry hour), the entry time read from key `entry_key`.
fn entries(trades: &Value, entry_key: &str) -> anyhow::Result<BTreeSet<(String, String)>> {
    Ok(trades
        .as_array()
        .context("the result has no trades array")?
        .iter()
        .map(|t| (text(&t["symbol"]), hour(&text(&t[entry_key]))))
        .collect())
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// An RFC 3339 time as its UTC hour (`2025-03-01T14`), whatever its offset spelling.
fn hour(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| t.with_timezone(&chrono::Utc).format("%Y-%m-%dT%H").to_string())
        .unwrap_or_else(|_| rfc3339.to_string())
}
