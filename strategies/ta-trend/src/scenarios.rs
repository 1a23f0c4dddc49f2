//! Scripted candle paths for tests; the host's end-to-end tests reuse them
//! (`tests/tests/e2e/ta_strategies.rs` scripts them into the exchange simulator).
//!
//! Each path is [`CANDLES`] 1h candles, the last one opening at `end_ms − 1h` (so all are
//! closed at `end_ms`), built from a list of closes by pure arithmetic: the same `end_ms` gives
//! the same candles on every platform. A trend alternates a long and a short candle so that
//! RSI stays in the healthy band instead of pinning at 100, and its last candles accelerate
//! (MACD histogram rising) on a volume spike.

use spotbot_sdk::Candles;
use spotbot_sdk::testing::FromCloses;

/// Candles of every path: the manifest's 200 plus room for the host's forming candle.
pub const CANDLES: usize = 240;
/// Volume of an ordinary candle, and the spike factor of the last one.
pub const VOLUME: f64 = 1_000.0;
pub const SPIKE: f64 = 1.8;

/// The first open of every path.
pub const START: f64 = 100.0;
/// Largest wick beyond each body, relative to the price (pseudo-random per candle, so highs
/// and lows overlap like a real market's and ADX takes realistic values).
const WICK: f64 = 0.003;
/// Candles at the end whose move is stronger.
const PUSH: usize = 4;

/// Candles from closes (the SDK's [`FromCloses`]): each candle opens at the previous close
/// (the first at [`START`]), with small pseudo-random wicks and the ordinary volume; the last
/// one carries `last_volume` × the volume.
fn from_closes(end_ms: i64, closes: &[f64], last_volume: f64) -> Candles {
    let path = FromCloses {
        timeframe: "1h",
        first_open: Some(START),
        wick: WICK,
        seed: 7,
        volume: VOLUME,
    };
    let mut c = path.candles(closes, end_ms);
    if let Some(v) = c.volume.last_mut() {
        *v = last_volume * VOLUME;
    }
    c
}

/// Closes that move by `with` and `against` (fractions) in turn, then [`PUSH`] candles of
/// `push` each.
fn trend(with: f64, against: f64, push: f64) -> Vec<f64> {
    let mut price = START;
    (0..CANDLES)
        .map(|i| {
            let step = if i >= CANDLES - PUSH {
                push
            } else if i % 2 == 0 {
                with
            } else {
                against
            };
            price *= 1.0 + step;
            price
        })
        .collect()
}

/// A clean uptrend: +1.0 % and −0.7 % in turn, then four +0.8 % candles on a volume spike.
/// With the default config every buy check passes.
pub fn uptrend(end_ms: i64) -> Candles {
    from_closes(end_ms, &trend(0.010, -0.007, 0.008), SPIKE)
}

/// The mirror: −1.0 % and +0.7 % in turn, then four −0.8 % candles on a volume spike. With
/// the default config every sell check passes.
pub fn downtrend(end_ms: i64) -> Candles {
    from_closes(end_ms, &trend(-0.010, 0.007, -0.008), SPIKE)
}

/// A range: closes alternate 0.5 % above and below [`START`], and the last candle trades on
/// quiet volume (0.8 × the ordinary). No trend (low ADX) and no participation: a skip.
pub fn range(end_ms: i64) -> Candles {
    let closes: Vec<f64> =
        (0..CANDLES).map(|i| START * if i % 2 == 0 { 1.005 } else { 0.995 }).collect();
    from_closes(end_ms, &closes, 0.8)
}
