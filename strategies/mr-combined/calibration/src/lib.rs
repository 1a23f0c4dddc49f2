//! `cargo xtask calibrate`: MR Combined replayed by `spotbot backtest` over real hourly market
//! data (EURUSD from two PyPI wheels, [`market_data`]) and over three random walks of
//! the same calendar, volume and hourly volatility, checked against the rate band documented
//! in `strategies/mr-combined/README.md` ("Calibration on real data"):
//!
//! - EURUSD, [`FROM`] .. [`TO`] (eleven months, one symbol), the defaults: between
//!   [`SIGNALS`] buy or sell results, [`SIGNALS_PER_RANGE_MONTH`] of them a month of validated
//!   range, and between [`TRADES`] closed trades — it trades, and not at every scan;
//! - EURUSD with the entry zone widened to [`WIDE_ZONE`] ATR (the two config keys; every other
//!   line as configured): at least one trade won and one lost — the rest of the checklist
//!   picks setups that can go either way, and the report names why each closed;
//! - the random walks: of the steps at which the price stood in the entry zone of a range
//!   the gates had validated, at most [`WALK_ZONE_SHARE_MAX`] became a signal (it does not
//!   trade every range of a market without mean reversion), and at most [`TRADES`]'s upper
//!   bound of trades per walk.
//!
//! Uses `target/debug/spotbot` and `plugins/mr_combined.wasm`; the three replays take about
//! 45 s on a debug build.
//!
//! It lives beside MR Combined, whose README holds the bands, and is a library that xtask
//! calls (`cargo xtask calibrate`, and `cargo xtask test` after the workspace's tests): it
//! compiles with xtask from dependencies xtask builds anyway, so it adds no build of its own
//! to a clean clone's CI, where a binary run with `cargo run` would add one more link and one
//! more cargo start.

mod market_data;

use std::ops::RangeInclusive;
use std::path::Path;

use anyhow::bail;
use serde_json::Value;

use market_data::{EURUSD, QUOTE, WALKS};
use xtask_support::backtest::BacktestRun;
use xtask_support::{Cargo, plugins, workspace_root};

/// The replayed span: the first step with 60 daily candles of warm-up in the file (the plugin
/// skips with `data` until it has 60), through the file's last day.
const FROM: &str = "2017-03-13";
const TO: &str = "2018-02-07";
/// Buy and sell results over the EURUSD run (one symbol, eleven months): the aim is one or
/// two setups a month while the market ranges and none while it trends (README).
const SIGNALS: RangeInclusive<u64> = 1..=10;
/// Buy and sell results per month of validated range over the EURUSD run: the aim (one or two
/// a month of range) with room for one symbol's small sample.
const SIGNALS_PER_RANGE_MONTH: RangeInclusive<f64> = 0.5..=3.0;
/// Closed trades over the EURUSD run, and at most the upper bound per random walk.
const TRADES: RangeInclusive<u64> = 1..=8;
/// Share of the random walks' entry-zone steps (price 0.3-0.5 ATR from the edge of a
/// validated range) that may become a signal.
const WALK_ZONE_SHARE_MAX: f64 = 0.5;
/// `zone_proximity_atr_min` / `max` of the sensitivity run (the defaults are 0.3 / 0.5).
const WIDE_ZONE: (f64, f64) = (0.0, 1.0);
/// Open-market hourly steps in a month (about 21.7 trading days of 24 hours): the rate per
/// month of validated range is signals / (validated-range steps / this).
const STEPS_PER_MONTH: f64 = 520.0;

/// `cargo xtask calibrate`: builds the service and the plugin, then [`check`]s.
pub fn run() -> anyhow::Result<()> {
    Cargo::workspace().run(&["build", "-p", "spotbot"])?;
    plugins::build(&Cargo::workspace(), &["mr-combined".to_string()])?;
    check()
}

/// The calibration on what is built: `cargo xtask test` runs it after `cargo test
/// --workspace` (which built `target/debug/spotbot`) and the plugin build, so it compiles
/// nothing (`cargo build -p spotbot` alone resolves other features than the workspace's
/// build and would rebuild dependencies).
pub fn check() -> anyhow::Result<()> {
    let data = market_data::ensure()?;
    let market =
        format!("[market]\nquote_asset = \"{QUOTE}\"\nreference_symbol = \"BTC{QUOTE}\"\n");
    let config = data.join("calibrate.toml");
    std::fs::write(&config, &market)?;
    let wide_config = data.join("calibrate-wide-zone.toml");
    std::fs::write(
        &wide_config,
        format!(
            "{market}[strategy.mr_combined]\nzone_proximity_atr_min = {:.1}\n\
             zone_proximity_atr_max = {:.1}\n",
            WIDE_ZONE.0, WIDE_ZONE.1
        ),
    )?;
    let real = Replay::run(&data, &config, "eurusd", &[EURUSD])?;
    let wide = Replay::run(&data, &wide_config, "eurusd-wide-zone", &[EURUSD])?;
    let walks = Replay::run(&data, &config, "walks", &WALKS)?;
    real.print("EURUSD (real, hourly)");
    wide.print(&format!("EURUSD, entry zone {}-{} ATR", WIDE_ZONE.0, WIDE_ZONE.1));
    walks.print("random walks (3, EURUSD's calendar, volume and volatility)");

    let mut failures = Vec::new();
    if !SIGNALS.contains(&real.signals()) {
        failures.push(format!("EURUSD gave {} signals, band {SIGNALS:?}", real.signals()));
    }
    if real.per_range_month().is_none_or(|rate| !SIGNALS_PER_RANGE_MONTH.contains(&rate)) {
        failures.push(format!(
            "EURUSD gave {:?} signals a month of validated range, band {SIGNALS_PER_RANGE_MONTH:?}",
            real.per_range_month()
        ));
    }
    if !TRADES.contains(&real.trades()) {
        failures.push(format!("EURUSD closed {} trades, band {TRADES:?}", real.trades()));
    }
    if wide.stat("wins") == 0 || wide.stat("losses") == 0 {
        failures.push(format!(
            "EURUSD with the wide zone won {} and lost {} trades: one of each at least",
            wide.stat("wins"),
            wide.stat("losses")
        ));
    }
    let cap = *TRADES.end() * WALKS.len() as u64;
    if walks.trades() > cap {
        failures.push(format!("the random walks closed {} trades, at most {cap}", walks.trades()));
    }
    let share = walks.zone_share();
    if share.is_none_or(|s| s > WALK_ZONE_SHARE_MAX) {
        failures.push(format!(
            "the random walks signalled at {share:?} of their entry-zone steps, at most \
             {WALK_ZONE_SHARE_MAX}"
        ));
    }
    if !failures.is_empty() {
        bail!("calibration outside its band:\n  {}", failures.join("\n  "));
    }
    println!("calibration: inside the bands (strategies/mr-combined/README.md)");
    Ok(())
}

/// One `spotbot backtest --json` run and its report.
struct Replay {
    report: Value,
}

impl Replay {
    fn run(data: &Path, config: &Path, name: &str, symbols: &[&str]) -> anyhow::Result<Replay> {
        let symbols: Vec<String> = symbols.iter().map(|s| s.to_string()).collect();
        let (report, _) = BacktestRun {
            binary: &plugins::target_dir()?.join("debug").join("spotbot"),
            config,
            plugin: &workspace_root().join("plugins").join("mr_combined.wasm"),
            symbols: &symbols,
            from: FROM,
            to: TO,
            candles: &data.join("candles"),
            work: data,
            name,
        }
        .run()?;
        Ok(Replay { report })
    }

    fn number(&self, pointer: &str) -> u64 {
        self.report.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
    }

    /// Buy and sell results (each scan that gave one, a trade open or not).
    fn signals(&self) -> u64 {
        self.number("/signals/buy") + self.number("/signals/sell")
    }

    fn trades(&self) -> u64 {
        self.stat("count")
    }

    /// A count of the report's trade statistics (`count`, `wins`, `losses`).
    fn stat(&self, key: &str) -> u64 {
        self.number(&format!("/stats/{key}"))
    }

    /// Steps whose range passed the gates (they reached the entry gate or a later one) ...
    fn range_steps(&self) -> u64 {
        let skips = |gate: &str| self.number(&format!("/why_no_trade/run/skips/{gate}"));
        skips("entry") + skips("min_rr") + skips("market_context") + self.signals()
    }

    /// ... of which the price stood in the entry zone (its proximity line passed).
    fn zone_steps(&self) -> u64 {
        self.range_steps()
            .saturating_sub(self.number("/why_no_trade/run/failed_checks/entry_proximity"))
    }

    /// Months of open market the range gate passed ([`STEPS_PER_MONTH`]).
    fn range_months(&self) -> f64 {
        self.range_steps() as f64 / STEPS_PER_MONTH
    }

    /// Signals per month of validated range; `None` without a range.
    fn per_range_month(&self) -> Option<f64> {
        (self.range_steps() > 0).then(|| self.signals() as f64 / self.range_months())
    }

    /// Signals per entry-zone step; `None` without such a step.
    fn zone_share(&self) -> Option<f64> {
        let zone = self.zone_steps();
        (zone > 0).then(|| self.signals() as f64 / zone as f64)
    }

    fn print(&self, title: &str) {
        println!(
            "{title}: {} steps, {} signals ({} buy, {} opened), {} trades ({} won, {} lost), \
             validated range at {} steps (about {:.1} months: {:.1} signals a month of range), \
             price in its entry zone at {}",
            self.number("/steps"),
            self.signals(),
            self.number("/signals/buy"),
            self.number("/signals/opened"),
            self.trades(),
            self.stat("wins"),
            self.stat("losses"),
            self.range_steps(),
            self.range_months(),
            self.per_range_month().unwrap_or(0.0),
            self.zone_steps(),
        );
        if let Some(skips) = self.report.pointer("/why_no_trade/run/skips") {
            println!("  skips by gate: {skips}");
        }
        if let Some(failed) = self.report.pointer("/why_no_trade/run/failed_checks") {
            println!("  failed checks: {failed}");
        }
        for trade in self.report["trades"].as_array().into_iter().flatten() {
            let text = |key: &str| trade[key].as_str().unwrap_or("-").to_string();
            println!(
                "  trade {} {} -> {}: entry {}, stop {}, target {}, exit {} ({}), tier {}, pnl {:.4}",
                text("symbol"),
                text("opened_at"),
                text("closed_at"),
                trade["entry_px"],
                trade["sl_px"],
                trade["tp_px"],
                trade["exit_px"],
                text("reason"),
                text("tier"),
                trade["pnl"].as_f64().unwrap_or(0.0),
            );
            for check in trade["checklist"].as_array().into_iter().flatten() {
                let mark = if check["pass"].as_bool() == Some(true) { "pass" } else { "FAIL" };
                let text = |key: &str| check[key].as_str().unwrap_or("-").to_string();
                println!("    {mark} {}: {}", text("name"), text("detail"));
            }
        }
    }
}
