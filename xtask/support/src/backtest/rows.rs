//! Candles as rows of text: the sample files' layouts read, the backtest's layout written.

use std::path::Path;

use anyhow::{Context, bail};
use chrono::{NaiveDate, NaiveDateTime};

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
    const DATE_TIMES: [&str; 3] =
        ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%SZ", "%d.%m.%Y %H:%M:%S%.f"];
    let parsed = DATE_TIMES
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(time, format).ok())
        .or_else(|| {
            let date = NaiveDate::parse_from_str(time, "%Y-%m-%d").ok()?;
            date.and_hms_opt(0, 0, 0)
        })
        .with_context(|| format!("{time:?} is not a time"))?;
    Ok(parsed.format("%Y-%m-%dT%H:%M:%SZ").to_string())
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
}
