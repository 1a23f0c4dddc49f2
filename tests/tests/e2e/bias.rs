//! `spotbot check-bias` as a library call: the plugin's scans replayed as live, from only what
//! was known at each step, and with three times the warm-up; the decisions must agree.
//!
//! - a clean plugin (the benchmark's SMA cross) passes both checks;
//! - a planted recursive dependence (`short_warmup`: an EMA(20) on the 12 candles it declares)
//!   fails the warm-up check at the first step where more history flips its decision, named
//!   with its symbol and checklist line, and passes the look-ahead check;
//! - the shipped strategies (MR Combined and the two TA plugins) pass on the paper exchange's
//!   synthetic market. (MR Combined failed the warm-up check until its chop median got a fixed
//!   span: 60 of 300 steps decided chop differently with three times the history.)

use std::path::{Path, PathBuf};

use spotbot::backtest::bias::{self, BiasReport, BiasSpec};
use spotbot::backtest::history::{self, iso};
use spotbot::backtest::{Progress, Spec};
use spotbot::config::Config;
use spotbot::market::Timeframe;
use spotbot_sdk::indicators::ema;

const HOUR: i64 = 3_600_000;
/// 2025-01-01T00:00:00Z.
const JAN_1: i64 = 1_735_689_600_000;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn guest(file: &str) -> PathBuf {
    let path = root().join("target/test-guests").join(file);
    assert!(path.exists(), "{} is missing: run `cargo xtask plugins`", path.display());
    path
}

/// Random walks of 1h candles for `symbols`, 40 days ending at `end`.
fn walks(dir: &Path, symbols: &[&str], end: i64) {
    for (i, symbol) in symbols.iter().enumerate() {
        let c = spotbot_sdk::testing::candles(11 + i as u64, "1h", 40 * 24, 100.0, 0.0, end);
        std::fs::write(history::csv_file(dir, symbol, Timeframe::H1), history::to_csv(&c)).unwrap();
    }
}

async fn check(plugin: PathBuf, symbols: &[&str], from: i64, candles: Option<&Path>) -> BiasReport {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let data = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.server.data_dir = data.path().display().to_string();
    let spec = BiasSpec {
        backtest: Spec {
            plugin,
            symbols: symbols.iter().map(|s| s.to_string()).collect(),
            from_ms: from,
            to_ms: from + 30 * 24 * HOUR,
            candles: candles.map(Path::to_path_buf),
        },
        max_steps: 300,
    };
    bias::run(&config, &spec, &mut Progress::hidden()).await.expect("the check runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_plugin_passes_both_checks() {
    let candles = tempfile::tempdir().unwrap();
    let symbols = ["ETHUSDT", "SOLUSDT"];
    walks(candles.path(), &symbols, JAN_1 + 40 * 24 * HOUR);
    let report =
        check(guest("guest_sma_cross.wasm"), &symbols, JAN_1 + 5 * 24 * HOUR, Some(candles.path()))
            .await;
    assert_eq!(report.steps, 300, "{}", report.summary());
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(report.look_ahead.steps_compared, 300);
    assert_eq!(report.recursive.differing_steps, 0);
    assert!(report.summary().contains("look-ahead: passed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_recursive_dependence_is_named_with_its_step_and_checklist_line() {
    let candles = tempfile::tempdir().unwrap();
    let end = JAN_1 + 40 * 24 * HOUR;
    walks(candles.path(), &["ETHUSDT"], end);
    let from = JAN_1 + 5 * 24 * HOUR;
    let report =
        check(guest("guest_short_warmup.wasm"), &["ETHUSDT"], from, Some(candles.path())).await;
    assert!(report.look_ahead.passed, "{}", report.summary());
    assert!(!report.recursive.passed, "{}", report.summary());
    let first = report.recursive.first.clone().expect("a difference");
    assert_eq!(first.symbol, "ETHUSDT");
    assert_eq!(first.disagreement.item, "checklist:close_above_ema");
    // With the numbers of each side: no average from 12 candles, one from 36.
    assert!(first.disagreement.reference.starts_with("close_above_ema: fail (close "), "{first:?}");
    assert!(first.disagreement.reference.ends_with("vs EMA NaN)"), "{first:?}");
    assert!(first.disagreement.other.starts_with("close_above_ema: pass (close "), "{first:?}");
    // The step, found independently: the first step whose 35 closed candles (3 x 12 asked
    // for, less the forming one) put the last close above their EMA(20).
    let c = spotbot_sdk::testing::candles(11, "1h", 40 * 24, 100.0, 0.0, end);
    let expected = (0..300)
        .map(|k| from + k * HOUR)
        .find(|t| {
            let i = c.open_time.binary_search(t).unwrap();
            let closes = &c.close[i - 35..i];
            closes[34] > *ema(closes, 20).last().unwrap()
        })
        .unwrap();
    assert_eq!(first.at, iso(expected), "{}", report.summary());
    assert!(report.summary().contains("recursive dependence: FAILED at"), "{}", report.summary());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_strategies_pass_on_the_synthetic_market() {
    let from = 1_790_812_800_000; // 2026-10-01T00:00:00Z
    for plugin in ["mr_combined.wasm", "ta_trend.wasm", "ta_mean_revert.wasm"] {
        let report =
            check(root().join("plugins").join(plugin), &["BTCUSDT", "ETHUSDT"], from, None).await;
        assert!(report.passed(), "{plugin}: {}", report.summary());
        assert_eq!(report.steps, 300, "{plugin}: {}", report.summary());
    }
}
