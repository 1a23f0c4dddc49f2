//! The closed 15m candles of one symbol, read through the SDK's closed-candle view.
//!
//! Only closed candles count: a candle is closed when `open_time + 15 min <= now_ms`, and the
//! newest candle the host sends is usually still forming (its volume and close would change
//! before the candle ends). [`Candles::closed`] makes that cut for every strategy alike and
//! refuses data the rules could misread: columns of different lengths, open times that do not
//! strictly increase, no closed candle at all, or a newest closed candle older than one candle
//! (a series that stopped; alerting on it would report a pump after the fact). A refused
//! series is no series, so a bad symbol is skipped instead of failing the scan or panicking.

use spotbot_sdk::{Candles, ClosedCandles};

/// Length of one 15m candle, milliseconds.
pub const STEP_MS: i64 = 900_000;

/// The closed candles of `candles` at `now_ms` (at least one), or `None` when the SDK's rule
/// refuses the series.
pub fn closed(candles: &Candles, now_ms: i64) -> Option<ClosedCandles<'_>> {
    candles.closed(now_ms, 1).ok()
}

/// Candles found by their open time: the reference is matched to a symbol's candles that way,
/// and the one-hour return reads the close four candles back.
pub trait ByOpenTime {
    /// Open time of the newest closed candle.
    fn last_open_time(&self) -> i64;
    /// Index of the candle that opened at `open_time`.
    fn index_of(&self, open_time: i64) -> Option<usize>;
    /// Close of the candle that opened at `open_time`.
    fn close_at(&self, open_time: i64) -> Option<f64>;
}

impl ByOpenTime for ClosedCandles<'_> {
    fn last_open_time(&self) -> i64 {
        self.open_time[self.len() - 1]
    }

    fn index_of(&self, open_time: i64) -> Option<usize> {
        self.open_time.binary_search(&open_time).ok()
    }

    fn close_at(&self, open_time: i64) -> Option<f64> {
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
        assert_eq!(closed(&c, 3 * STEP_MS - 1).unwrap().len(), 2);
        let s = closed(&c, 3 * STEP_MS).unwrap();
        assert_eq!((s.len(), s.last_open_time()), (3, 2 * STEP_MS));
        assert!(closed(&c, 0).is_none(), "no closed candle yet");
        assert_eq!(s.close_at(STEP_MS), Some(1.0));
        assert_eq!(s.close_at(5), None);
        assert_eq!(s.index_of(2 * STEP_MS), Some(2));
    }

    #[test]
    fn bad_or_stale_columns_give_no_series() {
        let mut c = candles(vec![0, STEP_MS]);
        c.volume.pop();
        assert!(closed(&c, 2 * STEP_MS).is_none());
        assert!(closed(&candles(vec![STEP_MS, 0]), 2 * STEP_MS).is_none());
        assert!(closed(&candles(vec![0, 0]), 2 * STEP_MS).is_none());
        assert!(closed(&candles(vec![]), 2 * STEP_MS).is_none());
        assert!(closed(&candles(vec![0, STEP_MS]), 3 * STEP_MS).is_none(), "stale");
    }

    #[test]
    fn clock_latest_closed_is_the_previous_slot() {
        assert_eq!(clock_latest_closed(10 * STEP_MS), 9 * STEP_MS);
        assert_eq!(clock_latest_closed(10 * STEP_MS + 5), 9 * STEP_MS);
        assert!(clock_latest_closed(i64::MIN) < 0);
        assert!(clock_latest_closed(i64::MAX) > 0);
    }
}
