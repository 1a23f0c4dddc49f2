//! Where a scan's market data comes from.
//!
//! The plugins area does not fetch candles itself: it asks a [`MarketData`] source for the
//! symbols and candles a plugin's manifest names. The service wires [`ExchangeMarket`] (the
//! active exchange's klines and 24 h tickers); `[plugins] market_data = "synthetic"` selects
//! [`SyntheticMarket`] instead, deterministic random-walk candles (the SDK's generator) for tests that must never be
//! used for trading.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::model::{self, CandleNeed, Candles, MarketSnapshot, SymbolData};
use crate::market::candles::columns;
use crate::market::{Frames, MarketContexts, Timeframe};

/// A boxed future, so the trait stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a plugin scan needs from the market.
#[derive(Debug, Clone, PartialEq)]
pub struct MarketQuery {
    pub symbols: Vec<String>,
    pub candles: Vec<CandleNeed>,
    /// The reference symbol, when the manifest asks for it.
    pub reference: Option<String>,
    pub market_context: bool,
    /// Epoch ms of "now", from the service clock.
    pub now_ms: i64,
}

/// A source of market data for plugin scans.
pub trait MarketData: Send + Sync {
    /// The data for `query`, or one sentence saying why it is unavailable.
    fn snapshot(&self, query: MarketQuery) -> BoxFuture<'_, Result<MarketSnapshot, String>>;

    /// The first of `symbols` this source does not list (`Ok(None)`: all are listed), asked
    /// before anything is fetched, so a typo is refused by name instead of failing the fetch.
    /// `Err` says why the listing itself is unavailable. The default lists every symbol.
    fn unlisted<'a>(
        &'a self,
        symbols: &'a [String],
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        let _ = symbols;
        Box::pin(async { Ok(None) })
    }
}

/// Used until a real source is wired: every scan fails with a clear reason.
#[derive(Debug, Default)]
pub struct NoMarketData;

impl MarketData for NoMarketData {
    fn snapshot(&self, _query: MarketQuery) -> BoxFuture<'_, Result<MarketSnapshot, String>> {
        Box::pin(async {
            Err("no market data source is configured for plugin scans (plugins.market_data)".into())
        })
    }
}

/// Deterministic random-walk candles per symbol (the SDK's generator, `spotbot_sdk::testing`,
/// seeded by the symbol name), aligned to the timeframe grid before `now`; the last candle is
/// the one containing `now`. For demos and tests only.
#[derive(Debug, Default)]
pub struct SyntheticMarket;

impl SyntheticMarket {
    pub fn symbol(symbol: &str, candles: &[CandleNeed], now_ms: i64) -> SymbolData {
        let seed = symbol.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let candles: Vec<Candles> = candles
            .iter()
            .enumerate()
            .map(|(i, need)| {
                let step = need
                    .timeframe
                    .parse::<Timeframe>()
                    .map_or(Timeframe::H1.duration_ms(), Timeframe::duration_ms);
                // The SDK's candles end just before `end`: end after the candle containing now.
                let end = now_ms - now_ms.rem_euclid(step) + step;
                let c = spotbot_sdk::testing::candles(
                    seed.wrapping_add(i as u64),
                    &need.timeframe,
                    need.count as usize,
                    100.0,
                    0.0,
                    end,
                );
                Candles {
                    timeframe: c.timeframe,
                    open_time: c.open_time,
                    open: c.open,
                    high: c.high,
                    low: c.low,
                    close: c.close,
                    volume: c.volume,
                }
            })
            .collect();
        let last_price = candles.first().and_then(|c| c.close.last().copied()).unwrap_or(100.0);
        SymbolData {
            symbol: symbol.to_string(),
            last_price,
            quote_volume_24h: 5_000_000.0,
            candles,
            market_context: None,
        }
    }
}

impl MarketData for SyntheticMarket {
    fn snapshot(&self, query: MarketQuery) -> BoxFuture<'_, Result<MarketSnapshot, String>> {
        Box::pin(async move {
            let symbols = query
                .symbols
                .iter()
                .map(|s| Self::symbol(s, &query.candles, query.now_ms))
                .collect();
            let reference = query.reference.map(|s| Self::symbol(&s, &query.candles, query.now_ms));
            Ok(MarketSnapshot { symbols, reference })
        })
    }
}

/// Market data from the active exchange: the 24 h tickers of the symbols and, per symbol and
/// manifest timeframe, the most recent klines read through the market area's one
/// [`crate::market::CandleCache`] (which fetches only the candles that are new since the last
/// scan). A plugin that asks for market context gets each symbol's context at the default
/// timeframes (MTF 4h, HTF 1d) from the market area's cache; a symbol whose context cannot be
/// computed gets none, and the log says why.
pub struct ExchangeMarket {
    contexts: Arc<MarketContexts>,
}

impl ExchangeMarket {
    pub fn new(contexts: Arc<MarketContexts>) -> Self {
        ExchangeMarket { contexts }
    }

    fn exchange(&self) -> &Arc<dyn crate::exchange::Exchange> {
        self.contexts.exchange()
    }

    async fn context(&self, symbol: &str) -> Option<model::MarketContext> {
        let frames = Frames::parse(None, None).ok()?;
        match self.contexts.get(symbol, frames).await {
            Ok(served) => Some(model::MarketContext::from(&served.context)),
            Err(err) => {
                tracing::warn!(symbol, %err, "no market context for the plugin scan");
                None
            }
        }
    }

    async fn symbol(
        &self,
        symbol: &str,
        needs: &[CandleNeed],
        ticker: Option<&crate::exchange::Ticker24h>,
        now_ms: i64,
    ) -> Result<SymbolData, String> {
        use rust_decimal::prelude::ToPrimitive;
        let f = |d: rust_decimal::Decimal| d.to_f64().unwrap_or(f64::NAN);
        let mut candles = Vec::with_capacity(needs.len());
        for need in needs {
            let timeframe: Timeframe = need.timeframe.parse().map_err(|e| format!("{e}"))?;
            let klines = self
                .contexts
                .candles()
                .klines(symbol, timeframe, need.count, now_ms)
                .await
                .map_err(|e| format!("{symbol} {} klines: {e}", need.timeframe))?;
            candles.push(columns(&need.timeframe, &klines));
        }
        let ticker = ticker.ok_or_else(|| format!("{symbol}: no 24h ticker on the exchange"))?;
        Ok(SymbolData {
            symbol: symbol.to_string(),
            last_price: f(ticker.last_price.0),
            quote_volume_24h: f(ticker.quote_volume),
            candles,
            market_context: None,
        })
    }
}

impl MarketData for ExchangeMarket {
    /// Looks each symbol up in the exchange's cached listing (exchangeInfo symbol rules). A
    /// listed symbol whose filters are unusable for orders still counts as listed: a scan
    /// places no order.
    fn unlisted<'a>(
        &'a self,
        symbols: &'a [String],
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            for symbol in symbols {
                match self.exchange().symbol_rules(symbol).await {
                    Ok(_) | Err(crate::exchange::ExchangeError::Refused { .. }) => {}
                    Err(crate::exchange::ExchangeError::InvalidSymbol { .. }) => {
                        return Ok(Some(symbol.clone()));
                    }
                    Err(err) => return Err(format!("exchangeInfo: {err}")),
                }
            }
            Ok(None)
        })
    }

    fn snapshot(&self, query: MarketQuery) -> BoxFuture<'_, Result<MarketSnapshot, String>> {
        Box::pin(async move {
            let mut wanted = query.symbols.clone();
            wanted.extend(query.reference.iter().cloned());
            let tickers = self
                .exchange()
                .tickers_24h(&wanted)
                .await
                .map_err(|e| format!("24h tickers: {e}"))?;
            let ticker = |s: &str| tickers.iter().find(|t| t.symbol == s);
            let mut symbols = Vec::with_capacity(query.symbols.len());
            for s in &query.symbols {
                let mut data = self.symbol(s, &query.candles, ticker(s), query.now_ms).await?;
                if query.market_context {
                    data.market_context = self.context(s).await;
                }
                symbols.push(data);
            }
            let reference = match &query.reference {
                Some(r) => Some(self.symbol(r, &query.candles, ticker(r), query.now_ms).await?),
                None => None,
            };
            Ok(MarketSnapshot { symbols, reference })
        })
    }
}
