//! One `spotbot backtest --json` run of a built `spotbot`, as `cargo xtask calibrate` and
//! `cargo xtask bench-backtest` make them: the report's JSON and the wall-clock time of the
//! whole command.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::path_str;

/// What to replay and where the run writes.
pub struct BacktestRun<'a> {
    pub binary: &'a Path,
    pub config: &'a Path,
    pub plugin: &'a Path,
    pub symbols: &'a [String],
    /// `--from` and `--to` as the command takes them.
    pub from: &'a str,
    pub to: &'a str,
    /// The `--candles` folder.
    pub candles: &'a Path,
    /// `--data-dir`, and the folder of `<name>.html` and `<name>.json`.
    pub work: &'a Path,
    pub name: &'a str,
}

impl BacktestRun<'_> {
    /// Runs the command; returns the report and the seconds it took.
    pub fn run(&self) -> anyhow::Result<(Value, f64)> {
        let json: PathBuf = self.work.join(format!("{}.json", self.name));
        let html = self.work.join(format!("{}.html", self.name));
        let args: Vec<String> = [
            "backtest",
            "--config",
            path_str(self.config)?,
            "--plugin",
            path_str(self.plugin)?,
            "--symbols",
            &self.symbols.join(","),
            "--from",
            self.from,
            "--to",
            self.to,
            "--candles",
            path_str(self.candles)?,
            "--data-dir",
            path_str(&self.work.join("run"))?,
            "--out",
            path_str(&html)?,
            "--json",
            path_str(&json)?,
        ]
        .map(String::from)
        .to_vec();
        println!("$ {} {}", self.binary.display(), args.join(" "));
        let started = Instant::now();
        let output = Command::new(self.binary)
            .args(&args)
            .output()
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        let seconds = started.elapsed().as_secs_f64();
        if !output.status.success() {
            bail!("spotbot backtest failed: {}", String::from_utf8_lossy(&output.stderr));
        }
        let text = std::fs::read_to_string(&json)
            .with_context(|| format!("cannot read {}", json.display()))?;
        Ok((serde_json::from_str(&text)?, seconds))
    }
}
