//! `spotbot backtest` as the calibration and the benchmarks drive it: one run of a built
//! binary ([`BacktestRun`]), the candle files its `--candles` folder holds ([`rows`]), and
//! the random walks they replay where real data would be too short or too structured
//! ([`walk`]).

pub mod rows;
mod run;
pub mod walk;

pub use run::BacktestRun;
