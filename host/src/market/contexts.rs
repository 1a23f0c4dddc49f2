//! The market contexts the service serves: computed from the one candle cache, cached in memory
//! for [`CACHE_TTL_SECONDS`], stored as snapshots, and observed by the compression and watch
//! memories (spec: "Market context", Persistence, the "Market multi-timeframe" endpoints).
//!
//! A context is recomputed when the cache has none for the symbol, when its entry is older
//! than the TTL (stale), or when it was computed for other timeframes; the new context replaces
//! the cache entry, is appended to the symbol's history and updates the memories. A cache hit
//! touches neither the exchange nor the store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use super::candles::columns;
use super::context::{self, MarketContext};
use super::memory::{CompressionMemory, WatchMemory};
use super::{CandleCache, Timeframe};
use crate::clock::SharedClock;
use crate::exchange::{Exchange, ExchangeError};
use crate::store::{Store, tables};

/// How long a computed context is served from the cache (spec, Limits).
pub const CACHE_TTL_SECONDS: i64 = 3600;
/// Candles read per timeframe for one analysis (the rules' lookbacks and medians need ~200).
pub const CONTEXT_CANDLES: u32 = 200;
/// The timeframes the market context accepts (spec, MarketContext).
pub const TIMEFRAMES: [&str; 6] = ["15m", "30m", "1h", "4h", "1d", "1w"];
/// High and low of this many recent MTF candles make the squeeze box of a compression episode
/// (the Bollinger period of the compression rule).
const SQUEEZE_BOX_BARS: usize = 20;

/// Why a context could not be served.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ContextError {
    #[error("{field} {value:?} is not a market timeframe; use one of 15m, 30m, 1h, 4h, 1d, 1w")]
    InvalidTimeframe { field: &'static str, value: String },
    #[error("{0} is not listed on the active exchange")]
    UnknownSymbol(String),
    #[error("market data of {symbol} cannot be fetched: {detail}")]
    Fetch { symbol: String, detail: String },
    #[error("the market context store failed: {0}")]
    Store(String),
}

/// The (MTF, HTF) pair of a request, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frames {
    pub mtf: &'static str,
    pub htf: &'static str,
}

impl Frames {
    /// `mtf` (default 4h) and `htf` (default: the spec's HTF for that MTF).
    pub fn parse(mtf: Option<&str>, htf: Option<&str>) -> Result<Frames, ContextError> {
        let checked = |field: &'static str, value: &str| {
            TIMEFRAMES
                .into_iter()
                .find(|tf| *tf == value)
                .ok_or_else(|| ContextError::InvalidTimeframe { field, value: value.to_string() })
        };
        let mtf = checked("mtf_tf", mtf.unwrap_or(context::DEFAULT_MTF))?;
        let htf = match htf {
            Some(htf) => checked("htf_tf", htf)?,
            None => context::htf_for(mtf).unwrap_or("1d"),
        };
        Ok(Frames { mtf, htf })
    }

    fn matches(&self, c: &MarketContext) -> bool {
        c.mtf_tf == self.mtf && c.htf_tf == self.htf
    }
}

/// One cache row of `GET /api/market/all`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CacheRow {
    #[serde(flatten)]
    pub context: MarketContext,
    /// Seconds since the context was computed.
    pub age_sec: i64,
    /// Older than the TTL: the next request recomputes it.
    pub stale: bool,
}

/// One snapshot row of `GET /api/market/{symbol}/history`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema)]
pub struct SnapshotRow {
    #[serde(flatten)]
    pub context: MarketContext,
    /// When it was computed, epoch seconds.
    pub computed_at: i64,
}

/// A served context and whether it came from the cache.
#[derive(Debug, Clone)]
pub struct Served {
    pub context: MarketContext,
    pub from_cache: bool,
}

/// The market area's public face for contexts. Cheap to share behind an `Arc`.
pub struct MarketContexts {
    exchange: Arc<dyn Exchange>,
    candles: Arc<CandleCache>,
    store: Store,
    clock: SharedClock,
    retention_days: u32,
    cache: Mutex<HashMap<String, MarketContext>>,
    /// One computation per symbol at a time: concurrent misses wait for the first and are
    /// served from its result (one fetch, one snapshot, one memory observation).
    computing: crate::keyed_locks::KeyedLocks,
}

impl MarketContexts {
    pub fn new(
        exchange: Arc<dyn Exchange>,
        candles: Arc<CandleCache>,
        store: Store,
        clock: SharedClock,
        retention_days: u32,
    ) -> Self {
        MarketContexts {
            exchange,
            candles,
            store,
            clock,
            retention_days,
            cache: Mutex::new(HashMap::new()),
            computing: crate::keyed_locks::KeyedLocks::default(),
        }
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, MarketContext>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The exchange's name (the `exchange` of a scan answer).
    pub fn exchange_name(&self) -> crate::config::ExchangeName {
        self.exchange.name()
    }

    /// The exchange the contexts read.
    pub fn exchange(&self) -> &Arc<dyn Exchange> {
        &self.exchange
    }

    /// The one candle cache (plugin scans read through it too).
    pub fn candles(&self) -> &Arc<CandleCache> {
        &self.candles
    }

    /// The context of `symbol` for `frames`: from the cache when fresh and for the same
    /// timeframes, else computed, cached, stored and observed by the memories.
    pub async fn get(&self, symbol: &str, frames: Frames) -> Result<Served, ContextError> {
        if let Some(context) = self.fresh(symbol, frames) {
            return Ok(Served { context, from_cache: true });
        }
        let _computing = self.computing.lock(symbol).await;
        // Another request may have computed it while this one waited.
        if let Some(context) = self.fresh(symbol, frames) {
            return Ok(Served { context, from_cache: true });
        }
        self.check_listed(symbol).await?;
        let context = self.compute(symbol, frames).await?;
        Ok(Served { context, from_cache: false })
    }

    /// The cached context of `symbol` if it is younger than the TTL and for `frames`.
    fn fresh(&self, symbol: &str, frames: Frames) -> Option<MarketContext> {
        let now_s = self.clock.now_ms().div_euclid(1000);
        self.cache().get(symbol).cloned().filter(|c| {
            frames.matches(c) && now_s - c.timestamp < CACHE_TTL_SECONDS && c.timestamp <= now_s
        })
    }

    async fn check_listed(&self, symbol: &str) -> Result<(), ContextError> {
        match self.exchange.symbol_rules(symbol).await {
            Ok(_) | Err(ExchangeError::Refused { .. }) => Ok(()),
            Err(ExchangeError::InvalidSymbol { .. }) => {
                Err(ContextError::UnknownSymbol(symbol.to_string()))
            }
            Err(err) => Err(ContextError::Fetch {
                symbol: symbol.to_string(),
                detail: format!("exchangeInfo: {err}"),
            }),
        }
    }

    async fn compute(&self, symbol: &str, frames: Frames) -> Result<MarketContext, ContextError> {
        let now_ms = self.clock.now_ms();
        let fetch = async |tf: &str| {
            let timeframe: Timeframe = tf.parse().map_err(|e| ContextError::Fetch {
                symbol: symbol.to_string(),
                detail: format!("{e}"),
            })?;
            let klines =
                self.candles.klines(symbol, timeframe, CONTEXT_CANDLES, now_ms).await.map_err(
                    |e| match e {
                        ExchangeError::InvalidSymbol { .. } => {
                            ContextError::UnknownSymbol(symbol.to_string())
                        }
                        other => ContextError::Fetch {
                            symbol: symbol.to_string(),
                            detail: format!("{tf} klines: {other}"),
                        },
                    },
                )?;
            Ok::<_, ContextError>(columns(tf, &klines))
        };
        let htf = fetch(frames.htf).await?;
        let mtf = fetch(frames.mtf).await?;
        let mut context =
            context::analyze(symbol, frames.htf, frames.mtf, &htf, &mtf, now_ms.div_euclid(1000));
        self.remember(&mut context, &mtf)?;
        let now_s = now_ms.div_euclid(1000);
        let mut cache = self.cache();
        // Only listed symbols get here, and an aged context is never served again: the cache
        // holds at most the symbols asked for within the TTL.
        cache.retain(|_, c| now_s - c.timestamp < CACHE_TTL_SECONDS);
        cache.insert(symbol.to_string(), context.clone());
        Ok(context)
    }

    /// Observes the memories, adds them to `mtf.detail`, and appends the snapshot (one write
    /// transaction; snapshots older than the retention are pruned with it).
    fn remember(
        &self,
        context: &mut MarketContext,
        mtf: &spotbot_sdk::Candles,
    ) -> Result<(), ContextError> {
        let n = mtf.close.len();
        let recent = n.saturating_sub(SQUEEZE_BOX_BARS)..n;
        let squeeze_box = (
            mtf.high[recent.clone()].iter().copied().fold(f64::MIN, f64::max),
            mtf.low[recent].iter().copied().fold(f64::MAX, f64::min),
        );
        let close = mtf.close.last().copied().unwrap_or(f64::NAN);
        let key = format!("{}/{}", context.symbol, context.mtf_tf);
        let snapshot_key = format!(
            "{}/{:012}/{}/{}",
            context.symbol, context.timestamp, context.mtf_tf, context.htf_tf
        );
        let cutoff = context.timestamp - i64::from(self.retention_days) * 86_400;
        let prune_from = format!("{}/", context.symbol);
        let prune_to = format!("{}/{:012}", context.symbol, cutoff.max(0));
        self.store
            .write(|w| {
                let mut compression: CompressionMemory =
                    w.get(tables::COMPRESSION_STATE, &key)?.unwrap_or_default();
                let mut watch: WatchMemory = w.get(tables::WATCH_STATE, &key)?.unwrap_or_default();
                compression.observe(context, squeeze_box, close);
                watch.observe(context);
                w.put(tables::COMPRESSION_STATE, &key, &compression)?;
                w.put(tables::WATCH_STATE, &key, &watch)?;
                if let Some(detail) = context.mtf.detail.as_object_mut() {
                    detail.insert("compression_memory".into(), json!(compression));
                    detail.insert("watch_memory".into(), json!(watch));
                }
                w.remove_range(tables::MARKET_SNAPSHOTS, &prune_from, &prune_to)?;
                let row = SnapshotRow { context: context.clone(), computed_at: context.timestamp };
                w.put(tables::MARKET_SNAPSHOTS, &snapshot_key, &row)
            })
            .map_err(|e| ContextError::Store(e.to_string()))
    }

    /// Every cached context with its age; stale rows only when `include_stale`. By symbol.
    pub fn cached(&self, include_stale: bool) -> Vec<CacheRow> {
        let now_s = self.clock.now_ms().div_euclid(1000);
        let mut rows: Vec<CacheRow> = self
            .cache()
            .values()
            .map(|c| {
                let age_sec = (now_s - c.timestamp).max(0);
                CacheRow { context: c.clone(), age_sec, stale: age_sec >= CACHE_TTL_SECONDS }
            })
            .filter(|row| include_stale || !row.stale)
            .collect();
        rows.sort_by(|a, b| a.context.symbol.cmp(&b.context.symbol));
        rows
    }

    /// The newest `limit` snapshots of `symbol`, newest first, optionally only those of the
    /// given timeframes.
    pub fn history(
        &self,
        symbol: &str,
        limit: usize,
        htf: Option<&str>,
        mtf: Option<&str>,
    ) -> Result<Vec<SnapshotRow>, ContextError> {
        let prefix = format!("{symbol}/");
        self.store
            .read(|r| {
                r.with_prefix_desc(
                    tables::MARKET_SNAPSHOTS,
                    &prefix,
                    limit,
                    |_, row: &SnapshotRow| {
                        htf.is_none_or(|h| row.context.htf_tf == h)
                            && mtf.is_none_or(|m| row.context.mtf_tf == m)
                    },
                )
            })
            .map(|rows| rows.into_iter().map(|(_, row)| row).collect())
            .map_err(|e| ContextError::Store(e.to_string()))
    }
}

/// What a scan of several symbols served.
#[derive(Debug, Clone, Default)]
pub struct ScanReport {
    pub results: Vec<MarketContext>,
    /// How many of `results` came from the cache.
    pub from_cache: usize,
    /// Symbols that could not be served, with why.
    pub errors: Vec<(String, ContextError)>,
}

impl MarketContexts {
    /// The contexts of `symbols` in order (cached when fresh); a symbol that fails is reported
    /// in `errors` and the scan goes on.
    pub async fn scan(&self, symbols: &[String], frames: Frames) -> ScanReport {
        let mut report = ScanReport::default();
        for symbol in symbols {
            match self.get(symbol, frames).await {
                Ok(served) => {
                    report.from_cache += usize::from(served.from_cache);
                    report.results.push(served.context);
                }
                Err(err) => report.errors.push((symbol.clone(), err)),
            }
        }
        report
    }
}
