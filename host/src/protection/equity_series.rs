//! The account's equity over time, for the dashboard's equity chart (`GET /api/equity`).
//!
//! Every equity measurement (the scheduler's every minute, and every `GET /api/protection`)
//! writes the point of its minute in the same transaction as the high-water mark, so the series
//! has one point a minute: the minute's last measurement. Storage is bounded: points are kept
//! at that resolution for [`MINUTE_DAYS`], then thinned to the last point of each hour, and
//! deleted after [`KEEP_DAYS`] — at most about 20 200 minute points and 17 200 hourly ones
//! (a few MB). A read of a long range is downsampled to the points the caller asks for.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::money::json_amount;
use crate::store::{Reader, StoreError, Writer, tables};

/// Days kept at one point a minute.
pub const MINUTE_DAYS: i64 = 14;
/// Days kept at all.
pub const KEEP_DAYS: i64 = 730;

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;
/// The key in `protection` of the time before which the series is thinned to hours.
const THINNED_UNTIL: &str = "equity_series_thinned_until";

/// One stored point.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    equity: Decimal,
}

/// One point of the series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct EquityPoint {
    /// The minute, epoch ms.
    pub time: i64,
    pub equity: f64,
}

fn key(ms: i64) -> String {
    format!("{:020}", ms.max(0))
}

fn time_of(key: &str) -> Option<i64> {
    key.parse().ok()
}

/// Writes `equity` as the point of the minute of `now_ms` (inside the caller's transaction),
/// then thins and deletes what aged.
pub fn record(w: &Writer, now_ms: i64, equity: Decimal) -> Result<(), StoreError> {
    let minute = now_ms - now_ms.rem_euclid(MINUTE_MS);
    w.put(tables::EQUITY_SERIES, &key(minute), &Stored { equity })?;
    // Every hour older than the minute tier keeps only its last point.
    let cut = minute - MINUTE_DAYS * DAY_MS;
    let cut = cut - cut.rem_euclid(HOUR_MS);
    let thinned: i64 = w.get(tables::PROTECTION, THINNED_UNTIL)?.unwrap_or(0);
    if cut > thinned {
        let aged: Vec<(String, Stored)> =
            w.range(tables::EQUITY_SERIES, &key(thinned), &key(cut))?;
        let mut last_of_hour: Option<(i64, String)> = None;
        for (k, _) in aged {
            let Some(t) = time_of(&k) else { continue };
            let hour = t - t.rem_euclid(HOUR_MS);
            if let Some((previous_hour, previous)) = last_of_hour.replace((hour, k))
                && previous_hour == hour
            {
                w.remove(tables::EQUITY_SERIES, &previous)?;
            }
        }
        w.put(tables::PROTECTION, THINNED_UNTIL, &cut)?;
    }
    w.remove_range(tables::EQUITY_SERIES, &key(0), &key(minute - KEEP_DAYS * DAY_MS))?;
    Ok(())
}

/// The points in `from_ms..=to_ms`, at most `max_points`: a longer range keeps the last point of
/// each of `max_points` equal spans (what equity was at the end of each), the newest point
/// always included.
pub fn read(
    r: &Reader,
    from_ms: i64,
    to_ms: i64,
    max_points: usize,
) -> Result<Vec<EquityPoint>, StoreError> {
    let stored: Vec<(String, Stored)> =
        r.range(tables::EQUITY_SERIES, &key(from_ms), &key(to_ms.saturating_add(1)))?;
    let points: Vec<EquityPoint> = stored
        .into_iter()
        .filter_map(|(k, s)| {
            Some(EquityPoint { time: time_of(&k)?, equity: json_amount(s.equity) })
        })
        .collect();
    Ok(downsample(points, from_ms, to_ms, max_points))
}

/// The last point of each of `max_points` equal spans of `from_ms..=to_ms`.
fn downsample(
    points: Vec<EquityPoint>,
    from_ms: i64,
    to_ms: i64,
    max_points: usize,
) -> Vec<EquityPoint> {
    if points.len() <= max_points || max_points == 0 {
        return points;
    }
    // `max_points` spans cover from..=to, so `to` itself falls in the last one.
    let span = ((to_ms - from_ms + 1).max(1) as f64 / max_points as f64).max(1.0);
    let bucket = |t: i64| ((t - from_ms) as f64 / span) as i64;
    let mut out: Vec<EquityPoint> = Vec::with_capacity(max_points + 1);
    for point in points {
        match out.last_mut() {
            Some(last) if bucket(last.time) == bucket(point.time) => *last = point,
            _ => out.push(point),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use rust_decimal_macros::dec;

    use super::*;
    use crate::store::Store;

    const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    fn all(store: &Store) -> Vec<EquityPoint> {
        store.read(|r| read(r, 0, i64::MAX / 2, usize::MAX)).unwrap()
    }

    #[test]
    fn one_point_a_minute_the_minutes_last_measurement() {
        let store = Store::in_memory().unwrap();
        for (at, equity) in
            [(T0 + 5_000, dec!(100)), (T0 + 50_000, dec!(101)), (T0 + 61_000, dec!(99))]
        {
            store.write(|w| record(w, at, equity)).unwrap();
        }
        let points = all(&store);
        assert_eq!(
            points,
            vec![
                EquityPoint { time: T0, equity: 101.0 },
                EquityPoint { time: T0 + 60_000, equity: 99.0 }
            ]
        );
    }

    #[test]
    fn older_than_two_weeks_keeps_an_hour_s_last_point_and_two_years_bound_it() {
        let store = Store::in_memory().unwrap();
        // Three hours of minutes, then the clock moves past the minute tier.
        for m in 0..180 {
            store.write(|w| record(w, T0 + m * MINUTE_MS, Decimal::from(1000 + m))).unwrap();
        }
        assert_eq!(all(&store).len(), 180);
        let later = T0 + MINUTE_DAYS * DAY_MS + 3 * HOUR_MS;
        store.write(|w| record(w, later, dec!(2000))).unwrap();
        let points = all(&store);
        let times: Vec<i64> = points.iter().map(|p| p.time).collect();
        assert_eq!(
            times,
            vec![T0 + 59 * MINUTE_MS, T0 + 119 * MINUTE_MS, T0 + 179 * MINUTE_MS, later],
            "each aged hour keeps its last minute"
        );
        assert_eq!(points[0].equity, 1059.0);
        let last = T0 + (KEEP_DAYS + 1) * DAY_MS;
        store.write(|w| record(w, last, dec!(3000))).unwrap();
        let times: Vec<i64> = all(&store).iter().map(|p| p.time).collect();
        assert_eq!(times, vec![later, last], "nothing older than two years is kept");
    }

    #[test]
    fn a_long_range_is_downsampled_to_each_span_s_last_point() {
        let points: Vec<EquityPoint> =
            (0..1000).map(|m| EquityPoint { time: T0 + m * MINUTE_MS, equity: m as f64 }).collect();
        let to = T0 + 999 * MINUTE_MS;
        let thin = downsample(points, T0, to, 100);
        assert!(thin.len() <= 100 && thin.len() >= 90, "{}", thin.len());
        assert_eq!(thin.last().map(|p| p.equity), Some(999.0), "the newest point stays");
        assert!(thin.windows(2).all(|w| w[0].time < w[1].time));
    }
}
