//! What an optimisation reports, out of sample first: the chosen parameters' out-of-sample
//! parts stitched into one equity curve (each window's return compounded onto the previous
//! ones), the in-sample figures beside them, and per window the chosen point, both figures and
//! every trial.

use serde::Serialize;

use super::super::history::iso;
use super::super::report::Replayed;
use super::super::robustness::{
    DEFAULT_GROUPS, DeflatedSharpe, MonteCarlo, deflated_sharpe, describe,
    probability_of_backtest_overfitting, report_monte_carlo, sharpe_ratio,
};
use super::super::session::Session;
use super::OptimizeSpec;
use super::objective::{Constraints, Metrics, Objective, TradeFigures};
use super::sampler::Method;
use super::search::{Searched, Trial};
use super::space::{Point, Space};
use super::trial::Outcome;
use super::windows::Walk;
use crate::config::Config;

#[derive(Debug, Clone, Serialize)]
pub struct OptimizeReport {
    /// The plugin, and the run's first step (the first window's in sample) and last (the
    /// last window's out of sample).
    #[serde(flatten)]
    pub replayed: Replayed,
    pub source: String,
    pub quote_asset: String,
    pub start_equity: f64,
    pub method: Method,
    pub objective: Objective,
    pub constraints: Constraints,
    pub seed: u64,
    pub trials_per_window: usize,
    pub walk: Walk,
    pub in_sample_pct: f64,
    pub space: Space,
    /// The out-of-sample parts of every window, stitched: the result to believe.
    pub out_of_sample: Metrics,
    /// The in-sample figures of the chosen points, averaged over the windows (trades summed):
    /// what the search saw.
    pub in_sample: Metrics,
    /// The stitched out-of-sample equity, one point per step.
    pub out_of_sample_equity: Vec<EquityStep>,
    /// The stitched out-of-sample trades shuffled and bootstrapped (the run's seed); empty
    /// without trades.
    pub monte_carlo: Vec<MonteCarlo>,
    pub windows: Vec<WindowReport>,
    /// Trials replayed (in sample; the out-of-sample replays not counted).
    pub trials: usize,
    pub elapsed_s: f64,
    pub trials_per_second: f64,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct EquityStep {
    pub t: i64,
    pub equity: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct WindowReport {
    pub in_sample_from: String,
    pub in_sample_to: String,
    pub out_of_sample_from: String,
    pub out_of_sample_to: String,
    /// The chosen point (`None`: no trial was feasible; the window sits out of the market).
    pub best: Option<Point>,
    pub best_trial: Option<usize>,
    pub in_sample: Option<Metrics>,
    pub out_of_sample: Option<Metrics>,
    /// The chosen point's in-sample Sharpe ratio deflated for the window's number of trials
    /// (Bailey and López de Prado, 2014).
    pub deflated_sharpe: Option<DeflatedSharpe>,
    /// The probability that the window's in-sample choice is overfit (CSCV over its trials).
    pub overfitting: Option<Overfitting>,
    pub trials: Vec<TrialRow>,
}

/// The probability of backtest overfitting of a window's search (Bailey, Borwein, López de
/// Prado and Zhu, 2017): its trials' in-sample step returns cut into `groups` groups, every
/// half of them in sample against the other half.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Overfitting {
    /// Share of the combinations whose in-sample best is at or below the median out of sample.
    pub pbo: f64,
    /// Share of the combinations whose in-sample best loses out of sample.
    pub probability_of_loss: f64,
    pub groups: usize,
    pub combinations: usize,
    pub trials: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct TrialRow {
    pub number: usize,
    pub params: Point,
    pub score: Option<f64>,
    pub metrics: Option<Metrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What the report is built from.
pub(super) struct Inputs<'a> {
    pub session: &'a Session,
    pub spec: &'a OptimizeSpec,
    pub space: &'a Space,
    pub config: &'a Config,
    pub steps_per_year: f64,
    pub searched: &'a [Searched],
    pub elapsed_s: f64,
    pub source: &'a str,
    pub timeframe: crate::market::Timeframe,
}

impl OptimizeReport {
    pub(super) fn new(inputs: Inputs<'_>) -> Self {
        let Inputs { session, spec, space, config, steps_per_year, searched, .. } = inputs;
        let start_equity = config.exchange.paper_usdt.try_into().unwrap_or(0.0);
        let Stitched { equity, figures, pnls } = stitch(searched, start_equity);
        let curve: Vec<f64> = equity.iter().map(|p| p.equity).collect();
        let out_of_sample = Metrics::of_curve(&curve, steps_per_year, figures);
        let chosen: Vec<&Metrics> =
            searched.iter().filter_map(|s| Some(&chosen(s)?.metrics)).collect();
        let trials: usize = searched.iter().map(|s| s.trials.len()).sum();

        let monte_carlo = report_monte_carlo(&pnls, start_equity, spec.plan.seed);
        let backtest = &spec.backtest;
        OptimizeReport {
            replayed: session.replayed(
                &backtest.symbols,
                inputs.timeframe,
                searched.first().map_or_else(String::new, |s| iso(s.window.in_sample.from_ms)),
                searched.last().map_or_else(String::new, |s| iso(s.window.out_of_sample.to_ms)),
            ),
            source: inputs.source.to_string(),
            quote_asset: config.market.quote_asset.clone(),
            start_equity,
            method: spec.plan.method,
            objective: spec.plan.objective,
            constraints: spec.plan.constraints,
            seed: spec.plan.seed,
            trials_per_window: spec.plan.trials,
            walk: spec.walk,
            in_sample_pct: spec.in_sample_pct,
            space: space.clone(),
            out_of_sample,
            in_sample: mean(&chosen),
            out_of_sample_equity: equity,
            monte_carlo,
            windows: searched.iter().map(window_report).collect(),
            trials,
            elapsed_s: inputs.elapsed_s,
            trials_per_second: trials as f64 / inputs.elapsed_s.max(1e-9),
        }
    }

    /// The terminal's summary, out of sample first.
    pub fn summary(&self) -> String {
        let m = |m: &Metrics| {
            format!(
                "return {:+.2} %, Sharpe {:.2}, Sortino {:.2}, Calmar {:.2}, max drawdown {:.2} %, \
                 {} trades",
                m.return_pct, m.sharpe, m.sortino, m.calmar, m.max_drawdown_pct, m.trades
            )
        };
        let mut out = format!(
            "optimize {} {} · {} · {:?} on {:?}, {} trials x {} windows ({:?}, {} % in sample), seed {}\n",
            self.replayed.plugin,
            self.replayed.version,
            self.replayed.timeframe,
            self.method,
            self.objective,
            self.trials_per_window,
            self.windows.len(),
            self.walk,
            self.in_sample_pct,
            self.seed
        );
        let oos_from = self.windows.first().map_or("", |w| w.out_of_sample_from.as_str());
        out += &format!(
            "out of sample (stitched, {oos_from} .. {}): {}\n",
            self.replayed.to,
            m(&self.out_of_sample)
        );
        out += &format!("in sample (mean of the windows):  {}\n", m(&self.in_sample));
        for (i, w) in self.windows.iter().enumerate() {
            let best = w.best.as_ref().map_or("no feasible trial".to_string(), |p| {
                p.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
            });
            let oos = w.out_of_sample.as_ref().map_or("-".to_string(), |m| {
                format!("{:+.2} % ({} trades)", m.return_pct, m.trades)
            });
            let is = w.in_sample.as_ref().map_or("-".to_string(), |m| {
                format!("{:+.2} % ({} trades)", m.return_pct, m.trades)
            });
            let dsr =
                w.deflated_sharpe.as_ref().map_or("-".to_string(), |d| format!("{:.2}", d.dsr));
            let pbo = w.overfitting.map_or("-".to_string(), |o| format!("{:.2}", o.pbo));
            out += &format!(
                "  window {} · out of sample {} .. {}: {oos} · in sample {is} · DSR {dsr} · PBO {pbo} · {best}\n",
                i + 1,
                w.out_of_sample_from,
                w.out_of_sample_to
            );
        }
        for mc in &self.monte_carlo {
            out += &describe(mc);
            out.push('\n');
        }
        out += &format!(
            "{} trials in {:.1} s ({:.1} trials/s)\n",
            self.trials, self.elapsed_s, self.trials_per_second
        );
        out
    }
}

/// The chosen trial's in-sample outcome.
fn chosen(s: &Searched) -> Option<&Outcome> {
    s.trials.get(s.best?)?.outcome.as_ref().ok()
}

fn window_report(s: &Searched) -> WindowReport {
    let best = s.best.and_then(|i| s.trials.get(i));
    let returns = trial_returns(s);
    WindowReport {
        in_sample_from: iso(s.window.in_sample.from_ms),
        in_sample_to: iso(s.window.in_sample.to_ms),
        out_of_sample_from: iso(s.window.out_of_sample.from_ms),
        out_of_sample_to: iso(s.window.out_of_sample.to_ms),
        best: best.map(|t| t.point.clone()),
        best_trial: s.best,
        in_sample: chosen(s).map(|o| o.metrics),
        out_of_sample: s.out_of_sample.as_ref().map(|o| o.metrics),
        deflated_sharpe: deflated(s, &returns),
        overfitting: overfitting(&returns),
        trials: s.trials.iter().map(trial_row).collect(),
    }
}

/// The step returns of the trials that replayed, by trial.
fn trial_returns(s: &Searched) -> Vec<Vec<f64>> {
    s.trials.iter().filter_map(|t| t.outcome.as_ref().ok()).map(|o| o.returns()).collect()
}

/// The chosen point's deflated Sharpe ratio among the window's trials (their `returns`).
fn deflated(s: &Searched, returns: &[Vec<f64>]) -> Option<DeflatedSharpe> {
    let sharpes: Vec<f64> = returns.iter().filter_map(|r| sharpe_ratio(r)).collect();
    deflated_sharpe(&chosen(s)?.returns(), &sharpes)
}

/// The PBO of a window's trials, from their step `returns`.
fn overfitting(returns: &[Vec<f64>]) -> Option<Overfitting> {
    let rows = returns.first()?.len();
    // As many groups as the paper's 16 allow with at least 4 steps in each (2 per half).
    let groups = (DEFAULT_GROUPS.min(rows / 4)) & !1;
    let pbo = probability_of_backtest_overfitting(returns, groups).ok()?;
    Some(Overfitting {
        pbo: pbo.pbo,
        probability_of_loss: pbo.probability_of_loss,
        groups: pbo.groups,
        combinations: pbo.logits.len(),
        trials: pbo.trials,
    })
}

fn trial_row(t: &Trial) -> TrialRow {
    TrialRow {
        number: t.number,
        params: t.point.clone(),
        score: t.score,
        metrics: t.outcome.as_ref().ok().map(|o| o.metrics),
        error: t.outcome.as_ref().err().cloned(),
    }
}

/// The out-of-sample parts put end to end.
struct Stitched {
    /// Compounded in order from the start, one point per step.
    equity: Vec<EquityStep>,
    figures: TradeFigures,
    /// Each trade's pnl scaled to the stitched account: a window replays from the starting
    /// equity, so its amounts are multiplied by the stitched equity at its start over that.
    pnls: Vec<f64>,
}

/// The out-of-sample parts compounded in order from `start`, and their trades. A window
/// without a feasible trial holds the equity flat over its part.
fn stitch(searched: &[Searched], start: f64) -> Stitched {
    let mut equity = start;
    let (mut curve, mut pnls) = (vec![], vec![]);
    let (mut count, mut wins, mut profit, mut loss) = (0, 0, 0.0, 0.0);
    for s in searched {
        match &s.out_of_sample {
            Some(o) => {
                let scale = o.equity.first().filter(|e| **e > 0.0).map_or(1.0, |e| equity / e);
                pnls.extend(o.pnls.iter().map(|p| p * scale));
                for (i, (&t, &e)) in o.times.iter().zip(&o.equity).enumerate() {
                    if i > 0 && o.equity[i - 1] > 0.0 {
                        equity *= e / o.equity[i - 1];
                    }
                    curve.push(EquityStep { t, equity });
                }
                count += o.metrics.trades;
                wins += o.wins;
                profit += o.gross_profit;
                loss += o.gross_loss;
            }
            None => {
                let span = s.window.out_of_sample;
                curve.push(EquityStep { t: span.from_ms, equity });
                curve.push(EquityStep { t: span.to_ms, equity });
            }
        }
    }
    // Rounded as the history's statistics round them (`Aggregate`): percent to 2 decimals,
    // the factor to 4.
    let round = |v: f64, places: i32| (v * 10f64.powi(places)).round() / 10f64.powi(places);
    let figures = TradeFigures {
        count,
        win_rate: (count > 0).then(|| round(wins as f64 * 100.0 / count as f64, 2)),
        profit_factor: (loss.abs() > 0.0).then(|| round(profit / loss.abs(), 4)),
    };
    Stitched { equity: curve, figures, pnls }
}

/// The mean of each figure (trades summed; win rate and profit factor of the windows that
/// have one).
fn mean(all: &[&Metrics]) -> Metrics {
    let n = all.len().max(1) as f64;
    let avg = |f: fn(&Metrics) -> f64| all.iter().map(|m| f(m)).sum::<f64>() / n;
    let avg_some = |f: fn(&Metrics) -> Option<f64>| {
        let values: Vec<f64> = all.iter().filter_map(|m| f(m)).collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    Metrics {
        return_pct: avg(|m| m.return_pct),
        pnl: avg(|m| m.pnl),
        sharpe: avg(|m| m.sharpe),
        sortino: avg(|m| m.sortino),
        calmar: avg(|m| m.calmar),
        max_drawdown_pct: avg(|m| m.max_drawdown_pct),
        trades: all.iter().map(|m| m.trades).sum(),
        win_rate: avg_some(|m| m.win_rate),
        profit_factor: avg_some(|m| m.profit_factor),
    }
}
