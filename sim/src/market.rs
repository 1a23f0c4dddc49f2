//! Where prices come from: a seeded synthetic market (a deterministic function of seed, symbol
//! and time: trends, ranges, volatility clusters, sudden pumps, alts following the reference
//! coin) that scripted paths (admin "set price", a list of points or a CSV replay) override from
//! a given time on. Klines, tickers and the matching engine all read the same function, so a
//! candle's high is a price the engine really saw.

use crate::clock::Millis;
use crate::symbols::{REFERENCE, SymbolRules};
use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::{Decimal, RoundingStrategy};
use std::collections::HashMap;

pub const MINUTE: Millis = 60_000;
pub const HOUR: Millis = 60 * MINUTE;
pub const DAY: Millis = 24 * HOUR;

/// splitmix64: a tiny, good-enough hash for deterministic noise (no RNG state to carry).
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn hash3(a: u64, b: u64, c: u64) -> u64 {
    mix(mix(mix(a) ^ b) ^ c)
}

/// Uniform in [-1, 1).
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

fn symbol_key(symbol: &str) -> u64 {
    symbol
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// Linearly interpolated value noise at one scale: piecewise-linear segments between random
/// nodes, so each octave trends for a while and then turns.
fn value_noise(seed: u64, key: u64, octave: u64, t: Millis, scale: Millis) -> f64 {
    let k = t.div_euclid(scale);
    let frac = t.rem_euclid(scale) as f64 / scale as f64;
    let a = unit(hash3(seed ^ octave, key, k as u64));
    let b = unit(hash3(seed ^ octave, key, (k + 1) as u64));
    a + (b - a) * frac
}

/// (scale, amplitude in log-price) from slow trends down to minute noise.
const OCTAVES: &[(Millis, f64, bool)] = &[
    (30 * DAY, 0.30, false),
    (7 * DAY, 0.12, false),
    (DAY, 0.05, false),
    (4 * HOUR, 0.022, true),
    (HOUR, 0.010, true),
    (15 * MINUTE, 0.005, true),
    (3 * MINUTE, 0.0025, true),
    (MINUTE, 0.0012, true),
];

/// The synthetic market of one seed.
#[derive(Debug, Clone)]
pub struct Synthetic {
    pub seed: u64,
}

impl Synthetic {
    /// Log-return component without pumps (what alts share with the reference coin).
    fn base_component(&self, key: u64, vol: f64, t: Millis) -> f64 {
        // Volatility clusters: the short octaves are scaled by a slow, squared noise.
        let v = value_noise(self.seed, key, 97, t, 2 * DAY);
        let cluster = 0.35 + 1.8 * v * v;
        OCTAVES
            .iter()
            .enumerate()
            .map(|(i, (scale, amp, short))| {
                let n = value_noise(self.seed, key, i as u64 + 1, t, *scale);
                let amp = if *short { amp * cluster } else { *amp };
                n * amp * vol
            })
            .sum()
    }

    /// Sudden pumps: roughly one every ten days per symbol, a fast rise of 8-35 % over 10-45
    /// minutes and a decay over hours.
    fn pumps(&self, key: u64, t: Millis) -> f64 {
        let hour = t.div_euclid(HOUR);
        let mut total = 0.0;
        for h in (hour - 30)..=hour {
            let r = hash3(self.seed ^ 0x5055_4d50, key, h as u64);
            if (r % 10_000) >= 42 {
                continue;
            }
            let r2 = mix(r);
            let start = h * HOUR + (r2 % HOUR as u64) as Millis;
            if t < start {
                continue;
            }
            let amp = 0.08 + 0.27 * ((r2 >> 20) % 1000) as f64 / 1000.0;
            let rise = (10 + (r2 >> 40) % 36) as Millis * MINUTE;
            let dt = t - start;
            total += if dt < rise {
                amp * dt as f64 / rise as f64
            } else {
                amp * (-((dt - rise) as f64) / (6.0 * HOUR as f64)).exp()
            };
        }
        total
    }

    pub fn price(&self, rules: &SymbolRules, t: Millis) -> Decimal {
        let key = symbol_key(&rules.symbol);
        let mut log = self.base_component(key, rules.vol, t) + self.pumps(key, t);
        if rules.symbol != REFERENCE {
            // Alts follow the reference coin with a beta of 0.7.
            log += 0.7 * self.base_component(symbol_key(REFERENCE), 1.0, t);
        }
        let base = rules.base_price.to_f64().unwrap_or(1.0);
        let p = Decimal::from_f64(base * log.exp()).unwrap_or(rules.base_price);
        round_to(p, rules.tick, RoundingStrategy::MidpointAwayFromZero).max(rules.tick)
    }
}

/// Rounds `v` to a multiple of `step` (no-op when step is zero).
pub fn round_to(v: Decimal, step: Decimal, strategy: RoundingStrategy) -> Decimal {
    if step.is_zero() {
        return v;
    }
    if step.mantissa() == 1 {
        // A step of 10^-k (most ticks and lot steps): rounding to k decimals is the same
        // thing, without the division.
        return v.round_dp_with_strategy(step.scale(), strategy).normalize();
    }
    let units = (v / step).round_dp_with_strategy(0, strategy);
    (units * step).normalize()
}

/// Scripted prices that override the synthetic market from their first point on: a step
/// function (each point holds until the next), which is what gaps look like.
#[derive(Debug, Clone, Default)]
pub struct Path {
    pub points: Vec<(Millis, Decimal)>,
}

impl Path {
    fn at(&self, t: Millis) -> Option<Decimal> {
        let idx = self.points.partition_point(|(pt, _)| *pt <= t);
        if idx == 0 { None } else { Some(self.points[idx - 1].1) }
    }

    /// The prices at the points in (from, to] and at `to`, for a window the path covers from
    /// before `from` on: what [`Market::samples`] gives, read straight off the points (a
    /// backtest walks millions of them).
    fn window(&self, from: Millis, to: Millis) -> Vec<(Millis, Decimal)> {
        let start = self.points.partition_point(|(t, _)| *t <= from);
        let end = self.points.partition_point(|(t, _)| *t <= to);
        let mut out: Vec<(Millis, Decimal)> = Vec::with_capacity(end - start + 1);
        for &(t, p) in &self.points[start..end] {
            match out.last_mut() {
                // Of points at the same time the last holds, as in `at`.
                Some(last) if last.0 == t => last.1 = p,
                _ => out.push((t, p)),
            }
        }
        if out.last().is_none_or(|(t, _)| *t != to)
            && let Some(p) = self.at(to)
        {
            out.push((to, p));
        }
        out
    }
}

/// All price sources of the simulator.
#[derive(Debug, Clone)]
pub struct Market {
    pub synthetic: Synthetic,
    pub paths: HashMap<String, Path>,
    /// Scripted traded volume per symbol: (time, base volume traded at that time), sorted.
    /// When a symbol has a script, a candle's volume is the sum of the script's volumes inside
    /// the candle, instead of the synthetic estimate.
    pub volumes: HashMap<String, Vec<(Millis, Decimal)>>,
}

/// One candle in exchange units.
#[derive(Debug, Clone)]
pub struct Candle {
    pub open_time: Millis,
    pub close_time: Millis,
    pub open: Decimal,
    pub high: Decimal,
    pub low: Decimal,
    pub close: Decimal,
    pub volume: Decimal,
    pub quote_volume: Decimal,
    pub trades: u64,
    pub taker_buy_volume: Decimal,
    pub taker_buy_quote_volume: Decimal,
}

impl Market {
    pub fn new(seed: u64) -> Self {
        Self { synthetic: Synthetic { seed }, paths: HashMap::new(), volumes: HashMap::new() }
    }

    pub fn price(&self, rules: &SymbolRules, t: Millis) -> Decimal {
        self.paths
            .get(&rules.symbol)
            .and_then(|p| p.at(t))
            .unwrap_or_else(|| self.synthetic.price(rules, t))
    }

    /// Sets the price from `t` on (admin "set price"); later points of an older script are
    /// dropped so the new price holds.
    pub fn set_price(&mut self, symbol: &str, t: Millis, price: Decimal) {
        let path = self.paths.entry(symbol.to_string()).or_default();
        path.points.retain(|(pt, _)| *pt < t);
        path.points.push((t, price));
    }

    /// Replaces the script of a symbol with these points (sorted by time).
    pub fn set_path(&mut self, symbol: &str, mut points: Vec<(Millis, Decimal)>) {
        points.sort_by_key(|(t, _)| *t);
        self.paths.insert(symbol.to_string(), Path { points });
    }

    /// Replaces the volume script of a symbol (see [`Market::volumes`]).
    pub fn set_volumes(&mut self, symbol: &str, mut points: Vec<(Millis, Decimal)>) {
        points.sort_by_key(|(t, _)| *t);
        self.volumes.insert(symbol.to_string(), points);
    }

    /// Prices the engine walks through in (from, to]: scripted points in the window, plus
    /// synthetic samples at most a minute apart (coarser for long jumps), plus `to` itself.
    pub fn samples(&self, rules: &SymbolRules, from: Millis, to: Millis) -> Vec<(Millis, Decimal)> {
        if to <= from {
            return vec![(to, self.price(rules, to))];
        }
        if let Some(path) = self.paths.get(&rules.symbol)
            && path.points.first().is_some_and(|(t, _)| *t <= from)
        {
            return path.window(from, to);
        }
        let mut times: Vec<Millis> = Vec::new();
        let path = self.paths.get(&rules.symbol);
        let scripted_from = path.and_then(|p| p.points.first().map(|(t, _)| *t));
        if let Some(p) = path {
            times.extend(p.points.iter().map(|(t, _)| *t).filter(|t| *t > from && *t <= to));
        }
        let synthetic_end = scripted_from.map_or(to, |s| s.min(to));
        if synthetic_end > from {
            let span = synthetic_end - from;
            let step = (span / 2000).max(MINUTE);
            let mut t = from + step;
            while t < synthetic_end {
                times.push(t);
                t += step;
            }
        }
        times.push(to);
        times.sort_unstable();
        times.dedup();
        times.into_iter().map(|t| (t, self.price(rules, t))).collect()
    }

    /// One candle [open, open+len) (the still-open candle is cut at `now`). Its close is the
    /// last price inside it, at `open + len - 1` ms.
    pub fn candle(&self, rules: &SymbolRules, open: Millis, len: Millis, now: Millis) -> Candle {
        let close_time = open + len - 1;
        let end = close_time.min(now.max(open));
        let o = self.price(rules, open);
        let c = self.price(rules, end);
        let mut hi = o.max(c);
        let mut lo = o.min(c);
        let n = (len / MINUTE).clamp(1, 24);
        for i in 1..n {
            let t = open + len * i / n;
            if t > end {
                break;
            }
            let p = self.price(rules, t);
            hi = hi.max(p);
            lo = lo.min(p);
        }
        if let Some(path) = self.paths.get(&rules.symbol) {
            let first = path.points.partition_point(|(t, _)| *t < open);
            for (_, p) in path.points[first..].iter().take_while(|(t, _)| *t <= end) {
                hi = hi.max(*p);
                lo = lo.min(*p);
            }
        }
        // Volume: deterministic, larger when the candle moved more.
        let key = symbol_key(&rules.symbol);
        let r = unit(hash3(self.synthetic.seed ^ 0x0056_4f4c, key, open as u64)).abs();
        let mid = ((hi + lo) / Decimal::TWO).max(rules.tick);
        let range = if mid.is_zero() { Decimal::ZERO } else { (hi - lo) / mid };
        let minutes = Decimal::from((end - open).max(0) / MINUTE + 1);
        let (volume, quote_volume) = match self.volumes.get(&rules.symbol) {
            Some(script) => {
                let first = script.partition_point(|(t, _)| *t < open);
                let volume: Decimal = script[first..]
                    .iter()
                    .take_while(|(t, _)| *t < open + len && *t <= end)
                    .map(|(_, v)| *v)
                    .sum();
                (volume.round_dp(8), (volume * mid).round_dp(8))
            }
            None => {
                let notional_per_min = Decimal::from(20_000)
                    * (Decimal::ONE + range * Decimal::from(50))
                    * Decimal::from_f64(0.5 + r).unwrap_or(Decimal::ONE);
                let quote_volume = (notional_per_min * minutes).round_dp(8);
                (((quote_volume / mid).round_dp(8)), quote_volume)
            }
        };
        let trades = (minutes * Decimal::from(30)).to_u64().unwrap_or(0);
        let taker = Decimal::from_f64(0.4 + 0.2 * r).unwrap_or(Decimal::ONE / Decimal::TWO);
        Candle {
            open_time: open,
            close_time,
            open: o,
            high: hi,
            low: lo,
            close: c,
            volume,
            quote_volume,
            trades,
            taker_buy_volume: (volume * taker).round_dp(8),
            taker_buy_quote_volume: (quote_volume * taker).round_dp(8),
        }
    }
}

/// Kline intervals of the wire protocol and their fixed length (months are calendar months).
pub fn interval_ms(interval: &str) -> Option<Millis> {
    Some(match interval {
        "1s" => 1000,
        "1m" => MINUTE,
        "3m" => 3 * MINUTE,
        "5m" => 5 * MINUTE,
        "15m" => 15 * MINUTE,
        "30m" => 30 * MINUTE,
        "1h" => HOUR,
        "2h" => 2 * HOUR,
        "4h" => 4 * HOUR,
        "6h" => 6 * HOUR,
        "8h" => 8 * HOUR,
        "12h" => 12 * HOUR,
        "1d" => DAY,
        "3d" => 3 * DAY,
        "1w" => 7 * DAY,
        "1M" => 31 * DAY,
        _ => return None,
    })
}

/// Open time of the candle containing `t`. Weeks open on Monday 00:00 UTC, months on the 1st.
pub fn candle_open(interval: &str, t: Millis) -> Millis {
    match interval {
        "1w" => {
            let monday = 4 * DAY; // 1970-01-05 was a Monday
            (t - monday).div_euclid(7 * DAY) * 7 * DAY + monday
        }
        "1M" => month_start(t, 0),
        _ => {
            let len = interval_ms(interval).unwrap_or(MINUTE);
            t.div_euclid(len) * len
        }
    }
}

/// Start of the month containing `t`, shifted by `delta` months.
pub fn month_start(t: Millis, delta: i32) -> Millis {
    use chrono::{Datelike, TimeZone, Utc};
    let dt = Utc.timestamp_millis_opt(t).single().unwrap_or_default();
    let months = dt.year() * 12 + dt.month0() as i32 + delta;
    Utc.with_ymd_and_hms(months.div_euclid(12), months.rem_euclid(12) as u32 + 1, 1, 0, 0, 0)
        .single()
        .map(|d| d.timestamp_millis())
        .unwrap_or(t)
}

/// Length of the candle opening at `open`.
pub fn candle_len(interval: &str, open: Millis) -> Millis {
    if interval == "1M" {
        month_start(open, 1) - open
    } else {
        interval_ms(interval).unwrap_or(MINUTE)
    }
}

/// Next open after the candle opening at `open`.
pub fn next_open(interval: &str, open: Millis) -> Millis {
    open + candle_len(interval, open)
}

/// Open times of the candles that open in [start, end], oldest first, at most `limit`.
pub fn candle_opens(interval: &str, start: Millis, end: Millis, limit: usize) -> Vec<Millis> {
    let mut opens = Vec::new();
    let mut o = candle_open(interval, start);
    if o < start {
        o = next_open(interval, o);
    }
    while o <= end && opens.len() < limit {
        opens.push(o);
        o = next_open(interval, o);
    }
    opens
}

/// Previous open before the candle opening at `open`.
pub fn prev_open(interval: &str, open: Millis) -> Millis {
    if interval == "1M" {
        month_start(open, -1)
    } else {
        open - interval_ms(interval).unwrap_or(MINUTE)
    }
}

/// Parses a CSV replay: lines of `time_ms,price` (a header line and blank lines are skipped).
pub fn parse_csv(text: &str) -> Result<Vec<(Millis, Decimal)>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split(',');
        let (Some(t), Some(p)) = (parts.next(), parts.next()) else {
            return Err(format!("line {}: expected time_ms,price", i + 1));
        };
        let Ok(t) = t.trim().parse::<Millis>() else {
            if i == 0 {
                continue; // header
            }
            return Err(format!("line {}: bad time", i + 1));
        };
        let p: Decimal = p.trim().parse().map_err(|_| format!("line {}: bad price", i + 1))?;
        if p <= Decimal::ZERO {
            return Err(format!("line {}: price must be positive", i + 1));
        }
        out.push((t, p));
    }
    Ok(out)
}

/// One candle of a price script, prices as `f64` (the way candle files and plugins carry them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ohlc {
    pub open_time: Millis,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
}

/// A scripted price: `x` to eight decimals.
pub fn script_price(x: f64) -> Decimal {
    round8(x).unwrap_or_else(|| Decimal::from_f64_retain(x).unwrap_or_default().round_dp(8))
}

/// `Decimal::from_f64_retain(x).round_dp(8)` for an `x` from 10^-6 to 2^53, value and scale
/// alike, in integer arithmetic: a price walk converts millions of points and the general
/// conversion is the slow part of it. `x = m · 2^e` with `m` odd is exactly
/// `m · 5^-e / 10^-e`: with at most 8 binary fraction digits that is the answer (scale `-e`);
/// with more, `m · 10^8 / 2^-e` rounded half to even, at scale 8. (`from_f64_retain` keeps at
/// least 18 of those digits before `round_dp`, so it rounds the same exact value; the unit test
/// compares the two on millions of prices.) `None` outside that range.
fn round8(x: f64) -> Option<Decimal> {
    if !(1e-6..9_007_199_254_740_992.0).contains(&x) {
        return None;
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mut m, mut e) =
        if biased == 0 { (fraction, -1074) } else { (fraction | (1u64 << 52), biased - 1075) };
    let zeros = m.trailing_zeros();
    m >>= zeros;
    e += zeros as i32;
    if e >= 0 {
        return Some(Decimal::from_i128_with_scale(i128::from(m) << e, 0));
    }
    let shift = (-e) as u32;
    if shift <= 8 {
        return Some(Decimal::from_i128_with_scale(i128::from(m) * 5i128.pow(shift), shift));
    }
    let n = u128::from(m) * 100_000_000;
    if shift >= 127 {
        return Some(Decimal::from_i128_with_scale(0, 8));
    }
    let (q, r) = (n >> shift, n & ((1u128 << shift) - 1));
    let half = 1u128 << (shift - 1);
    let q = if r > half || (r == half && q & 1 == 1) { q + 1 } else { q };
    Some(Decimal::from_i128_with_scale(i128::try_from(q).ok()?, 8))
}

/// The price path that makes the simulator's candles of length `len` equal `candles`: per
/// candle, the open at its open time, the two extremes a quarter and a half into it (the low
/// first on an up candle, the high first on a down one), the close three quarters in. Each
/// point holds until the next (see [`Path`]), so the simulator's candle of that span has
/// exactly this open, high, low and close.
///
/// With `max_move` (a fraction of the price, e.g. `0.001`), points are added on straight lines
/// between those four so that two consecutive prices inside a candle differ by at most that
/// fraction: the price walks through the levels between open, extremes and close instead of
/// jumping, so a stop triggers near its stop price rather than at the candle's extreme (where
/// the limit of a stop-limit may already be out of reach). The candle is unchanged: every
/// added point lies between its two neighbours. Nothing is added between a close and the next
/// candle's open: a gap there stays a gap.
pub fn path_from_candles(
    len: Millis,
    candles: &[Ohlc],
    max_move: Option<f64>,
) -> Vec<(Millis, Decimal)> {
    let mut points = Vec::with_capacity(candles.len() * 4);
    for c in candles {
        let (first, second) = if c.close >= c.open { (c.low, c.high) } else { (c.high, c.low) };
        let t = c.open_time;
        let anchors =
            [(t, c.open), (t + len / 4, first), (t + len / 2, second), (t + 3 * len / 4, c.close)];
        points.push((anchors[0].0, script_price(anchors[0].1)));
        for pair in anchors.windows(2) {
            let ((t0, p0), (t1, p1)) = (pair[0], pair[1]);
            if let Some(max_move) = max_move.filter(|m| *m > 0.0) {
                let base = p0.min(p1);
                let span = if base > 0.0 { (p1 - p0).abs() / base } else { 0.0 };
                let steps = ((span / max_move).ceil() as i64).clamp(1, (t1 - t0).max(1));
                for k in 1..steps {
                    let at = t0 + (t1 - t0) * k / steps;
                    let price = p0 + (p1 - p0) * k as f64 / steps as f64;
                    points.push((at, script_price(price)));
                }
            }
            points.push((t1, script_price(p1)));
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::default_listing;

    #[test]
    fn a_scripted_window_samples_its_points_then_its_end() {
        let rules = &default_listing()[0];
        let mut m = Market::new(1);
        let d = Decimal::from;
        m.set_path("BTCUSDT", vec![(1000, d(10)), (2000, d(11)), (2000, d(12)), (2500, d(13))]);
        assert_eq!(m.samples(rules, 1000, 3000), vec![(2000, d(12)), (2500, d(13)), (3000, d(13))]);
        assert_eq!(m.samples(rules, 1500, 2500), vec![(2000, d(12)), (2500, d(13))]);
        assert_eq!(m.samples(rules, 2100, 2200), vec![(2200, d(11) + Decimal::ONE)]);
    }

    #[test]
    fn rounding_to_a_power_of_ten_step_is_rounding_to_its_decimals() {
        let by_division = |v: Decimal, step: Decimal, strategy: RoundingStrategy| {
            ((v / step).round_dp_with_strategy(0, strategy) * step).normalize()
        };
        let strategies = [
            RoundingStrategy::ToNegativeInfinity,
            RoundingStrategy::ToPositiveInfinity,
            RoundingStrategy::ToZero,
            RoundingStrategy::MidpointAwayFromZero,
        ];
        let steps = ["1", "0.1", "0.01", "0.00001", "0.00000001"];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = Decimal::new((x % 100_000_000_000_000) as i64, 8);
            for step in steps {
                let step: Decimal = step.parse().unwrap();
                for strategy in strategies {
                    assert_eq!(round_to(v, step, strategy), by_division(v, step, strategy));
                }
            }
        }
    }

    #[test]
    fn round8_is_from_f64_retain_then_round_dp_8() {
        let slow = |x: f64| Decimal::from_f64_retain(x).unwrap_or_default().round_dp(8);
        let mut z = 0x5EED_u64;
        let mut checked = 0;
        for i in 0..2_000_000u64 {
            z = mix(z ^ i);
            // Prices from 1e-9 to 1e9, some of them short binary fractions (k / 2^j).
            let x = match i % 4 {
                0 => ((z >> 11) as f64 / (1u64 << 53) as f64) * 10f64.powi((z % 19) as i32 - 9),
                1 => ((z >> 40) as f64) / (1u64 << (z % 20)) as f64,
                2 => 100.0 + ((z >> 11) as f64 / (1u64 << 53) as f64) * (i % 1000) as f64 / 7.0,
                _ => f64::from_bits((z >> 2) & 0x433F_FFFF_FFFF_FFFF),
            };
            let Some(fast) = round8(x) else { continue };
            let want = slow(x);
            assert_eq!((fast, fast.scale()), (want, want.scale()), "x = {x:e}");
            checked += 1;
        }
        assert!(checked > 1_000_000, "{checked}");
    }

    #[test]
    fn synthetic_is_deterministic_and_positive() {
        let rules = &default_listing()[0];
        let a = Market::new(7);
        let b = Market::new(7);
        for i in 0..500 {
            let t = 1_700_000_000_000 + i * 7 * MINUTE;
            let p = a.price(rules, t);
            assert_eq!(p, b.price(rules, t));
            assert!(p > Decimal::ZERO);
        }
        assert_ne!(
            a.price(rules, 1_700_000_000_000),
            Market::new(8).price(rules, 1_700_000_000_000)
        );
    }

    #[test]
    fn weekly_candles_open_on_monday() {
        // 2024-01-03 (Wednesday) -> 2024-01-01 (Monday)
        assert_eq!(candle_open("1w", 1_704_240_000_000), 1_704_067_200_000);
        assert_eq!(candle_open("1M", 1_704_240_000_000), 1_704_067_200_000);
        assert_eq!(next_open("1M", 1_704_067_200_000), 1_706_745_600_000);
    }

    #[test]
    fn path_overrides_from_its_first_point() {
        let rules = &default_listing()[0];
        let mut m = Market::new(1);
        m.set_price("BTCUSDT", 1000, Decimal::from(100));
        m.set_price("BTCUSDT", 2000, Decimal::from(90));
        assert_eq!(m.price(rules, 1500), Decimal::from(100));
        assert_eq!(m.price(rules, 2500), Decimal::from(90));
        let s = m.samples(rules, 1000, 3000);
        assert!(s.iter().any(|(t, p)| *t == 2000 && *p == Decimal::from(90)));
    }

    #[test]
    fn csv_replay_parses_with_header() {
        let pts = parse_csv("time,price\n1000,1.5\n2000,1.6\n").unwrap_or_default();
        assert_eq!(pts.len(), 2);
        assert!(parse_csv("1000,-1").is_err());
    }

    fn ohlc(open_time: Millis, open: f64, high: f64, low: f64, close: f64) -> Ohlc {
        Ohlc { open_time, open, high, low, close }
    }

    #[test]
    fn a_candle_path_reproduces_the_candles() {
        let up = ohlc(0, 100.0, 106.0, 99.0, 104.0);
        let down = ohlc(HOUR, 104.0, 105.0, 95.5, 96.0);
        let path = path_from_candles(HOUR, &[up, down], None);
        let d = |x: f64| Decimal::from_f64_retain(x).unwrap_or_default();
        let expected = vec![
            (0, d(100.0)),
            (15 * MINUTE, d(99.0)),
            (30 * MINUTE, d(106.0)),
            (45 * MINUTE, d(104.0)),
            (HOUR, d(104.0)),
            (HOUR + 15 * MINUTE, d(105.0)),
            (HOUR + 30 * MINUTE, d(95.5)),
            (HOUR + 45 * MINUTE, d(96.0)),
        ];
        assert_eq!(path, expected);

        // The simulator's candles over the scripted path are the candles again.
        let rules = &default_listing()[3];
        let mut m = Market::new(1);
        m.set_path(&rules.symbol, path);
        let c = m.candle(rules, HOUR, HOUR, 3 * HOUR);
        assert_eq!((c.open, c.high, c.low, c.close), (d(104.0), d(105.0), d(95.5), d(96.0)));

        // Dense: no step above the bound, the same anchors, the same extremes.
        let dense = path_from_candles(HOUR, &[up, down], Some(0.001));
        assert!(dense.len() > 100, "{}", dense.len());
        for anchor in &expected {
            assert!(dense.contains(anchor), "{anchor:?}");
        }
        for w in dense.windows(2) {
            assert!(w[0].0 < w[1].0, "times increase: {w:?}");
            if w[1].0 % (HOUR) == 0 {
                continue; // a candle boundary: close to next open
            }
            let (a, b) = (w[0].1.to_f64().unwrap(), w[1].1.to_f64().unwrap());
            assert!((a - b).abs() / a.min(b) <= 0.001 + 1e-9, "{w:?}");
        }
        let mut m = Market::new(1);
        m.set_path(&rules.symbol, dense);
        let c = m.candle(rules, 0, HOUR, 3 * HOUR);
        assert_eq!((c.open, c.high, c.low, c.close), (d(100.0), d(106.0), d(99.0), d(104.0)));
    }
}
