//! Market data the host reads: the one candle cache ([`candles`]) behind the `MarketData`
//! trait plugins read, the one [`Timeframe`] type used by config, plugins and market, and the
//! multi-timeframe market context: the rules ([`context`]), the served, cached and stored
//! contexts ([`contexts`]) and their compression and watch memories ([`memory`]).
//!
//! Owns: which candles are fetched from the exchange and when; market-context snapshots and
//! memories. Must never: place orders or fetch candles around the cache.

pub mod candles;
pub mod context;
pub mod contexts;
pub mod memory;
pub mod timeframe;

pub use candles::CandleCache;
pub use contexts::{ContextError, Frames, MarketContexts};
pub use timeframe::Timeframe;
