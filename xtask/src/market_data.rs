//! Real market data for the calibration check, from a package registry: the PyPI wheel of
//! `backtesting` (pinned) ships three sample series in `backtesting/test/` — EURUSD hourly
//! (5000 candles, 2017-04-19 .. 2018-02-07), GOOG daily (2004 .. 2013) and BTCUSD monthly.
//! `pip download` (the xtask venv's pip, [`crate::venv`]) fetches the wheel without installing
//! it or its dependencies, Python's `zipfile` module unpacks it, and the CSVs are rewritten in
//! the layout `spotbot backtest --candles DIR` reads (`<SYMBOL>_<timeframe>.csv`,
//! `open_time,open,high,low,close,volume`). Next to them, random walks with EURUSD's hourly
//! volatility, its timestamps (weekends included) and its volume column: the same market
//! without any mean reversion. The hourly series are also written as 4h and 1d candles, one
//! per UTC bucket that traded (as an exchange's klines are), so the Sunday-evening session of
//! FX is a short daily candle of its own instead of a gap that makes Monday's newest daily
//! candle three days old.
//!
//! Everything lands in `target/market-data/` and is reused: the wheel is downloaded once, the
//! files are rewritten only when missing.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::{path_str, plugins, venv};

/// The wheel, pinned: its sample files are the data the calibration's numbers come from.
const WHEEL: &str = "backtesting==0.6.6";
/// Where the wheel keeps the series.
const SAMPLES: &str = "backtesting/test";
/// The quote asset the converted symbols are named in (`EURUSD`, `GOOGUSD`, `WALK1USD`).
pub const QUOTE: &str = "USD";
/// The real hourly series.
pub const EURUSD: &str = "EURUSD";
/// Random walks generated next to EURUSD, one per seed.
pub const WALKS: [&str; 3] = ["WALK1USD", "WALK2USD", "WALK3USD"];
/// Price steps per hour of a walk: its highs and lows come from a path, not from the close.
const WALK_SUBSTEPS: usize = 12;
/// The coarser timeframes written from each hourly series, with their length in hours.
const COARSER: [(&str, i64); 2] = [("4h", 4), ("1d", 24)];
const HOUR_MS: i64 = 3_600_000;

/// One sample file and how it is converted: the wheel's file, the symbol and timeframe it
/// becomes (`None`: kept raw only, no backtest timeframe fits, e.g. monthly candles).
struct Sample {
    file: &'static str,
    converted: Option<(&'static str, &'static str)>,
}

const SAMPLE_FILES: [Sample; 3] = [
    Sample { file: "EURUSD.csv", converted: Some((EURUSD, "1h")) },
    Sample { file: "GOOG.csv", converted: Some(("GOOGUSD", "1d")) },
    Sample { file: "BTCUSD.csv", converted: None },
];

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

/// The data folder, `target/market-data/`, with `candles/` ready for `--candles`; downloads
/// and converts what is missing.
pub fn ensure() -> anyhow::Result<PathBuf> {
    let root = plugins::target_dir()?.join("market-data");
    let raw = root.join("raw");
    if SAMPLE_FILES.iter().any(|s| !raw.join(s.file).is_file()) {
        download(&root, &raw)?;
    }
    let candles = root.join("candles");
    std::fs::create_dir_all(&candles)?;
    for sample in &SAMPLE_FILES {
        if let Some((symbol, timeframe)) = sample.converted {
            let dest = candles.join(format!("{symbol}_{timeframe}.csv"));
            if !dest.is_file() {
                let rows = read_sample(&raw.join(sample.file))?;
                write_atomically(&dest, &to_csv(&rows))?;
            }
        }
    }
    let eurusd = read_sample(&raw.join("EURUSD.csv"))?;
    for (seed, symbol) in (1..).zip(WALKS) {
        let dest = candles.join(format!("{symbol}_1h.csv"));
        if !dest.is_file() {
            write_atomically(&dest, &to_csv(&random_walk(&eurusd, seed)))?;
        }
    }
    for symbol in std::iter::once(EURUSD).chain(WALKS) {
        for (timeframe, hours) in COARSER {
            let dest = candles.join(format!("{symbol}_{timeframe}.csv"));
            if !dest.is_file() {
                let hourly = read_sample(&candles.join(format!("{symbol}_1h.csv")))?;
                write_atomically(&dest, &to_csv(&aggregate(&hourly, hours)?))?;
            }
        }
    }
    Ok(root)
}

/// `pip download` of the wheel into `root/wheel`, unpacked with Python's `zipfile`, the
/// sample CSVs copied into `raw`.
fn download(root: &Path, raw: &Path) -> anyhow::Result<()> {
    let bin = venv::ensure()?;
    let wheel_dir = root.join("wheel");
    std::fs::create_dir_all(&wheel_dir)?;
    let pip = bin.join("pip");
    let quiet = ["--no-deps", "--disable-pip-version-check", "--quiet"];
    let target = ["-d", path_str(&wheel_dir)?, WHEEL];
    venv::run_program(path_str(&pip)?, &[&["download"], &quiet[..], &target].concat())?;
    let wheel = std::fs::read_dir(&wheel_dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .with_context(|| format!("pip left no wheel in {}", wheel_dir.display()))?;
    let unpacked = root.join("unpacked");
    let python = bin.join("python");
    venv::run_program(
        path_str(&python)?,
        &["-m", "zipfile", "-e", path_str(&wheel)?, path_str(&unpacked)?],
    )?;
    std::fs::create_dir_all(raw)?;
    for sample in &SAMPLE_FILES {
        let from = unpacked.join(SAMPLES).join(sample.file);
        std::fs::copy(&from, raw.join(sample.file))
            .with_context(|| format!("the wheel has no {}", from.display()))?;
    }
    Ok(())
}

/// Reads a sample file (`,Open,High,Low,Close,Volume` with the time in the first column as
/// `YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS`, taken as UTC) or a file this module wrote (RFC 3339).
fn read_sample(path: &Path) -> anyhow::Result<Vec<Row>> {
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
    let [time, open, high, low, close, volume] = fields[..] else {
        bail!("expected 6 fields");
    };
    let time = match time.split_once(' ') {
        Some((date, clock)) => format!("{date}T{clock}Z"),
        None if time.contains('T') => time.to_string(),
        None => format!("{time}T00:00:00Z"),
    };
    let number = |s: &str| s.parse::<f64>().with_context(|| format!("{s:?} is not a number"));
    Ok(Row {
        time,
        open: number(open)?,
        high: number(high)?,
        low: number(low)?,
        close: number(close)?,
        volume: number(volume)?,
    })
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

/// Hourly rows merged into buckets of `hours` on the UTC grid: one candle for every bucket
/// with at least one hourly candle, however short its session (a closed market's first or
/// last hours); the bucket of the last row only when the data reaches its end.
fn aggregate(hourly: &[Row], hours: i64) -> anyhow::Result<Vec<Row>> {
    let size = hours * HOUR_MS;
    let mut out: Vec<(i64, Row)> = Vec::new();
    for row in hourly {
        let bucket = epoch_ms(&row.time)?.div_euclid(size) * size;
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
        Some(row) => epoch_ms(&row.time)? + HOUR_MS,
        None => return Ok(Vec::new()),
    };
    if out.last().is_some_and(|(open, _)| open + size > data_end) {
        out.pop();
    }
    Ok(out.into_iter().map(|(_, row)| row).collect())
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

/// The backtest's CSV layout.
fn to_csv(rows: &[Row]) -> String {
    let mut out = String::from("open_time,open,high,low,close,volume\n");
    for r in rows {
        out.push_str(&format!(
            "{},{},{},{},{},{}\n",
            r.time, r.open, r.high, r.low, r.close, r.volume
        ));
    }
    out
}

fn write_atomically(dest: &Path, text: &str) -> anyhow::Result<()> {
    let temp = dest.with_extension("csv.tmp");
    std::fs::write(&temp, text).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, dest)?;
    Ok(())
}

/// Standard deviation of the close-to-close log returns.
fn log_return_sd(rows: &[Row]) -> f64 {
    let returns: Vec<f64> = rows.windows(2).map(|w| (w[1].close / w[0].close).ln()).collect();
    let n = returns.len().max(1) as f64;
    let mean = returns.iter().sum::<f64>() / n;
    (returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt()
}

/// A Gaussian random walk with `like`'s timestamps, volume column, first open and hourly
/// log-return volatility: the same calendar and activity without the market's structure.
/// Each hour is [`WALK_SUBSTEPS`] steps, so highs and lows are those of a path. Deterministic
/// in `seed` (splitmix64 and Box–Muller, no RNG crate).
fn random_walk(like: &[Row], seed: u64) -> Vec<Row> {
    let step_sd = log_return_sd(like) / (WALK_SUBSTEPS as f64).sqrt();
    // splitmix64: the state advances by a fixed odd step and each output is its hash; the
    // seed is hashed into the start so two seeds do not walk the same sequence shifted.
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut state = mix(seed ^ 0x5EED_5EED_5EED_5EED);
    let mut uniform = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        // In (0, 1]: the logarithm below never sees 0.
        ((mix(state) >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    };
    let mut price = like.first().map_or(1.0, |r| r.open);
    let mut out = Vec::with_capacity(like.len());
    for candle in like {
        let open = price;
        let (mut high, mut low) = (open, open);
        for _ in 0..WALK_SUBSTEPS {
            let normal =
                (-2.0 * uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * uniform()).cos();
            price *= (normal * step_sd).exp();
            high = high.max(price);
            low = low.min(price);
        }
        let round = |p: f64| (p * 1e6).round() / 1e6;
        out.push(Row {
            time: candle.time.clone(),
            open: round(open),
            high: round(high),
            low: round(low),
            close: round(price),
            volume: candle.volume,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(time: &str, close: f64) -> Row {
        Row { time: time.into(), open: close, high: close, low: close, close, volume: 7.0 }
    }

    #[test]
    fn sample_rows_become_utc_times() {
        let r = parse_row("2017-04-19 09:00:00,1.0716,1.0722,1.07083,1.07219,1413").unwrap();
        assert_eq!(r.time, "2017-04-19T09:00:00Z");
        assert_eq!((r.open, r.low, r.volume), (1.0716, 1.07083, 1413.0));
        assert_eq!(parse_row("2004-08-19,100,104,95,100,5").unwrap().time, "2004-08-19T00:00:00Z");
        let written = parse_row("2017-04-19T09:00:00Z,1,1,1,1,1").unwrap();
        assert_eq!(written.time, "2017-04-19T09:00:00Z");
        assert!(parse_row("2004-08-19,100,104").is_err());
        assert!(parse_row("2004-08-19,a,104,95,100,5").is_err());
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

    #[test]
    fn random_walk_keeps_calendar_volume_and_volatility() {
        // A zigzag with 1 % hourly moves.
        let like: Vec<Row> = (0..4000)
            .map(|i| row(&format!("t{i}"), if i % 2 == 0 { 100.0 } else { 101.0 }))
            .collect();
        let walk = random_walk(&like, 1);
        assert_eq!(walk.len(), like.len());
        assert!(walk.iter().zip(&like).all(|(w, l)| w.time == l.time && w.volume == 7.0));
        assert!(walk.iter().all(|w| w.low <= w.open.min(w.close) && w.high >= w.open.max(w.close)));
        let (want, got) = (log_return_sd(&like), log_return_sd(&walk));
        assert!((got / want - 1.0).abs() < 0.1, "sd {got} vs {want}");
        assert_eq!(random_walk(&like, 1), walk, "deterministic");
        // Another seed is another path, not the same one shifted by a few draws.
        let other = random_walk(&like, 3);
        let shifted = (0..8).any(|k| other[k..].iter().zip(&walk).all(|(a, b)| a.close == b.close));
        assert!(!shifted);
    }
}
