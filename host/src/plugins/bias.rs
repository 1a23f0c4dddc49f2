//! Each serving strategy's bias check: `spotbot check-bias` run on it in the background after
//! it loads ([`watch`]), its verdict shown with the plugin in `GET /api/strategies` and on the
//! dashboard. A plugin that fails keeps serving: the verdict flags it, it does not unload it.
//!
//! The check runs in a child process of the service's own executable, one plugin at a time,
//! over the paper exchange's synthetic market (no request to the real exchange, no key), with
//! a deadline: its history, replays and simulator live and die with the child, so the
//! service's memory does not carry them (docs/operations.md, "Memory").

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Plugins;
use super::model::PluginKind;

/// Steps each check replays (of 1h or the plugin's finest timeframe).
pub const STEPS: usize = 300;
/// A check still running after this long is stopped and reported as an error.
pub const DEADLINE: Duration = Duration::from_secs(180);
/// How often the folder's serving plugins are looked at for one without a verdict.
const LOOK_EVERY: Duration = Duration::from_secs(5);
/// The synthetic market's stretch every check replays: 2026-01-01T00:00:00Z and 30 days on.
/// Fixed, so the child's kline cache (under the data folder) serves every later check.
const CHECK_FROM_MS: i64 = 1_767_225_600_000;
const CHECK_DAYS: i64 = 30;

/// Where a serving version's bias check stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BiasStatus {
    /// Not checked yet.
    #[default]
    Pending,
    Checking,
    /// Both checks passed.
    Passed,
    /// Look-ahead or recursive dependence found: the plugin keeps serving, flagged.
    Failed,
    /// The check could not run (see `detail`).
    Error,
    /// Not checked: a scanner (no trading decision to compare) or the service has no
    /// executable to run the check with.
    Skipped,
}

/// The bias check of a serving version (`spotbot check-bias`, docs/backtest.md "Bias checks").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BiasVerdict {
    pub status: BiasStatus,
    /// Whether every decision was the same from only what was known at its step.
    pub look_ahead_passed: Option<bool>,
    /// Whether every decision was the same with three times the warm-up.
    pub recursive_passed: Option<bool>,
    /// The first difference (step, symbol, checklist item), or why the check could not run.
    pub detail: Option<String>,
    /// Steps replayed.
    pub steps: Option<usize>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub checked_at: Option<DateTime<Utc>>,
}

impl Plugins {
    /// The serving strategies whose check is pending: (sha256, file path).
    fn pending_checks(&self) -> Vec<(String, PathBuf)> {
        let registry = self.inner.registry.load();
        registry
            .files
            .iter()
            .filter_map(|(file, entry)| entry.serving.as_ref().map(|p| (file, p)))
            .filter(|(_, p)| p.bias_verdict().status == BiasStatus::Pending)
            .map(|(file, p)| (p.sha256.clone(), self.inner.dir.join(file)))
            .collect()
    }

    /// Records `verdict` for the serving version with `sha256` (none: it was replaced, the
    /// verdict is of no use).
    pub fn record_bias(&self, sha256: &str, verdict: BiasVerdict) {
        let registry = self.inner.registry.load();
        for entry in registry.files.values() {
            if let Some(p) = entry.serving.as_ref().filter(|p| p.sha256 == sha256) {
                *p.bias.lock().unwrap_or_else(|e| e.into_inner()) = verdict.clone();
            }
        }
    }
}

/// The first verdict of a freshly loaded version: pending for a strategy, skipped for a
/// scanner.
pub(crate) fn initial(kind: PluginKind) -> BiasVerdict {
    match kind {
        PluginKind::Strategy => BiasVerdict::default(),
        _ => skipped("a scanner makes no trading decision to compare"),
    }
}

/// A check not run, and why.
fn skipped(why: &str) -> BiasVerdict {
    BiasVerdict {
        status: BiasStatus::Skipped,
        detail: Some(why.to_string()),
        ..BiasVerdict::default()
    }
}

/// What the watch needs to run checks.
pub struct Checker {
    /// The service's executable (`spotbot`); `None`: checks are skipped.
    pub executable: Option<PathBuf>,
    /// The service's config file, for the child's `[strategy.*]` sections and limits
    /// (`None`: the defaults).
    pub config_file: Option<PathBuf>,
    /// Symbols replayed (the watchlist's first two).
    pub symbols: Vec<String>,
    /// The service's data folder: the child reads the compiled-plugin cache there and keeps
    /// its synthetic klines under it.
    pub data_dir: PathBuf,
}

impl Checker {
    /// The checks of the service configured by `config`.
    pub fn of(config: &crate::config::Config) -> Self {
        Checker {
            executable: config.plugins.compiler.clone(),
            config_file: config.plugins.config_file.clone(),
            symbols: config.market.watchlist.iter().take(2).cloned().collect(),
            data_dir: PathBuf::from(&config.server.data_dir),
        }
    }
}

/// Starts the checks (see [`watch`]).
pub fn spawn(plugins: &Plugins, config: &crate::config::Config) -> crate::background::Background {
    let (plugins, checker) = (plugins.clone(), Checker::of(config));
    crate::background::Background::spawn(move |stop| watch(plugins, checker, stop))
}

/// Checks every serving strategy whose check is pending, one at a time, until `stop` fires.
pub async fn watch(
    plugins: Plugins,
    checker: Checker,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    loop {
        for (sha256, file) in plugins.pending_checks() {
            let Some(executable) = checker.executable.clone() else {
                plugins.record_bias(&sha256, skipped("the service has no executable to run it"));
                continue;
            };
            if checker.symbols.is_empty() {
                plugins.record_bias(&sha256, skipped("the watchlist is empty: nothing to replay"));
                continue;
            }
            let checking = BiasVerdict { status: BiasStatus::Checking, ..BiasVerdict::default() };
            plugins.record_bias(&sha256, checking);
            let verdict = tokio::select! {
                verdict = check(&executable, &checker, &file, &sha256) => verdict,
                _ = &mut stop => return,
            };
            tracing::info!(file = %file.display(), status = ?verdict.status, detail = ?verdict.detail, "plugin bias check");
            plugins.record_bias(&sha256, verdict);
        }
        tokio::select! {
            _ = tokio::time::sleep(LOOK_EVERY) => {}
            _ = &mut stop => return,
        }
    }
}

/// Runs `spotbot check-bias` on `file` in a child process and reads its verdict.
async fn check(executable: &Path, checker: &Checker, file: &Path, sha256: &str) -> BiasVerdict {
    let report = std::env::temp_dir().join(format!(
        "spotbot-bias-{}-{}.json",
        std::process::id(),
        &sha256[..sha256.len().min(16)]
    ));
    let errors = report.with_extension("log");
    let from = CHECK_FROM_MS.to_string();
    let to = (CHECK_FROM_MS + CHECK_DAYS * 86_400_000).to_string();
    let mut command = std::process::Command::new(executable);
    command.arg("check-bias").arg("--synthetic");
    if let Some(file) = &checker.config_file {
        command.arg("--config").arg(file);
    }
    command
        .arg("--data-dir")
        .arg(&checker.data_dir)
        .arg("--plugin")
        .arg(file)
        .args(["--symbols", &checker.symbols.join(","), "--from", &from, "--to", &to])
        .args(["--steps", &STEPS.to_string()])
        .arg("--json")
        .arg(&report)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    let error = |detail: String| BiasVerdict {
        status: BiasStatus::Error,
        detail: Some(detail),
        checked_at: Some(Utc::now()),
        ..BiasVerdict::default()
    };
    let spawned = std::fs::File::create(&errors).and_then(|log| command.stderr(log).spawn());
    let mut child = match spawned {
        Ok(child) => Child(child),
        Err(err) => return error(format!("cannot run the check: {err}")),
    };
    // Polled rather than awaited: the service needs no child-process driver for one check a
    // plugin load, and dropping this future (the service stopping) kills the child.
    let started = std::time::Instant::now();
    while child.0.try_wait().ok().flatten().is_none() {
        if started.elapsed() > DEADLINE {
            return error(format!("no verdict within {} s", DEADLINE.as_secs()));
        }
        tokio::time::sleep(POLL).await;
    }
    let verdict = match std::fs::read_to_string(&report) {
        Ok(text) => from_report(&text),
        Err(_) => {
            let stderr = std::fs::read_to_string(&errors).unwrap_or_default();
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output");
            error(last.chars().take(300).collect())
        }
    };
    let _ = std::fs::remove_file(&report);
    let _ = std::fs::remove_file(&errors);
    verdict
}

/// How often a running check is looked at.
const POLL: Duration = Duration::from_millis(250);

/// A check's process, killed when dropped before it ended (the deadline, or the service
/// stopping); reaped either way.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// The verdict of a `check-bias --json` report.
fn from_report(text: &str) -> BiasVerdict {
    let Ok(report) = serde_json::from_str::<serde_json::Value>(text) else {
        return BiasVerdict {
            status: BiasStatus::Error,
            detail: Some("the check's report is not JSON".into()),
            checked_at: Some(Utc::now()),
            ..BiasVerdict::default()
        };
    };
    let passed = |check: &str| report[check]["passed"].as_bool();
    let (look_ahead, recursive) = (passed("look_ahead"), passed("recursive"));
    let first = ["look_ahead", "recursive"].into_iter().find_map(|check| {
        let d = &report[check]["first"];
        d.is_object().then(|| {
            let text = |k: &str| d[k].as_str().unwrap_or_default().to_string();
            let name = if check == "look_ahead" { "look-ahead" } else { "recursive dependence" };
            format!(
                "{name} at {} {}: {} is {} as live, {} otherwise",
                text("at"),
                text("symbol"),
                text("item"),
                text("reference"),
                text("other")
            )
        })
    });
    let status = match (look_ahead, recursive) {
        (Some(true), Some(true)) => BiasStatus::Passed,
        (Some(_), Some(_)) => BiasStatus::Failed,
        _ => BiasStatus::Error,
    };
    BiasVerdict {
        status,
        look_ahead_passed: look_ahead,
        recursive_passed: recursive,
        detail: first,
        steps: report["steps"].as_u64().map(|s| s as usize),
        checked_at: Some(Utc::now()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_becomes_a_verdict_naming_the_first_difference() {
        let failed = r#"{"steps": 300,
            "look_ahead": {"passed": true, "first": null},
            "recursive": {"passed": false, "first": {"at": "2026-10-01T10:00:00Z",
              "symbol": "ETHUSDT", "item": "checklist:regime_chop",
              "reference": "regime_chop: pass", "other": "regime_chop: fail"}}}"#;
        let v = from_report(failed);
        assert_eq!(v.status, BiasStatus::Failed);
        assert_eq!(
            (v.look_ahead_passed, v.recursive_passed, v.steps),
            (Some(true), Some(false), Some(300))
        );
        assert_eq!(
            v.detail.as_deref(),
            Some(
                "recursive dependence at 2026-10-01T10:00:00Z ETHUSDT: checklist:regime_chop is regime_chop: pass as live, regime_chop: fail otherwise"
            )
        );
        let passed =
            r#"{"steps": 3, "look_ahead": {"passed": true}, "recursive": {"passed": true}}"#;
        assert_eq!(from_report(passed).status, BiasStatus::Passed);
        assert_eq!(from_report("not json").status, BiasStatus::Error);
    }
}
