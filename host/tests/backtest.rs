//! `spotbot backtest` as an operator runs it: summary on stdout, the HTML page and the JSON
//! report written, one line on stderr and exit status 1 when the candles are missing. (The
//! replay's semantics are tested in `tests/tests/e2e/backtest.rs`.)

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_spotbot");
const HOUR: i64 = 3_600_000;
/// 2025-01-01T00:00:00Z.
const JAN_1: i64 = 1_735_689_600_000;

/// The test guest that buys every symbol (`cargo xtask plugins` builds it).
fn guest() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/test-guests/guest_auto_confirm.wasm");
    assert!(path.exists(), "{} is missing: run `cargo xtask plugins`", path.display());
    path
}

/// Ten days of 1h candles of SOLUSDT: a slow saw between 95 and 105.
fn write_candles(dir: &Path) {
    let mut text = String::from("open_time,open,high,low,close,volume\n");
    let mut price = 100.0_f64;
    for i in 0..240 {
        let step = if (i / 12) % 2 == 0 { 0.8 } else { -0.8 };
        let close = price + step;
        let (hi, lo) = (price.max(close) + 0.3, price.min(close) - 0.3);
        text.push_str(&format!("{},{price},{hi},{lo},{close},1000\n", JAN_1 + i * HOUR));
        price = close;
    }
    std::fs::write(dir.join("SOLUSDT_1h.csv"), text).unwrap();
}

fn backtest(dir: &Path, candles: &Path) -> std::process::Output {
    let config = dir.join("config.toml");
    std::fs::write(&config, "[strategy.mr_combined]\nmax_trades_per_day = 3\n").unwrap();
    Command::new(BIN)
        .args(["backtest", "--plugin"])
        .arg(guest())
        .args(["--symbols", "solusdt", "--from", "2025-01-02", "--to", "2025-01-09"])
        .arg("--candles")
        .arg(candles)
        .arg("--config")
        .arg(&config)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--out")
        .arg(dir.join("report.html"))
        .arg("--json")
        .arg(dir.join("report.json"))
        .output()
        .unwrap()
}

#[test]
fn a_backtest_prints_its_summary_and_writes_the_page_and_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let candles = dir.path().join("candles");
    std::fs::create_dir_all(&candles).unwrap();
    write_candles(&candles);
    let output = backtest(dir.path(), &candles);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("backtest mr_combined 1.0.0 on SOLUSDT (169 steps of 1h"), "{stdout}");
    assert!(stdout.contains("win rate") && stdout.contains("profit factor"), "{stdout}");
    assert!(stderr.contains("backtest 100%"), "progress lines when not a terminal: {stderr}");
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("<svg"), "{page}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    let trades = json["trades"].as_array().unwrap();
    assert!(!trades.is_empty(), "{json}");
    assert_eq!(json["stats"]["count"].as_u64(), Some(trades.len() as u64));
    assert_eq!(json["equity"].as_array().unwrap().len(), 169);
    assert!(stdout.contains(&format!("trades: {}", trades.len())), "{stdout}");
}

#[test]
fn missing_candles_are_named_in_one_line_and_the_exit_status_is_1() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("candles");
    std::fs::create_dir_all(&empty).unwrap();
    let output = backtest(dir.path(), &empty);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr.trim().lines().last().unwrap_or_default();
    assert!(last.starts_with("spotbot backtest: no candles for SOLUSDT 1h: expected "), "{stderr}");
    assert!(last.ends_with("SOLUSDT_1h.csv"), "{stderr}");
    assert!(!dir.path().join("report.html").exists());
}
