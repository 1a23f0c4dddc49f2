//! Technical indicators following TA-Lib's conventions.
//!
//! Every function takes whole columns (oldest first) and returns a series of the same length.
//! Like TA-Lib's Python wrapper, the first `lookback` values are `NaN` (not enough history);
//! the remaining values are computed with TA-Lib's definitions, seeds and operation order
//! (TA-Lib C 0.8, "classic" compatibility, unstable period 0), so they agree with TA-Lib to
//! ~1e-12 relative. The tests check them against reference values computed with the `ta-lib`
//! Python package (`sdk/tests/fixtures/gen_talib.py`).
//!
//! Wilder-type indicators (EMA, RSI, ATR, ADX, MACD) remember all history: two callers agree
//! exactly only when they pass the same candles from the same first bar. Ask the host for a
//! fixed candle count per timeframe and compute over all of it.
//!
//! Not in TA-Lib, documented here: [`bb_width`], [`volume_ratio`], [`swing_highs`] /
//! [`swing_lows`], [`median`], [`efficiency_ratio`] (the last two define "volatile chop" for
//! the host's market context and MR Combined alike). No indicator here crate-depends on anything: the maintained Rust crates
//! differ from TA-Lib in seeds or definitions (see `docs/strategies.md`).

/// TA-Lib's zero band (`TA_EPSILON` of TA-Lib C 0.6+; 0.4 used 1e-8, which zeroed RSI and
/// Bollinger widths of very low-priced coins).
const EPSILON: f64 = 1e-14;

fn is_zero(v: f64) -> bool {
    -EPSILON < v && v < EPSILON
}

/// TA-Lib 0.8's scale-aware zero test: `v` is zero relative to the magnitude `scale` of the
/// operands it was computed from (so low-priced coins are not zeroed).
fn is_zero_scaled(v: f64, scale: f64) -> bool {
    v.abs() <= EPSILON * scale
}

fn nan_series(len: usize) -> Vec<f64> {
    vec![f64::NAN; len]
}

/// The last value of a series, if it is a number (`None` during the lookback or when empty).
pub fn last(series: &[f64]) -> Option<f64> {
    series.last().copied().filter(|v| !v.is_nan())
}

/// The last value of a series if it is finite: `None` during the lookback, when empty, and
/// for ±∞ from bad input (a zero price, an overflow), so a check reading it fails as "n/a"
/// instead of comparing an infinity.
pub fn last_finite(series: &[f64]) -> Option<f64> {
    series.last().copied().filter(|v| v.is_finite())
}

/// The value `back` bars before the last one, if it is a number.
pub fn nth_last(series: &[f64], back: usize) -> Option<f64> {
    let i = series.len().checked_sub(1 + back)?;
    Some(series[i]).filter(|v| !v.is_nan())
}

/// Simple moving average (TA-Lib `SMA`), lookback `period - 1`.
pub fn sma(values: &[f64], period: usize) -> Vec<f64> {
    let mut out = nan_series(values.len());
    if period == 0 || values.len() < period {
        return out;
    }
    let n = period as f64;
    let mut total = 0.0;
    for &v in &values[..period - 1] {
        total += v;
    }
    for i in period - 1..values.len() {
        total += values[i];
        out[i] = total / n;
        total -= values[i + 1 - period];
    }
    out
}

/// Exponential moving average (TA-Lib `EMA`): k = 2/(period+1), seeded with the SMA of the
/// first `period` values; lookback `period - 1`.
pub fn ema(values: &[f64], period: usize) -> Vec<f64> {
    ema_from(values, period, 0)
}

/// EMA whose SMA seed is taken from the `period` values starting at `seed_start`; values
/// before `seed_start + period - 1` are `NaN`. TA-Lib's MACD needs this alignment.
fn ema_from(values: &[f64], period: usize, seed_start: usize) -> Vec<f64> {
    let mut out = nan_series(values.len());
    if period == 0 || values.len() < seed_start + period {
        return out;
    }
    let k = 2.0 / (period as f64 + 1.0);
    let mut seed = 0.0;
    for &v in &values[seed_start..seed_start + period] {
        seed += v;
    }
    let mut prev = seed / period as f64;
    let first = seed_start + period - 1;
    out[first] = prev;
    for i in first + 1..values.len() {
        prev = (values[i] - prev) * k + prev;
        out[i] = prev;
    }
    out
}

/// Relative strength index with Wilder smoothing (TA-Lib `RSI`): the first average gain and
/// loss are plain means of the first `period` changes; output 0 when there was no movement at
/// all; lookback `period`.
pub fn rsi(close: &[f64], period: usize) -> Vec<f64> {
    let mut out = nan_series(close.len());
    if period == 0 || close.len() <= period {
        return out;
    }
    let n = period as f64;
    let (mut gain, mut loss) = (0.0, 0.0);
    for i in 1..=period {
        let change = close[i] - close[i - 1];
        if change < 0.0 {
            loss -= change;
        } else {
            gain += change;
        }
    }
    gain /= n;
    loss /= n;
    let value = |gain: f64, loss: f64| {
        let sum = gain + loss;
        if is_zero(sum) { 0.0 } else { 100.0 * (gain / sum) }
    };
    out[period] = value(gain, loss);
    for i in period + 1..close.len() {
        let change = close[i] - close[i - 1];
        loss *= n - 1.0;
        gain *= n - 1.0;
        if change < 0.0 {
            loss -= change;
        } else {
            gain += change;
        }
        loss /= n;
        gain /= n;
        out[i] = value(gain, loss);
    }
    out
}

/// TA-Lib's true range of bar `i` given the previous close.
fn true_range(high: f64, low: f64, prev_close: f64) -> f64 {
    let mut greatest = high - low;
    let up = (prev_close - high).abs();
    if up > greatest {
        greatest = up;
    }
    let down = (prev_close - low).abs();
    if down > greatest {
        greatest = down;
    }
    greatest
}

/// True range (TA-Lib `TRANGE`), lookback 1.
pub fn trange(high: &[f64], low: &[f64], close: &[f64]) -> Vec<f64> {
    let len = high.len().min(low.len()).min(close.len());
    let mut out = nan_series(len);
    for i in 1..len {
        out[i] = true_range(high[i], low[i], close[i - 1]);
    }
    out
}

/// Average true range with Wilder smoothing (TA-Lib `ATR`): the first ATR is the mean of the
/// true ranges of bars 1..=period; lookback `period`. `atr(.., 1)` is [`trange`].
pub fn atr(high: &[f64], low: &[f64], close: &[f64], period: usize) -> Vec<f64> {
    let tr = trange(high, low, close);
    if period <= 1 {
        return if period == 1 { tr } else { nan_series(tr.len()) };
    }
    let mut out = nan_series(tr.len());
    if tr.len() <= period {
        return out;
    }
    let n = period as f64;
    let mut total = 0.0;
    for &v in &tr[1..=period] {
        total += v;
    }
    let mut prev = total / n;
    out[period] = prev;
    for i in period + 1..tr.len() {
        prev *= n - 1.0;
        prev += tr[i];
        prev /= n;
        out[i] = prev;
    }
    out
}

/// Directional movement: +DI, −DI (lookback `period`) and ADX (lookback `2*period - 1`).
#[derive(Debug, Clone, PartialEq)]
pub struct Dmi {
    /// TA-Lib `PLUS_DI`.
    pub plus_di: Vec<f64>,
    /// TA-Lib `MINUS_DI`.
    pub minus_di: Vec<f64>,
    /// TA-Lib `ADX`.
    pub adx: Vec<f64>,
}

/// +DI, −DI and ADX with Wilder sums (TA-Lib `PLUS_DI`, `MINUS_DI`, `ADX`): DM and TR are
/// summed over the first `period - 1` moves, then smoothed as `prev - prev/period + today`;
/// the first ADX is the mean of the first `period` DX values.
pub fn dmi(high: &[f64], low: &[f64], close: &[f64], period: usize) -> Dmi {
    let len = high.len().min(low.len()).min(close.len());
    let mut out = Dmi { plus_di: nan_series(len), minus_di: nan_series(len), adx: nan_series(len) };
    if period < 2 || len <= period {
        return out;
    }
    let n = period as f64;
    let (mut plus_dm, mut minus_dm, mut tr) = (0.0, 0.0, 0.0);
    // Directional moves of bar i: only the larger one counts, and only if positive.
    let moves = |i: usize| {
        let diff_p = high[i] - high[i - 1];
        let diff_m = low[i - 1] - low[i];
        if diff_m > 0.0 && diff_p < diff_m {
            (0.0, diff_m)
        } else if diff_p > 0.0 && diff_p > diff_m {
            (diff_p, 0.0)
        } else {
            (0.0, 0.0)
        }
    };
    for i in 1..period {
        let (p, m) = moves(i);
        plus_dm += p;
        minus_dm += m;
        tr += true_range(high[i], low[i], close[i - 1]);
    }
    let mut sum_dx = 0.0;
    let mut adx = 0.0;
    for i in period..len {
        let (p, m) = moves(i);
        plus_dm = plus_dm - plus_dm / n + p;
        minus_dm = minus_dm - minus_dm / n + m;
        tr = tr - tr / n + true_range(high[i], low[i], close[i - 1]);
        let (plus_di, minus_di) = if is_zero(tr) {
            (0.0, 0.0)
        } else {
            (100.0 * (plus_dm / tr), 100.0 * (minus_dm / tr))
        };
        out.plus_di[i] = plus_di;
        out.minus_di[i] = minus_di;
        // DX exists only when TR and the DI sum are non-zero; otherwise ADX keeps its value.
        let di_sum = minus_di + plus_di;
        let dx = (!is_zero(tr) && !is_zero(di_sum))
            .then(|| 100.0 * ((minus_di - plus_di).abs() / di_sum));
        let first_adx = 2 * period - 1;
        if i < first_adx {
            sum_dx += dx.unwrap_or(0.0);
        } else if i == first_adx {
            sum_dx += dx.unwrap_or(0.0);
            adx = sum_dx / n;
            out.adx[i] = adx;
        } else {
            if let Some(dx) = dx {
                adx = (adx * (n - 1.0) + dx) / n;
            }
            out.adx[i] = adx;
        }
    }
    out
}

/// Average directional index (TA-Lib `ADX`), lookback `2*period - 1`.
pub fn adx(high: &[f64], low: &[f64], close: &[f64], period: usize) -> Vec<f64> {
    dmi(high, low, close, period).adx
}

/// Bollinger bands.
#[derive(Debug, Clone, PartialEq)]
pub struct Bands {
    pub upper: Vec<f64>,
    pub middle: Vec<f64>,
    pub lower: Vec<f64>,
}

/// Bollinger bands (TA-Lib `BBANDS` with an SMA middle): middle ± `deviations` × the
/// **population** standard deviation of the last `period` values; lookback `period - 1`.
pub fn bollinger(values: &[f64], period: usize, deviations: f64) -> Bands {
    let middle = sma(values, period);
    let mut upper = nan_series(values.len());
    let mut lower = nan_series(values.len());
    if period == 0 || values.len() < period {
        return Bands { upper, middle, lower };
    }
    let n = period as f64;
    for i in period - 1..values.len() {
        // Two-pass variance around the window's mean, as TA-Lib 0.8 does: the one-pass
        // "mean of squares minus square of mean" loses every digit on flat, high-priced windows.
        let mean = middle[i];
        let mut sum_sq = 0.0;
        for &v in &values[i + 1 - period..=i] {
            let d = v - mean;
            sum_sq += d * d;
        }
        let variance = sum_sq / n;
        let sd = if is_zero_scaled(variance, mean * mean) { 0.0 } else { variance.sqrt() };
        let width = sd * deviations;
        upper[i] = mean + width;
        lower[i] = mean - width;
    }
    Bands { upper, middle, lower }
}

/// Bollinger band width `(upper − lower) / middle` (a fraction, as TradingView's BBW; not in
/// TA-Lib). `NaN` where the middle is 0.
pub fn bb_width(bands: &Bands) -> Vec<f64> {
    bands
        .upper
        .iter()
        .zip(&bands.lower)
        .zip(&bands.middle)
        .map(|((u, l), m)| if *m == 0.0 { f64::NAN } else { (u - l) / m })
        .collect()
}

/// MACD line, signal line and histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct Macd {
    pub macd: Vec<f64>,
    pub signal: Vec<f64>,
    pub hist: Vec<f64>,
}

/// MACD (TA-Lib `MACD`): both EMAs start at bar `slow - 1` (the fast EMA is seeded with the
/// `fast` values ending there, not with the first bars), signal = EMA(`signal`) of the MACD
/// line; all three outputs share the lookback `slow - 1 + signal - 1`.
pub fn macd(values: &[f64], fast: usize, slow: usize, signal: usize) -> Macd {
    let (fast, slow) = if slow < fast { (slow, fast) } else { (fast, slow) };
    let len = values.len();
    let mut out = Macd { macd: nan_series(len), signal: nan_series(len), hist: nan_series(len) };
    if fast == 0 || signal == 0 || len < slow + signal - 1 {
        return out;
    }
    let slow_ema = ema_from(values, slow, 0);
    let fast_ema = ema_from(values, fast, slow - fast);
    let line: Vec<f64> = (slow - 1..len).map(|i| fast_ema[i] - slow_ema[i]).collect();
    let sig = ema(&line, signal);
    let first = slow - 1 + signal - 1;
    for i in first..len {
        let j = i - (slow - 1);
        out.macd[i] = line[j];
        out.signal[i] = sig[j];
        out.hist[i] = line[j] - sig[j];
    }
    out
}

/// Slow stochastic %K and %D.
#[derive(Debug, Clone, PartialEq)]
pub struct Stoch {
    pub k: Vec<f64>,
    pub d: Vec<f64>,
}

/// Stochastic (TA-Lib `STOCH` with SMA smoothing): fast %K over the highest high and lowest low
/// of `fast_k` bars (0 when the range is zero), slow %K = SMA(`slow_k`) of fast %K, %D =
/// SMA(`slow_d`) of slow %K; both outputs share the lookback `fast_k + slow_k + slow_d - 3`.
pub fn stoch(
    high: &[f64],
    low: &[f64],
    close: &[f64],
    fast_k: usize,
    slow_k: usize,
    slow_d: usize,
) -> Stoch {
    let len = high.len().min(low.len()).min(close.len());
    let mut out = Stoch { k: nan_series(len), d: nan_series(len) };
    if fast_k == 0 || slow_k == 0 || slow_d == 0 || len < fast_k + slow_k + slow_d - 2 {
        return out;
    }
    let fast: Vec<f64> = (fast_k - 1..len)
        .map(|i| {
            let window = i + 1 - fast_k..=i;
            let highest = high[window.clone()].iter().copied().fold(f64::MIN, f64::max);
            let lowest = low[window].iter().copied().fold(f64::MAX, f64::min);
            let range = highest - lowest;
            if is_zero_scaled(range, highest.abs() + lowest.abs()) {
                0.0
            } else {
                ((close[i] - lowest) / range) * 100.0
            }
        })
        .collect();
    let slow = sma(&fast, slow_k);
    let d = sma(&slow[slow_k - 1..], slow_d);
    let first = fast_k + slow_k + slow_d - 3;
    for i in first..len {
        out.k[i] = slow[i - (fast_k - 1)];
        out.d[i] = d[i - (fast_k - 1) - (slow_k - 1)];
    }
    out
}

/// Volume ratio: each bar's volume divided by the mean volume of the `period` bars before it
/// (the bar itself excluded); lookback `period`; `NaN` where that mean is 0. Not in TA-Lib.
pub fn volume_ratio(volume: &[f64], period: usize) -> Vec<f64> {
    let mut out = nan_series(volume.len());
    if period == 0 {
        return out;
    }
    let avg = sma(volume, period);
    for i in period..volume.len() {
        let mean = avg[i - 1];
        out[i] = if mean == 0.0 { f64::NAN } else { volume[i] / mean };
    }
    out
}

/// Indices of swing highs: bars whose high is strictly greater than the highs of the `left`
/// bars before and the `right` bars after (a fractal). The last `right` bars can not be swings
/// yet. Not in TA-Lib.
pub fn swing_highs(high: &[f64], left: usize, right: usize) -> Vec<usize> {
    swings(high, left, right, |candidate, other| candidate > other)
}

/// Indices of swing lows: bars whose low is strictly lower than the lows of the `left` bars
/// before and the `right` bars after.
pub fn swing_lows(low: &[f64], left: usize, right: usize) -> Vec<usize> {
    swings(low, left, right, |candidate, other| candidate < other)
}

fn swings(
    values: &[f64],
    left: usize,
    right: usize,
    beats: impl Fn(f64, f64) -> bool,
) -> Vec<usize> {
    if values.len() < left + right + 1 {
        return Vec::new();
    }
    (left..values.len() - right)
        .filter(|&i| {
            let v = values[i];
            !v.is_nan()
                && values[i - left..i].iter().all(|&o| beats(v, o))
                && values[i + 1..=i + right].iter().all(|&o| beats(v, o))
        })
        .collect()
}

/// The median of the finite values (`None` when there are none).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len().is_multiple_of(2) { (v[m - 1] + v[m]) / 2.0 } else { v[m] })
}

/// Kaufman's efficiency ratio over the last `period` changes: |net change| / sum of |changes|;
/// 1 for a straight line, near 0 for back-and-forth. `None` when too short or flat.
pub fn efficiency_ratio(close: &[f64], period: usize) -> Option<f64> {
    if period == 0 || close.len() <= period {
        return None;
    }
    let w = &close[close.len() - 1 - period..];
    let path: f64 = w.windows(2).map(|p| (p[1] - p[0]).abs()).sum();
    (path > 0.0).then(|| (w[period] - w[0]).abs() / path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookbacks_are_nan_and_short_input_is_all_nan() {
        let x: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = sma(&x, 3);
        assert!(s[0].is_nan() && s[1].is_nan());
        assert_eq!(s[2], 2.0);
        assert_eq!(s[9], 9.0);
        assert!(sma(&x, 11).iter().all(|v| v.is_nan()));
        assert!(ema(&x, 0).iter().all(|v| v.is_nan()));
        assert!(rsi(&x, 10).iter().all(|v| v.is_nan()));
        assert_eq!(rsi(&x, 9)[9], 100.0);
        assert_eq!(last(&s), Some(9.0));
        assert_eq!(nth_last(&s, 7), Some(2.0));
        assert_eq!(nth_last(&s, 8), None);
        assert_eq!(last(&[]), None);
        assert_eq!(last_finite(&s), Some(9.0));
        assert_eq!(last(&[1.0, f64::INFINITY]), Some(f64::INFINITY));
        assert_eq!(last_finite(&[1.0, f64::INFINITY]), None);
        assert_eq!(last_finite(&[1.0, f64::NAN]), None);
        assert_eq!(last_finite(&[]), None);
    }

    #[test]
    fn volume_ratio_excludes_the_current_bar() {
        let v = [1.0, 2.0, 3.0, 12.0, 0.0];
        let r = volume_ratio(&v, 3);
        assert!(r[2].is_nan());
        assert_eq!(r[3], 6.0);
        assert_eq!(r[4], 0.0);
        assert!(volume_ratio(&[0.0, 0.0, 5.0], 2)[2].is_nan());
    }

    #[test]
    fn swings_are_strict_fractals() {
        let h = [1.0, 3.0, 2.0, 5.0, 4.0, 4.0, 6.0, 1.0];
        assert_eq!(swing_highs(&h, 1, 1), vec![1, 3, 6]);
        assert_eq!(swing_highs(&h, 2, 2), vec![3]);
        let l = [5.0, 3.0, 4.0, 2.0, 2.0, 6.0];
        // 2.0 at index 3 ties with index 4: neither is strictly lower.
        assert_eq!(swing_lows(&l, 1, 1), vec![1]);
        assert!(swing_lows(&l, 3, 3).is_empty());
    }

    #[test]
    fn bb_width_is_relative() {
        let b = Bands { upper: vec![11.0, 1.0], middle: vec![10.0, 0.0], lower: vec![9.0, -1.0] };
        let w = bb_width(&b);
        assert!((w[0] - 0.2).abs() < 1e-15);
        assert!(w[1].is_nan());
    }

    #[test]
    fn median_and_efficiency_ratio() {
        assert_eq!(median(&[3.0, f64::NAN, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(median(&[]), None);
        assert_eq!(efficiency_ratio(&[1.0, 2.0, 3.0], 2), Some(1.0));
        assert_eq!(efficiency_ratio(&[1.0, 2.0, 1.0], 2), Some(0.0));
        assert_eq!(efficiency_ratio(&[1.0, 1.0, 1.0], 2), None);
        assert_eq!(efficiency_ratio(&[1.0, 2.0], 2), None);
    }
}
