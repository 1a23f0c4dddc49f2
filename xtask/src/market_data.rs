//! Real market data for the calibration check, from a package registry: the PyPI wheel of
//! `backtesting` (pinned) ships three sample series in `backtesting/test/` — EURUSD hourly
//! (5000 candles, 2017-04-19 .. 2018-02-07), GOOG daily (2004 .. 2013) and BTCUSD monthly.
//! `pip download` (the xtask venv's pip, [`crate::venv`]) fetches the wheel without installing
//! it or its dependencies, Python's `zipfile` module unpacks it, and the CSVs are rewritten in
//! the layout `spotbot backtest --candles DIR` reads (`<SYMBOL>_<timeframe>.csv`,
//! `open_time,open,high,low,close,volume`). Next to them, random walks with EURUSD's hourly
//! volatility, its timestamps (weekends included) and its volume column: the same market
//! without any mean reversion.
//!
//! Everything lands in `target/market-data/` and is reused: the wheel is downloaded once, the
//! files are rewritten only when missing.

use std::path::{Path, PathBuf};
use std::process::Command;

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
    Ok(root)
}

/// `pip download` of the wheel into `root/wheel`, unpacked with Python's `zipfile`, the
/// sample CSVs copied into `raw`.
fn download(root: &Path, raw: &Path) -> anyhow::Result<()> {
    let bin = venv::ensure()?;
    let wheel_dir = root.join("wheel");
    std::fs::create_dir_all(&wheel_dir)?;
    let pip = bin.join("pip");
    run(
        &pip,
        &["download", "--no-deps", "--disable-pip-version-check", "--quiet", "-d"],
        &[path_str(&wheel_dir)?, WHEEL],
    )?;
    let wheel = std::fs::read_dir(&wheel_dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .with_context(|| format!("pip left no wheel in {}", wheel_dir.display()))?;
    let unpacked = root.join("unpacked");
    run(&bin.join("python"), &["-m", "zipfile", "-e"], &[path_str(&wheel)?, path_str(&unpacked)?])?;
    std::fs::create_dir_all(raw)?;
    for sample in &SAMPLE_FILES {
        let from = unpacked.join(SAMPLES).join(sample.file);
        std::fs::copy(&from, raw.join(sample.file))
            .with_context(|| format!("the wheel has no {}", from.display()))?;
    }
    Ok(())
}

fn run(program: &Path, args: &[&str], more: &[&str]) -> anyhow::Result<()> {
    println!("$ {} {} {}", program.display(), args.join(" "), more.join(" "));
    let status = Command::new(program)
        .args(args)
        .args(more)
        .status()
        .with_context(|| format!("cannot run {}", program.display()))?;
    if !status.success() {
        bail!("{} failed ({status})", program.display());
    }
    Ok(())
}

/// Reads a sample file: `,Open,High,Low,Close,Volume` with the time in the first column as
/// `YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS` (taken as UTC).
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
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut uniform = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // In (0, 1]: the logarithm below never sees 0.
        ((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64
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
        assert!(parse_row("2004-08-19,100,104").is_err());
        assert!(parse_row("2004-08-19,a,104,95,100,5").is_err());
        assert!(
            to_csv(&[r]).ends_with("2017-04-19T09:00:00Z,1.0716,1.0722,1.07083,1.07219,1413\n")
        );
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
        assert_ne!(random_walk(&like, 2), walk);
    }
}
