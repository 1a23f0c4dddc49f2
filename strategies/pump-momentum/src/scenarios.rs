//! Scripted candle paths for tests; the host's integration tests reuse them.
//!
//! Every function is deterministic (the SDK's xorshift generator with fixed seeds, plain f64
//! arithmetic) and never panics. Paths are 15m [`Candles`] ending at `end_ms`: `end_ms` is
//! floored to a multiple of 15 minutes, and the last of `n` candles opens 15 minutes before
//! it, so at `now_ms = end_ms` every candle is closed. To replay a path candle by candle (for
//! example through an exchange simulator), reveal [`prefix`]es of it and scan at
//! [`Scenario::closed_at`] of the newest revealed candle.
//!
//! With the default config the paths behave as follows: [`quiet`] never alerts; a
//! [`pump_then_follow_through`] alerts `pump_watch` (confidence low) when its ignition candle
//! closes and `pump_signal` (confidence medium) when its follow-through candle closes;
//! [`pump_without_follow_through`] alerts `pump_watch` only, and its watch expires after
//! `stage2_expiry_candles`. Quiet candles range ~1.2 % (ATR(14) ≈ 1.2 % of price), volume
//! ~[`BASE_VOLUME`]; the ignition is +3.5 % on 5× volume closing near its high, the
//! follow-through +2 % on 2.5× volume.

use crate::series::STEP_MS;
use spotbot_sdk::testing::Rng;
use spotbot_sdk::{Candles, ScanRequest, StateEntry, SymbolData};

/// Start price of a symbol path.
pub const SYMBOL_PRICE: f64 = 100.0;
/// Price of the reference coin path.
pub const REFERENCE_PRICE: f64 = 60_000.0;
/// Mean volume of a quiet candle (base asset).
pub const BASE_VOLUME: f64 = 1_000.0;
/// 24 h quote volume [`symbol_data`] callers typically use: well above the default minimum.
pub const LIQUID_QUOTE_VOLUME: f64 = 5_000_000.0;

/// The shape of a scripted pump. `Pump::default()` is the path the module doc describes.
#[derive(Debug, Clone, PartialEq)]
pub struct Pump {
    /// Index of the ignition candle in the path (clamped into the path).
    pub ignition_index: usize,
    /// Ignition candle return (close − open) / open, percent.
    pub ignition_return_pct: f64,
    /// Ignition volume as a multiple of [`BASE_VOLUME`].
    pub ignition_volume_mult: f64,
    /// Ignition close strength (close − low) / (high − low), 0..=1.
    pub ignition_close_strength: f64,
    /// The follow-through candle comes this many candles after the ignition (`None`: the path
    /// drifts slightly down after the ignition, on normal volume).
    pub follow_through_after: Option<usize>,
    /// Follow-through candle return, percent.
    pub follow_return_pct: f64,
    /// Follow-through volume as a multiple of [`BASE_VOLUME`].
    pub follow_volume_mult: f64,
    /// Seed of the quiet noise.
    pub seed: u64,
}

impl Default for Pump {
    fn default() -> Self {
        Pump {
            ignition_index: 60,
            ignition_return_pct: 3.5,
            ignition_volume_mult: 5.0,
            ignition_close_strength: 0.95,
            follow_through_after: Some(2),
            follow_return_pct: 2.0,
            follow_volume_mult: 2.5,
            seed: 7,
        }
    }
}

/// A scripted path and where its events are.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The whole path, oldest first.
    pub candles: Candles,
    /// Index of the ignition candle.
    pub ignition_index: usize,
    /// Open time of the ignition candle, epoch ms.
    pub ignition_open_time: i64,
    /// Index of the follow-through candle, if the path has one inside it.
    pub follow_through_index: Option<usize>,
    /// Open time of the follow-through candle, epoch ms.
    pub follow_through_open_time: Option<i64>,
}

impl Scenario {
    /// The time candle `index` closes: scanning at it makes `index` the newest closed candle.
    pub fn closed_at(&self, index: usize) -> i64 {
        closed_at(&self.candles, index)
    }

    /// The first `index + 1` candles (the path up to and including candle `index`).
    pub fn upto(&self, index: usize) -> Candles {
        prefix(&self.candles, index.saturating_add(1))
    }
}

/// `n` quiet 15m candles of a symbol around [`SYMBOL_PRICE`] ending at `end_ms`: never an alert.
pub fn quiet(end_ms: i64, n: usize) -> Candles {
    quiet_seeded(1, end_ms, n)
}

/// [`quiet`] with another noise seed (distinct but equally quiet symbols).
pub fn quiet_seeded(seed: u64, end_ms: i64, n: usize) -> Candles {
    let mut b = Builder::new(seed, SYMBOL_PRICE, end_ms, n);
    for _ in 0..n {
        b.quiet();
    }
    b.candles
}

/// `n` flat-ish 15m candles of the reference coin around [`REFERENCE_PRICE`] ending at
/// `end_ms` (bodies within ±0.05 %), the same open times as the symbol paths.
pub fn reference(end_ms: i64, n: usize) -> Candles {
    let mut b = Builder::new(99, REFERENCE_PRICE, end_ms, n);
    for _ in 0..n {
        let body = 0.0005 * b.rng.next_signed() + b.pull(0.2);
        let vol = 0.5 * (0.8 + 0.4 * b.rng.next_f64());
        b.candle(body, 0.0008, 0.0008, vol);
    }
    b.candles
}

/// A quiet path of `n` candles ending at `end_ms` with an ignition at `ignition_index` and
/// follow-through `follow_after` candles later (1 ≤ `follow_after` ≤ `stage2_expiry_candles`
/// gives a pump_signal with the default config).
pub fn pump_then_follow_through(
    end_ms: i64,
    n: usize,
    ignition_index: usize,
    follow_after: usize,
) -> Scenario {
    pump(
        end_ms,
        n,
        &Pump { ignition_index, follow_through_after: Some(follow_after), ..Pump::default() },
    )
}

/// A quiet path of `n` candles ending at `end_ms` with an ignition at `ignition_index` and no
/// follow-through: after it, closes drift 0.3 % down per candle on normal volume.
pub fn pump_without_follow_through(end_ms: i64, n: usize, ignition_index: usize) -> Scenario {
    pump(end_ms, n, &Pump { ignition_index, follow_through_after: None, ..Pump::default() })
}

/// The general scripted pump: quiet candles, four calm ones before the ignition (so the hour
/// before it is flat), the ignition, then either consolidation (−0.2 % per candle, 1.2×
/// volume) up to the follow-through candle and quiet candles at the new level after it, or
/// (no follow-through) a slow drift down.
pub fn pump(end_ms: i64, n: usize, shape: &Pump) -> Scenario {
    let g = shape.ignition_index.min(n.saturating_sub(1));
    let ft = shape.follow_through_after.and_then(|k| g.checked_add(k.max(1)));
    let mut b = Builder::new(shape.seed, SYMBOL_PRICE, end_ms, n);
    for i in 0..n {
        if i + 4 >= g && i < g {
            b.calm();
        } else if i < g {
            b.quiet();
        } else if i == g {
            b.strong(
                shape.ignition_return_pct,
                shape.ignition_close_strength,
                shape.ignition_volume_mult,
            );
        } else if let Some(f) = ft {
            if i < f {
                b.candle(-0.002, 0.001, 0.001, 1.2);
            } else if i == f {
                b.strong(shape.follow_return_pct, 0.9, shape.follow_volume_mult);
                b.anchor = b.price;
            } else {
                b.quiet();
            }
        } else {
            b.candle(-0.003, 0.001, 0.001, 1.0);
        }
    }
    let open_time = |i: usize| b.candles.open_time.get(i).copied();
    let ft_in_path = ft.filter(|&f| f < n);
    Scenario {
        ignition_open_time: open_time(g).unwrap_or_else(|| floor_end(end_ms)),
        ignition_index: g,
        follow_through_index: ft_in_path,
        follow_through_open_time: ft_in_path.and_then(open_time),
        candles: b.candles,
    }
}

/// The first `len` candles of a path (all of it if shorter).
pub fn prefix(candles: &Candles, len: usize) -> Candles {
    let cut = |v: &Vec<f64>| v[..len.min(v.len())].to_vec();
    Candles {
        timeframe: candles.timeframe.clone(),
        open_time: candles.open_time[..len.min(candles.open_time.len())].to_vec(),
        open: cut(&candles.open),
        high: cut(&candles.high),
        low: cut(&candles.low),
        close: cut(&candles.close),
        volume: cut(&candles.volume),
    }
}

/// The time candle `index` of a path closes (its open time + 15 min); the path's end if the
/// index is out of range.
pub fn closed_at(candles: &Candles, index: usize) -> i64 {
    match candles.open_time.get(index).or(candles.open_time.last()) {
        Some(t) => t.saturating_add(STEP_MS),
        None => 0,
    }
}

/// A symbol's market data from a path: last price = last close.
pub fn symbol_data(symbol: &str, candles: Candles, quote_volume_24h: f64) -> SymbolData {
    SymbolData {
        symbol: symbol.to_string(),
        last_price: candles.close.last().copied().unwrap_or(0.0),
        quote_volume_24h,
        candles: vec![candles],
        market_context: None,
    }
}

/// A scan request over `symbols` with the reference coin's data `reference` (named BTCUSDT).
pub fn request(
    now_ms: i64,
    config: &str,
    symbols: Vec<SymbolData>,
    reference: Option<Candles>,
    state: Vec<StateEntry>,
) -> ScanRequest {
    ScanRequest {
        now_ms,
        config: config.to_string(),
        symbols,
        reference: reference.map(|c| symbol_data("BTCUSDT", c, 1e9)),
        state,
    }
}

fn floor_end(end_ms: i64) -> i64 {
    end_ms.div_euclid(STEP_MS).saturating_mul(STEP_MS)
}

/// Appends candles one at a time; each opens at the previous close.
struct Builder {
    rng: Rng,
    price: f64,
    /// The level quiet candles revert to.
    anchor: f64,
    next_open_time: i64,
    candles: Candles,
}

impl Builder {
    fn new(seed: u64, price: f64, end_ms: i64, n: usize) -> Self {
        let steps = i64::try_from(n).unwrap_or(i64::MAX);
        Builder {
            rng: Rng::new(seed),
            price,
            anchor: price,
            next_open_time: floor_end(end_ms).saturating_sub(steps.saturating_mul(STEP_MS)),
            candles: Candles {
                timeframe: "15m".to_string(),
                open_time: Vec::with_capacity(n),
                open: Vec::with_capacity(n),
                high: Vec::with_capacity(n),
                low: Vec::with_capacity(n),
                close: Vec::with_capacity(n),
                volume: Vec::with_capacity(n),
            },
        }
    }

    /// Mean reversion toward the anchor, a fraction of the distance per candle.
    fn pull(&self, strength: f64) -> f64 {
        (self.anchor - self.price) / self.anchor * strength
    }

    /// A quiet candle: body within ±0.8 %, wicks up to 0.8 %, volume 0.8-1.2× base.
    fn quiet(&mut self) {
        let body = 0.008 * self.rng.next_signed() + self.pull(0.1);
        let (up, down) = (0.008 * self.rng.next_f64(), 0.008 * self.rng.next_f64());
        let vol = 0.8 + 0.4 * self.rng.next_f64();
        self.candle(body, up, down, vol);
    }

    /// A calm candle: body within ±0.05 % around the anchor, small wicks.
    fn calm(&mut self) {
        let body = 0.0005 * self.rng.next_signed() + self.pull(0.5);
        let (up, down) = (0.003 * self.rng.next_f64(), 0.003 * self.rng.next_f64());
        let vol = 0.8 + 0.4 * self.rng.next_f64();
        self.candle(body, up, down, vol);
    }

    /// A strong green candle of `ret_pct` closing at `strength` of its range, low 0.1 % below
    /// the open.
    fn strong(&mut self, ret_pct: f64, strength: f64, vol_mult: f64) {
        let open = self.price;
        let close = open * (1.0 + ret_pct / 100.0);
        let low = open.min(close) * 0.999;
        let strength = if strength > 0.0 && strength <= 1.0 { strength } else { 1.0 };
        let high = (low + (close - low) / strength).max(open.max(close));
        self.push(open, high, low, close, BASE_VOLUME * vol_mult);
    }

    /// A candle with body `body` (fraction), wicks `up`/`down` (fractions) and volume
    /// `vol_mult` × base.
    fn candle(&mut self, body: f64, up: f64, down: f64, vol_mult: f64) {
        let open = self.price;
        let close = open * (1.0 + body);
        let high = open.max(close) * (1.0 + up);
        let low = open.min(close) * (1.0 - down);
        self.push(open, high, low, close, BASE_VOLUME * vol_mult);
    }

    fn push(&mut self, open: f64, high: f64, low: f64, close: f64, volume: f64) {
        let c = &mut self.candles;
        c.open_time.push(self.next_open_time);
        c.open.push(open);
        c.high.push(high);
        c.low.push(low);
        c.close.push(close);
        c.volume.push(volume);
        self.next_open_time = self.next_open_time.saturating_add(STEP_MS);
        self.price = close;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const END: i64 = 1_767_225_600_000;

    #[test]
    fn paths_are_deterministic_aligned_and_sane() {
        let s = pump_then_follow_through(END + 123, 80, 60, 2);
        assert_eq!(s, pump_then_follow_through(END + 123, 80, 60, 2));
        let c = &s.candles;
        assert!(c.is_consistent() && c.len() == 80);
        assert_eq!(*c.open_time.last().unwrap(), END - STEP_MS);
        assert_eq!(s.ignition_open_time, c.open_time[60]);
        assert_eq!(s.follow_through_index, Some(62));
        assert_eq!(s.follow_through_open_time, Some(c.open_time[62]));
        assert_eq!(s.closed_at(60), c.open_time[60] + STEP_MS);
        assert_eq!(s.upto(60).len(), 61);
        for i in 0..c.len() {
            assert!(
                c.low[i] <= c.open[i].min(c.close[i]) && c.high[i] >= c.open[i].max(c.close[i])
            );
            assert!(c.low[i] > 0.0 && c.volume[i] > 0.0);
        }
        let r = reference(END, 80);
        assert_eq!(r.open_time, c.open_time);
        assert_eq!(quiet(END, 80).open_time, c.open_time);
    }

    #[test]
    fn odd_arguments_do_not_panic() {
        assert!(quiet(END, 0).is_empty());
        let s = pump(END, 0, &Pump::default());
        assert!(s.candles.is_empty() && s.follow_through_index.is_none());
        let s = pump(i64::MIN, 5, &Pump { ignition_index: 99, ..Pump::default() });
        assert_eq!(s.ignition_index, 4);
        let s = pump(END, 10, &Pump { follow_through_after: Some(usize::MAX), ..Pump::default() });
        assert_eq!(s.follow_through_index, None);
        assert_eq!(prefix(&quiet(END, 3), 10).len(), 3);
        assert_eq!(closed_at(&quiet(END, 0), 3), 0);
    }
}
