//! What the project commands share: `cargo xtask` (command dispatch, machine set-up) and the
//! product checks it runs, which live beside what they check (MR Combined's calibration, the
//! backtest benchmarks, the compose test, the official exchange clients, the OpenClaw assets).
//! xtask depends on those check crates and they on this one, so the arrows point one way.
//!
//! - [`cargo`]: cargo in this workspace, found at run time ([`Cargo`], [`workspace_root`]);
//! - [`plugins`]: the wasm32-wasip2 build of the plugin crates (`cargo xtask plugins`);
//! - [`children`]: started processes stop when the command stops, also on SIGINT/SIGTERM;
//! - [`http`]: a minimal HTTP/1.1 client for our own servers on loopback;
//! - [`venv`]: pinned Python virtual environments under `target/`;
//! - [`apt`]: a Debian package a command needs, installed with apt-get;
//! - [`backtest`]: one `spotbot backtest --json` run, and the candle files it reads.

pub mod apt;
pub mod backtest;
pub mod cargo;
pub mod children;
pub mod http;
pub mod plugins;
pub mod venv;

pub use cargo::{Cargo, cargo, path_str, workspace_root};
