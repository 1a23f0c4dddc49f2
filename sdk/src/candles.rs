//! Closed candles: the part of a series a rule may read.
//!
//! The host's newest candle of a timeframe is usually still forming; a rule that read it would
//! change its mind within the candle (a "reversal" can be gone by its close). And a series whose
//! newest closed candle is old (an exchange outage, a delisting) describes a market that is
//! gone. [`Candles::closed`] cuts a series to its closed candles and refuses a stale or broken
//! one, with a reason a strategy puts in its skip (`data: <reason>`), so every strategy gets
//! the same rule and the same words instead of its own variant of them.

use crate::{Candles, ScanError, SymbolData};

/// The closed candles of a series, oldest first: column slices into the [`Candles`] they were
/// cut from (no copy), all of the same length, at least one candle.
///
/// Built by [`Candles::closed`], which guarantees: known timeframe, strictly increasing open
/// times, every candle closed (`open_time + timeframe <= now_ms`) and the newest one closed
/// less than one timeframe before `now_ms`. Values are not judged; see
/// [`ClosedCandles::check_values`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClosedCandles<'a> {
    /// The series' timeframe, e.g. "1h".
    pub timeframe: &'a str,
    /// Milliseconds of one candle of `timeframe`.
    pub step_ms: i64,
    pub open_time: &'a [i64],
    pub open: &'a [f64],
    pub high: &'a [f64],
    pub low: &'a [f64],
    pub close: &'a [f64],
    pub volume: &'a [f64],
}

impl<'a> ClosedCandles<'a> {
    /// Number of closed candles (at least one).
    pub fn len(&self) -> usize {
        self.close.len()
    }

    /// Always false (a `ClosedCandles` holds at least one candle); here for clippy's
    /// `len_without_is_empty` and for symmetry with [`Candles::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.close.is_empty()
    }

    /// The same candles if every value is sane: open, high, low and close finite and > 0,
    /// high ≥ max(open, close), low ≤ min(open, close), volume finite and ≥ 0. Otherwise the
    /// reason (`"<tf> has a non-finite, non-positive or inconsistent value"`).
    ///
    /// Optional, because indicators over a broken value usually come out NaN and fail their
    /// checks anyway; call it when a rule reads raw prices (levels, candle shapes) and must not
    /// reason about a zero or a high below the low.
    pub fn check_values(self) -> Result<ClosedCandles<'a>, String> {
        let prices_ok = [self.open, self.high, self.low, self.close]
            .iter()
            .all(|col| col.iter().all(|v| v.is_finite() && *v > 0.0));
        let shape_ok = (0..self.len()).all(|i| {
            let (h, l) = (self.high[i], self.low[i]);
            h >= l && h >= self.open[i].max(self.close[i]) && l <= self.open[i].min(self.close[i])
        });
        let volume_ok = self.volume.iter().all(|v| v.is_finite() && *v >= 0.0);
        if prices_ok && shape_ok && volume_ok {
            Ok(self)
        } else {
            Err(format!("{} has a non-finite, non-positive or inconsistent value", self.timeframe))
        }
    }
}

impl Candles {
    /// The closed candles of this series at `now_ms`, at least `min` of them (and at least
    /// one), or why the series can not be used. The checks, in order, with their reasons
    /// (`<tf>` is the series' timeframe):
    ///
    /// 1. columns of one length: `"<tf> candle columns differ in length"`;
    /// 2. a known timeframe ([`timeframe_ms`] > 0):
    ///    `"<tf> is not a timeframe"`;
    /// 3. strictly increasing open times (closed candles then form a prefix):
    ///    `"<tf> candles are not in time order"`;
    /// 4. candles with `open_time + timeframe <= now_ms` are closed; trailing ones that are not
    ///    (the host's forming candle) are dropped; fewer than `min` closed:
    ///    `"<tf> has <n> closed candles, need <min>"`;
    /// 5. the newest closed candle closed less than one timeframe before `now_ms`, else the
    ///    series stopped: `"<tf> candles are stale: the last one closed <m> min before now"`.
    ///
    /// ```
    /// use spotbot_sdk::testing;
    /// let now = 1_767_225_600_000; // 2026-01-01T00:00:00Z
    /// // 10 hourly candles, the last one opened 30 minutes ago: still forming.
    /// let c = testing::candles(1, "1h", 10, 100.0, 0.0, now + 1_800_000);
    /// let closed = c.closed(now, 5).unwrap();
    /// assert_eq!(closed.len(), 9);
    /// assert_eq!(c.closed(now, 10).unwrap_err(), "1h has 9 closed candles, need 10");
    /// let old = testing::candles(1, "1h", 10, 100.0, 0.0, now - 2 * 3_600_000);
    /// assert!(old.closed(now, 5).unwrap_err().contains("stale"));
    /// ```
    pub fn closed(&self, now_ms: i64, min: usize) -> Result<ClosedCandles<'_>, String> {
        let tf = self.timeframe.as_str();
        if !self.is_consistent() {
            return Err(format!("{tf} candle columns differ in length"));
        }
        let step = timeframe_ms(tf)
            .filter(|ms| *ms > 0)
            .ok_or_else(|| format!("{tf} is not a timeframe"))?;
        if self.open_time.windows(2).any(|w| w[1] <= w[0]) {
            return Err(format!("{tf} candles are not in time order"));
        }
        let n = self.open_time.iter().take_while(|&&t| t.saturating_add(step) <= now_ms).count();
        let min = min.max(1);
        if n < min {
            return Err(format!("{tf} has {n} closed candles, need {min}"));
        }
        let last_close = self.open_time[n - 1].saturating_add(step);
        let age = now_ms.saturating_sub(last_close);
        if age >= step {
            return Err(format!(
                "{tf} candles are stale: the last one closed {} min before now",
                age / 60_000
            ));
        }
        Ok(ClosedCandles {
            timeframe: tf,
            step_ms: step,
            open_time: &self.open_time[..n],
            open: &self.open[..n],
            high: &self.high[..n],
            low: &self.low[..n],
            close: &self.close[..n],
            volume: &self.volume[..n],
        })
    }
}

impl SymbolData {
    /// The closed candles of `timeframe` ([`Candles::closed`]), told apart by who is at fault:
    /// the outer `Err` ([`ScanError::MissingData`], `"<symbol> <tf>: no candles"`) when the
    /// host did not send the timeframe at all (it must send what the manifest and config ask
    /// for, so the whole scan fails); the inner `Err` when this symbol's series can not be
    /// used, a per-symbol skip whose reason is the text.
    ///
    /// ```
    /// # use spotbot_sdk::{ScanResult, Direction, ScanError, SymbolData};
    /// fn evaluate(data: &SymbolData, now_ms: i64) -> Result<ScanResult, ScanError> {
    ///     let mut result = ScanResult::new(&data.symbol, "mine", Direction::Skip, data.last_price);
    ///     let bars = match data.closed_candles("1h", now_ms, 50)? {
    ///         Ok(bars) => bars,
    ///         Err(why) => {
    ///             result.reason = Some(format!("data: {why}"));
    ///             return Ok(result);
    ///         }
    ///     };
    ///     // ... indicators over bars.close, checks, direction ...
    /// #   let _ = bars;
    ///     Ok(result)
    /// }
    /// ```
    pub fn closed_candles(
        &self,
        timeframe: &str,
        now_ms: i64,
        min: usize,
    ) -> Result<Result<ClosedCandles<'_>, String>, ScanError> {
        Ok(self.require_candles(timeframe, 0)?.closed(now_ms, min))
    }
}

/// Milliseconds of a timeframe such as "15m", "4h", "1d", "1w"; `None` if unknown. (The host's
/// `Timeframe` type is the authority; a host test pins this table to it.)
pub fn timeframe_ms(timeframe: &str) -> Option<i64> {
    let (num, unit) = timeframe.split_at(timeframe.len().checked_sub(1)?);
    let n: i64 = num.parse().ok()?;
    let unit_ms = match unit {
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 604_800_000,
        _ => return None,
    };
    Some(n * unit_ms)
}
