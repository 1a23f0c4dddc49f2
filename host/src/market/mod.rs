//! Market data the host reads: the one candle cache ([`candles`]) behind the `MarketData`
//! trait plugins read, and the one [`Timeframe`] type used by config, plugins and market.
//!
//! Owns: which candles are fetched from the exchange and when. Must never: place orders or
//! fetch candles around the cache.

pub mod candles;
pub mod context;
pub mod timeframe;

pub use candles::CandleCache;
pub use timeframe::Timeframe;
