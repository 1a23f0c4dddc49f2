//! `spotbot optimize` as a library call, over candles whose best parameters are known:
//! SOLUSDT flat at 100 but for one spike to 104.5 every tenth hour, traded by the guest that
//! buys whenever it holds nothing. A take-profit at or under 4.5 % fills on every spike and a
//! larger one never does (the trade sits until the end), and a bigger position earns more of
//! the same wins: of tp_pct 1..=6 and size_pct 1..=5, the most pnl is at tp 4, size 5.
//!
//! - a grid search finds that point in every walk-forward window, and out of sample it earns;
//! - the same seed gives the same report (TPE), another seed other trials.

use std::path::{Path, PathBuf};

use spotbot::backtest::optimize::{
    self, Constraints, Method, Objective, OptimizeReport, OptimizeSpec, Plan, Walk,
};
use spotbot::backtest::{Progress, Spec, history};
use spotbot::config::Config;
use spotbot::market::Timeframe;
use spotbot_sdk::Candles;

const HOUR: i64 = 3_600_000;
/// 2025-01-01T00:00:00Z.
const JAN_1: i64 = 1_735_689_600_000;
/// Hours of candles.
const HOURS: i64 = 20 * 24;

const SPACE: &str = "[tp_pct]\nmin = 1.0\nmax = 6.0\nstep = 1.0\n\n\
                     [size_pct]\nmin = 1.0\nmax = 5.0\nstep = 1.0\n";

/// The test guest named `mr_combined` that buys every symbol on every scan.
fn buy_everything() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/test-guests/guest_auto_confirm.wasm");
    assert!(path.exists(), "{} is missing: run `cargo xtask plugins`", path.display());
    path
}

/// Flat at 100, a spike to 104.5 every tenth hour.
fn spikes() -> Candles {
    let mut c = history::empty(Timeframe::H1);
    for h in 0..HOURS {
        c.open_time.push(JAN_1 + h * HOUR);
        c.open.push(100.0);
        c.high.push(if h % 10 == 9 { 104.5 } else { 100.0 });
        c.low.push(100.0);
        c.close.push(100.0);
        c.volume.push(1_000.0);
    }
    c
}

fn write_csv(dir: &Path, c: &Candles) {
    std::fs::write(history::csv_file(dir, "SOLUSDT", Timeframe::H1), history::to_csv(c)).unwrap();
}

fn optimize(method: Method, seed: u64, trials: usize, windows: usize) -> OptimizeReport {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let data = tempfile::tempdir().unwrap();
    let candles = tempfile::tempdir().unwrap();
    write_csv(candles.path(), &spikes());
    let mut config = Config::parse(
        "[risk]\nmax_consecutive_losses = 0\n\n[strategy.mr_combined]\nmax_trades_per_day = 1000\n",
        "optimize-test.toml".as_ref(),
    )
    .expect("valid config");
    config.server.data_dir = data.path().display().to_string();
    let spec = OptimizeSpec {
        backtest: Spec {
            plugin: buy_everything(),
            symbols: vec!["SOLUSDT".into()],
            from_ms: JAN_1 + 24 * HOUR,
            to_ms: JAN_1 + (HOURS - 1) * HOUR,
            candles: Some(candles.path().to_path_buf()),
        },
        space: SPACE.into(),
        plan: Plan {
            method,
            objective: Objective::Pnl,
            constraints: Constraints { min_trades: 1, max_drawdown_pct: None },
            trials,
            seed,
            batch: 8,
        },
        walk: Walk::Rolling,
        windows,
        in_sample_pct: 50.0,
        workers: 2,
    };
    optimize::run(&config, &spec, &mut Progress::hidden()).expect("the search runs")
}

#[test]
fn a_grid_search_finds_the_known_best_point_in_every_window_and_it_earns_out_of_sample() {
    let report = optimize(Method::Grid, 1, 100, 2);
    let summary = report.summary();
    assert_eq!(report.windows.len(), 2, "{summary}");
    assert_eq!(report.trials, 2 * 30, "the grid has 30 points: {summary}");
    for w in &report.windows {
        let best = w.best.as_ref().expect("a feasible trial");
        assert_eq!((best["tp_pct"], best["size_pct"]), (4.0, 5.0), "{summary}");
        // Every point was replayed; the ones past the spike never took profit.
        assert!(w.trials.iter().all(|t| t.error.is_none()), "{summary}");
        let never_filled = w.trials.iter().filter(|t| t.params["tp_pct"] >= 5.0);
        assert!(never_filled.clone().count() == 10, "{summary}");
        for t in never_filled {
            let m = t.metrics.expect("replayed");
            assert!(m.pnl < 0.0 && m.trades <= 1, "only fees: {t:?}");
        }
        let oos = w.out_of_sample.expect("replayed out of sample");
        assert!(oos.pnl > 0.0 && oos.trades >= 5, "{summary}");
    }
    // Out of sample, stitched: what the two windows earned, compounded.
    let oos = report.out_of_sample;
    assert!(oos.return_pct > 0.0 && oos.trades >= 10, "{summary}");
    assert_eq!(oos.max_drawdown_pct.min(0.0), oos.max_drawdown_pct);
    let first = report.out_of_sample_equity.first().unwrap();
    let last = report.out_of_sample_equity.last().unwrap();
    assert_eq!(first.equity, report.start_equity);
    assert!((last.equity / first.equity - 1.0 - oos.return_pct / 100.0).abs() < 1e-9);
    // The stitched curve steps once per hour through both out-of-sample parts.
    let times: Vec<i64> = report.out_of_sample_equity.iter().map(|p| p.t).collect();
    assert!(times.windows(2).all(|w| w[1] - w[0] == HOUR), "contiguous, no overlap");
    assert_eq!(report.monte_carlo.len(), 2, "shuffled and bootstrapped: {summary}");
    for mc in &report.monte_carlo {
        assert!(mc.max_drawdown_pct.p5 >= -100.0 && mc.max_drawdown_pct.p95 <= 0.0);
    }
    // The HTML page: self-contained, the best point named, tp_pct's importance drawn.
    let page = optimize::html::page(&report);
    assert!(page.contains("<svg") && page.contains("</html>"), "{page}");
    assert!(page.contains("tp_pct=4"), "the best point is shown: {page}");
    assert!(!page.contains("<script") && !page.contains("src=\"http"), "self-contained");
    let importance = |key: &str| -> Option<f64> {
        let bar = format!("<th>{key}</th><td class=\"bar\"><div style=\"width:");
        page.split(&bar).nth(1)?.split('%').next()?.parse().ok()
    };
    let (tp, size) = (importance("tp_pct"), importance("size_pct"));
    assert!(tp.is_some() && size.is_some(), "each key's importance bar: {page}");
    // Whether a spike takes the profit at all is the take-profit's; the size only scales it.
    assert!(tp > size, "tp_pct {tp:?} % explains more than size_pct {size:?} %");
}

/// The report without its timings and the name of the run's temporary candles folder.
fn comparable(report: &OptimizeReport) -> serde_json::Value {
    let mut value = serde_json::to_value(report).unwrap();
    let map = value.as_object_mut().unwrap();
    for varies in ["elapsed_s", "trials_per_second", "source"] {
        map.remove(varies);
    }
    value
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let first = optimize(Method::Tpe, 7, 16, 1);
    let again = optimize(Method::Tpe, 7, 16, 1);
    let other = optimize(Method::Tpe, 8, 16, 1);
    assert_eq!(comparable(&first), comparable(&again));
    let points = |r: &OptimizeReport| {
        r.windows[0].trials.iter().map(|t| format!("{:?}", t.params)).collect::<Vec<_>>()
    };
    assert_eq!(points(&first).len(), 16);
    assert_ne!(points(&first), points(&other), "another seed, other trials");
    let w = &first.windows[0];
    assert!(w.deflated_sharpe.is_some() && w.overfitting.is_some(), "{}", first.summary());
}

/// The strategy template ships a search space its authors start from: it is accepted against
/// the template's own default config and a short run over the paper exchange's synthetic
/// market completes, every trial replayed.
#[test]
fn the_strategy_templates_space_file_searches_the_template() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let data = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.server.data_dir = data.path().display().to_string();
    let from = 1_790_812_800_000; // 2026-10-01T00:00:00Z
    let spec = OptimizeSpec {
        backtest: Spec {
            plugin: root.join("plugins/strategy_template.wasm"),
            symbols: vec!["BTCUSDT".into(), "ETHUSDT".into()],
            from_ms: from,
            to_ms: from + 6 * 24 * HOUR,
            candles: None,
        },
        space: std::fs::read_to_string(root.join("examples/strategy-template/optimize.toml"))
            .unwrap(),
        plan: Plan {
            method: Method::Tpe,
            objective: Objective::Sharpe,
            constraints: Constraints { min_trades: 0, max_drawdown_pct: None },
            trials: 4,
            seed: 1,
            batch: 4,
        },
        walk: Walk::Anchored,
        windows: 1,
        in_sample_pct: 70.0,
        workers: 2,
    };
    let report = optimize::run(&config, &spec, &mut Progress::hidden()).expect("the search runs");
    let keys: Vec<_> = report.space.params.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, ["adx_min", "reward_risk", "rsi_max", "sl_atr_mult"]);
    let window = &report.windows[0];
    assert_eq!(window.trials.len(), 4);
    assert!(window.trials.iter().all(|t| t.error.is_none()), "{}", report.summary());
    assert!(window.best.is_some(), "{}", report.summary());
}
