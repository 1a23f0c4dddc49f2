//! History from the exchange's klines, kept on disk so a range is fetched once.
//!
//! The cache is a folder of CSV files, one per symbol and timeframe (`<SYMBOL>_<tf>.csv`, the
//! format `--candles` reads), under `<data_dir>/backtest-cache/<source>/`, where `<source>`
//! names the exchange (`paper-seed1`, or the REST host). Each file starts with a line
//! `# covered <first_open_ms> <last_open_ms>`: the range of open times already asked of the
//! exchange (a symbol listed later simply has no candles before its listing). A read of a
//! range inside the covered one sends no request; otherwise only the missing parts before
//! and after it are fetched, paged backwards with `endTime` (up to 1000 klines a request),
//! and the file is rewritten (written to a temporary name, then renamed). Only closed candles
//! are stored: the candle still forming at the exchange's time is never cached.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::history::{self, History, Need};
use crate::exchange::{Exchange, Kline};
use crate::market::Timeframe;
use crate::plugins::model::Candles;

/// Most klines one request returns.
const PAGE: u32 = 1000;

/// What reading the history cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FetchStats {
    /// Kline requests sent to the exchange.
    pub requests: u64,
    /// Candles those requests returned.
    pub candles: u64,
}

/// The cache folder of an exchange: `paper-seed<seed>` in paper mode, else the REST host.
pub fn source_dir(data_dir: &Path, config: &crate::config::ExchangeConfig) -> PathBuf {
    let name = match crate::exchange::connect::base_url(config) {
        None => format!("paper-seed{}", config.paper_seed),
        Some(url) => {
            let host = url.split("://").nth(1).unwrap_or(&url).trim_end_matches('/');
            host.chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' })
                .collect()
        }
    };
    data_dir.join("backtest-cache").join(name)
}

/// Reads every need through the cache in `dir`, fetching what it does not cover.
pub async fn load(
    exchange: &dyn Exchange,
    dir: &Path,
    needs: &[Need],
    mut on_series: impl FnMut(&Need),
) -> anyhow::Result<(History, FetchStats)> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the candle cache {}", dir.display()))?;
    let server_now = exchange.server_time().await.context("the exchange's time")?;
    let mut stats = FetchStats::default();
    let mut out = History::default();
    for need in needs {
        on_series(need);
        let candles = series(exchange, dir, need, server_now, &mut stats).await?;
        out.insert(&need.symbol, need.timeframe, history::cut(&candles, need));
    }
    history::note_coverage(&mut out, needs);
    Ok((out, stats))
}

/// One cached file: the covered range and its candles.
struct Cached {
    covered: Option<(i64, i64)>,
    candles: Candles,
}

fn read_cache(path: &Path, tf: Timeframe) -> anyhow::Result<Cached> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Cached { covered: None, candles: history::empty(tf) });
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let covered = text.lines().next().and_then(|l| {
        let mut words = l.strip_prefix("# covered ")?.split_whitespace();
        Some((words.next()?.parse().ok()?, words.next()?.parse().ok()?))
    });
    let candles = history::parse_csv(&text, tf).map_err(|e| {
        anyhow::anyhow!("the cache file {} is damaged ({e}); delete it", path.display())
    })?;
    Ok(Cached { covered, candles })
}

fn write_cache(path: &Path, covered: (i64, i64), candles: &Candles) -> anyhow::Result<()> {
    let text = format!("# covered {} {}\n{}", covered.0, covered.1, history::to_csv(candles));
    let temp = path.with_extension("csv.tmp");
    std::fs::write(&temp, text).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

async fn series(
    exchange: &dyn Exchange,
    dir: &Path,
    need: &Need,
    server_now: i64,
    stats: &mut FetchStats,
) -> anyhow::Result<Candles> {
    let tf = need.timeframe;
    let path = history::csv_file(dir, &need.symbol, tf);
    let cached = read_cache(&path, tf)?;
    // The newest candle that has closed at the exchange's time.
    let last_closed = history::candle_open(tf, server_now) - tf.duration_ms();
    let want = (need.first_open(), need.last_open.min(last_closed));
    if want.1 < want.0 {
        return Ok(cached.candles);
    }
    let (fetched, covered) = match cached.covered {
        Some((a, b)) if a <= want.0 && want.1 <= b => return Ok(cached.candles),
        Some((a, b)) => {
            let mut fetched = Vec::new();
            if want.0 < a {
                fetched.extend(fetch(exchange, &need.symbol, tf, want.0, a - 1, stats).await?);
            }
            if want.1 > b {
                fetched.extend(fetch(exchange, &need.symbol, tf, b + 1, want.1, stats).await?);
            }
            (fetched, (a.min(want.0), b.max(want.1)))
        }
        None => (fetch(exchange, &need.symbol, tf, want.0, want.1, stats).await?, want),
    };
    // Merge by open time; a fetched candle replaces a cached one of the same time.
    let fresh = klines_to_candles(tf, &fetched);
    let mut rows: std::collections::BTreeMap<i64, (bool, usize)> = Default::default();
    for (i, t) in cached.candles.open_time.iter().enumerate() {
        rows.insert(*t, (false, i));
    }
    for (i, t) in fresh.open_time.iter().enumerate() {
        rows.insert(*t, (true, i));
    }
    let mut merged = history::empty(tf);
    for (is_fresh, i) in rows.into_values() {
        history::push_from(&mut merged, if is_fresh { &fresh } else { &cached.candles }, i);
    }
    write_cache(&path, covered, &merged)?;
    Ok(merged)
}

/// Klines of `symbol` with open times in `[first, last]`, paged backwards from `last`.
async fn fetch(
    exchange: &dyn Exchange,
    symbol: &str,
    tf: Timeframe,
    first: i64,
    last: i64,
    stats: &mut FetchStats,
) -> anyhow::Result<Vec<Kline>> {
    let mut pages: Vec<Vec<Kline>> = Vec::new();
    let mut end = last;
    loop {
        let page = exchange
            .klines(symbol, tf.as_str(), PAGE, Some(end))
            .await
            .with_context(|| format!("{symbol} {tf} klines ending {}", history::iso(end)))?;
        stats.requests += 1;
        stats.candles += page.len() as u64;
        let Some(oldest) = page.first().map(|k| k.open_time) else {
            break;
        };
        let kept: Vec<Kline> =
            page.into_iter().filter(|k| k.open_time >= first && k.open_time <= last).collect();
        pages.push(kept);
        if oldest <= first || oldest > end {
            break;
        }
        end = oldest - 1;
    }
    Ok(pages.into_iter().rev().flatten().collect())
}

fn klines_to_candles(tf: Timeframe, klines: &[Kline]) -> Candles {
    let mut c = crate::market::candles::columns(tf.as_str(), klines);
    c.timeframe = tf.as_str().to_string();
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ExchangeConfig, ExchangeMode};

    #[test]
    fn the_cache_folder_names_the_exchange() {
        let data = Path::new("/d");
        let mut config = ExchangeConfig { mode: ExchangeMode::Paper, ..Default::default() };
        assert_eq!(source_dir(data, &config), data.join("backtest-cache/paper-seed1"));
        config.mode = ExchangeMode::Testnet;
        config.base_url = Some("http://127.0.0.1:8123/".into());
        assert_eq!(source_dir(data, &config), data.join("backtest-cache/127.0.0.1_8123"));
    }
}
