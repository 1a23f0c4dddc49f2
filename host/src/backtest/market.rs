//! The market data source of a backtest: the plugins area's [`MarketData`] answered from the
//! loaded history at the clock's time, so a backtest scan runs through `Plugins::scan`, the
//! very code path of live scans (config, `needs::effective`, reference symbol, response
//! checks, state), with only the source of the candles swapped — as `[plugins] market_data`
//! swaps the exchange for synthetic candles.
//!
//! What a scan at time `now` receives is what a live read at `now` returns:
//! - per timeframe the newest `count` candles: the closed ones (open + length ≤ now) and the
//!   candle still forming at `now`, built from the finest timeframe's closed candles since its
//!   open plus the price at `now` (the open of the finest candle starting at `now`, which is
//!   also the price the simulator's engine stands at); nothing after `now` is visible;
//! - `last_price` = that price; `quote_volume_24h` = Σ close × volume of the finest candles of
//!   the last 24 h;
//! - with `needs_market_context`, the context of `market::context::analyze` at the default
//!   timeframes (4h / 1d, [`CONTEXT_CANDLES`] each, the forming candle included), computed at
//!   most once per [`CACHE_TTL_SECONDS`] per symbol, as the live cache does.
//!
//! Before the history is loaded, the first scan is a probe: its query (the effective candle
//! needs, the reference symbol, whether a context is wanted) is recorded and the scan fails
//! with [`PROBE`], so the backtest learns what to load from the same code the scan uses.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::history::{self, History};
use crate::market::Timeframe;
use crate::market::contexts::{CACHE_TTL_SECONDS, CONTEXT_CANDLES, Frames};
use crate::plugins::market::BoxFuture;
use crate::plugins::model::{self, CandleNeed, Candles, MarketSnapshot, SymbolData};
use crate::plugins::{MarketData, MarketQuery};

/// The error of the probing scan.
pub const PROBE: &str = "backtest probe: history not loaded yet";

struct Loaded {
    history: Arc<History>,
    finest: Timeframe,
}

/// What a scan is served from the history. Replays serve [`Served::AsLive`]; `check-bias`
/// replays the same scans served the other two ways and compares the decisions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Served {
    /// What a live read at the scan's time returns (the module documentation).
    #[default]
    AsLive,
    /// The same, computed from a copy of the history cut to what was known at the scan's time
    /// ([`History::known_at`]): anything the scan then sees differently came from the future.
    KnownOnly,
    /// Each timeframe's window this many times longer than the plugin asked for (more
    /// warm-up): a decision that changes with it depends on how much history preceded it.
    MoreWarmup(u32),
    /// A planted look-ahead, for proving `check-bias` finds one: each scan served what a live
    /// read one finest candle later returns (that candle as closed). Tests only.
    #[cfg(test)]
    OneCandleAhead,
}

/// See the module documentation.
#[derive(Default)]
pub struct BacktestMarket {
    served: Served,
    loaded: OnceLock<Loaded>,
    probed: Mutex<Option<MarketQuery>>,
    contexts: Mutex<HashMap<String, model::MarketContext>>,
    /// Nanoseconds spent in `analyze` and building snapshots: measurements for the report.
    context_ns: std::sync::atomic::AtomicU64,
    snapshot_ns: std::sync::atomic::AtomicU64,
}

impl BacktestMarket {
    pub fn new() -> Self {
        Self::default()
    }

    /// A source serving the history `served`.
    pub fn serving(served: Served) -> Self {
        BacktestMarket { served, ..Self::default() }
    }

    /// Seconds spent computing market contexts so far.
    pub fn context_seconds(&self) -> f64 {
        self.context_ns.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9
    }

    /// Seconds spent building snapshots so far (contexts included).
    pub fn snapshot_seconds(&self) -> f64 {
        self.snapshot_ns.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9
    }

    /// The query of the probing scan, once it ran.
    pub fn probed(&self) -> Option<MarketQuery> {
        self.probed.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Serves `history` from now on; `finest` is the timeframe of the replay's steps.
    pub fn load(&self, history: Arc<History>, finest: Timeframe) {
        let _ = self.loaded.set(Loaded { history, finest });
    }

    fn snapshot_at(&self, loaded: &Loaded, query: &MarketQuery) -> Result<MarketSnapshot, String> {
        match self.served {
            Served::AsLive => self.snapshot_of(loaded, query),
            Served::KnownOnly => {
                let history = Arc::new(loaded.history.known_at(query.now_ms, loaded.finest));
                self.snapshot_of(&Loaded { history, finest: loaded.finest }, query)
            }
            #[cfg(test)]
            Served::OneCandleAhead => {
                let mut ahead = query.clone();
                ahead.now_ms += loaded.finest.duration_ms();
                self.snapshot_of(loaded, &ahead)
            }
            Served::MoreWarmup(times) => {
                let mut longer = query.clone();
                for need in &mut longer.candles {
                    need.count = need.count.saturating_mul(times);
                }
                self.snapshot_of(loaded, &longer)
            }
        }
    }

    fn snapshot_of(&self, loaded: &Loaded, query: &MarketQuery) -> Result<MarketSnapshot, String> {
        let mut symbols = Vec::with_capacity(query.symbols.len());
        for symbol in &query.symbols {
            let mut data = symbol_data(loaded, symbol, &query.candles, query.now_ms)?;
            if query.market_context {
                data.market_context = self.context(loaded, symbol, query.now_ms);
            }
            symbols.push(data);
        }
        let reference = match &query.reference {
            Some(r) => Some(symbol_data(loaded, r, &query.candles, query.now_ms)?),
            None => None,
        };
        Ok(MarketSnapshot { symbols, reference })
    }

    /// The cached context of `symbol` while younger than the TTL, else a fresh one.
    fn context(&self, loaded: &Loaded, symbol: &str, now_ms: i64) -> Option<model::MarketContext> {
        let now_s = now_ms.div_euclid(1000);
        let cached = self.contexts.lock().unwrap_or_else(|e| e.into_inner()).get(symbol).cloned();
        if let Some(c) = cached
            && now_s - c.timestamp < CACHE_TTL_SECONDS
            && c.timestamp <= now_s
        {
            return Some(c);
        }
        let started = std::time::Instant::now();
        let frames = Frames::parse(None, None).ok()?;
        let read = |tf: &str| {
            let tf: Timeframe = tf.parse().ok()?;
            window(&loaded.history, loaded.finest, symbol, tf, CONTEXT_CANDLES, now_ms).ok()
        };
        let (htf, mtf) = (read(frames.htf)?, read(frames.mtf)?);
        let context =
            crate::market::context::analyze(symbol, frames.htf, frames.mtf, &htf, &mtf, now_s);
        let flat = model::MarketContext::from(&context);
        self.contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(symbol.to_string(), flat.clone());
        let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.context_ns.fetch_add(ns, std::sync::atomic::Ordering::Relaxed);
        Some(flat)
    }
}

/// The market data of one symbol at `now_ms`.
fn symbol_data(
    loaded: &Loaded,
    symbol: &str,
    needs: &[CandleNeed],
    now_ms: i64,
) -> Result<SymbolData, String> {
    let mut candles = Vec::with_capacity(needs.len());
    for need in needs {
        let tf: Timeframe = need.timeframe.parse().map_err(|e| format!("{e}"))?;
        candles.push(window(&loaded.history, loaded.finest, symbol, tf, need.count, now_ms)?);
    }
    let fine = loaded
        .history
        .get(symbol, loaded.finest)
        .ok_or_else(|| format!("{symbol}: no {} candles in the history", loaded.finest))?;
    let day_ago = now_ms - 86_400_000;
    let from = fine.open_time.partition_point(|t| *t < day_ago);
    let closed = closed_count(fine, loaded.finest, now_ms);
    let quote_volume_24h = (from..closed.max(from)).map(|i| fine.close[i] * fine.volume[i]).sum();
    let last_price = price_at(fine, now_ms)
        .or_else(|| closed.checked_sub(1).map(|i| fine.close[i]))
        .ok_or_else(|| format!("{symbol}: no candles before {}", history::iso(now_ms)))?;
    Ok(SymbolData {
        symbol: symbol.to_string(),
        last_price,
        quote_volume_24h,
        candles,
        market_context: None,
    })
}

/// Number of candles of `c` (timeframe `tf`) closed at `now_ms`.
fn closed_count(c: &Candles, tf: Timeframe, now_ms: i64) -> usize {
    let len = tf.duration_ms();
    c.open_time.partition_point(|t| t + len <= now_ms)
}

/// The price at `now_ms`: the open of the finest candle opening then.
fn price_at(fine: &Candles, now_ms: i64) -> Option<f64> {
    fine.open_time.binary_search(&now_ms).ok().map(|i| fine.open[i])
}

/// The newest `count` candles of `symbol` on `tf` a live read at `now_ms` returns: closed
/// candles, then the one forming at `now_ms` (when the finest timeframe has a candle opening at
/// `now_ms`).
pub fn window(
    history: &History,
    finest: Timeframe,
    symbol: &str,
    tf: Timeframe,
    count: u32,
    now_ms: i64,
) -> Result<Candles, String> {
    let series = history
        .get(symbol, tf)
        .ok_or_else(|| format!("{symbol}: no {tf} candles in the history"))?;
    let fine = history
        .get(symbol, finest)
        .ok_or_else(|| format!("{symbol}: no {finest} candles in the history"))?;
    let forming = forming(fine, finest, tf, now_ms);
    let closed = closed_count(series, tf, now_ms);
    let keep = (count as usize).saturating_sub(usize::from(forming.is_some()));
    let mut out = history::slice(series, closed.saturating_sub(keep)..closed, 1);
    if let Some([open, high, low, close, volume]) = forming {
        out.open_time.push(history::candle_open(tf, now_ms));
        out.open.push(open);
        out.high.push(high);
        out.low.push(low);
        out.close.push(close);
        out.volume.push(volume);
    }
    Ok(out)
}

/// The candle of `tf` forming at `now_ms`, from the finest candles closed since its open and
/// the price at `now_ms`: [open, high, low, close, volume].
fn forming(fine: &Candles, finest: Timeframe, tf: Timeframe, now_ms: i64) -> Option<[f64; 5]> {
    let price = price_at(fine, now_ms)?;
    let open_tf = history::candle_open(tf, now_ms);
    let from = fine.open_time.partition_point(|t| *t < open_tf);
    let to = closed_count(fine, finest, now_ms).max(from);
    if from == to {
        return Some([price, price, price, price, 0.0]);
    }
    let high = fine.high[from..to].iter().copied().fold(price, f64::max);
    let low = fine.low[from..to].iter().copied().fold(price, f64::min);
    let volume = fine.volume[from..to].iter().sum();
    Some([fine.open[from], high, low, price, volume])
}

impl MarketData for BacktestMarket {
    fn unlisted<'a>(
        &'a self,
        symbols: &'a [String],
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            let Some(loaded) = self.loaded.get() else {
                return Ok(None);
            };
            Ok(symbols.iter().find(|s| !loaded.history.has_symbol(s)).cloned())
        })
    }

    fn snapshot(&self, query: MarketQuery) -> BoxFuture<'_, Result<MarketSnapshot, String>> {
        Box::pin(async move {
            match self.loaded.get() {
                Some(loaded) => {
                    let started = std::time::Instant::now();
                    let snapshot = self.snapshot_at(loaded, &query);
                    let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    self.snapshot_ns.fetch_add(ns, std::sync::atomic::Ordering::Relaxed);
                    snapshot
                }
                None => {
                    *self.probed.lock().unwrap_or_else(|e| e.into_inner()) = Some(query);
                    Err(PROBE.to_string())
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;

    fn hourly(n: usize) -> Candles {
        let mut c = history::empty(Timeframe::H1);
        for i in 0..n {
            let p = 100.0 + i as f64;
            c.open_time.push(i as i64 * H);
            c.open.push(p);
            c.high.push(p + 2.0);
            c.low.push(p - 1.0);
            c.close.push(p + 0.5);
            c.volume.push(10.0);
        }
        c
    }

    #[test]
    fn a_window_shows_closed_candles_and_the_forming_one_nothing_later() {
        let fine = hourly(48);
        let mut h = History::default();
        h.insert("X", Timeframe::H4, history::aggregate(&fine, Timeframe::H1, Timeframe::H4));
        h.insert("X", Timeframe::H1, fine);
        // At 10:00: 1h candles up to 09:00 closed, the 10:00 one forming at its open price.
        let w = window(&h, Timeframe::H1, "X", Timeframe::H1, 3, 10 * H).unwrap();
        assert_eq!(w.open_time, vec![8 * H, 9 * H, 10 * H]);
        assert_eq!(w.close[2], 110.0, "the forming candle stands at the price of now");
        assert_eq!((w.high[2], w.low[2], w.volume[2]), (110.0, 110.0, 0.0));
        // 4h at 10:00: 00:00 and 04:00 closed, 08:00 forming from 08:00 and 09:00 plus now.
        let w = window(&h, Timeframe::H1, "X", Timeframe::H4, 5, 10 * H).unwrap();
        assert_eq!(w.open_time, vec![0, 4 * H, 8 * H]);
        assert_eq!(w.open[2], 108.0);
        assert_eq!(w.high[2], 111.0);
        assert_eq!(w.low[2], 107.0);
        assert_eq!(w.close[2], 110.0);
        assert_eq!(w.volume[2], 20.0);
    }
}
