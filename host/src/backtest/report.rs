//! What a run reports: the closed trades as the service's history holds them, their
//! statistics (the same [`Aggregate`] as `GET /api/trades/stats`), the equity curve sampled at
//! every step with its drawdown, exposure, fees and what happened to the plugin's signals.

use std::collections::BTreeMap;

use rust_decimal::prelude::ToPrimitive;
use serde::Serialize;

use super::robustness::{MonteCarlo, describe};
use super::why::WhyNoTrade;
use crate::execution::stats::Aggregate;
use crate::execution::trade::{CloseReason, ClosedTrade};
use crate::plugins::model::Check;

/// One closed trade.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TradeRow {
    pub symbol: String,
    pub bot: String,
    /// RFC 3339, when the entry filled.
    pub opened_at: String,
    /// RFC 3339, when the service recorded the close (the step after an OCO leg filled, as
    /// reconciliation notices it live; the end of the run for positions closed then).
    pub closed_at: String,
    pub size: f64,
    pub entry_px: f64,
    pub exit_px: f64,
    /// What the held `size` cost, fee included (the fee in the coin reduced `size`); the coin's
    /// remainder below one step is carried at its own cost, not booked by this trade.
    pub entry_quote: f64,
    /// Quote received net of the exit fee (a market exit's sweep of earlier dust included).
    pub exit_quote: f64,
    pub sl_px: f64,
    pub tp_px: f64,
    /// Net of both fees.
    pub pnl: f64,
    pub reason: CloseReason,
    pub tier: Option<String>,
    /// The checklist of the buy result that opened it: why the plugin took it, so a win or a
    /// loss can be read against the lines that let it through.
    pub checklist: Vec<Check>,
}

/// What the buy result that opened a trade said about it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Opening {
    pub tier: Option<String>,
    pub checklist: Vec<Check>,
}

fn f(d: rust_decimal::Decimal) -> f64 {
    d.to_f64().unwrap_or(0.0)
}

impl TradeRow {
    pub fn of(c: &ClosedTrade, opening: Opening) -> Self {
        TradeRow {
            symbol: c.trade.symbol.clone(),
            bot: c.trade.bot.clone(),
            opened_at: c.trade.opened_at.clone(),
            closed_at: c.closed_at.clone(),
            size: f(c.qty_sold),
            entry_px: f(c.trade.entry_px),
            exit_px: f(c.exit_px),
            entry_quote: f(c.trade.entry_quote),
            exit_quote: f(c.exit_quote),
            sl_px: f(c.trade.sl_px),
            tp_px: f(c.trade.tp_px),
            pnl: f(c.pnl),
            reason: c.reason,
            tier: opening.tier,
            checklist: opening.checklist,
        }
    }
}

/// One sample of the equity curve: quote balance plus every coin held at the price of `t`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EquityPoint {
    /// Epoch ms.
    pub t: i64,
    pub equity: f64,
    /// Value of the coins held (positions and dust), in the quote asset.
    pub invested: f64,
}

/// What became of the plugin's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SignalCounts {
    /// Buy results.
    pub buy: usize,
    /// Sell results.
    pub sell: usize,
    /// Buy results that opened a trade.
    pub opened: usize,
    /// Sell results that closed an open trade.
    pub exits: usize,
    /// Buy results that did not open a trade, by reason (`gates`, `trade_exists`,
    /// `daily_limit_reached`, `refused`, ...), with the first detail seen. Skips, failed
    /// checks and closed markets are in [`Report::why_no_trade`].
    pub not_opened: BTreeMap<String, (usize, String)>,
    /// Scanner alerts by stage (`pump_watch`, `pump_signal`): reported, never traded, as live.
    pub alerts: BTreeMap<String, usize>,
}

impl SignalCounts {
    pub fn not_opened(&mut self, reason: &str, detail: String) {
        let entry = self.not_opened.entry(reason.to_string()).or_insert((0, detail));
        entry.0 += 1;
    }
}

/// A stop that triggered but could not fill because the price gapped past its limit, and
/// what live trading's rule (`[protection] gap_exit`) did with the position.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GappedStop {
    pub symbol: String,
    /// RFC 3339, the step the gap was seen at.
    pub at: String,
    pub stop_px: f64,
    /// The price then, past the stop's limit.
    pub price: f64,
    /// `closed_at_market` (`gap_exit = "market"`) or `alerted` (`"alert"`: left open, as the
    /// boss would have to decide).
    pub action: String,
}

/// The report of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The plugin, the symbols, the step and the first and last step.
    #[serde(flatten)]
    pub replayed: Replayed,
    pub steps: usize,
    /// Where the candles came from.
    pub source: String,
    pub quote_asset: String,
    pub start_equity: f64,
    pub end_equity: f64,
    /// end / start − 1, percent.
    pub return_pct: f64,
    /// Value of the coins still held at the end, after every position was closed: what the
    /// rounding of sizes to the step left over (less than a step: market exits sweep it). The
    /// equity counts it; the trades' pnl does not book its cost, as the service's history does
    /// not.
    pub dust: f64,
    /// Trades, win rate, total/average pnl, profit factor, best/worst and the drawdown of the
    /// cumulative closed-trade pnl, exactly as `GET /api/trades/stats` computes them.
    pub stats: Aggregate,
    /// Largest fall of the equity curve from its running peak, quote asset and percent of the
    /// peak.
    pub max_drawdown: f64,
    pub max_drawdown_pct: f64,
    /// Share of the steps with at least one position open, percent.
    pub exposure_pct: f64,
    /// Average value of the coins held over the steps, percent of equity.
    pub avg_invested_pct: f64,
    /// Fees paid at the simulator, valued in the quote asset.
    pub fees: f64,
    /// Positions still open at the end, closed at market then (counted in the trades).
    pub closed_at_end: usize,
    /// Stops the trailing rule raised (`trailing_*` keys, at each step's close).
    pub stops_trailed: usize,
    pub signals: SignalCounts,
    /// Why results did not become trades, for the run and per symbol.
    pub why_no_trade: WhyNoTrade,
    /// Stops that gapped past their limit, in the order seen.
    pub gapped_stops: Vec<GappedStop>,
    /// Scans that failed, by error.
    pub scan_errors: BTreeMap<String, usize>,
    /// What the history reader and the replay noticed.
    pub notes: Vec<String>,
    pub trades: Vec<TradeRow>,
    /// The closed trades shuffled and bootstrapped (`[exchange] paper_seed`): the spread of
    /// drawdown and final equity another order or another draw of the same trades gives.
    pub monte_carlo: Vec<MonteCarlo>,
    pub equity: Vec<EquityPoint>,
    /// Wall time of the replay (loading excluded), seconds.
    pub elapsed_s: f64,
    /// Where that time went.
    pub timing: TimeSplit,
}

/// What a run replayed (`backtest`, `check-bias`, `optimize`): the plugin artifact and the
/// stretch of market, at the top of its JSON report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Replayed {
    pub plugin: String,
    pub version: String,
    pub sha256: String,
    pub symbols: Vec<String>,
    /// The replay's step: the plugin's finest timeframe.
    pub timeframe: String,
    /// First and last step (RFC 3339).
    pub from: String,
    pub to: String,
}

impl Replayed {
    /// `plugin version on A,B (N steps of tf, from .. to)`: the first line of a summary.
    pub fn describe(&self, steps: usize) -> String {
        format!(
            "{} {} on {} ({steps} steps of {}, {} .. {})",
            self.plugin,
            self.version,
            self.symbols.join(","),
            self.timeframe,
            self.from,
            self.to
        )
    }
}

/// Wall time of the replay's parts, seconds (measurements only: nothing in the replay depends
/// on them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TimeSplit {
    /// `Plugins::scan` calls, whole: market data from the history (windows, contexts) and the
    /// plugin call.
    pub scan_s: f64,
    /// Of which the Wasm calls themselves (`ScanOutcome::duration_ms`).
    pub plugin_call_s: f64,
    /// Of which building the market data from the history: candle windows and market
    /// contexts.
    pub snapshot_s: f64,
    /// Of which the market contexts (`analyze`).
    pub context_s: f64,
    /// Entries, exits and reconciliation through execution (HTTP to the simulator, store).
    pub execution_s: f64,
    /// Moving the clock (the engine walking the paths) and scripting the next candles.
    pub simulator_s: f64,
}

/// (quote, percent of the peak) of the largest fall from a running peak.
pub fn drawdown(curve: &[EquityPoint]) -> (f64, f64) {
    let (mut peak, mut worst, mut worst_pct) = (f64::MIN, 0.0f64, 0.0f64);
    for p in curve {
        peak = peak.max(p.equity);
        let fall = peak - p.equity;
        worst = worst.max(fall);
        if peak > 0.0 {
            worst_pct = worst_pct.max(fall / peak * 100.0);
        }
    }
    (worst, worst_pct)
}

fn round(x: f64, dp: i32) -> f64 {
    let k = 10f64.powi(dp);
    (x * k).round() / k
}

impl Report {
    /// Fills the figures computed from the trades and the curve.
    pub fn finish_figures(&mut self, pnls: &[rust_decimal::Decimal], in_market_steps: usize) {
        self.stats = Aggregate::of(pnls);
        let (dd, dd_pct) = drawdown(&self.equity);
        self.max_drawdown = round(dd, 8);
        self.max_drawdown_pct = round(dd_pct, 4);
        self.start_equity = self.equity.first().map_or(0.0, |p| p.equity);
        self.end_equity = self.equity.last().map_or(0.0, |p| p.equity);
        self.dust = self.equity.last().map_or(0.0, |p| p.invested);
        self.return_pct = if self.start_equity > 0.0 {
            round((self.end_equity / self.start_equity - 1.0) * 100.0, 4)
        } else {
            0.0
        };
        let steps = self.steps.saturating_sub(1).max(1);
        self.exposure_pct = round(in_market_steps as f64 * 100.0 / steps as f64, 2);
        let invested: f64 = self
            .equity
            .iter()
            .filter(|p| p.equity > 0.0)
            .map(|p| p.invested / p.equity * 100.0)
            .sum();
        self.avg_invested_pct = round(invested / self.equity.len().max(1) as f64, 4);
    }

    /// The summary printed at the end of a run.
    pub fn summary(&self) -> String {
        let s = &self.stats;
        let opt =
            |v: Option<f64>, suffix: &str| v.map_or("-".to_string(), |v| format!("{v}{suffix}"));
        let q = &self.quote_asset;
        let mut out = format!(
            "backtest {}\n\
             source: {}\n\
             equity: {:.2} -> {:.2} {q} ({:+.2} %; coins left over by step rounding: {:.2} {q})\n\
             trades: {} (wins {}, losses {}, breakeven {}), win rate {}\n\
             pnl: total {:.4} {q}, average {}, best {}, worst {}\n\
             profit factor: {}\n\
             max drawdown: {:.2} {q} ({:.2} % of the peak); closed-trade pnl drawdown {:.2} {q}\n\
             exposure: {:.2} % of the time in a position, {:.2} % of equity invested on average\n\
             fees: {:.4} {q}\n",
            self.replayed.describe(self.steps),
            self.source,
            self.start_equity,
            self.end_equity,
            self.return_pct,
            self.dust,
            s.count,
            s.wins,
            s.losses,
            s.breakeven,
            opt(s.win_rate, " %"),
            s.total_pnl,
            opt(s.avg_pnl.map(|v| round(v, 4)), ""),
            opt(s.best, ""),
            opt(s.worst, ""),
            opt(s.profit_factor, ""),
            self.max_drawdown,
            self.max_drawdown_pct,
            s.max_drawdown,
            self.exposure_pct,
            self.avg_invested_pct,
            self.fees,
        );
        let c = &self.signals;
        out.push_str(&format!(
            "signals: {} buy ({} opened), {} sell ({} closed a position)\n",
            c.buy, c.opened, c.sell, c.exits
        ));
        for (reason, (n, detail)) in &c.not_opened {
            out.push_str(&format!("  not opened, {reason}: {n} (e.g. {detail})\n"));
        }
        if !c.alerts.is_empty() {
            let shown: Vec<String> =
                c.alerts.iter().map(|(stage, n)| format!("{stage} {n}")).collect();
            out.push_str(&format!("scanner alerts (not traded): {}\n", shown.join(", ")));
        }
        for line in self.why_no_trade.lines() {
            out.push_str(&format!("{line}\n"));
        }
        if !self.gapped_stops.is_empty() {
            out.push_str(&format!(
                "stops gapped past their limit: {} ([protection] gap_exit)\n",
                self.gapped_stops.len()
            ));
            for g in &self.gapped_stops {
                out.push_str(&format!(
                    "  {} at {}: stop {} price {} -> {}\n",
                    g.symbol, g.at, g.stop_px, g.price, g.action
                ));
            }
        }
        if self.stops_trailed > 0 {
            out.push_str(&format!("stops raised by trailing: {}\n", self.stops_trailed));
        }
        if self.closed_at_end > 0 {
            out.push_str(&format!(
                "{} position(s) still open at the end were closed at market\n",
                self.closed_at_end
            ));
        }
        for (error, n) in &self.scan_errors {
            out.push_str(&format!("scan failed {n} time(s): {error}\n"));
        }
        for note in &self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        for mc in &self.monte_carlo {
            out.push_str(&describe(mc));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawdown_is_the_largest_fall_from_a_running_peak() {
        let curve: Vec<EquityPoint> = [100.0, 120.0, 90.0, 130.0, 117.0]
            .iter()
            .enumerate()
            .map(|(i, e)| EquityPoint { t: i as i64, equity: *e, invested: 0.0 })
            .collect();
        let (dd, pct) = drawdown(&curve);
        assert_eq!(dd, 30.0);
        assert_eq!(pct, 25.0);
    }
}
