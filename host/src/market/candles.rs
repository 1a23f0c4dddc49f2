//! The one candle cache. Every kline a plugin scan (and later the market context) reads comes
//! through [`CandleCache::klines`], keyed by (symbol, timeframe). Exchange weight matters: a
//! repeated read fetches only what is new since the cache's last *closed* candle.
//!
//! How a read of `count` candles at `now` is served:
//! - miss, or more candles asked for than cached: the newest `count` klines (one request);
//! - hit: the newest `n + 1` klines, where `n` is the number of candles that opened after the
//!   last closed one (`(now - last_closed_open) / duration`, at least 1). The answer overlaps
//!   the cache at that last closed candle and always replaces the last cached candle, which was
//!   the still-forming one of the previous answer. If the answer does not reach back to the
//!   last closed candle (clocks disagree, a gap), the full `count` is fetched instead.
//!
//! A symbol with less history than asked for (a new listing) is fetched in full on every read.
//! Concurrent reads of one series may both fetch; the later answer wins, which is never older.
//!
//! Memory is bounded: each series keeps at most [`MAX_CANDLES`] candles (the most a plugin may
//! ask for and the exchange returns per request) and the cache at most `max_series` series; the
//! least recently read series is dropped first.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::Timeframe;
use crate::exchange::{Exchange, ExchangeError, Kline};
use spotbot_sdk::Candles;

/// Most candles kept per series and fetched per request (the exchange's kline limit).
pub const MAX_CANDLES: u32 = 1000;
/// Default number of (symbol, timeframe) series kept.
pub const DEFAULT_MAX_SERIES: usize = 512;

/// What the cache fetched so far (for tests, benchmarks and logs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FetchStats {
    /// Kline requests sent to the exchange.
    pub requests: u64,
    /// Candles those requests returned.
    pub candles: u64,
}

struct Series {
    /// Oldest first; the last one may still be forming.
    klines: Vec<Kline>,
    last_read: u64,
}

/// Candles by (symbol, timeframe), in front of the active exchange.
pub struct CandleCache {
    exchange: Arc<dyn Exchange>,
    series: Mutex<HashMap<(String, Timeframe), Series>>,
    max_series: usize,
    reads: AtomicU64,
    requests: AtomicU64,
    candles: AtomicU64,
}

impl CandleCache {
    pub fn new(exchange: Arc<dyn Exchange>) -> Self {
        Self::with_max_series(exchange, DEFAULT_MAX_SERIES)
    }

    /// A cache that keeps at most `max_series` (symbol, timeframe) series (at least one).
    pub fn with_max_series(exchange: Arc<dyn Exchange>, max_series: usize) -> Self {
        CandleCache {
            exchange,
            series: Mutex::new(HashMap::new()),
            max_series: max_series.max(1),
            reads: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            candles: AtomicU64::new(0),
        }
    }

    pub fn stats(&self) -> FetchStats {
        FetchStats {
            requests: self.requests.load(Ordering::Relaxed),
            candles: self.candles.load(Ordering::Relaxed),
        }
    }

    /// Number of series held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Candles held over all series (at most `MAX_CANDLES` a series).
    pub fn held_candles(&self) -> usize {
        self.lock().values().map(|s| s.klines.len()).sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, Timeframe), Series>> {
        self.series.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newest `count` klines (1..=[`MAX_CANDLES`]) of `symbol` at `now_ms`, oldest first;
    /// the last one may still be forming. Fewer when the exchange has fewer.
    pub async fn klines(
        &self,
        symbol: &str,
        timeframe: Timeframe,
        count: u32,
        now_ms: i64,
    ) -> Result<Vec<Kline>, ExchangeError> {
        let count = count.clamp(1, MAX_CANDLES);
        let key = (symbol.to_string(), timeframe);
        // The last closed candle's open time, when the cache can serve `count` from it.
        let last_closed = {
            let map = self.lock();
            map.get(&key).and_then(|s| {
                let n = s.klines.len();
                (n >= count as usize && n >= 2).then(|| s.klines[n - 2].open_time)
            })
        };
        if let Some(last_closed) = last_closed {
            let opened_since = (now_ms - last_closed).div_euclid(timeframe.duration_ms()).max(1);
            if let Ok(limit) = u32::try_from(opened_since + 1)
                && limit <= MAX_CANDLES
            {
                let fresh = self.fetch(symbol, timeframe, limit).await?;
                if let Some(out) = self.merge(&key, fresh, last_closed, count) {
                    return Ok(out);
                }
            }
        }
        let full = self.fetch(symbol, timeframe, count).await?;
        Ok(self.replace(key, full, count))
    }

    async fn fetch(
        &self,
        symbol: &str,
        timeframe: Timeframe,
        limit: u32,
    ) -> Result<Vec<Kline>, ExchangeError> {
        let klines = self.exchange.klines(symbol, timeframe.as_str(), limit, None).await?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.candles.fetch_add(klines.len() as u64, Ordering::Relaxed);
        Ok(klines)
    }

    /// Appends `fresh` to the cached series if it reaches back to `last_closed`; `None` when it
    /// does not (or the series went away meanwhile), so the caller fetches in full.
    fn merge(
        &self,
        key: &(String, Timeframe),
        fresh: Vec<Kline>,
        last_closed: i64,
        count: u32,
    ) -> Option<Vec<Kline>> {
        let first = fresh.first()?.open_time;
        if first > last_closed {
            return None;
        }
        let tick = self.reads.fetch_add(1, Ordering::Relaxed);
        let mut map = self.lock();
        let series = map.get_mut(key)?;
        series.klines.retain(|k| k.open_time < first);
        series.klines.extend(fresh);
        let excess = series.klines.len().saturating_sub(MAX_CANDLES as usize);
        series.klines.drain(..excess);
        series.last_read = tick;
        Some(newest(&series.klines, count))
    }

    /// Stores a full answer as the series of `key`, dropping the least recently read series
    /// when the cache is full.
    fn replace(&self, key: (String, Timeframe), klines: Vec<Kline>, count: u32) -> Vec<Kline> {
        let out = newest(&klines, count);
        let tick = self.reads.fetch_add(1, Ordering::Relaxed);
        let mut map = self.lock();
        if !map.contains_key(&key) && map.len() >= self.max_series {
            let oldest = map.iter().min_by_key(|(_, s)| s.last_read).map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                map.remove(&oldest);
            }
        }
        map.insert(key, Series { klines, last_read: tick });
        out
    }
}

/// Klines as the column form plugins and the market context read (prices as f64: indicator
/// math, never an order price).
pub fn columns(timeframe: &str, klines: &[Kline]) -> Candles {
    use rust_decimal::prelude::ToPrimitive;
    let f = |d: rust_decimal::Decimal| d.to_f64().unwrap_or(f64::NAN);
    Candles {
        timeframe: timeframe.to_string(),
        open_time: klines.iter().map(|k| k.open_time).collect(),
        open: klines.iter().map(|k| f(k.open.0)).collect(),
        high: klines.iter().map(|k| f(k.high.0)).collect(),
        low: klines.iter().map(|k| f(k.low.0)).collect(),
        close: klines.iter().map(|k| f(k.close.0)).collect(),
        volume: klines.iter().map(|k| f(k.volume)).collect(),
    }
}

fn newest(klines: &[Kline], count: u32) -> Vec<Kline> {
    klines[klines.len().saturating_sub(count as usize)..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::exchange_a::{ClientConfig, ExchangeAClient};
    use spotbot_sim::{ManualClock, SimConfig};

    const HOUR: i64 = 3_600_000;

    /// The simulator on a manual clock, a client without keys, and a cache in front of it.
    async fn setup(max_series: usize) -> (spotbot_sim::server::RunningSim, CandleCache) {
        let clock = Arc::new(ManualClock::starting_now());
        let mut config = SimConfig::new(7, "k", "s");
        config.clock = clock;
        let sim = spotbot_sim::serve(config, "127.0.0.1:0").await.unwrap();
        let client = ExchangeAClient::new(
            ClientConfig::new(sim.base_url()),
            None,
            Arc::new(crate::clock::SystemClock),
            crate::metrics::Metrics::default(),
        )
        .unwrap();
        (sim, CandleCache::with_max_series(Arc::new(client), max_series))
    }

    fn kline_requests(sim: &spotbot_sim::server::RunningSim) -> usize {
        sim.sim.requests().iter().filter(|r| r.path == "/api/v3/klines").count()
    }

    #[tokio::test]
    async fn a_second_scan_fetches_only_the_new_candles() {
        let (sim, cache) = setup(64).await;
        let symbols = ["BTCUSDT", "ETHUSDT", "SOLUSDT", "BNBUSDT", "XRPUSDT"];
        let timeframes = [Timeframe::H1, Timeframe::H4];
        let scan = async |now: i64| {
            let mut out = Vec::new();
            for s in symbols {
                for tf in timeframes {
                    out.push(cache.klines(s, tf, 200, now).await.unwrap());
                }
            }
            out
        };
        let first = scan(sim.sim.now_ms()).await;
        assert_eq!(cache.stats(), FetchStats { requests: 10, candles: 2000 });
        assert_eq!(kline_requests(&sim), 10);

        // Three hours later, per symbol: 1h answers the last closed candle, the old forming one
        // and 3 new ones (5); 4h answers 2 or 3 (a 4h candle may have opened meanwhile).
        sim.sim.advance(3 * HOUR);
        let second = scan(sim.sim.now_ms()).await;
        let stats = cache.stats();
        assert_eq!(kline_requests(&sim), 20, "one request per series: the open candle refreshes");
        let new_candles = stats.candles - 2000;
        assert!((5 * (5 + 2)..=5 * (5 + 3)).contains(&new_candles), "{stats:?}");

        // What the cache answers is what a fresh fetch answers.
        let fresh = CandleCache::new(cache.exchange.clone());
        for (i, (s, tf)) in
            symbols.iter().flat_map(|s| timeframes.map(move |tf| (s, tf))).enumerate()
        {
            let direct = fresh.klines(s, tf, 200, sim.sim.now_ms()).await.unwrap();
            assert_eq!(second[i], direct, "{s} {tf}");
            assert_eq!(second[i].len(), 200);
            assert_eq!(first[i].len(), 200);
        }
        assert_eq!(
            second[0].last().unwrap().open_time - first[0].last().unwrap().open_time,
            3 * HOUR
        );
    }

    #[tokio::test]
    async fn more_than_cached_fetches_in_full_and_memory_is_bounded() {
        let (sim, cache) = setup(2).await;
        let now = sim.sim.now_ms();
        cache.klines("BTCUSDT", Timeframe::H1, 50, now).await.unwrap();
        let got = cache.klines("BTCUSDT", Timeframe::H1, 120, now).await.unwrap();
        assert_eq!(got.len(), 120);
        assert_eq!(cache.stats(), FetchStats { requests: 2, candles: 170 });
        // Fewer than cached: from the cache plus the refreshed open candle (limit 2).
        let got = cache.klines("BTCUSDT", Timeframe::H1, 30, now).await.unwrap();
        assert_eq!(got.len(), 30);
        assert_eq!(cache.stats(), FetchStats { requests: 3, candles: 172 });

        cache.klines("ETHUSDT", Timeframe::H1, 10, now).await.unwrap();
        cache.klines("ETHUSDT", Timeframe::D1, 10, now).await.unwrap();
        assert_eq!(cache.len(), 2, "the least recently read series was dropped");
        let before = cache.stats().candles;
        cache.klines("BTCUSDT", Timeframe::H1, 30, now).await.unwrap();
        assert_eq!(cache.stats().candles - before, 30, "dropped series are fetched in full");
    }
}
