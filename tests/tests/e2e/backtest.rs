//! `spotbot backtest` as a library call: the unmodified plugin artifact replayed over candles,
//! its brackets placed in the exchange simulator's matching engine.
//!
//! - the same candles twice give the same trades and the same equity curve;
//! - bracket semantics at the simulator: a path through the take-profit gives a win exited at
//!   the take-profit price net of fees; a path through the stop gives a loss exited between
//!   the stop and its limit;
//! - the trailing job's rule raises the stop of a profitable trade at each step, and the raised
//!   stop fills at the simulator;
//! - MR Combined (the real strategy) trades the range bounce it was built for;
//! - history from the exchange's klines is cached on disk: a second run asks for none;
//! - the benchmark (ignored by default): a year of 1h candles for 20 symbols with MR Combined.

use std::path::{Path, PathBuf};

use spotbot::backtest::{self, Progress, Report, Spec};
use spotbot::config::Config;
use spotbot::execution::trade::CloseReason;
use spotbot_sdk::Candles;

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;
/// 2025-01-01T00:00:00Z.
const JAN_1: i64 = 1_735_689_600_000;

/// A built plugin of the workspace (`cargo xtask plugins` builds them).
fn artifact(folder: &str, file: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(folder).join(file);
    assert!(path.exists(), "{} is missing: run `cargo xtask plugins`", path.display());
    path
}

/// The test guest named `mr_combined` that buys every symbol on every scan (stop 2 %,
/// target 5 %, a checklist that passes the gates).
fn buy_everything() -> PathBuf {
    artifact("target/test-guests", "guest_auto_confirm.wasm")
}

fn config(data_dir: &Path, extra: &str) -> Config {
    let mut config = Config::parse(extra, "backtest-test.toml".as_ref()).expect("valid config");
    config.server.data_dir = data_dir.display().to_string();
    config
}

fn write_csv(dir: &Path, symbol: &str, c: &Candles) {
    let mut text = String::from("open_time,open,high,low,close,volume\n");
    for i in 0..c.len() {
        text.push_str(&format!(
            "{},{},{},{},{},{}\n",
            c.open_time[i], c.open[i], c.high[i], c.low[i], c.close[i], c.volume[i]
        ));
    }
    std::fs::write(dir.join(format!("{symbol}_{}.csv", c.timeframe)), text).unwrap();
}

async fn run(config: &Config, spec: &Spec) -> Report {
    let _ = rustls::crypto::ring::default_provider().install_default();
    backtest::run(config, spec, &mut Progress::hidden()).await.expect("the backtest runs")
}

fn spec(plugin: PathBuf, symbols: &[&str], from: i64, to: i64, candles: Option<&Path>) -> Spec {
    Spec {
        plugin,
        symbols: symbols.iter().map(|s| s.to_string()).collect(),
        from_ms: from,
        to_ms: to,
        candles: candles.map(Path::to_path_buf),
    }
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(1.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_candles_twice_give_the_same_trades() {
    let data = tempfile::tempdir().unwrap();
    let candles = tempfile::tempdir().unwrap();
    let end = JAN_1 + 40 * DAY;
    for (i, symbol) in ["ETHUSDT", "SOLUSDT", "LINKUSDT"].iter().enumerate() {
        let c = spotbot_sdk::testing::candles(7 + i as u64, "1h", 40 * 24, 100.0, 0.0, end);
        write_csv(candles.path(), symbol, &c);
    }
    let config = config(data.path(), "[strategy.mr_combined]\nmax_trades_per_day = 6\n");
    let spec = spec(
        buy_everything(),
        &["ETHUSDT", "SOLUSDT", "LINKUSDT"],
        JAN_1 + 2 * DAY,
        end,
        Some(candles.path()),
    );
    let first = run(&config, &spec).await;
    let second = run(&config, &spec).await;

    assert!(first.trades.len() >= 20, "enough trades to mean something: {}", first.summary());
    let reasons =
        |r: &Report, reason: CloseReason| r.trades.iter().filter(|t| t.reason == reason).count();
    assert!(reasons(&first, CloseReason::TakeProfit) > 0, "{}", first.summary());
    assert!(reasons(&first, CloseReason::StopLoss) > 0, "{}", first.summary());
    assert_eq!(first.trades, second.trades, "identical trades");
    assert_eq!(first.equity, second.equity, "identical equity curve");
    assert_eq!(first.signals, second.signals);
    assert_eq!(first.stats, second.stats);
    assert_eq!(first.steps, 38 * 24 + 1);
    assert_eq!(first.start_equity, 10_000.0, "[exchange] paper_usdt");
    // The statistics are the history's: wins and losses add up, pnl sums.
    let total: f64 = first.trades.iter().map(|t| t.pnl).sum();
    assert!(near(first.stats.total_pnl, total), "{} vs {total}", first.stats.total_pnl);
    assert_eq!(first.stats.count, first.trades.len());
    // Limits apply as live: never more than 6 entries a day.
    let mut per_day = std::collections::BTreeMap::<String, usize>::new();
    for t in &first.trades {
        *per_day.entry(t.opened_at[..10].to_string()).or_default() += 1;
    }
    assert!(per_day.values().all(|n| *n <= 6), "{per_day:?}");
    assert!(first.signals.not_opened.contains_key("daily_limit_reached"), "{:?}", first.signals);
    let page = backtest::html::page(&first);
    assert!(
        page.contains("<svg")
            && page.contains("</html>")
            && !page.contains("http://www.w3.org/1999/xhtml")
    );
    assert!(!page.contains("<script") && !page.contains("src=\"http"), "self-contained");
    // The trades' luck: shuffled (same final equity, other paths) and bootstrapped, seeded.
    assert_eq!(first.monte_carlo, second.monte_carlo, "the same seed, the same paths");
    assert_eq!(first.monte_carlo.len(), 2, "{}", first.summary());
    let shuffle = &first.monte_carlo[0];
    assert_eq!(shuffle.trades, first.trades.len());
    assert!((shuffle.final_equity.p50 - shuffle.original.final_equity).abs() < 1e-6);
    for mc in &first.monte_carlo {
        let dd = mc.max_drawdown_pct;
        assert!(-100.0 <= dd.p5 && dd.p5 <= dd.p50 && dd.p50 <= dd.p95 && dd.p95 <= 0.0, "{mc:?}");
    }
    assert!(page.contains("Monte Carlo") && first.summary().contains("monte carlo (Bootstrap"));
}

/// Candles of SOLUSDT: three flat hours at 100, then the candle under test at `t0`, then one
/// flat candle at its close.
fn one_move(t0: i64, open: f64, high: f64, low: f64, close: f64) -> Candles {
    let mut c = flat_then(t0, [open, high, low, close]);
    push(&mut c, t0 + HOUR, [close; 4]);
    c
}

/// Candles of SOLUSDT: three flat hours at 100, then the candle `ohlc` at `t0`.
fn flat_then(t0: i64, ohlc: [f64; 4]) -> Candles {
    let mut c = Candles {
        timeframe: "1h".into(),
        open_time: Vec::new(),
        open: Vec::new(),
        high: Vec::new(),
        low: Vec::new(),
        close: Vec::new(),
        volume: Vec::new(),
    };
    for k in (1..=3).rev() {
        push(&mut c, t0 - k * HOUR, [100.0; 4]);
    }
    push(&mut c, t0, ohlc);
    c
}

/// Appends a candle opening at `t` with `[open, high, low, close]` and a volume of 1000.
fn push(c: &mut Candles, t: i64, ohlc: [f64; 4]) {
    spotbot::backtest::history::push(c, t, ohlc, 1_000.0);
}

/// One entry at `t0` (the guest buys; one trade a day allowed), settled at `t0 + 1h`.
async fn one_trade(candle: (f64, f64, f64, f64)) -> Report {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let t0 = JAN_1 + 10 * DAY;
    let (open, high, low, close) = candle;
    write_csv(dir.path(), "SOLUSDT", &one_move(t0, open, high, low, close));
    let config = config(data.path(), "[strategy.mr_combined]\nmax_trades_per_day = 1\n");
    let report =
        run(&config, &spec(buy_everything(), &["SOLUSDT"], t0, t0 + HOUR, Some(dir.path()))).await;
    assert_eq!(report.trades.len(), 1, "{}", report.summary());
    assert_eq!(report.closed_at_end, 0, "{}", report.summary());
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_through_the_take_profit_is_a_win_at_the_target_net_of_fees() {
    let report = one_trade((100.0, 106.0, 99.5, 105.5)).await;
    let t = &report.trades[0];
    assert_eq!(t.reason, CloseReason::TakeProfit);
    // The MARKET buy takes the simulator's best ask, one tick above the price of the step.
    assert_eq!(t.entry_px, 100.01);
    // The target: entry + 5 % to the tick; the LIMIT_MAKER leg fills at its own price.
    assert!((t.tp_px - 100.01 * 1.05).abs() <= 0.01, "{t:?}");
    assert_eq!(t.exit_px, t.tp_px);
    // Fees: 0.1 % of the coin on the entry (the size is what was received, to the step), 0.1 %
    // of the quote on the exit.
    assert_eq!(t.size, 0.999, "1.000 SOL bought, 0.001 paid as fee");
    assert!(near(t.entry_quote, 100.01), "{t:?}");
    assert!(near(t.exit_quote, t.size * t.exit_px * 0.999), "{t:?}");
    assert!(near(t.pnl, t.exit_quote - t.entry_quote), "{t:?}");
    assert!(t.pnl > 0.0);
    assert!(near(report.stats.total_pnl, t.pnl));
    assert_eq!(report.stats.win_rate, Some(100.0));
    assert!(report.fees > 0.0);
    // The buy result's checklist travels with the trade: why it was taken, in JSON and HTML.
    assert_eq!(t.checklist.len(), 10, "{t:?}");
    assert_eq!(t.checklist.iter().filter(|c| c.pass).count(), 10, "{t:?}");
    assert_eq!(t.checklist[0].name, "line_0");
    let page = backtest::html::page(&report);
    assert!(page.contains("<th>Why taken</th>") && page.contains("10/10 checks"), "{page}");
    assert!(page.contains("✓ line_9"), "{page}");
    // The equity ends where the trade left it (plus the coin dust of the step rounding).
    let end = report.end_equity;
    assert!(end > 10_000.0 + t.pnl - 0.01 && end < 10_000.0 + t.pnl + 0.2, "{}", report.summary());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_through_the_stop_is_a_loss_between_the_stop_and_its_limit() {
    let report = one_trade((100.0, 100.2, 96.0, 96.5)).await;
    let t = &report.trades[0];
    assert_eq!(t.reason, CloseReason::StopLoss);
    assert_eq!(t.entry_px, 100.01);
    assert!((t.sl_px - 100.01 * 0.98).abs() <= 0.01, "{t:?}");
    // The stop triggers on the way down and its limit (0.2 % below) is within reach: the fill
    // is at or below the stop, never below the limit, far above the candle's low.
    assert!(t.exit_px <= t.sl_px && t.exit_px >= t.sl_px * 0.998 - 0.01, "{t:?}");
    assert!(near(t.exit_quote, t.size * t.exit_px * 0.999), "{t:?}");
    assert!(near(t.pnl, t.exit_quote - t.entry_quote), "{t:?}");
    assert!(t.pnl < -1.9 && t.pnl > -2.6, "about 2 % of 100 USDT plus fees: {t:?}");
    assert_eq!(report.stats.losses, 1);
    assert_eq!(report.stats.profit_factor, Some(0.0), "no gross profit over the loss");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flat_trade_books_the_fees_and_not_the_coin_left_by_step_rounding() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let t0 = JAN_1 + 10 * DAY;
    // At 30 the buy's 0.1 % fee in the coin is not a whole number of 0.001 SOL steps.
    write_csv(dir.path(), "SOLUSDT", &one_move(t0, 30.0, 30.05, 29.95, 30.0));
    let config = config(data.path(), "[strategy.mr_combined]\nmax_trades_per_day = 1\n");
    let report =
        run(&config, &spec(buy_everything(), &["SOLUSDT"], t0, t0 + HOUR, Some(dir.path()))).await;
    assert_eq!((report.trades.len(), report.closed_at_end), (1, 1), "{}", report.summary());
    let t = &report.trades[0];
    // The cost of the coin held: the quote spent for what was received net of the fee, in
    // the proportion the size holds; the sub-step rest stays in the account, unbooked.
    assert!(near(t.entry_quote, t.size * t.entry_px / 0.999), "{t:?}");
    let fees = (t.entry_quote - t.size * t.entry_px) + t.size * t.exit_px * 0.001;
    assert!(near(t.pnl, t.size * (t.exit_px - t.entry_px) - fees), "only the fees: {t:?}");
    assert!(near(t.pnl, t.exit_quote - t.entry_quote), "{t:?}");
    assert!(report.dust > 0.0 && report.dust < 0.001 * 30.0, "less than a step left: {report:?}");
}

/// Bought at 100.01 at `t0`; the next two candles open at 90, below the stop's limit (~97.8),
/// and stay there: the stop triggers at 90 and cannot fill, as a stop-limit cannot.
async fn gapped_stop_run(extra_toml: &str) -> (Report, i64) {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let t0 = JAN_1 + 10 * DAY;
    let mut c = flat_then(t0, [100.0, 100.5, 99.5, 100.0]);
    for k in 1..=2 {
        push(&mut c, t0 + k * HOUR, [90.0, 90.5, 89.5, 90.0]);
    }
    write_csv(dir.path(), "SOLUSDT", &c);
    let toml = format!("[strategy.mr_combined]\nmax_trades_per_day = 1\n{extra_toml}");
    let config = config(data.path(), &toml);
    let report =
        run(&config, &spec(buy_everything(), &["SOLUSDT"], t0, t0 + 2 * HOUR, Some(dir.path())))
            .await;
    assert_eq!(report.trades.len(), 1, "{}", report.summary());
    (report, t0)
}

/// A gapped stop is handled as live trading handles it (`[protection] gap_exit`): by default
/// the position is sold at market at the step the gap is seen, not left to fill at its limit
/// whenever the price comes back; with `alert` it stays open. Either way the report counts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gap_past_the_stop_limit_exits_at_market_unless_gap_exit_is_alert() {
    let (report, t0) = gapped_stop_run("").await;
    let t = &report.trades[0];
    assert_eq!((t.reason, report.closed_at_end), (CloseReason::Market, 0), "{}", report.summary());
    assert!(t.exit_px < t.sl_px * 0.998 && t.exit_px > 89.0, "sold at the gapped price: {t:?}");
    assert!(t.closed_at.starts_with("2025-01-11T01:00:00"), "at the next step: {t:?}");
    assert_eq!(report.gapped_stops.len(), 1, "{}", report.summary());
    let gap = &report.gapped_stops[0];
    assert_eq!((gap.symbol.as_str(), gap.action.as_str()), ("SOLUSDT", "closed_at_market"));
    assert_eq!(gap.at, backtest::history::iso(t0 + HOUR));
    assert!(gap.price < gap.stop_px, "{gap:?}");
    assert!(report.summary().contains("stops gapped past their limit: 1"), "{}", report.summary());
    assert!(backtest::html::page(&report).contains("Stops gapped past their limit"));

    let (report, _) = gapped_stop_run("[protection]\ngap_exit = \"alert\"\n").await;
    let t = &report.trades[0];
    assert_eq!((t.reason, report.closed_at_end), (CloseReason::Market, 1), "held to the end");
    assert_eq!(report.gapped_stops.len(), 1, "reported once: {:?}", report.gapped_stops);
    assert_eq!(report.gapped_stops[0].action, "alerted");
}

/// Bought at 100.01 at `t0`; the candle closes at 103 (+3 %, past the 2 % trigger), the next
/// one falls to 100.5 and the price stays at 101 to the end.
async fn trailing_run(extra_toml: &str) -> Report {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let t0 = JAN_1 + 10 * DAY;
    let mut c = flat_then(t0, [100.0, 103.5, 99.8, 103.0]);
    push(&mut c, t0 + HOUR, [103.0, 103.2, 100.5, 101.0]);
    for k in 2..=3 {
        push(&mut c, t0 + k * HOUR, [101.0; 4]);
    }
    write_csv(dir.path(), "SOLUSDT", &c);
    let toml = format!(
        "{extra_toml}[strategy.mr_combined]\nmax_trades_per_day = 1\n\
         trailing_trigger_pct = 2.0\ntrailing_distance_pct = 1.0\n"
    );
    let config = config(data.path(), &toml);
    let report =
        run(&config, &spec(buy_everything(), &["SOLUSDT"], t0, t0 + 3 * HOUR, Some(dir.path())))
            .await;
    assert_eq!(report.trades.len(), 1, "{}", report.summary());
    report
}

/// The trailing job's rule runs at each step as live: the stop follows the close of `t0`
/// (103 × 0.99) and the fall of the next candle fills it at the simulator there — a win where
/// the original stop (2 % under the entry) would have held the position to the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stop_trails_a_profitable_trade_and_fills_where_it_was_raised() {
    let report = trailing_run("").await;
    let t = &report.trades[0];
    assert_eq!(report.stops_trailed, 1, "{}", report.summary());
    assert_eq!(t.reason, CloseReason::StopLoss, "{t:?}");
    assert!((t.sl_px - 101.97).abs() <= 0.01, "raised to 1 % under the close of 103: {t:?}");
    // The stop-limit filled at the engine between the raised stop and its limit.
    assert!(t.exit_px <= t.sl_px && t.exit_px >= t.sl_px * 0.998 - 0.01, "{t:?}");
    assert!(t.pnl > 1.0, "locked in profit: {t:?}");
    assert!(report.summary().contains("stops raised by trailing: 1"), "{}", report.summary());
    assert!(backtest::html::page(&report).contains("Stops raised by trailing"));

    // With the trailing job switched off, the original stop stays and the trade is held to the
    // end, closed at market at 101.
    let report = trailing_run("[scheduler]\ntrailing_stop = false\n").await;
    let t = &report.trades[0];
    assert_eq!(report.stops_trailed, 0, "{}", report.summary());
    assert_eq!((t.reason, report.closed_at_end), (CloseReason::Market, 1), "{t:?}");
    assert!((t.sl_px - 100.01 * 0.98).abs() <= 0.01, "{t:?}");
}

/// No trade at a step without a candle: the market was closed (a weekend) or the data ended.
/// The steps are counted as `market_closed`, and the warm-up before the first step is counted
/// in candles, across the gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_trades_while_the_market_has_no_candle() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let t0 = JAN_1 + 10 * DAY;
    // Candles at hours 0-5 and 10-12 after t0: closed from hour 6 to hour 9.
    let mut c = one_move(t0, 100.0, 100.0, 100.0, 100.0);
    for h in (2..=5).chain(10..=12) {
        push(&mut c, t0 + h * HOUR, [100.0; 4]);
    }
    write_csv(dir.path(), "SOLUSDT", &c);
    let config = config(data.path(), "[strategy.mr_combined]\nmax_trades_per_day = 5\n");
    let from = t0 + 6 * HOUR;
    let report =
        run(&config, &spec(buy_everything(), &["SOLUSDT"], from, t0 + 12 * HOUR, Some(dir.path())))
            .await;
    assert_eq!(report.trades.len(), 1, "{}", report.summary());
    assert_eq!(report.trades[0].opened_at, "2025-01-11T10:00:00+00:00", "when it opened again");
    assert_eq!(report.why_no_trade.by_symbol["SOLUSDT"].market_closed, 4, "hours 6-9");
    assert_eq!(report.why_no_trade.run.market_closed, 4);
    assert!(report.summary().contains("market closed at 4 steps"), "{}", report.summary());
}

/// Why no trade happened, per check of the checklist and per gate, for the run and per
/// symbol, in the summary, the JSON and the HTML: MR Combined over three random walks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_says_why_no_trade_happened_per_check_and_per_symbol() {
    let data = tempfile::tempdir().unwrap();
    let candles = tempfile::tempdir().unwrap();
    // MR Combined reads 200 daily candles: 210 days of hourly ones to aggregate them from.
    let end = JAN_1 + 210 * DAY;
    let symbols = ["ETHUSDT", "SOLUSDT", "LINKUSDT"];
    for (i, symbol) in symbols.iter().enumerate() {
        let c = spotbot_sdk::testing::candles(11 + i as u64, "1h", 210 * 24, 100.0, 0.0, end);
        write_csv(candles.path(), symbol, &c);
    }
    let config = config(data.path(), "");
    let plugin = artifact("plugins", "mr_combined.wasm");
    let from = end - 5 * DAY;
    let report = run(&config, &spec(plugin, &symbols, from, end, Some(candles.path()))).await;
    let why = &report.why_no_trade;
    assert!(!why.run.skips.is_empty() && !why.run.failed_checks.is_empty(), "{why:?}");
    assert_eq!(why.by_symbol.len(), 3, "{why:?}");
    for (symbol, counts) in &why.by_symbol {
        let skipped: usize = counts.skips.values().sum();
        assert!(skipped > 0, "{symbol}: {counts:?}");
    }
    let skipped: usize = why.run.skips.values().sum();
    let per_symbol: usize = why.by_symbol.values().flat_map(|c| c.skips.values()).sum();
    assert_eq!(skipped, per_symbol, "the run's counts are the symbols' sums");
    let summary = report.summary();
    assert!(summary.contains("why no trade: skips ") && summary.contains("failed checks "));
    assert!(summary.contains("  SOLUSDT: skips "), "{summary}");
    let json = serde_json::to_value(&report).unwrap();
    assert!(json["why_no_trade"]["by_symbol"]["ETHUSDT"]["failed_checks"].is_object(), "{json}");
    let page = backtest::html::page(&report);
    assert!(page.contains("Why no trade") && page.contains("… LINKUSDT"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mr_combined_trades_the_range_bounce_it_was_built_for() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The scenario ends with the bounce candle closing at `end`; two flat days follow.
    let end = JAN_1 + 200 * DAY;
    let mut c = mr_combined::scenarios::range_bounce_buy(end);
    let last = *c.close.last().unwrap();
    for k in 0..48 {
        c.open_time.push(end + k * HOUR);
        c.open.push(last);
        c.high.push(last + 0.05);
        c.low.push(last - 0.05);
        c.close.push(last);
        c.volume.push(1_000.0);
    }
    write_csv(dir.path(), "SOLUSDT", &c);
    let config = config(data.path(), "");
    let spec = spec(
        artifact("plugins", "mr_combined.wasm"),
        &["SOLUSDT"],
        end - 3 * HOUR,
        end + 24 * HOUR,
        Some(dir.path()),
    );
    let report = run(&config, &spec).await;
    assert_eq!(report.replayed.plugin, "mr_combined");
    // The setup holds while the test of support is within its last four 1h candles: the
    // later buy results meet the open trade and are counted, never opened twice.
    assert!((1..=4).contains(&report.signals.buy), "{}", report.summary());
    assert_eq!(report.signals.opened, 1, "{}", report.summary());
    let repeated = report.signals.not_opened.get("trade_exists").map_or(0, |(n, _)| *n);
    assert_eq!(repeated, report.signals.buy - 1, "{}", report.summary());
    let t = &report.trades[0];
    assert_eq!(t.opened_at, "2025-07-20T00:00:00+00:00", "at the close of the bounce candle");
    assert!(t.entry_px > mr_combined::scenarios::SUPPORT, "{t:?}");
    assert!(t.tp_px > t.entry_px && t.sl_px < mr_combined::scenarios::SUPPORT, "{t:?}");
    assert_eq!(t.reason, CloseReason::Market, "still open at the end: {}", report.summary());
    assert_eq!(report.closed_at_end, 1);
    assert!(report.exposure_pct > 0.0);
}

/// The strategy template, which `cargo xtask new-strategy` copies, trades on the paper
/// exchange's synthetic market (the backtest its README shows): an author starts from a
/// strategy whose signals pass the service's gates and reach the exchange.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_strategy_template_trades_on_the_synthetic_market() {
    let data = tempfile::tempdir().unwrap();
    let config = config(data.path(), "");
    let from = 1_790_812_800_000; // 2026-10-01T00:00:00Z
    let symbols = ["BTCUSDT", "ETHUSDT", "SOLUSDT"];
    let plugin = artifact("plugins", "strategy_template.wasm");
    let report = run(&config, &spec(plugin, &symbols, from, from + 7 * DAY, None)).await;
    assert_eq!(report.replayed.plugin, "template");
    assert!(report.signals.opened >= 3, "{}", report.summary());
    assert!(report.trades.iter().any(|t| t.pnl > 0.0), "{}", report.summary());
}

fn kline_requests(sim: &spotbot_sim::RunningSim) -> usize {
    sim.sim.requests().iter().filter(|r| r.path == "/api/v3/klines").count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn klines_are_fetched_once_and_read_from_the_disk_cache_afterwards() {
    let clock = std::sync::Arc::new(spotbot_sim::ManualClock::starting_now());
    let mut sim_config = spotbot_sim::SimConfig::new(3, "k", "s");
    sim_config.clock = clock.clone();
    let exchange = spotbot_sim::serve(sim_config, "127.0.0.1:0").await.unwrap();
    let data = tempfile::tempdir().unwrap();
    let toml = format!(
        "[exchange]\nmode = \"testnet\"\nbase_url = \"{}\"\n[strategy.mr_combined]\nmax_trades_per_day = 3\n",
        exchange.base_url()
    );
    let config = config(data.path(), &toml);
    let now = spotbot_sim::Clock::now_ms(clock.as_ref());
    let from = now - now.rem_euclid(HOUR) - 20 * DAY;
    let symbols = ["ETHUSDT", "SOLUSDT"];
    let first = run(&config, &spec(buy_everything(), &symbols, from, from + 3 * DAY, None)).await;
    let fetched = kline_requests(&exchange);
    assert!(fetched >= 2, "one series per symbol at least: {fetched}");
    assert!(first.source.contains("klines from http://127.0.0.1"), "{}", first.source);
    assert!(!first.trades.is_empty(), "{}", first.summary());
    let cached = data.path().join("backtest-cache");
    let files: Vec<_> = walk(&cached);
    assert_eq!(files.len(), 2, "one file per symbol and timeframe: {files:?}");

    // The same range again: everything from the disk, the same trades.
    let second = run(&config, &spec(buy_everything(), &symbols, from, from + 3 * DAY, None)).await;
    assert_eq!(kline_requests(&exchange), fetched, "no kline request for a cached range");
    assert_eq!(first.trades, second.trades);

    // A day more: only what is missing, one request per series.
    let third = run(&config, &spec(buy_everything(), &symbols, from, from + 4 * DAY, None)).await;
    assert_eq!(kline_requests(&exchange), fetched + 2, "only the new day, once per series");
    assert_eq!(
        third.trades[..first.trades.len() - first.closed_at_end],
        first.trades[..first.trades.len() - first.closed_at_end]
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// 1h candles of one benchmark symbol over `[start, end)`: MR Combined's range scenario, one
/// 20-day range cycle after the other, each ending in the scenario's bounce off support (the
/// cycles are periodic, so consecutive ones join without a gap), shifted by `index` × 20 h and
/// scaled to the price level of the symbol in the simulator's listing (whose tick and step
/// fit that level).
fn bench_series(index: usize, start: i64, end: i64) -> Candles {
    use mr_combined::scenarios::{HOURS, range_bounce_buy};
    const CYCLE: i64 = 20 * DAY;
    let listing = &spotbot_sim::symbols::default_listing()[index];
    let scale = rust_decimal::prelude::ToPrimitive::to_f64(&listing.base_price).unwrap() / 100.0;
    let mut out = Candles {
        timeframe: "1h".into(),
        open_time: Vec::new(),
        open: Vec::new(),
        high: Vec::new(),
        low: Vec::new(),
        close: Vec::new(),
        volume: Vec::new(),
    };
    let mut seg_end = start + HOURS as i64 * HOUR + index as i64 * 20 * HOUR;
    let mut covered = start;
    while covered < end {
        let c = range_bounce_buy(seg_end);
        for i in 0..c.len() {
            let t = c.open_time[i];
            if t < covered || t < start || t >= end {
                continue;
            }
            // A cycle opens where the previous one's bounce closed: no gap at the join.
            let open = match out.close.last() {
                Some(&previous) if t == covered => previous,
                _ => c.open[i] * scale,
            };
            out.open_time.push(t);
            out.open.push(open);
            out.high.push((c.high[i] * scale).max(open));
            out.low.push((c.low[i] * scale).min(open));
            out.close.push(c.close[i] * scale);
            out.volume.push(c.volume[i]);
        }
        covered = out.open_time.last().map_or(covered, |t| t + HOUR);
        seg_end += CYCLE;
    }
    out
}

/// The benchmark of docs/benchmarks.md: a year of 1h candles (plus 210 days of warm-up for the
/// 200 daily candles of the market context) for the 20 symbols of the simulator's listing,
/// replayed with MR Combined. Run it in release:
/// `cargo test --release -p spotbot-tests --test e2e backtest:: -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
async fn benchmark_a_year_of_1h_candles_for_20_symbols() {
    let symbols: Vec<String> =
        spotbot_sim::symbols::default_listing().into_iter().map(|r| r.symbol).collect();
    assert_eq!(symbols.len(), 20);
    let from = JAN_1;
    let to = JAN_1 + 365 * DAY;
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let generated = std::time::Instant::now();
    for (i, symbol) in symbols.iter().enumerate() {
        write_csv(dir.path(), symbol, &bench_series(i, from - 210 * DAY, to + DAY));
    }
    let generated = generated.elapsed();
    let config = config(data.path(), "[strategy.mr_combined]\nmax_trades_per_day = 4\n");
    let refs: Vec<&str> = symbols.iter().map(String::as_str).collect();
    let spec = spec(artifact("plugins", "mr_combined.wasm"), &refs, from, to, Some(dir.path()));
    // Compile (or load from the artifact cache) once outside the timing, as a second run would.
    let warm = spotbot::backtest::Spec { to_ms: from + DAY, ..spec.clone() };
    run(&config, &warm).await;
    let started = std::time::Instant::now();
    let report = run(&config, &spec).await;
    let total = started.elapsed();
    let html = started.elapsed();
    let page = backtest::html::page(&report);
    let html = started.elapsed() - html;
    println!("{}", report.summary());
    println!(
        "BENCH backtest: {} steps x {} symbols, {} trades: total {:.2} s (candles read + replay), \
         replay {:.2} s ({:.3} ms/step), HTML {:.1} ms ({} KB); candles generated in {:.2} s",
        report.steps,
        symbols.len(),
        report.trades.len(),
        total.as_secs_f64(),
        report.elapsed_s,
        report.elapsed_s * 1000.0 / report.steps as f64,
        html.as_secs_f64() * 1000.0,
        page.len() / 1024,
        generated.as_secs_f64(),
    );
    let t = report.timing;
    println!(
        "BENCH split: scan {:.2} s = plugin calls {:.2} s + market data {:.2} s (of which contexts \
         {:.2} s) + the rest {:.2} s; execution {:.2} s; simulator {:.2} s; other {:.2} s",
        t.scan_s,
        t.plugin_call_s,
        t.snapshot_s,
        t.context_s,
        t.scan_s - t.plugin_call_s - t.snapshot_s,
        t.execution_s,
        t.simulator_s,
        report.elapsed_s - t.scan_s - t.execution_s - t.simulator_s
    );
    assert_eq!(report.steps, 365 * 24 + 1);
    assert!(!report.trades.is_empty(), "{}", report.summary());
}

/// `sma_cross` says in every skip where its averages stand, numbers included, so no two skip
/// texts are alike: a month of 1h steps on three symbols must still give a short summary that
/// names the kinds with their counts, and a small JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn why_no_trade_groups_reasons_that_carry_numbers_by_kind() {
    let data = tempfile::tempdir().unwrap();
    let candles = tempfile::tempdir().unwrap();
    let end = JAN_1 + 40 * DAY;
    let symbols = ["ETHUSDT", "SOLUSDT", "LINKUSDT"];
    for (i, symbol) in symbols.iter().enumerate() {
        let c = spotbot_sdk::testing::candles(21 + i as u64, "1h", 40 * 24, 100.0, 0.0, end);
        write_csv(candles.path(), symbol, &c);
    }
    let plugin = artifact("target/test-guests", "guest_sma_cross.wasm");
    let config = config(data.path(), "");
    let report =
        run(&config, &spec(plugin, &symbols, end - 30 * DAY, end, Some(candles.path()))).await;
    let why = &report.why_no_trade;
    let kinds: Vec<&str> = why.run.skips.keys().map(String::as_str).collect();
    let known = ["SMA(#) # above SMA(#) #, no cross up", "SMA(#) # below SMA(#) #, no cross up"];
    assert!(!kinds.is_empty() && kinds.iter().all(|k| known.contains(k)), "{kinds:?}");
    let skipped: usize = why.run.skips.values().sum();
    assert!(skipped > 3 * 600, "about 720 steps a symbol, nearly all skips: {skipped}");
    for kind in &kinds {
        assert!(why.run.skip_examples[*kind].starts_with("SMA(10) "), "{why:?}");
    }
    let summary = report.summary();
    assert!(summary.len() < 4096, "{} bytes:\n{summary}", summary.len());
    let (kind, n) = why.run.skips.iter().max_by_key(|(_, n)| **n).unwrap();
    assert!(summary.contains(&format!("{kind} {n}")), "the top kind with its count:\n{summary}");
    let json = serde_json::to_string(&why).unwrap();
    assert!(json.len() < 4096, "{} bytes", json.len());
    assert!(backtest::html::page(&report).contains("SMA(#) # below SMA(#) #"));
}
