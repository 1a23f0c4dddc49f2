//! What a trial scores: one objective per run, computed from the replay's equity curve and
//! trades, and the constraints that make a trial infeasible whatever its score.
//!
//! Ratios use the returns of the equity curve from one step to the next (the plugin's finest
//! timeframe), annualised over the steps of a year of a market open every hour of every day,
//! as crypto spot is (8760 steps of 1h).

use serde::Serialize;

use crate::backtest::Report;

/// The objective a run maximises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// Mean step return over its standard deviation, annualised.
    Sharpe,
    /// Mean step return over the downside deviation (the root mean square of the negative
    /// returns, zeros counted for the others), annualised.
    Sortino,
    /// Annualised compound return over the largest drawdown of the equity curve.
    Calmar,
    /// Gross profit over gross loss of the closed trades.
    ProfitFactor,
    /// Total pnl of the run (the equity's change), quote asset.
    Pnl,
}

/// What makes a trial infeasible.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Constraints {
    /// Fewer closed trades than this: infeasible (a ratio over two trades is luck).
    pub min_trades: usize,
    /// A drawdown of the equity curve deeper than this percent: infeasible.
    pub max_drawdown_pct: Option<f64>,
}

/// The figures of one replay that a report shows for a trial or a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Metrics {
    pub return_pct: f64,
    pub pnl: f64,
    pub sharpe: f64,
    pub sortino: f64,
    pub calmar: f64,
    /// Negative percent of the running peak (−12.5 is a fall of 12.5 %).
    pub max_drawdown_pct: f64,
    pub trades: usize,
    pub win_rate: Option<f64>,
    pub profit_factor: Option<f64>,
}

impl Metrics {
    /// The figures of an equity curve (one value per step, `steps_per_year` steps a year)
    /// with `trades` closed trades whose gross profit and loss are given.
    pub fn of_curve(equity: &[f64], steps_per_year: f64, trades: TradeFigures) -> Metrics {
        let returns = step_returns(equity);
        let (first, last) = match (equity.first(), equity.last()) {
            (Some(f), Some(l)) if *f > 0.0 => (*f, *l),
            _ => return Metrics { trades: trades.count, ..Metrics::default() },
        };
        let growth = last / first;
        let years = returns.len() as f64 / steps_per_year;
        let annual =
            if years > 0.0 && growth > 0.0 { growth.powf(1.0 / years) - 1.0 } else { -1.0 };
        let drawdown = max_drawdown_pct(equity);
        Metrics {
            return_pct: (growth - 1.0) * 100.0,
            pnl: last - first,
            sharpe: sharpe(&returns) * steps_per_year.sqrt(),
            sortino: sortino(&returns) * steps_per_year.sqrt(),
            calmar: if drawdown < 0.0 { annual * 100.0 / -drawdown } else { 0.0 },
            max_drawdown_pct: drawdown,
            trades: trades.count,
            win_rate: trades.win_rate,
            profit_factor: trades.profit_factor,
        }
    }

    /// The figures of a replay.
    pub fn of_report(report: &Report, steps_per_year: f64) -> Metrics {
        let equity: Vec<f64> = report.equity.iter().map(|p| p.equity).collect();
        let trades = TradeFigures {
            count: report.stats.count,
            win_rate: report.stats.win_rate,
            profit_factor: report.stats.profit_factor,
        };
        Metrics::of_curve(&equity, steps_per_year, trades)
    }

    /// The objective's value, `None` when the constraints rule the trial out.
    pub fn score(&self, objective: Objective, constraints: &Constraints) -> Option<f64> {
        if self.trades < constraints.min_trades {
            return None;
        }
        if constraints.max_drawdown_pct.is_some_and(|cap| self.max_drawdown_pct < -cap) {
            return None;
        }
        let value = match objective {
            Objective::Sharpe => self.sharpe,
            Objective::Sortino => self.sortino,
            Objective::Calmar => self.calmar,
            // No losing trade: as good as the gross profit makes it, above any finite factor.
            Objective::ProfitFactor => self.profit_factor.unwrap_or(f64::MAX),
            Objective::Pnl => self.pnl,
        };
        value.is_finite().then_some(value)
    }
}

/// The closed trades' figures that the equity curve does not hold.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TradeFigures {
    pub count: usize,
    pub win_rate: Option<f64>,
    pub profit_factor: Option<f64>,
}

/// Relative change of the equity from each step to the next.
pub fn step_returns(equity: &[f64]) -> Vec<f64> {
    equity.windows(2).map(|w| if w[0] > 0.0 { w[1] / w[0] - 1.0 } else { 0.0 }).collect()
}

/// Mean over sample standard deviation (0 for fewer than two returns or no variation).
pub fn sharpe(returns: &[f64]) -> f64 {
    let n = returns.len() as f64;
    if returns.len() < 2 {
        return 0.0;
    }
    let mean = returns.iter().sum::<f64>() / n;
    let var = returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0);
    if var > 0.0 { mean / var.sqrt() } else { 0.0 }
}

fn sortino(returns: &[f64]) -> f64 {
    let n = returns.len() as f64;
    if returns.is_empty() {
        return 0.0;
    }
    let mean = returns.iter().sum::<f64>() / n;
    let downside = (returns.iter().map(|r| r.min(0.0).powi(2)).sum::<f64>() / n).sqrt();
    if downside > 0.0 { mean / downside } else { 0.0 }
}

/// Largest fall from a running peak, negative percent.
pub fn max_drawdown_pct(equity: &[f64]) -> f64 {
    let mut peak = f64::MIN;
    let mut worst: f64 = 0.0;
    for &e in equity {
        peak = peak.max(e);
        if peak > 0.0 {
            worst = worst.min((e / peak - 1.0) * 100.0);
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trades(count: usize) -> TradeFigures {
        TradeFigures { count, win_rate: Some(0.5), profit_factor: Some(1.5) }
    }

    #[test]
    fn figures_of_a_known_curve() {
        // +10 %, −20 %, +25 %: ends where it started, 20 % below the peak once.
        let m = Metrics::of_curve(&[100.0, 110.0, 88.0, 110.0], 3.0, trades(3));
        assert!((m.return_pct - 10.0).abs() < 1e-9);
        assert!((m.max_drawdown_pct + 20.0).abs() < 1e-9);
        let r: [f64; 3] = [0.1, -0.2, 0.25];
        let mean = r.iter().sum::<f64>() / 3.0;
        let sd = (r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        assert!((m.sharpe - mean / sd * 3f64.sqrt()).abs() < 1e-9);
        let downside = (0.04f64 / 3.0).sqrt();
        assert!((m.sortino - mean / downside * 3f64.sqrt()).abs() < 1e-9);
        // One year of steps: the annual return is the return, 10 % over a 20 % drawdown.
        assert!((m.calmar - 0.5).abs() < 1e-9, "{}", m.calmar);
        assert!((m.pnl - 10.0).abs() < 1e-9);
    }

    #[test]
    fn constraints_rule_trials_out() {
        let m = Metrics::of_curve(&[100.0, 110.0, 88.0, 110.0], 3.0, trades(3));
        let loose = Constraints { min_trades: 3, max_drawdown_pct: Some(25.0) };
        assert!(m.score(Objective::Sharpe, &loose).is_some());
        let few = Constraints { min_trades: 4, ..loose };
        assert_eq!(m.score(Objective::Sharpe, &few), None);
        let shallow = Constraints { max_drawdown_pct: Some(15.0), ..loose };
        assert_eq!(m.score(Objective::Pnl, &shallow), None);
        assert_eq!(m.score(Objective::ProfitFactor, &loose), Some(1.5));
    }

    #[test]
    fn a_flat_or_empty_curve_scores_zero_not_nan() {
        for curve in [&[][..], &[100.0][..], &[100.0, 100.0, 100.0][..]] {
            let m = Metrics::of_curve(curve, 8760.0, trades(0));
            assert_eq!((m.sharpe, m.sortino, m.calmar, m.max_drawdown_pct), (0.0, 0.0, 0.0, 0.0));
        }
    }
}
