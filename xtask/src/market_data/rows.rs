//! Candles as rows of text: the sample files' layouts read, the backtest's layout written,
//! hourly rows merged into coarser buckets.

use std::path::Path;

use anyhow::{Context, bail};

const HOUR_MS: i64 = 3_600_000;

/// One candle as the backtest's CSV holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// RFC 3339, UTC.
    pub time: String,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
    pub volume: f64,
}

impl Row {
    /// Epoch milliseconds of [`Row::time`].
    pub fn epoch_ms(&self) -> anyhow::Result<i64> {
        epoch_ms(&self.time)
    }
}

/// Reads a CSV of candles with a header line: a sample file (`time,Open,High,Low,Close,Volume`
/// with the time as `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS` or `DD.MM.YYYY HH:MM:SS.sss`, taken
/// as UTC, and any columns between Close and Volume such as `Adj Close` ignored) or a file
/// [`to_csv`] wrote (RFC 3339).
pub fn read(path: &Path) -> anyhow::Result<Vec<Row>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            parse_row(line).with_context(|| format!("{} line {}: {line:?}", path.display(), i + 2))
        })
        .collect()
}

fn parse_row(line: &str) -> anyhow::Result<Row> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let [time, open, high, low, close, .., volume] = fields[..] else {
        bail!("expected at least 6 fields");
    };
    let number = |s: &str| s.parse::<f64>().with_context(|| format!("{s:?} is not a number"));
    Ok(Row {
        time: utc_time(time)?,
        open: number(open)?,
        high: number(high)?,
        low: number(low)?,
        close: number(close)?,
        volume: number(volume)?,
    })
}

/// `YYYY-MM-DDTHH:MM:SSZ` of the sample files' time forms.
fn utc_time(time: &str) -> anyhow::Result<String> {
    let (date, clock) = match time.split_once([' ', 'T']) {
        Some((date, clock)) => (date, clock.trim_end_matches('Z')),
        None => (time, "00:00:00"),
    };
    let date = match date.split('.').collect::<Vec<_>>()[..] {
        [day, month, year] => format!("{year}-{month}-{day}"),
        _ => date.to_string(),
    };
    let clock = clock.get(..8).with_context(|| format!("{time:?} has no HH:MM:SS"))?;
    let text = format!("{date}T{clock}Z");
    epoch_ms(&text).with_context(|| format!("{time:?} is not a time"))?;
    Ok(text)
}

/// Epoch milliseconds of `YYYY-MM-DDTHH:MM:SSZ` (days from the civil date, Howard Hinnant's
/// algorithm).
fn epoch_ms(time: &str) -> anyhow::Result<i64> {
    let field = |range: std::ops::Range<usize>| -> anyhow::Result<i64> {
        let text =
            time.get(range).with_context(|| format!("{time:?} is not YYYY-MM-DDTHH:MM:SSZ"))?;
        text.parse().with_context(|| format!("{time:?} is not YYYY-MM-DDTHH:MM:SSZ"))
    };
    let (y, m, d) = (field(0..4)?, field(5..7)?, field(8..10)?);
    let (hh, mm, ss) = (field(11..13)?, field(14..16)?, field(17..19)?);
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(((days * 24 + hh) * 60 + mm) * 60_000 + ss * 1000)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of epoch milliseconds (the inverse of [`epoch_ms`]).
fn rfc3339(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let seconds = ms.rem_euclid(86_400_000) / 1000;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    )
}

/// Hourly rows merged into buckets of `hours` on the UTC grid: one candle for every bucket
/// with at least one hourly candle, however short its session (a closed market's first or
/// last hours); the bucket of the last row only when the data reaches its end.
pub fn aggregate(hourly: &[Row], hours: i64) -> anyhow::Result<Vec<Row>> {
    let size = hours * HOUR_MS;
    let mut out: Vec<(i64, Row)> = Vec::new();
    for row in hourly {
        let bucket = row.epoch_ms()?.div_euclid(size) * size;
        match out.last_mut() {
            Some((open, merged)) if *open == bucket => {
                merged.high = merged.high.max(row.high);
                merged.low = merged.low.min(row.low);
                merged.close = row.close;
                merged.volume += row.volume;
            }
            _ => out.push((bucket, Row { time: rfc3339(bucket), ..row.clone() })),
        }
    }
    let data_end = match hourly.last() {
        Some(row) => row.epoch_ms()? + HOUR_MS,
        None => return Ok(Vec::new()),
    };
    if out.last().is_some_and(|(open, _)| open + size > data_end) {
        out.pop();
    }
    Ok(out.into_iter().map(|(_, row)| row).collect())
}

/// The backtest's CSV layout.
pub fn to_csv(rows: &[Row]) -> String {
    let mut out = String::from("open_time,open,high,low,close,volume\n");
    for r in rows {
        out.push_str(&format!(
            "{},{},{},{},{},{}\n",
            r.time, r.open, r.high, r.low, r.close, r.volume
        ));
    }
    out
}

pub fn write_atomically(dest: &Path, text: &str) -> anyhow::Result<()> {
    let temp = dest.with_extension("csv.tmp");
    std::fs::write(&temp, text).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, dest)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_rows_become_utc_times() {
        let r = parse_row("2017-04-19 09:00:00,1.0716,1.0722,1.07083,1.07219,1413").unwrap();
        assert_eq!(r.time, "2017-04-19T09:00:00Z");
        assert_eq!((r.open, r.low, r.volume), (1.0716, 1.07083, 1413.0));
        assert_eq!(parse_row("2004-08-19,100,104,95,100,5").unwrap().time, "2004-08-19T00:00:00Z");
        let ask = parse_row("01.02.2017 22:00:00.000,1.05,1.06,1.04,1.055,1435399.9").unwrap();
        assert_eq!((ask.time.as_str(), ask.volume), ("2017-02-01T22:00:00Z", 1435399.9));
        let adjusted = parse_row("2009-05-22,198.5,199.5,196.1,196.9,196.9,3433700").unwrap();
        assert_eq!((adjusted.close, adjusted.volume), (196.9, 3433700.0));
        let written = parse_row("2017-04-19T09:00:00Z,1,1,1,1,1").unwrap();
        assert_eq!(written.time, "2017-04-19T09:00:00Z");
        assert!(parse_row("2004-08-19,100,104").is_err());
        assert!(parse_row("2004-08-19,a,104,95,100,5").is_err());
        assert!(parse_row("19/08/2004,100,104,95,100,5").is_err());
        assert!(
            to_csv(&[r]).ends_with("2017-04-19T09:00:00Z,1.0716,1.0722,1.07083,1.07219,1413\n")
        );
    }

    #[test]
    fn times_round_trip_and_buckets_keep_short_sessions() {
        assert_eq!(epoch_ms("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(epoch_ms("2017-04-19T09:00:00Z").unwrap(), 1_492_592_400_000);
        assert_eq!(rfc3339(1_492_592_400_000), "2017-04-19T09:00:00Z");
        assert_eq!(rfc3339(epoch_ms("2016-02-29T23:59:59Z").unwrap()), "2016-02-29T23:59:59Z");
        assert!(epoch_ms("2017-04-19").is_err());
        // Friday 19:00-20:00, then Sunday 21:00-23:00 and Monday 00:00: Friday's daily
        // candle, Sunday's short one; Monday's is cut, the data stops inside it.
        let hour = |t: &str, p: f64| Row {
            time: t.into(),
            open: p,
            high: p + 1.0,
            low: p - 1.0,
            close: p,
            volume: 1.0,
        };
        let hourly = [
            hour("2017-07-07T19:00:00Z", 10.0),
            hour("2017-07-07T20:00:00Z", 11.0),
            hour("2017-07-09T21:00:00Z", 12.0),
            hour("2017-07-09T22:00:00Z", 13.0),
            hour("2017-07-09T23:00:00Z", 14.0),
            hour("2017-07-10T00:00:00Z", 15.0),
        ];
        let daily = aggregate(&hourly, 24).unwrap();
        assert_eq!(daily.len(), 2);
        assert_eq!(
            (daily[0].time.as_str(), daily[0].open, daily[0].close),
            ("2017-07-07T00:00:00Z", 10.0, 11.0)
        );
        assert_eq!(
            (daily[1].time.as_str(), daily[1].high, daily[1].low),
            ("2017-07-09T00:00:00Z", 15.0, 11.0)
        );
        assert_eq!(daily[1].volume, 3.0);
        let four = aggregate(&hourly, 4).unwrap();
        let times: Vec<&str> = four.iter().map(|r| r.time.as_str()).collect();
        assert_eq!(times, ["2017-07-07T16:00:00Z", "2017-07-07T20:00:00Z", "2017-07-09T20:00:00Z"]);
    }
}
