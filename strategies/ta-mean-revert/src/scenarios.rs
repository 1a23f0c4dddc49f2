//! Scripted candle paths for tests; the host's end-to-end tests reuse them
//! (`tests/tests/e2e/ta_strategies.rs` scripts them into the exchange simulator).
//!
//! Each path is [`CANDLES`] 1h candles, the last one opening at `end_ms − 1h` (so all are
//! closed at `end_ms`). They start with a quiet range: every close a fixed pseudo-random
//! draw within ±[`NOISE`] of [`MEAN`] (no drift, so ADX stays low), each candle opening at
//! the previous close. The same `end_ms` gives the same candles on every platform.

use spotbot_sdk::Candles;
use spotbot_sdk::testing::{FromCloses, Rng};

/// Candles of every path: the manifest's 200 plus room for the host's forming candle.
pub const CANDLES: usize = 240;
/// The range's mean price.
pub const MEAN: f64 = 100.0;
/// Largest distance of a range close from the mean, relative.
pub const NOISE: f64 = 0.004;
/// Volume of an ordinary candle, and of the last one in a spike.
pub const VOLUME: f64 = 1_000.0;
pub const SPIKE: f64 = 2.5;
/// Candles of the sell-off before the reversal, and the fall of each: sharp enough for RSI
/// to reach oversold, short enough that ADX(14) still reads a range.
pub const DROP_CANDLES: usize = 2;
pub const DROP: f64 = 0.025;

/// Largest wick beyond each body, relative.
const WICK: f64 = 0.002;

/// Candles from closes (the SDK's [`FromCloses`]): each opens at the previous close, the
/// first at its own, with small pseudo-random wicks and the ordinary volume.
fn from_closes(end_ms: i64, closes: &[f64]) -> Candles {
    let path =
        FromCloses { timeframe: "1h", first_open: None, wick: WICK, seed: 11, volume: VOLUME };
    path.candles(closes, end_ms)
}

/// The quiet range's closes.
fn range_closes(count: usize) -> Vec<f64> {
    let mut rng = Rng::new(5);
    (0..count).map(|_| MEAN * (1.0 + NOISE * rng.next_signed())).collect()
}

/// The range, then [`DROP_CANDLES`] candles falling [`DROP`] each, then a hammer on a
/// [`SPIKE`] of volume: it dips 0.5 % under its open and closes 0.3 % above it, still under
/// the lower band. With the default config every buy check passes.
pub fn oversold_bounce(end_ms: i64) -> Candles {
    let mut closes = range_closes(CANDLES - DROP_CANDLES - 1);
    let mut price = closes.last().copied().unwrap_or(MEAN);
    for _ in 0..DROP_CANDLES {
        price *= 1.0 - DROP;
        closes.push(price);
    }
    closes.push(price * 1.003);
    let mut c = from_closes(end_ms, &closes);
    let n = c.len();
    c.low[n - 1] = price * 0.995;
    c.high[n - 1] = price * 1.0035;
    c.volume[n - 1] = SPIKE * VOLUME;
    c
}

/// [`oversold_bounce`] mirrored around [`MEAN`]: a rally into the upper band that stalls with
/// RSI overbought. With the default config a sell.
pub fn overbought_spike(end_ms: i64) -> Candles {
    let mut c = oversold_bounce(end_ms);
    let (high, low) = (c.high.clone(), c.low.clone());
    let mirror = |p: f64| 2.0 * MEAN - p;
    for i in 0..c.len() {
        c.open[i] = mirror(c.open[i]);
        c.close[i] = mirror(c.close[i]);
        c.high[i] = mirror(low[i]);
        c.low[i] = mirror(high[i]);
    }
    c
}

/// The quiet range alone, ordinary volume to the end: nothing is stretched, a skip.
pub fn quiet_range(end_ms: i64) -> Candles {
    from_closes(end_ms, &range_closes(CANDLES))
}
