//! Closed candles: the forming candle cut off, and every refusal (too few, ragged, unknown
//! timeframe, out of order, stale, broken prices) saying why.

use spotbot_sdk::testing;
use spotbot_sdk::{Candles, ScanError};

/// 2026-01-01T00:00:00Z.
const NOW: i64 = 1_767_225_600_000;
const HOUR: i64 = 3_600_000;

#[test]
fn cuts_the_forming_candle_and_keeps_the_rest() {
    let c = testing::candles(1, "1h", 10, 100.0, 0.0, NOW + HOUR / 2);
    let closed = c.closed(NOW, 9).unwrap();
    assert_eq!((closed.len(), closed.timeframe, closed.step_ms), (9, "1h", HOUR));
    assert_eq!(closed.close, &c.close[..9]);
    assert_eq!(closed.open_time, &c.open_time[..9]);
    assert_eq!(closed.check_values(), Ok(closed));
    // All closed: nothing dropped.
    let all = testing::candles(1, "1h", 10, 100.0, 0.0, NOW);
    assert_eq!(all.closed(NOW, 10).unwrap().len(), 10);
    // Closed exactly one candle before now minus a millisecond: still fresh.
    let fresh = testing::candles(1, "1h", 10, 100.0, 0.0, NOW - HOUR + 1);
    assert!(fresh.closed(NOW, 1).is_ok());
}

#[test]
fn every_refusal_says_why() {
    let c = testing::candles(1, "1h", 10, 100.0, 0.0, NOW + HOUR / 2);
    let err = |c: &Candles, min| c.closed(NOW, min).unwrap_err();
    assert_eq!(err(&c, 10), "1h has 9 closed candles, need 10");
    let mut ragged = c.clone();
    ragged.volume.pop();
    assert_eq!(err(&ragged, 1), "1h candle columns differ in length");
    let mut unknown = c.clone();
    unknown.timeframe = "7x".into();
    assert_eq!(err(&unknown, 1), "7x is not a timeframe");
    unknown.timeframe = "0h".into();
    assert_eq!(err(&unknown, 1), "0h is not a timeframe");
    let mut unordered = c.clone();
    unordered.open_time.swap(0, 1);
    assert_eq!(err(&unordered, 1), "1h candles are not in time order");
    let old = testing::candles(1, "1h", 10, 100.0, 0.0, NOW - 2 * HOUR);
    assert_eq!(err(&old, 1), "1h candles are stale: the last one closed 120 min before now");
    let empty = testing::candles(1, "1h", 0, 100.0, 0.0, NOW);
    assert_eq!(err(&empty, 0), "1h has 0 closed candles, need 1", "at least one candle");
}

#[test]
fn a_missing_timeframe_fails_the_scan_a_broken_one_the_symbol() {
    let c = testing::candles(1, "1h", 10, 100.0, 0.0, NOW);
    let data = testing::symbol_data("X", vec![c]);
    assert_eq!(data.closed_candles("1h", NOW, 10).unwrap().map(|b| b.len()), Ok(10));
    assert!(data.closed_candles("1h", NOW, 11).unwrap().is_err());
    assert_eq!(
        data.closed_candles("4h", NOW, 1),
        Err(ScanError::MissingData("X 4h: no candles".into()))
    );
}

#[test]
fn check_values_refuses_broken_prices() {
    let c = testing::candles(1, "1h", 10, 100.0, 0.0, NOW);
    let broken = |edit: fn(&mut Candles)| {
        let mut c = c.clone();
        edit(&mut c);
        c.closed(NOW, 1).unwrap().check_values().unwrap_err()
    };
    assert_eq!(
        broken(|c| c.low[3] = f64::NAN),
        "1h has a non-finite, non-positive or inconsistent value"
    );
    broken(|c| c.close[0] = 0.0);
    broken(|c| c.high[2] = c.low[2] * 0.5);
    broken(|c| c.volume[9] = -1.0);
    // Only the closed candles are judged.
    let mut forming = testing::candles(1, "1h", 10, 100.0, 0.0, NOW + HOUR / 2);
    forming.close[9] = f64::NAN;
    assert!(forming.closed(NOW, 1).unwrap().check_values().is_ok());
}
