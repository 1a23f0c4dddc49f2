//! The candles a backtest replays: closed candles per (symbol, timeframe), oldest first, read
//! from CSV files (`<SYMBOL>_<timeframe>.csv`, columns `open_time,open,high,low,close,volume`)
//! or from the exchange's klines through the on-disk cache ([`super::klines`]).
//!
//! A coarser timeframe without a file of its own is aggregated from the finest one (open of
//! the first candle of each bucket, highest high, lowest low, close of the last, summed
//! volume; one candle per bucket that traded, as an exchange's klines are). Every series is cut to what the run needs: the warm-up the
//! plugin's candle counts ask for before `from`, through `to`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, bail};

use crate::market::Timeframe;
use crate::plugins::model::Candles;

/// Closed candles of one symbol and timeframe a run needs: the `warmup` newest candles that
/// open before `first_step` (what a live read at the first step returns, counted in candles
/// as the exchange counts them, so a market closed at weekends still gets its full count),
/// then every candle through `last_open`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub symbol: String,
    pub timeframe: Timeframe,
    pub warmup: u32,
    /// Open time of the candle of `timeframe` holding the run's first step.
    pub first_step: i64,
    pub last_open: i64,
}

impl Need {
    /// The open time `warmup` candles before the first step on a market that never closes:
    /// where a read of the exchange's klines starts (crypto trades around the clock).
    pub fn first_open(&self) -> i64 {
        self.first_step - i64::from(self.warmup) * self.timeframe.duration_ms()
    }
}

/// Every series of a run, by (symbol, timeframe).
#[derive(Debug, Clone, Default)]
pub struct History {
    series: BTreeMap<(String, Timeframe), Candles>,
    /// What the reader noticed (short warm-up, missing candles), one sentence each.
    pub notes: Vec<String>,
}

impl History {
    pub fn get(&self, symbol: &str, timeframe: Timeframe) -> Option<&Candles> {
        self.series.get(&(symbol.to_string(), timeframe))
    }

    pub fn insert(&mut self, symbol: &str, timeframe: Timeframe, candles: Candles) {
        self.series.insert((symbol.to_string(), timeframe), candles);
    }

    /// Whether any series of `symbol` is held.
    pub fn has_symbol(&self, symbol: &str) -> bool {
        self.series.keys().any(|(s, _)| s == symbol)
    }

    /// Number of candles held, all series together.
    pub fn candle_count(&self) -> usize {
        self.series.values().map(Candles::len).sum()
    }

    /// What was known at `now_ms`: every series cut to its candles closed by then, and the
    /// finest timeframe's candle opening at `now_ms` reduced to its open (the price at `now`,
    /// nothing of its future high, low, close or volume). What `check-bias` replays against.
    pub fn known_at(&self, now_ms: i64, finest: Timeframe) -> History {
        let mut known = History { series: BTreeMap::new(), notes: self.notes.clone() };
        for ((symbol, tf), candles) in &self.series {
            let len = tf.duration_ms();
            let closed = candles.open_time.partition_point(|t| t + len <= now_ms);
            let mut cut = slice(candles, 0..closed, 1);
            if *tf == finest
                && let Some(i) =
                    candles.open_time.get(closed).filter(|t| **t == now_ms).map(|_| closed)
            {
                push(&mut cut, now_ms, [candles.open[i]; 4], 0.0);
            }
            known.series.insert((symbol.clone(), *tf), cut);
        }
        known
    }

    /// Notes a series with fewer warm-up candles before the first step than its need asks
    /// (the first steps then get fewer candles than the plugin asked for), or none at all.
    fn check_coverage(&mut self, need: &Need) {
        let Some(candles) = self.get(&need.symbol, need.timeframe).filter(|c| !c.is_empty()) else {
            self.notes.push(format!(
                "{} {}: no candles between {} and {}",
                need.symbol,
                need.timeframe,
                iso(need.first_open()),
                iso(need.last_open)
            ));
            return;
        };
        let before = candles.open_time.partition_point(|t| *t < need.first_step);
        if before < need.warmup as usize {
            self.notes.push(format!(
                "{} {}: {before} of the {} candles the plugin asks for before the first step \
                 ({}); the first scans get fewer",
                need.symbol,
                need.timeframe,
                need.warmup,
                iso(need.first_step)
            ));
        }
    }
}

/// An epoch-ms time as RFC 3339 (UTC).
pub fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| ms.to_string())
}

/// A time given as epoch milliseconds, RFC 3339, `YYYY-MM-DD HH:MM[:SS]` (UTC) or
/// `YYYY-MM-DD` (midnight UTC).
pub fn parse_time(text: &str) -> Option<i64> {
    use chrono::{NaiveDate, NaiveDateTime};
    let text = text.trim();
    if let Ok(ms) = text.parse::<i64>() {
        return Some(ms);
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(t.timestamp_millis());
    }
    for format in ["%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, format) {
            return Some(t.and_utc().timestamp_millis());
        }
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp_millis())
}

/// Open time of the candle of `timeframe` containing `t` (weeks open on Monday 00:00 UTC, as
/// on the exchange).
pub fn candle_open(timeframe: Timeframe, t: i64) -> i64 {
    spotbot_sim::market::candle_open(timeframe.as_str(), t)
}

/// Appends a candle opening at `t`: `[open, high, low, close]` and its volume.
pub fn push(c: &mut Candles, t: i64, [open, high, low, close]: [f64; 4], volume: f64) {
    c.open_time.push(t);
    c.open.push(open);
    c.high.push(high);
    c.low.push(low);
    c.close.push(close);
    c.volume.push(volume);
}

pub fn empty(timeframe: Timeframe) -> Candles {
    Candles {
        timeframe: timeframe.as_str().to_string(),
        open_time: Vec::new(),
        open: Vec::new(),
        high: Vec::new(),
        low: Vec::new(),
        close: Vec::new(),
        volume: Vec::new(),
    }
}

/// Appends candle `i` of `from` to `to`.
pub fn push_from(to: &mut Candles, from: &Candles, i: usize) {
    to.open_time.push(from.open_time[i]);
    to.open.push(from.open[i]);
    to.high.push(from.high[i]);
    to.low.push(from.low[i]);
    to.close.push(from.close[i]);
    to.volume.push(from.volume[i]);
}

/// Candles `range` of `c`, with room for `more` candles after them.
pub fn slice(c: &Candles, range: std::ops::Range<usize>, more: usize) -> Candles {
    fn column<T: Copy>(v: &[T], range: &std::ops::Range<usize>, more: usize) -> Vec<T> {
        let mut out = Vec::with_capacity(range.len() + more);
        out.extend_from_slice(&v[range.clone()]);
        out
    }
    Candles {
        timeframe: c.timeframe.clone(),
        open_time: column(&c.open_time, &range, more),
        open: column(&c.open, &range, more),
        high: column(&c.high, &range, more),
        low: column(&c.low, &range, more),
        close: column(&c.close, &range, more),
        volume: column(&c.volume, &range, more),
    }
}

/// The candles of `c` whose open time is in `[first, last]`.
pub fn cut(c: &Candles, need: &Need) -> Candles {
    let first_step = c.open_time.partition_point(|t| *t < need.first_step);
    let start = first_step.saturating_sub(need.warmup as usize);
    let end = c.open_time.partition_point(|t| *t <= need.last_open);
    slice(c, start..end.max(start), 0)
}

/// Candles of `fine` (timeframe `fine_tf`) aggregated into `timeframe`: one candle per bucket
/// with at least one fine candle, as an exchange's klines are — a market that closes (FX's
/// Sunday-evening session, a stock's half day) makes short candles, not gaps that would leave
/// Monday's newest daily candle three days old. Two buckets are left out because the input
/// does not hold them whole: the first, when the input starts after its open (its hours
/// before the file are unknown, not closed), and the last, when the input stops before its
/// end.
pub fn aggregate(fine: &Candles, fine_tf: Timeframe, timeframe: Timeframe) -> Candles {
    let mut out = empty(timeframe);
    let Some(&last) = fine.open_time.last() else {
        return out;
    };
    let data_end = last + fine_tf.duration_ms();
    let mut i = 0;
    while i < fine.len() {
        let bucket = candle_open(timeframe, fine.open_time[i]);
        let end = bucket + timeframe.duration_ms();
        let mut j = i;
        while j < fine.len() && fine.open_time[j] < end {
            j += 1;
        }
        let entered_late = i == 0 && fine.open_time[i] != bucket;
        if !entered_late && end <= data_end {
            out.open_time.push(bucket);
            out.open.push(fine.open[i]);
            out.high.push(fine.high[i..j].iter().copied().fold(f64::MIN, f64::max));
            out.low.push(fine.low[i..j].iter().copied().fold(f64::MAX, f64::min));
            out.close.push(fine.close[j - 1]);
            out.volume.push(fine.volume[i..j].iter().sum());
        }
        i = j;
    }
    out
}

/// Parses candles of `timeframe` from CSV text: `open_time,open,high,low,close,volume`, a
/// header line (any first line whose first field is not a time) and `#` comment lines
/// skipped. `open_time` is epoch milliseconds or a date-time [`parse_time`] accepts; it must sit
/// on the timeframe's grid. Rows are sorted by time; a repeated time keeps the last row.
pub fn parse_csv(text: &str, timeframe: Timeframe) -> Result<Candles, String> {
    let mut rows: BTreeMap<i64, [f64; 5]> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let Some(open_time) = fields.first().and_then(|f| parse_time(f)) else {
            if rows.is_empty() && n == first_data_line(text) {
                continue; // the header
            }
            return Err(format!("line {}: `{}` is not a time", n + 1, fields[0]));
        };
        if fields.len() < 6 {
            return Err(format!(
                "line {}: expected open_time,open,high,low,close,volume, got {} fields",
                n + 1,
                fields.len()
            ));
        }
        let mut v = [0.0; 5];
        for (k, slot) in v.iter_mut().enumerate() {
            *slot = fields[k + 1]
                .parse::<f64>()
                .map_err(|_| format!("line {}: `{}` is not a number", n + 1, fields[k + 1]))?;
        }
        let [open, high, low, close, volume] = v;
        let prices_ok = [open, high, low, close].iter().all(|p| p.is_finite() && *p > 0.0);
        if !prices_ok || !volume.is_finite() || volume < 0.0 {
            return Err(format!("line {}: prices must be > 0 and volume >= 0", n + 1));
        }
        if high < open.max(close) || low > open.min(close) {
            return Err(format!("line {}: high/low do not contain open and close", n + 1));
        }
        if candle_open(timeframe, open_time) != open_time {
            return Err(format!(
                "line {}: open time {} is not on the {timeframe} grid",
                n + 1,
                iso(open_time)
            ));
        }
        rows.insert(open_time, v);
    }
    let mut out = empty(timeframe);
    for (t, [open, high, low, close, volume]) in rows {
        push(&mut out, t, [open, high, low, close], volume);
    }
    Ok(out)
}

fn first_data_line(text: &str) -> usize {
    text.lines()
        .position(|l| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with('#')
        })
        .unwrap_or(0)
}

/// Candles as CSV text with the header line (the format [`parse_csv`] reads).
pub fn to_csv(c: &Candles) -> String {
    let mut out = String::with_capacity(c.len() * 64 + 40);
    out.push_str("open_time,open,high,low,close,volume\n");
    for i in 0..c.len() {
        out.push_str(&format!(
            "{},{},{},{},{},{}\n",
            c.open_time[i], c.open[i], c.high[i], c.low[i], c.close[i], c.volume[i]
        ));
    }
    out
}

/// The file of `symbol`'s candles of `timeframe` in a candles folder.
pub fn csv_file(dir: &Path, symbol: &str, timeframe: Timeframe) -> std::path::PathBuf {
    dir.join(format!("{symbol}_{timeframe}.csv"))
}

/// Reads every need from the CSV files of `dir`; a timeframe without a file is aggregated
/// from the `finest` timeframe's file of the same symbol.
pub fn from_csv_dir(dir: &Path, needs: &[Need], finest: Timeframe) -> anyhow::Result<History> {
    let mut history = History::default();
    // Every file a need may read: its own timeframe, and the finest to aggregate from.
    let wanted: BTreeSet<(String, Timeframe)> = needs
        .iter()
        .flat_map(|n| [(n.symbol.clone(), n.timeframe), (n.symbol.clone(), finest)])
        .collect();
    let files = read_csv_files(dir, wanted)?;
    let read = |symbol: &str, tf: Timeframe| -> anyhow::Result<Option<Candles>> {
        Ok(files.get(&(symbol.to_string(), tf)).cloned())
    };
    for need in needs {
        let candles = match read(&need.symbol, need.timeframe)? {
            Some(c) => c,
            None if need.timeframe > finest => match read(&need.symbol, finest)? {
                Some(fine) => aggregate(&fine, finest, need.timeframe),
                None => bail!(
                    "no candles for {} {}: expected {} (or {} to aggregate from)",
                    need.symbol,
                    need.timeframe,
                    csv_file(dir, &need.symbol, need.timeframe).display(),
                    csv_file(dir, &need.symbol, finest).display()
                ),
            },
            None => bail!(
                "no candles for {} {}: expected {}",
                need.symbol,
                need.timeframe,
                csv_file(dir, &need.symbol, need.timeframe).display()
            ),
        };
        history.insert(&need.symbol, need.timeframe, cut(&candles, need));
        history.check_coverage(need);
    }
    Ok(history)
}

/// The candles of each of `files` that exists in `dir`, parsed on every core (a year of
/// hourly candles is 8 760 lines per symbol).
fn read_csv_files(
    dir: &Path,
    files: BTreeSet<(String, Timeframe)>,
) -> anyhow::Result<BTreeMap<(String, Timeframe), Candles>> {
    let files: Vec<_> = files.into_iter().collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = files.len().div_ceil(threads).max(1);
    let read_one = |(symbol, tf): &(String, Timeframe)| -> anyhow::Result<Option<Candles>> {
        let path = csv_file(dir, symbol, *tf);
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let candles =
            parse_csv(&text, *tf).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(Some(candles))
    };
    let parsed = std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(read_one).collect::<Vec<_>>()))
            .collect();
        let mut parsed = Vec::with_capacity(files.len());
        for worker in workers {
            let part =
                worker.join().map_err(|_| anyhow::anyhow!("reading the CSV files failed"))?;
            parsed.extend(part);
        }
        anyhow::Ok(parsed)
    })?;
    let mut out = BTreeMap::new();
    for (key, candles) in files.into_iter().zip(parsed) {
        if let Some(candles) = candles? {
            out.insert(key, candles);
        }
    }
    Ok(out)
}

/// Records coverage notes for needs served by another reader (klines).
pub(super) fn note_coverage(history: &mut History, needs: &[Need]) {
    for need in needs {
        history.check_coverage(need);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;

    fn hourly(n: usize) -> Candles {
        let mut c = empty(Timeframe::H1);
        for i in 0..n {
            let p = 100.0 + i as f64;
            c.open_time.push(i as i64 * H);
            c.open.push(p);
            c.high.push(p + 2.0);
            c.low.push(p - 1.0);
            c.close.push(p + 1.0);
            c.volume.push(10.0);
        }
        c
    }

    #[test]
    fn csv_round_trips_and_is_checked() {
        let c = hourly(5);
        let text = to_csv(&c);
        assert_eq!(parse_csv(&text, Timeframe::H1).unwrap(), c);
        let iso_rows = "open_time,open,high,low,close,volume\n\
                        2024-01-01T01:00:00Z,1,2,0.5,1.5,3\n2024-01-01 00:00,1,1,1,1,0\n";
        let parsed = parse_csv(iso_rows, Timeframe::H1).unwrap();
        assert_eq!(parsed.open_time, vec![1_704_067_200_000, 1_704_070_800_000], "sorted");
        let off_grid = parse_csv("1000,1,1,1,1,1\n", Timeframe::H1).unwrap_err();
        assert!(off_grid.contains("grid"), "{off_grid}");
        let bad = parse_csv("0,1,0.5,1,1,1\n", Timeframe::H1).unwrap_err();
        assert!(bad.contains("high/low"), "{bad}");
        assert!(parse_csv("x,y\n0,1,1,1\n", Timeframe::H1).unwrap_err().contains("fields"));
    }

    #[test]
    fn coarser_candles_are_aggregated_from_every_bucket_that_traded() {
        // 1h candles from 02:00 to 13:00: the 00:00 bucket is entered late, the 12:00 one is
        // not complete; only 04:00 and 08:00 come out.
        let mut c = hourly(14);
        c.open_time.drain(..2);
        for column in [&mut c.open, &mut c.high, &mut c.low, &mut c.close, &mut c.volume] {
            column.drain(..2);
        }
        let four = aggregate(&c, Timeframe::H1, Timeframe::H4);
        assert_eq!(four.open_time, vec![4 * H, 8 * H]);
        assert_eq!(four.open[0], 104.0);
        assert_eq!(four.high[0], 109.0);
        assert_eq!(four.low[0], 103.0);
        assert_eq!(four.close[0], 108.0);
        assert_eq!(four.volume[0], 40.0);
        // A closed market inside the data: hours 0-9 and 58-79 (closed from 10:00 on day 0
        // to 10:00 on day 2). Day 0 is a short daily candle, day 1 has none (nothing traded),
        // day 2 opens at 10:00 and is short too; day 3 is not finished.
        let week = with_a_weekend();
        let daily = aggregate(&week, Timeframe::H1, Timeframe::D1);
        assert_eq!(daily.open_time, vec![0, 48 * H]);
        assert_eq!((daily.open[1], daily.close[1]), (158.0, 172.0));
        assert_eq!((daily.volume[0], daily.volume[1]), (100.0, 140.0));
        let four = aggregate(&week, Timeframe::H1, Timeframe::H4);
        let opens: Vec<i64> = four.open_time.iter().map(|t| t / H).collect();
        assert_eq!(opens, [0, 4, 8, 56, 60, 64, 68, 72, 76]);
        assert_eq!((four.open[2], four.close[2]), (108.0, 110.0), "08:00-10:00 only");
        assert_eq!((four.open[3], four.volume[3]), (158.0, 20.0), "10:00-12:00 only");
    }

    fn need(warmup: u32, first_step: i64, last_open: i64) -> Need {
        let symbol = "EURUSD".to_string();
        Need { symbol, timeframe: Timeframe::H1, warmup, first_step, last_open }
    }

    /// Hourly candles with a closed market (a weekend) from hour 10 to hour 58.
    fn with_a_weekend() -> Candles {
        let mut c = empty(Timeframe::H1);
        for h in (0..10).chain(58..80) {
            push_from(&mut c, &hourly(80), h);
        }
        c
    }

    #[test]
    fn the_warm_up_is_counted_in_candles_across_a_closed_market() {
        let c = with_a_weekend();
        // 12 candles before hour 60: 10 before the weekend, 2 after it (a time window of 12
        // hours would hold only those 2).
        let cut = cut(&c, &need(12, 60 * H, 70 * H));
        assert_eq!(cut.open_time.first(), Some(&0));
        assert_eq!(cut.open_time.iter().filter(|t| **t < 60 * H).count(), 12);
        assert_eq!(cut.open_time.last(), Some(&(70 * H)));

        let mut history = History::default();
        history.insert("EURUSD", Timeframe::H1, cut);
        history.check_coverage(&need(12, 60 * H, 70 * H));
        assert!(history.notes.is_empty(), "{:?}", history.notes);
        // Asking for more than the file holds before the first step is noted with numbers.
        history.check_coverage(&need(20, 60 * H, 70 * H));
        assert_eq!(history.notes.len(), 1);
        assert!(history.notes[0].contains("12 of the 20 candles"), "{:?}", history.notes);
    }

    #[test]
    fn times_parse_in_every_accepted_spelling() {
        let midnight = 1_704_067_200_000;
        assert_eq!(parse_time("2024-01-01"), Some(midnight));
        assert_eq!(parse_time("2024-01-01T00:00:00Z"), Some(midnight));
        assert_eq!(parse_time("2024-01-01 01:00"), Some(midnight + H));
        assert_eq!(parse_time("1704067200000"), Some(midnight));
        assert_eq!(parse_time("yesterday"), None);
        assert_eq!(iso(midnight), "2024-01-01T00:00:00Z");
    }

    #[test]
    fn what_was_known_at_a_time_has_no_later_candle_and_no_future_of_the_forming_one() {
        const HOUR: i64 = 3_600_000;
        let mut fine = empty(Timeframe::H1);
        for i in 0..10 {
            let p = 100.0 + i as f64;
            fine.open_time.push(i * HOUR);
            fine.open.push(p);
            fine.high.push(p + 5.0);
            fine.low.push(p - 5.0);
            fine.close.push(p + 1.0);
            fine.volume.push(7.0);
        }
        let mut h = History::default();
        h.insert("X", Timeframe::H4, aggregate(&fine, Timeframe::H1, Timeframe::H4));
        h.insert("X", Timeframe::H1, fine);
        let known = h.known_at(5 * HOUR, Timeframe::H1);
        let fine = known.get("X", Timeframe::H1).unwrap();
        assert_eq!(fine.open_time, (0..=5).map(|i| i * HOUR).collect::<Vec<_>>());
        assert_eq!(
            (fine.open[5], fine.high[5], fine.low[5], fine.close[5]),
            (105.0, 105.0, 105.0, 105.0)
        );
        assert_eq!(fine.volume[5], 0.0);
        assert_eq!(fine.close[4], 105.0, "closed candles are whole");
        let four = known.get("X", Timeframe::H4).unwrap();
        assert_eq!(four.open_time, vec![0], "the 04:00 candle is still forming at 05:00");
    }
}
