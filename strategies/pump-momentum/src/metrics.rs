//! The numbers the stage rules compare, computed for one closed candle.
//!
//! Every value is `NaN` when it can not be computed (not enough history, a zero or non-finite
//! price, a zero mean volume, no matching reference candle, an insane candle such as
//! `high < low`). A `NaN` fails every `>=`/`<=` comparison of the rules, so missing data means
//! "no alert" without a special case in every rule.

use crate::series::{ByOpenTime, STEP_MS};
use spotbot_sdk::ClosedCandles;
use spotbot_sdk::indicators as ind;

/// Candles whose mean volume is the baseline of the volume ratio.
pub const VOLUME_LOOKBACK: usize = 20;
/// Period of the EMA that is the pre-ignition base of the late-entry distance.
pub const EMA_PERIOD: usize = 20;
/// Period of the ATR the late-entry distance is measured in.
pub const ATR_PERIOD: usize = 14;
/// Closed 15m candles in one hour (the window of `rel_strength_1h`).
pub const HOUR_CANDLES: i64 = 4;

/// Indicator series of one symbol, computed once per scan over all its closed candles
/// (Wilder-type indicators remember all history, so always over the whole series).
#[derive(Debug, Clone)]
pub struct Indicators {
    /// EMA(20) of the closes.
    pub ema: Vec<f64>,
    /// ATR(14), TA-Lib's Wilder ATR.
    pub atr: Vec<f64>,
    /// Volume / mean volume of the 20 candles before (the candle itself excluded).
    pub vol_ratio: Vec<f64>,
    /// Mean volume of the 20 candles ending at each index (SMA(20) of the volume).
    pub vol_mean: Vec<f64>,
}

impl Indicators {
    pub fn new(s: &ClosedCandles<'_>) -> Self {
        Indicators {
            ema: ind::ema(s.close, EMA_PERIOD),
            atr: ind::atr(s.high, s.low, s.close, ATR_PERIOD),
            vol_ratio: ind::volume_ratio(s.volume, VOLUME_LOOKBACK),
            vol_mean: ind::sma(s.volume, VOLUME_LOOKBACK),
        }
    }
}

/// The metrics of one closed candle `j` of a symbol, against the reference coin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CandleMetrics {
    pub open_time: i64,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
    pub volume: f64,
    /// Volume / mean volume of the 20 candles before.
    pub vol_ratio: f64,
    /// (close − open) / open, percent.
    pub candle_return_pct: f64,
    /// (close − low) / (high − low), 0..=1.
    pub close_strength: f64,
    /// This candle's return minus the reference's candle with the same open time, points.
    pub rel_strength_15m: f64,
    /// Return over the last 4 closed candles (close now vs the close one hour earlier) minus
    /// the reference's over the same times, percentage points.
    pub rel_strength_1h: f64,
    /// ATR(14) at this candle.
    pub atr: f64,
    /// EMA(20) of the candle before: the price base before a move starting here.
    pub base_before: f64,
    /// Mean volume of the 20 candles before: the volume baseline before a move starting here.
    pub mean_volume_before: f64,
}

/// The metrics of candle `j` of `s` (indices into the closed series; `None` if out of range).
pub fn candle_metrics(
    s: &ClosedCandles<'_>,
    ind: &Indicators,
    reference: Option<&ClosedCandles<'_>>,
    j: usize,
) -> Option<CandleMetrics> {
    let t = *s.open_time.get(j)?;
    let (open, high, low, close) =
        (*s.open.get(j)?, *s.high.get(j)?, *s.low.get(j)?, *s.close.get(j)?);
    let volume = *s.volume.get(j)?;
    let sane = sane_candle(open, high, low, close, volume);
    let nan_unless = |v: f64| if sane { v } else { f64::NAN };
    let at = |series: &[f64], i: Option<usize>| {
        i.and_then(|i| series.get(i)).copied().unwrap_or(f64::NAN)
    };
    let before = |series: &[f64]| at(series, j.checked_sub(1));

    let candle_return_pct = pct_change(open, close);
    let ref_return_15m =
        reference.and_then(|r| Some((r, r.index_of(t)?))).map_or(f64::NAN, |(r, i)| {
            let (o, h, l, c) = (r.open[i], r.high[i], r.low[i], r.close[i]);
            if sane_candle(o, h, l, c, 0.0) { pct_change(o, c) } else { f64::NAN }
        });
    let hour_ago = t.saturating_sub(HOUR_CANDLES * STEP_MS);
    let return_1h = s.close_at(hour_ago).map_or(f64::NAN, |from| pct_change(from, close));
    let ref_close_at = |time: i64| reference.and_then(|r| r.close_at(time));
    let ref_return_1h = match (ref_close_at(hour_ago), ref_close_at(t)) {
        (Some(from), Some(to)) => pct_change(from, to),
        _ => f64::NAN,
    };

    Some(CandleMetrics {
        open_time: t,
        open,
        high,
        low,
        close,
        volume,
        vol_ratio: nan_unless(at(&ind.vol_ratio, Some(j))),
        candle_return_pct: nan_unless(candle_return_pct),
        close_strength: nan_unless(close_strength(high, low, close)),
        rel_strength_15m: nan_unless(candle_return_pct - ref_return_15m),
        rel_strength_1h: nan_unless(return_1h - ref_return_1h),
        atr: positive(at(&ind.atr, Some(j))),
        base_before: positive(before(&ind.ema)),
        mean_volume_before: positive(before(&ind.vol_mean)),
    })
}

/// Distance of `close` above `base` in units of `atr`; `NaN` unless all are usable.
pub fn late_atr(close: f64, base: f64, atr: f64) -> f64 {
    if close.is_finite() && base.is_finite() && atr.is_finite() && atr > 0.0 {
        (close - base) / atr
    } else {
        f64::NAN
    }
}

/// `to / from − 1` in percent; `NaN` unless `from` is a positive number and `to` finite.
pub fn pct_change(from: f64, to: f64) -> f64 {
    if from.is_finite() && from > 0.0 && to.is_finite() {
        (to - from) / from * 100.0
    } else {
        f64::NAN
    }
}

/// (close − low) / (high − low); `NaN` for a zero or invalid range (no strength to measure).
pub fn close_strength(high: f64, low: f64, close: f64) -> f64 {
    let range = high - low;
    if range.is_finite() && range > 0.0 { (close - low) / range } else { f64::NAN }
}

/// Positive finite prices, `low <= open, close <= high`, finite non-negative volume.
fn sane_candle(open: f64, high: f64, low: f64, close: f64, volume: f64) -> bool {
    [open, high, low, close].iter().all(|v| v.is_finite() && *v > 0.0)
        && low <= open.min(close)
        && high >= open.max(close)
        && volume.is_finite()
        && volume >= 0.0
}

fn positive(v: f64) -> f64 {
    if v.is_finite() && v > 0.0 { v } else { f64::NAN }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_never_divide_by_zero() {
        assert!((pct_change(100.0, 103.0) - 3.0).abs() < 1e-12);
        assert!(pct_change(0.0, 1.0).is_nan());
        assert!(pct_change(f64::NAN, 1.0).is_nan());
        assert!(pct_change(1.0, f64::INFINITY).is_nan());
        assert_eq!(close_strength(10.0, 8.0, 9.5), 0.75);
        assert!(close_strength(10.0, 10.0, 10.0).is_nan());
        assert!(close_strength(8.0, 10.0, 9.0).is_nan());
        assert_eq!(late_atr(110.0, 100.0, 2.0), 5.0);
        assert!(late_atr(110.0, 100.0, 0.0).is_nan());
        assert!(late_atr(90.0, 100.0, -1.0).is_nan());
        assert!(!sane_candle(1.0, 0.5, 0.4, 1.0, 1.0));
        assert!(!sane_candle(1.0, 1.0, 1.0, 1.0, -1.0));
        assert!(sane_candle(1.0, 1.0, 1.0, 1.0, 0.0));
    }
}
