//! A validated view of the closed 15m candles of one symbol.
//!
//! Only closed candles count: a candle is closed when `open_time + 15 min <= now_ms`, and the
//! newest candle the host sends is usually still forming (its volume and close would change
//! before the candle ends). Data the rules could misread (columns of different lengths, open
//! times that do not strictly increase) yields no series at all, so a bad symbol is skipped
//! instead of failing the scan or panicking.

use spotbot_sdk::Candles;

/// Length of one 15m candle, milliseconds.
pub const STEP_MS: i64 = 900_000;

/// The closed prefix of a symbol's 15m candles, oldest first; all slices have the same length.
#[derive(Debug, Clone, Copy)]
pub struct Series<'a> {
    pub open_time: &'a [i64],
    pub open: &'a [f64],
    pub high: &'a [f64],
    pub low: &'a [f64],
    pub close: &'a [f64],
    pub volume: &'a [f64],
}

impl<'a> Series<'a> {
    /// No candles (e.g. an unusable reference: every lookup fails, so nothing is alerted).
    pub const EMPTY: Series<'static> =
        Series { open_time: &[], open: &[], high: &[], low: &[], close: &[], volume: &[] };

    /// The closed candles of `candles` at `now_ms`, or `None` when the columns are
    /// inconsistent or the open times are not strictly increasing.
    pub fn closed(candles: &'a Candles, now_ms: i64) -> Option<Series<'a>> {
        if !candles.is_consistent() || candles.open_time.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        let n = candles.open_time.partition_point(|&t| t.saturating_add(STEP_MS) <= now_ms);
        Some(Series {
            open_time: &candles.open_time[..n],
            open: &candles.open[..n],
            high: &candles.high[..n],
            low: &candles.low[..n],
            close: &candles.close[..n],
            volume: &candles.volume[..n],
        })
    }

    /// Number of closed candles.
    pub fn len(&self) -> usize {
        self.open_time.len()
    }

    /// Whether there is no closed candle.
    pub fn is_empty(&self) -> bool {
        self.open_time.is_empty()
    }

    /// Open time of the newest closed candle.
    pub fn last_open_time(&self) -> Option<i64> {
        self.open_time.last().copied()
    }

    /// Index of the candle that opened at `open_time`.
    pub fn index_of(&self, open_time: i64) -> Option<usize> {
        self.open_time.binary_search(&open_time).ok()
    }

    /// Close of the candle that opened at `open_time`.
    pub fn close_at(&self, open_time: i64) -> Option<f64> {
        self.index_of(open_time).and_then(|i| self.close.get(i).copied())
    }
}

/// Open time of the newest candle closed at `now_ms` by the clock alone (candles aligned to
/// 15 minutes since the epoch, as exchanges align them). Used for symbols without data.
pub fn clock_latest_closed(now_ms: i64) -> i64 {
    now_ms.div_euclid(STEP_MS).saturating_sub(1).saturating_mul(STEP_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candles(times: Vec<i64>) -> Candles {
        let n = times.len();
        Candles {
            timeframe: "15m".into(),
            open_time: times,
            open: vec![1.0; n],
            high: vec![1.0; n],
            low: vec![1.0; n],
            close: (0..n).map(|i| i as f64).collect(),
            volume: vec![1.0; n],
        }
    }

    #[test]
    fn the_forming_candle_is_dropped() {
        let c = candles(vec![0, STEP_MS, 2 * STEP_MS]);
        assert_eq!(Series::closed(&c, 3 * STEP_MS - 1).unwrap().len(), 2);
        assert_eq!(Series::closed(&c, 3 * STEP_MS).unwrap().len(), 3);
        let s = Series::closed(&c, 0).unwrap();
        assert!(s.is_empty() && s.last_open_time().is_none());
        let s = Series::closed(&c, i64::MAX).unwrap();
        assert_eq!(s.close_at(STEP_MS), Some(1.0));
        assert_eq!(s.close_at(5), None);
    }

    #[test]
    fn bad_columns_give_no_series() {
        let mut c = candles(vec![0, STEP_MS]);
        c.volume.pop();
        assert!(Series::closed(&c, i64::MAX).is_none());
        assert!(Series::closed(&candles(vec![STEP_MS, 0]), i64::MAX).is_none());
        assert!(Series::closed(&candles(vec![0, 0]), i64::MAX).is_none());
        assert!(Series::closed(&candles(vec![]), i64::MAX).unwrap().is_empty());
    }

    #[test]
    fn clock_latest_closed_is_the_previous_slot() {
        assert_eq!(clock_latest_closed(10 * STEP_MS), 9 * STEP_MS);
        assert_eq!(clock_latest_closed(10 * STEP_MS + 5), 9 * STEP_MS);
        assert!(clock_latest_closed(i64::MIN) < 0);
        assert!(clock_latest_closed(i64::MAX) > 0);
    }
}
