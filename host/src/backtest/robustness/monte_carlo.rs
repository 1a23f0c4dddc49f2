//! Monte Carlo over a backtest's closed trades: how much of its drawdown and final equity came
//! from the order the trades happened to close in (`Shuffle`), or from which trades happened at
//! all (`Bootstrap`).
//!
//! Each trade becomes a return on the equity before it in the backtest's own order,
//! `r_i = pnl_i / equity_before_i`, clamped to −1 (a spot trade cannot lose more than it
//! staked). A resampled path compounds those returns, `equity *= 1 + r`, so its equity never
//! goes below 0 and its drawdown never past −100 %. Jesse's users reported Monte Carlo
//! drawdowns below −100 %: resampling pnl amounts in quote currency, `equity += pnl`, lets a
//! path's losses outgrow its equity. Returns on equity do not.
//!
//! Seeded: the same trades, parameters and seed give the same result.

use serde::{Deserialize, Serialize};

/// How a path is drawn from the trades.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resampling {
    /// A permutation of the same trades: the final equity is the original's (the product of
    /// the same factors, up to floating-point rounding), only the path to it and so the
    /// drawdown differ.
    Shuffle,
    /// As many trades as the backtest had, drawn with replacement: some trades repeat, others
    /// are left out, so the final equity varies too.
    Bootstrap,
}

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonteCarloParams {
    pub method: Resampling,
    /// Number of resampled paths (1000 is usual); the work is paths × trades.
    pub paths: usize,
    /// Seed of `fastrand`'s generator.
    pub seed: u64,
}

/// A path's figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PathStats {
    /// Largest fall from a running peak (the starting equity included), as a negative percent
    /// of that peak: −12.5 for 12.5 %, 0 when the equity never fell, never below −100.
    pub max_drawdown_pct: f64,
    /// Equity after the last trade, in quote currency.
    pub final_equity: f64,
}

/// The 5th, 50th and 95th percentiles of a figure over the paths, by linear interpolation
/// between the two nearest ranks: position `q·(n − 1)` in the sorted values (numpy's default,
/// Hyndman and Fan's type 7), so p5 ≤ p50 ≤ p95 and one path gives its own value thrice.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    pub p5: f64,
    pub p50: f64,
    pub p95: f64,
}

/// The distribution of the paths' figures beside the backtest's own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MonteCarlo {
    pub params: MonteCarloParams,
    /// Number of closed trades resampled.
    pub trades: usize,
    /// The trades in their original order.
    pub original: PathStats,
    pub max_drawdown_pct: Percentiles,
    pub final_equity: Percentiles,
}

/// Why the trades cannot be resampled; each names its field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MonteCarloError {
    #[error("trades: no closed trades to resample")]
    NoTrades,
    #[error("trades: trade {0} has a non-finite pnl")]
    NonFinitePnl(usize),
    #[error("starting_equity: must be a positive finite amount, got {0}")]
    StartingEquity(f64),
    #[error("paths: at least 1 path is needed, got 0")]
    NoPaths,
}

/// Each trade's return on the equity before it, walking the trades in the order they closed
/// from `starting_equity`; a loss beyond the stake is clamped to −1 (−100 %). A trade after the
/// equity reached 0 staked nothing: its return is 0.
pub fn trade_returns(pnls: &[f64], starting_equity: f64) -> Vec<f64> {
    let mut equity = starting_equity;
    pnls.iter()
        .map(|pnl| {
            let r = if equity > 0.0 { (pnl / equity).max(-1.0) } else { 0.0 };
            equity *= 1.0 + r;
            r
        })
        .collect()
}

/// Resamples the closed trades' pnl (quote currency, in the order they closed) `params.paths`
/// times from `starting_equity`.
pub fn monte_carlo(
    trade_pnls: &[f64],
    starting_equity: f64,
    params: MonteCarloParams,
) -> Result<MonteCarlo, MonteCarloError> {
    if trade_pnls.is_empty() {
        return Err(MonteCarloError::NoTrades);
    }
    if let Some(i) = trade_pnls.iter().position(|p| !p.is_finite()) {
        return Err(MonteCarloError::NonFinitePnl(i));
    }
    if !(starting_equity > 0.0 && starting_equity.is_finite()) {
        return Err(MonteCarloError::StartingEquity(starting_equity));
    }
    if params.paths == 0 {
        return Err(MonteCarloError::NoPaths);
    }

    let returns = trade_returns(trade_pnls, starting_equity);
    let original = walk(returns.iter().copied(), starting_equity);
    let mut rng = fastrand::Rng::with_seed(params.seed);
    let mut shuffled = returns.clone();
    let (mut drawdowns, mut finals) =
        (Vec::with_capacity(params.paths), Vec::with_capacity(params.paths));
    for _ in 0..params.paths {
        let path = match params.method {
            Resampling::Shuffle => {
                rng.shuffle(&mut shuffled);
                walk(shuffled.iter().copied(), starting_equity)
            }
            Resampling::Bootstrap => {
                let n = returns.len();
                walk((0..n).map(|_| returns[rng.usize(..n)]), starting_equity)
            }
        };
        drawdowns.push(path.max_drawdown_pct);
        finals.push(path.final_equity);
    }

    Ok(MonteCarlo {
        params,
        trades: trade_pnls.len(),
        original,
        max_drawdown_pct: percentiles(&mut drawdowns),
        final_equity: percentiles(&mut finals),
    })
}

/// Compounds `returns` from `starting_equity` (> 0): equity stays ≥ 0 since every r ≥ −1, so
/// the drawdown is in [−100, 0], exactly −100 when the equity reaches 0.
fn walk(returns: impl Iterator<Item = f64>, starting_equity: f64) -> PathStats {
    let (mut equity, mut peak, mut worst) = (starting_equity, starting_equity, 0.0f64);
    for r in returns {
        equity *= 1.0 + r;
        peak = peak.max(equity);
        worst = worst.min((equity / peak - 1.0) * 100.0);
    }
    PathStats { max_drawdown_pct: worst, final_equity: equity }
}

/// p5, p50 and p95 of `values` (not empty, finite), sorting them in place.
fn percentiles(values: &mut [f64]) -> Percentiles {
    values.sort_by(f64::total_cmp);
    Percentiles {
        p5: percentile(values, 0.05),
        p50: percentile(values, 0.50),
        p95: percentile(values, 0.95),
    }
}

/// Linear interpolation between the closest ranks of sorted `values` at fraction `q`.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let (low, high) = (position.floor() as usize, position.ceil() as usize);
    sorted[low] + (position - low as f64) * (sorted[high] - sorted[low])
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: f64 = 1000.0;

    fn params(method: Resampling, seed: u64) -> MonteCarloParams {
        MonteCarloParams { method, paths: 1000, seed }
    }

    /// 40 trades: mostly small gains, some losses, one 20 % loss.
    fn pnls() -> Vec<f64> {
        (0u32..40)
            .map(|i| match i % 5 {
                0 => -30.0,
                3 if i == 23 => -250.0,
                _ => 12.0 + f64::from(i % 7),
            })
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_result() {
        for method in [Resampling::Shuffle, Resampling::Bootstrap] {
            let a = monte_carlo(&pnls(), START, params(method, 7)).expect("valid");
            let b = monte_carlo(&pnls(), START, params(method, 7)).expect("valid");
            assert_eq!(a, b);
            let c = monte_carlo(&pnls(), START, params(method, 8)).expect("valid");
            assert_ne!(a.max_drawdown_pct, c.max_drawdown_pct, "another seed, other paths");
        }
    }

    #[test]
    fn shuffling_keeps_the_final_equity_and_moves_the_drawdown() {
        let mc = monte_carlo(&pnls(), START, params(Resampling::Shuffle, 1)).expect("valid");
        let expected = START + pnls().iter().sum::<f64>();
        assert!((mc.original.final_equity - expected).abs() < 1e-9, "{mc:?}");
        for p in [mc.final_equity.p5, mc.final_equity.p50, mc.final_equity.p95] {
            assert!((p - expected).abs() < 1e-9 * expected, "{p} vs {expected}");
        }
        assert!(mc.max_drawdown_pct.p5 < mc.max_drawdown_pct.p95, "{mc:?}");
    }

    #[test]
    fn a_trade_that_loses_everything_is_exactly_minus_100_percent_and_never_below() {
        // Equity 1000 → 1100; the −1100 takes all of it; the −500 would be a loss beyond the
        // stake, clamped; the +50 after ruin staked nothing.
        let pnls = [100.0, -1100.0, 50.0, -500.0, 30.0];
        assert_eq!(trade_returns(&pnls, START), [0.1, -1.0, 0.0, 0.0, 0.0]);
        assert_eq!(trade_returns(&[-5000.0], START), [-1.0], "clamped to the stake");
        for method in [Resampling::Shuffle, Resampling::Bootstrap] {
            let mc = monte_carlo(&pnls, START, params(method, 3)).expect("valid");
            assert_eq!(mc.original.max_drawdown_pct, -100.0);
            assert_eq!(mc.original.final_equity, 0.0);
            assert!(mc.max_drawdown_pct.p5 >= -100.0, "{mc:?}");
            assert!(mc.final_equity.p5 >= 0.0, "{mc:?}");
        }
        let shuffled = monte_carlo(&pnls, START, params(Resampling::Shuffle, 3)).expect("valid");
        let every_path_ruined = Percentiles { p5: -100.0, p50: -100.0, p95: -100.0 };
        assert_eq!(
            shuffled.max_drawdown_pct, every_path_ruined,
            "every permutation holds the −100 %"
        );
    }

    #[test]
    fn bootstrap_percentiles_are_ordered() {
        let mc = monte_carlo(&pnls(), START, params(Resampling::Bootstrap, 42)).expect("valid");
        for p in [mc.max_drawdown_pct, mc.final_equity] {
            assert!(p.p5 <= p.p50 && p.p50 <= p.p95, "{p:?}");
        }
        assert!(
            mc.final_equity.p5 < mc.final_equity.p95,
            "drawing with replacement varies the end"
        );
        assert!(mc.max_drawdown_pct.p95 <= 0.0 && mc.max_drawdown_pct.p5 >= -100.0);
    }

    #[test]
    fn the_original_path_is_the_backtests_order() {
        let mc = monte_carlo(&[100.0, -330.0, 20.0], START, params(Resampling::Bootstrap, 5))
            .expect("valid");
        // 1000 → 1100 → 770 → 790: the fall from 1100 to 770 is 30 %.
        assert!((mc.original.max_drawdown_pct + 30.0).abs() < 1e-9, "{mc:?}");
        assert!((mc.original.final_equity - 790.0).abs() < 1e-9, "{mc:?}");
        assert_eq!(mc.trades, 3);
    }

    #[test]
    fn percentiles_interpolate_between_the_closest_ranks() {
        let mut values = [5.0, 1.0, 3.0, 2.0, 4.0];
        let p = percentiles(&mut values);
        for (got, expected) in [(p.p5, 1.2), (p.p50, 3.0), (p.p95, 4.8)] {
            assert!((got - expected).abs() < 1e-12, "{p:?}");
        }
        let one = percentiles(&mut [7.0]);
        assert_eq!((one.p5, one.p50, one.p95), (7.0, 7.0, 7.0));
    }

    #[test]
    fn invalid_inputs_are_errors_that_name_their_field() {
        let p = params(Resampling::Shuffle, 1);
        assert_eq!(monte_carlo(&[], START, p), Err(MonteCarloError::NoTrades));
        assert_eq!(monte_carlo(&[1.0, f64::NAN], START, p), Err(MonteCarloError::NonFinitePnl(1)));
        for bad in [0.0, -10.0, f64::INFINITY] {
            let error = monte_carlo(&[1.0], bad, p).expect_err("invalid");
            assert!(error.to_string().starts_with("starting_equity: "), "{error}");
        }
        assert!(monte_carlo(&[1.0], f64::NAN, p).is_err());
        let none = MonteCarloParams { paths: 0, ..p };
        assert_eq!(monte_carlo(&[1.0], START, none), Err(MonteCarloError::NoPaths));
    }

    #[test]
    fn serializes_with_snake_case_methods() {
        let mc = monte_carlo(&pnls(), START, params(Resampling::Bootstrap, 9)).expect("valid");
        let json = serde_json::to_value(&mc).expect("serializes");
        assert_eq!(json["params"]["method"], "bootstrap");
        assert!(
            json["max_drawdown_pct"]["p5"].is_number()
                && json["original"]["final_equity"].is_number()
        );
        let back: MonteCarloParams =
            serde_json::from_value(json["params"].clone()).expect("reads back");
        assert_eq!(back, mc.params);
    }
}
