//! How much of a backtest or optimisation result is luck: statistics over its trades and
//! trials, each with the source of its formula (docs/backtest.md).
//!
//! - [`deflated_sharpe`]: the chosen strategy's Sharpe ratio against the best that its number
//!   of trials would show by chance (Bailey and López de Prado, 2014).
//! - [`pbo`]: the probability that the in-sample winner of an optimisation is at or below the
//!   median out of sample (Bailey, Borwein, López de Prado and Zhu, 2017).
//! - [`monte_carlo`]: drawdown and final equity over reordered or resampled closed trades.
//!
//! Pure functions over numbers: no I/O, no clock, seeded randomness.

pub mod deflated_sharpe;
pub mod monte_carlo;
pub mod pbo;

pub use deflated_sharpe::{
    DeflatedSharpe, deflated_sharpe, expected_max_sharpe, probabilistic_sharpe, sharpe_ratio,
};
pub use monte_carlo::{
    MonteCarlo, MonteCarloError, MonteCarloParams, PathStats, Percentiles, Resampling, monte_carlo,
    trade_returns,
};
pub use pbo::{
    DEFAULT_GROUPS, Degradation, MAX_GROUPS, Pbo, PboError, probability_of_backtest_overfitting,
};

/// Paths of each resampling a report shows.
pub const REPORT_PATHS: usize = 1000;

/// What a report shows of its closed trades' luck: the trades shuffled and bootstrapped,
/// [`REPORT_PATHS`] paths each from `seed`; empty without a trade.
pub fn report_monte_carlo(trade_pnls: &[f64], starting_equity: f64, seed: u64) -> Vec<MonteCarlo> {
    [Resampling::Shuffle, Resampling::Bootstrap]
        .into_iter()
        .filter_map(|method| {
            let params = MonteCarloParams { method, paths: REPORT_PATHS, seed };
            monte_carlo(trade_pnls, starting_equity, params).ok()
        })
        .collect()
}

/// One summary line of a report's resampling.
pub fn describe(mc: &MonteCarlo) -> String {
    format!(
        "monte carlo ({:?}, {} paths of {} trades): max drawdown p5 {:.2} % p50 {:.2} % p95 \
         {:.2} %, final equity p5 {:.2} p50 {:.2} p95 {:.2}",
        mc.params.method,
        mc.params.paths,
        mc.trades,
        mc.max_drawdown_pct.p5,
        mc.max_drawdown_pct.p50,
        mc.max_drawdown_pct.p95,
        mc.final_equity.p5,
        mc.final_equity.p50,
        mc.final_equity.p95
    )
}
