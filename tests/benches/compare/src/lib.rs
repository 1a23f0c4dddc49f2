//! The whole-command benchmarks against other tools, beside the criterion benches: `spotbot
//! backtest` against backtesting.py and Freqtrade ([`backtest`], `cargo xtask bench-backtest`)
//! and `spotbot optimize` against Freqtrade's hyperopt ([`optimize`], `cargo xtask
//! bench-optimize`), on the same strategy and data in the same run. The Python side of each
//! race is a script of `python/`, run in a venv of its own ([`BENCH`], [`FREQTRADE`]) whose
//! pinned requirements file lies next to this crate's manifest. Numbers go to
//! `docs/benchmarks.md`.
//!
//! A library that xtask calls, not a binary of its own: it compiles with xtask from crates
//! xtask builds anyway, so a clean clone's CI gets no extra build for it.

pub mod backtest;
pub mod optimize;

use std::path::PathBuf;

use anyhow::Context;
use xtask_support::venv::{Env, imports};
use xtask_support::{Cargo, plugins, workspace_root};

/// This crate's folder, from the workspace root.
const HOME: &str = "tests/benches/compare";

/// The benchmark's backtesting.py.
pub const BENCH: Env = Env {
    folder: "bench-venv",
    requirements: "tests/benches/compare/bench-requirements.txt",
    pins: &["backtesting==0.6.6"],
    check: |bin| imports(bin, "backtesting.lib", "backtesting.py"),
};

/// Freqtrade for both benchmarks, in a venv of its own (its 80 pinned packages would clash
/// with nothing, but need not be installed for backtesting.py alone).
pub const FREQTRADE: Env = Env {
    folder: "freqtrade-venv",
    requirements: "tests/benches/compare/freqtrade-requirements.txt",
    pins: &["freqtrade==2026.9"],
    check: |bin| imports(bin, "freqtrade.main", "Freqtrade"),
};

/// Builds the test guest `sma_cross` that both races replay; its file, where the plugin build
/// wrote it (`target/test-guests/` of the workspace, also when `CARGO_TARGET_DIR` points
/// elsewhere).
fn sma_cross_guest() -> anyhow::Result<PathBuf> {
    let written = plugins::build(&Cargo::workspace(), &["guest-sma-cross".to_string()])?;
    written.into_iter().next().context("the plugin build wrote no guest_sma_cross.wasm")
}

/// The Python script `name` of `python/`.
fn script(name: &str) -> PathBuf {
    workspace_root().join(HOME).join("python").join(name)
}
