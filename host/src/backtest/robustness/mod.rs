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
