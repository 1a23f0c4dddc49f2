//! `cargo xtask bench-optimize [--epochs N] [--symbols N] [--jobs N]`: the whole `spotbot
//! optimize` command against Freqtrade's hyperopt, one after the other in the same run, on
//! the strategy, data and search space of the same benchmark:
//!
//! - the data and the strategy of `cargo xtask bench-backtest` ([`backtest`](crate::backtest)): its random
//!   walks (the first `--symbols` of its [`SYMBOLS`]) of one year of 1h candles, the test guest
//!   `sma_cross` with its config ([`CONFIG`]) for spotbot, `SmaCrossOpt` of
//!   `python/freqtrade_hyperopt.py` (freqtrade_run.py's `SmaCross` made searchable) for
//!   Freqtrade, in the venv of the backtest benchmark ([`FREQTRADE`]);
//! - the space ([`SPACE`]): the window lengths `fast` 5..20 and `slow` 20..60 (the guest's
//!   config keys), the stop 2..10 % step 1 and the target 4..20 % step 2 (spotbot's `sl_pct` /
//!   `tp_pct`, one `stoploss` and one `roi_p1` dimension in Freqtrade); TPE on both sides;
//!   Sharpe ratio objective (spotbot's of the equity per step, Freqtrade's
//!   `SharpeHyperOptLoss` of the trades); at least 5 trades; the same seed; `--jobs` trials at
//!   once on both sides (default: one per core);
//! - the span: spotbot searches the in-sample part of one walk-forward window with 75 % in
//!   sample (then replays the chosen point out of sample once); Freqtrade gets the same steps
//!   as its `--timerange` ([`in_sample_steps`], the formula of
//!   `host/src/backtest/optimize/windows.rs`).
//!
//! Timed: each whole command (spotbot's process; Freqtrade's `freqtrade hyperopt` process,
//! without the script's CSV-to-feather conversion), and each tool's search alone (spotbot's
//! `trials_per_second`, Freqtrade's first to last epoch from its log). For reference, one
//! `spotbot backtest` of the same in-sample months, run first (it also fills spotbot's
//! compiled-plugin cache, as any second run has it). Numbers go to `docs/benchmarks.md`
//! ("Optimise against Freqtrade's hyperopt").

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::Value;

use xtask_support::{Cargo, path_str, plugins, venv};

use crate::backtest::{CONFIG, FROM_MS, HOUR_MS, STEPS, SYMBOLS, symbols, write_candles};
use crate::{FREQTRADE, script, sma_cross_guest};
use xtask_support::backtest::BacktestRun;

/// The search space of both tools (Freqtrade's is in `freqtrade_hyperopt.py`).
const SPACE: &str = "[fast]\nmin = 5\nmax = 20\nstep = 1\n\n\
                     [slow]\nmin = 20\nmax = 60\nstep = 1\n\n\
                     [sl_pct]\nmin = 2.0\nmax = 10.0\nstep = 1.0\n\n\
                     [tp_pct]\nmin = 4.0\nmax = 20.0\nstep = 2.0\n";
/// Walk-forward windows and their in-sample share, percent.
const WINDOWS: usize = 1;
const IN_SAMPLE_PCT: f64 = 75.0;
const SEED: u64 = 1;
const USAGE: &str = "usage: cargo xtask bench-optimize [--epochs N] [--symbols N] [--jobs N]";

/// What to run.
struct Options {
    epochs: usize,
    symbols: usize,
    jobs: usize,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Options> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut options = Options { epochs: 200, symbols: SYMBOLS, jobs: cores };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let slot = match arg.as_str() {
                "--epochs" => &mut options.epochs,
                "--symbols" => &mut options.symbols,
                "--jobs" => &mut options.jobs,
                other => bail!("unknown argument {other:?} ({USAGE})"),
            };
            let value = args.next().with_context(|| format!("{arg} needs a number ({USAGE})"))?;
            *slot = value.parse().with_context(|| format!("{arg} {value}: not a number"))?;
        }
        if options.epochs == 0 || options.jobs == 0 || !(1..=SYMBOLS).contains(&options.symbols) {
            bail!("--epochs and --jobs must be at least 1, --symbols 1 to {SYMBOLS}");
        }
        Ok(options)
    }
}

/// One tool's search.
struct Searched {
    label: String,
    epochs: usize,
    /// The whole command.
    total_s: f64,
    /// The search alone.
    epochs_per_s: f64,
    best: String,
}

/// `cargo xtask bench-optimize`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let options = Options::parse(args)?;
    Cargo::workspace().run(&["build", "--release", "--package", "spotbot"])?;
    let plugin = sma_cross_guest()?;
    let target = plugins::target_dir()?;
    let dir = target.join("bench-optimize");
    let symbols: Vec<String> = symbols().into_iter().take(options.symbols).collect();
    let candles = candles(&dir, &symbols)?;
    let config = dir.join("config.toml");
    std::fs::write(&config, CONFIG)?;
    let space = dir.join("space.toml");
    std::fs::write(&space, SPACE)?;
    let last_in_sample_ms = FROM_MS + (in_sample_steps(STEPS) as i64 - 1) * HOUR_MS;

    let binary = target.join("release").join("spotbot");
    let (report, backtest_s) = BacktestRun {
        binary: &binary,
        config: &config,
        plugin: &plugin,
        symbols: &symbols,
        from: &FROM_MS.to_string(),
        to: &last_in_sample_ms.to_string(),
        candles: &candles,
        work: &dir,
        name: "backtest",
    }
    .run()?;
    let replay_s = report["elapsed_s"].as_f64().unwrap_or(f64::NAN);
    let spotbot = spotbot(&options, &dir, [&binary, &config, &plugin, &space, &candles], &symbols)?;
    let freqtrade = freqtrade(&options, &dir, &candles, last_in_sample_ms)?;

    let in_sample = chrono::DateTime::from_timestamp_millis(last_in_sample_ms).unwrap_or_default();
    println!(
        "\nbench-optimize: {} random walk(s) x {} 1h steps in sample (to {}), SMA(fast)/SMA(slow) \
         cross-up, fast 5..20, slow 20..60, stop 2..10 %, target 4..20 % step 2, fee 0.1 %, \
         TPE, Sharpe, seed {SEED}, {} job(s)",
        symbols.len(),
        in_sample_steps(STEPS),
        in_sample.format("%Y-%m-%dT%H:%M:%SZ"),
        options.jobs
    );
    println!(
        "| tool | epochs | whole command (s) | epochs/s, whole command | epochs/s, search | \
         spotbot / Freqtrade, search (whole command) | best (fast, slow, sl_pct, tp_pct) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let per_s = |s: &Searched| s.epochs as f64 / s.total_s;
    for s in [&spotbot, &freqtrade] {
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.2} | {:.2} ({:.2}) | {} |",
            s.label,
            s.epochs,
            s.total_s,
            per_s(s),
            s.epochs_per_s,
            s.epochs_per_s / freqtrade.epochs_per_s,
            per_s(s) / per_s(&freqtrade),
            s.best
        );
    }
    let trades = report["trades"].as_array().map_or(0, Vec::len);
    println!(
        "| spotbot backtest of the same steps (reference) | 1 | {backtest_s:.2} | {:.2} | | | \
         defaults: 10, 30, 5, 10 ({trades} trades) |",
        1.0 / backtest_s
    );
    println!(
        "\nspotbot's trial: {:.2} s on each of its {} worker(s) ({:.2} s of search per trial), \
         one `spotbot backtest` of the same steps: {backtest_s:.2} s (replay {replay_s:.2} s)",
        options.jobs as f64 / spotbot.epochs_per_s,
        options.jobs,
        1.0 / spotbot.epochs_per_s
    );
    Ok(())
}

/// The steps of the first window's in-sample part out of `steps`, as `spotbot optimize` cuts
/// them with [`WINDOWS`] and [`IN_SAMPLE_PCT`] (`host/src/backtest/optimize/windows.rs`: a
/// unit of `steps / (windows + f / (1 - f))` steps, rounded down, and `f / (1 - f)` units in
/// sample, rounded down).
fn in_sample_steps(steps: usize) -> usize {
    let ratio = IN_SAMPLE_PCT / (100.0 - IN_SAMPLE_PCT);
    let unit = (steps as f64 / (WINDOWS as f64 + ratio)).floor();
    (unit * ratio).floor() as usize
}

/// The CSV folder of `symbols`: bench-backtest's walks, written once under `dir`, or a folder
/// of the first few of them (hard links) when fewer are asked for, since Freqtrade's script
/// reads every file of its folder.
fn candles(dir: &Path, symbols: &[String]) -> anyhow::Result<PathBuf> {
    let all = write_candles(dir)?;
    if symbols.len() == SYMBOLS {
        return Ok(all);
    }
    let some = dir.join(format!("candles-{}", symbols.len()));
    std::fs::create_dir_all(&some)?;
    for symbol in symbols {
        let name = format!("{symbol}_1h.csv");
        let link = some.join(&name);
        if !link.exists() {
            std::fs::hard_link(all.join(&name), &link)
                .or_else(|_| std::fs::copy(all.join(&name), &link).map(|_| ()))
                .with_context(|| format!("cannot link {}", link.display()))?;
        }
    }
    Ok(some)
}

/// One timed `spotbot optimize` (files: the binary, config, plugin, space and candles).
fn spotbot(
    options: &Options,
    dir: &Path,
    [binary, config, plugin, space, candles]: [&Path; 5],
    symbols: &[String],
) -> anyhow::Result<Searched> {
    let json = dir.join("optimize.json");
    let (epochs, jobs) = (options.epochs.to_string(), options.jobs.to_string());
    let args = [
        "optimize",
        "--config",
        path_str(config)?,
        "--plugin",
        path_str(plugin)?,
        "--space",
        path_str(space)?,
        "--symbols",
        &symbols.join(","),
        "--from",
        &FROM_MS.to_string(),
        "--to",
        &(FROM_MS + (STEPS as i64 - 1) * HOUR_MS).to_string(),
        "--candles",
        path_str(candles)?,
        "--data-dir",
        path_str(&dir.join("run"))?,
        "--trials",
        &epochs,
        "--windows",
        &WINDOWS.to_string(),
        "--in-sample",
        &IN_SAMPLE_PCT.to_string(),
        "--objective",
        "sharpe",
        "--seed",
        &SEED.to_string(),
        "--method",
        "tpe",
        "--workers",
        &jobs,
        "--json",
        path_str(&json)?,
    ]
    .map(String::from);
    let (total_s, report) = timed(Command::new(binary).args(&args), &json)?;
    let window = &report["windows"][0];
    let best = match window["best"].as_object() {
        Some(_) => format!(
            "{} (in sample: Sharpe {:.2}, {} trades)",
            point(&window["best"]),
            window["in_sample"]["sharpe"].as_f64().unwrap_or(f64::NAN),
            window["in_sample"]["trades"]
        ),
        None => "none feasible".to_string(),
    };
    Ok(Searched {
        label: "spotbot optimize".to_string(),
        epochs: report["trials"].as_u64().unwrap_or(0) as usize,
        total_s,
        epochs_per_s: report["trials_per_second"].as_f64().unwrap_or(f64::NAN),
        best,
    })
}

/// One timed `freqtrade hyperopt` through `python/freqtrade_hyperopt.py`, over the steps
/// up to `last_ms`.
fn freqtrade(
    options: &Options,
    dir: &Path,
    candles: &Path,
    last_ms: i64,
) -> anyhow::Result<Searched> {
    let python = venv::ensure_env(&FREQTRADE)?.join("python");
    let script = script("freqtrade_hyperopt.py");
    let json = dir.join("freqtrade_hyperopt.json");
    let args = [
        path_str(&script)?,
        path_str(candles)?,
        path_str(&json)?,
        "--epochs",
        &options.epochs.to_string(),
        "--jobs",
        &options.jobs.to_string(),
        "--seed",
        &SEED.to_string(),
        "--timerange",
        &format!("-{last_ms}"),
    ]
    .map(String::from);
    let (_, result) = timed(Command::new(python).args(&args), &json)?;
    Ok(Searched {
        label: "Freqtrade 2026.9 hyperopt".to_string(),
        epochs: result["epochs"].as_u64().unwrap_or(0) as usize,
        total_s: result["total_s"].as_f64().unwrap_or(f64::NAN),
        epochs_per_s: result["epochs_per_s"].as_f64().unwrap_or(f64::NAN),
        best: format!(
            "{} (loss {:.2}: Sharpe of the trades {:.2}, {} trades)",
            point(&result["best"]),
            result["best_loss"].as_f64().unwrap_or(f64::NAN),
            -result["best_loss"].as_f64().unwrap_or(f64::NAN),
            result["best_trades"]
        ),
    })
}

/// A point of the space as `fast, slow, sl_pct, tp_pct`.
fn point(p: &Value) -> String {
    let value = |k| p[k].as_f64().map_or_else(|| "?".to_string(), |v| v.to_string());
    ["fast", "slow", "sl_pct", "tp_pct"].map(value).join(", ")
}

/// Runs `command` (echoed), fails unless it succeeds; returns its wall-clock seconds and the
/// JSON it wrote to `json`.
fn timed(command: &mut Command, json: &Path) -> anyhow::Result<(f64, Value)> {
    let shown: Vec<String> = command.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
    let program = command.get_program().to_string_lossy().into_owned();
    println!("$ {program} {}", shown.join(" "));
    let started = Instant::now();
    let status = command.status().with_context(|| format!("cannot run {program}"))?;
    let seconds = started.elapsed().as_secs_f64();
    if !status.success() {
        bail!("{program} failed ({status})");
    }
    let text =
        std::fs::read_to_string(json).with_context(|| format!("cannot read {}", json.display()))?;
    Ok((seconds, serde_json::from_str(&text)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A year of 1h steps, one window, 75 % in sample: steps 0..6569, as spotbot cuts it
    /// (`host/src/backtest/optimize/windows.rs`: unit 2190, in sample 3 units).
    #[test]
    fn the_in_sample_part_is_spotbots() {
        assert_eq!(in_sample_steps(STEPS), 6570);
        assert_eq!(in_sample_steps(100), 75);
    }

    #[test]
    fn the_options_default_to_the_issues_benchmark() {
        let o = Options::parse(&[]).unwrap();
        assert_eq!((o.epochs, o.symbols), (200, SYMBOLS));
        let args: Vec<String> = ["--epochs", "4", "--symbols", "2"].map(String::from).to_vec();
        let o = Options::parse(&args).unwrap();
        assert_eq!((o.epochs, o.symbols), (4, 2));
        assert!(Options::parse(&["--symbols".to_string(), "21".to_string()]).is_err());
        assert!(Options::parse(&["--epochs".to_string()]).is_err());
    }
}
