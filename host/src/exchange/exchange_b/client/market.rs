//! Market data and the listing: spotMeta (the symbol map, cached like exchange A's
//! exchangeInfo), mids (`allMids`), candles (`candleSnapshot`, paged) and 24 h tickers
//! (`spotMetaAndAssetCtxs`).

use std::collections::HashMap;
use std::sync::Arc;

use rust_decimal::Decimal;
use serde_json::json;

use super::{ExchangeBClient, Listing, MISS_RELOAD_AFTER_MS};
use crate::exchange::exchange_b::symbols::{Pair, SymbolMap};
use crate::exchange::exchange_b::wire::{AssetCtx, Candle, Mid, SpotMeta};
use crate::exchange::{ExchangeError, Kline, Price, Ticker24h};

/// The most candles one `candleSnapshot` answer holds.
const CANDLES_PER_ANSWER: usize = 500;

/// How many symbols a ticker request may name for their high and low to be read from candles
/// (one `candleSnapshot` each); longer lists get the approximation (see [`ticker_of`]).
const TICKER_CANDLE_SYMBOLS: usize = 5;

/// The length of a candle interval in ms; `None` for one exchange B does not have, or
/// whose length varies (`1M`).
pub fn interval_ms(interval: &str) -> Option<i64> {
    const MINUTE: i64 = 60_000;
    Some(match interval {
        "1m" => MINUTE,
        "3m" => 3 * MINUTE,
        "5m" => 5 * MINUTE,
        "15m" => 15 * MINUTE,
        "30m" => 30 * MINUTE,
        "1h" => 60 * MINUTE,
        "2h" => 120 * MINUTE,
        "4h" => 240 * MINUTE,
        "8h" => 480 * MINUTE,
        "12h" => 720 * MINUTE,
        "1d" => 1440 * MINUTE,
        "3d" => 3 * 1440 * MINUTE,
        "1w" => 7 * 1440 * MINUTE,
        _ => return None,
    })
}

/// Where a window holding the `limit` candles that open at or before `end` starts: one
/// interval further back than `limit` intervals, because candles need not open on multiples
/// of their length since the epoch (weekly ones open on Monday; the epoch was a Thursday).
/// The caller keeps the newest `limit` of what the window holds.
fn window_start(end: i64, step: i64, limit: i64) -> i64 {
    (end.div_euclid(step) - limit) * step
}

impl From<Candle> for Kline {
    /// Exchange B's candles carry no quote volume: it is approximated as the base volume at
    /// the candle's typical price `(high + low + close) / 3`.
    fn from(c: Candle) -> Self {
        // Checked: an answer's numbers never make the client panic (zero when out of range).
        let typical = c.h.checked_add(c.l).and_then(|s| s.checked_add(c.c)).unwrap_or_default()
            / Decimal::from(3);
        Kline {
            open_time: c.t,
            open: Price(c.o),
            high: Price(c.h),
            low: Price(c.l),
            close: Price(c.c),
            volume: c.v,
            close_time: c.close_time,
            quote_volume: c.v.checked_mul(typical).unwrap_or_default().round_dp(8),
            trades: c.n,
        }
    }
}

/// The 24 h ticker of `pair` from its asset context. Last = the mid (the mark when the book
/// is one-sided), change against `prevDayPx`, quote volume = `dayNtlVlm`. Exchange B reports
/// no base volume, high or low there: the volume is the quote volume at the last price, and
/// high and low are those of `candles` (the newest 1h candles) when given, else the range of
/// the previous day's price and the last one — an approximation callers see documented on
/// [`crate::exchange::exchange_b`].
pub fn ticker_of(pair: &Pair, ctx: &AssetCtx, candles: Option<&[Candle]>) -> Ticker24h {
    let last = ctx.mid_px.unwrap_or(ctx.mark_px);
    let change = if ctx.prev_day_px > Decimal::ZERO {
        last.checked_sub(ctx.prev_day_px)
            .and_then(|d| d.checked_div(ctx.prev_day_px))
            .and_then(|r| r.checked_mul(Decimal::ONE_HUNDRED))
            .unwrap_or_default()
            .round_dp(3)
    } else {
        Decimal::ZERO
    };
    let (high, low) = match candles.filter(|c| !c.is_empty()) {
        Some(c) => (
            c.iter().map(|c| c.h).fold(last, Decimal::max),
            c.iter().map(|c| c.l).fold(last, Decimal::min),
        ),
        None if ctx.prev_day_px > Decimal::ZERO => {
            (last.max(ctx.prev_day_px), last.min(ctx.prev_day_px))
        }
        None => (last, last),
    };
    let volume = if last > Decimal::ZERO {
        ctx.day_ntl_vlm.checked_div(last).unwrap_or_default().round_dp(8)
    } else {
        Decimal::ZERO
    };
    Ticker24h {
        symbol: pair.symbol.clone(),
        last_price: Price(last),
        price_change_percent: change,
        high_price: Price(high),
        low_price: Price(low),
        volume,
        quote_volume: ctx.day_ntl_vlm,
    }
}

impl ExchangeBClient {
    /// The symbol map, loaded from spotMeta when missing or older than `meta_ttl` (the
    /// stream link reads coins with it).
    pub(crate) async fn symbol_map(&self) -> Result<Arc<SymbolMap>, ExchangeError> {
        let now = self.clock.now_ms();
        let ttl = self.config.meta_ttl.as_millis() as i64;
        let cached = self.listing.read().unwrap_or_else(|e| e.into_inner()).clone();
        match cached {
            Some(l) if now - l.fetched_ms < ttl => Ok(l.map),
            _ => self.load_listing().await,
        }
    }

    async fn load_listing(&self) -> Result<Arc<SymbolMap>, ExchangeError> {
        let meta: SpotMeta = self.info("spotMeta", json!({})).await?;
        let map = Arc::new(SymbolMap::from_meta(&meta));
        let listing = Listing { map: map.clone(), fetched_ms: self.clock.now_ms() };
        *self.listing.write().unwrap_or_else(|e| e.into_inner()) = Some(listing);
        Ok(map)
    }

    /// The pair of `symbol`; a symbol missing from a listing older than a minute loads it
    /// again once (a pair listed since), else `InvalidSymbol`.
    pub(super) async fn pair(&self, symbol: &str) -> Result<Pair, ExchangeError> {
        let map = self.symbol_map().await?;
        if let Some(pair) = map.pair(symbol) {
            return Ok(pair.clone());
        }
        let fetched =
            self.listing.read().unwrap_or_else(|e| e.into_inner()).as_ref().map(|l| l.fetched_ms);
        let map = match fetched {
            Some(at) if self.clock.now_ms() - at >= MISS_RELOAD_AFTER_MS => {
                self.load_listing().await?
            }
            _ => map,
        };
        map.pair(symbol).cloned().ok_or_else(|| ExchangeError::InvalidSymbol {
            code: super::errors::NO_CODE,
            msg: format!("{symbol} is not a spot pair against USDC on exchange B"),
        })
    }

    /// Every mid by coin (`allMids`).
    pub(super) async fn mids(&self) -> Result<HashMap<String, Decimal>, ExchangeError> {
        let mids: HashMap<String, Mid> = self.info("allMids", json!({})).await?;
        Ok(mids.into_iter().map(|(coin, Mid(mid))| (coin, mid)).collect())
    }

    /// The mid of `pair`.
    pub(super) async fn mid(&self, pair: &Pair) -> Result<Price, ExchangeError> {
        let mids = self.mids().await?;
        // A mid the slippage rule could not move without leaving the decimal range is no price.
        let usable = |m: &Decimal| *m > Decimal::ZERO && m.checked_mul(Decimal::TWO).is_some();
        mids.get(&pair.coin).copied().filter(usable).map(Price).ok_or_else(|| {
            ExchangeError::Decode {
                detail: format!("allMids has no price for {} ({})", pair.symbol, pair.coin),
            }
        })
    }

    /// Every traded symbol's mid.
    pub(super) async fn all_prices(&self) -> Result<Vec<(String, Price)>, ExchangeError> {
        let map = self.symbol_map().await?;
        let mids = self.mids().await?;
        let mut prices: Vec<(String, Price)> = mids
            .into_iter()
            .filter_map(|(coin, mid)| Some((map.by_coin(&coin)?.symbol.clone(), Price(mid))))
            .collect();
        prices.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(prices)
    }

    /// The `limit` newest candles of `symbol` opening at or before `end_time` (now when
    /// unset), oldest first. An answer holds at most 500, so the window is read in pages
    /// forward from its start.
    pub(super) async fn candles(
        &self,
        symbol: &str,
        interval: &str,
        limit: u32,
        end_time: Option<i64>,
    ) -> Result<Vec<Kline>, ExchangeError> {
        let step = interval_ms(interval).ok_or_else(|| ExchangeError::Refused {
            reason: format!("interval {interval:?} is not one exchange B serves at a fixed length"),
        })?;
        let pair = self.pair(symbol).await?;
        let limit = i64::from(limit.clamp(1, 5000));
        let end = end_time.unwrap_or_else(|| self.clock.now_ms());
        let mut start = window_start(end, step, limit);
        let mut out: Vec<Candle> = Vec::new();
        loop {
            let req = json!({"coin": pair.coin, "interval": interval, "startTime": start, "endTime": end});
            let page: Vec<Candle> = self.info_list("candleSnapshot", json!({ "req": req })).await?;
            let full = page.len() >= CANDLES_PER_ANSWER;
            let next = page.last().map(|c| c.t.saturating_add(step));
            let newest = out.last().map_or(i64::MIN, |c| c.t);
            out.extend(page.into_iter().filter(|c| c.t <= end && c.t > newest));
            match next {
                Some(next) if full && next > start && next <= end => start = next,
                _ => break,
            }
        }
        let skip = out.len().saturating_sub(limit as usize);
        Ok(out.into_iter().skip(skip).map(Kline::from).collect())
    }

    /// 24 h tickers of `symbols` (every traded symbol when empty), uncached.
    pub(super) async fn fetch_tickers(
        &self,
        symbols: &[String],
    ) -> Result<Vec<Ticker24h>, ExchangeError> {
        let (meta, ctxs): (SpotMeta, Vec<AssetCtx>) =
            self.info("spotMetaAndAssetCtxs", json!({})).await?;
        let map = SymbolMap::from_meta(&meta);
        let with_candles = !symbols.is_empty() && symbols.len() <= TICKER_CANDLE_SYMBOLS;
        let mut out = Vec::new();
        for ctx in &ctxs {
            let Some(pair) = map.by_coin(&ctx.coin) else { continue };
            if !symbols.is_empty() && !symbols.contains(&pair.symbol) {
                continue;
            }
            let candles = if with_candles {
                let now = self.clock.now_ms();
                let req = json!({"coin": pair.coin, "interval": "1h", "startTime": now - 24 * 3_600_000 + 1, "endTime": now});
                Some(self.info_list::<Candle>("candleSnapshot", json!({ "req": req })).await?)
            } else {
                None
            };
            out.push(ticker_of(pair, ctx, candles.as_deref()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::exchange_b::wire::fixtures;
    use rust_decimal_macros::dec;

    #[test]
    fn candles_read_as_klines() {
        let c: Vec<Candle> = serde_json::from_str(fixtures::CANDLES).unwrap();
        let k = Kline::from(c[0].clone());
        assert_eq!((k.open_time, k.close_time, k.trades), (1684699200000, 1684702799999, 709));
        assert_eq!(
            (k.open.0, k.high.0, k.low.0, k.close.0),
            (dec!(0.001601), dec!(0.001616), dec!(0.001601), dec!(0.001604))
        );
        assert_eq!(k.volume, dec!(520665683.0));
        assert_eq!(interval_ms("4h"), Some(14_400_000));
        assert_eq!(interval_ms("1M"), None);
    }

    #[test]
    fn the_window_holds_limit_weekly_candles_opening_on_monday() {
        let week = interval_ms("1w").unwrap();
        let monday = 4 * 86_400_000; // 1970-01-05
        // 2026-11-27 is a Friday: the epoch-aligned week began on Thursday the 26th.
        let end = 1_795_743_000_000;
        let start = window_start(end, week, 10);
        let mondays = (0..)
            .map(|k| monday + k * week)
            .skip_while(|t| *t < start)
            .take_while(|t| *t <= end)
            .count();
        assert!(mondays >= 10, "{mondays} weekly candles in the window");
        let hours = window_start(end, 3_600_000, 10);
        assert_eq!((end.div_euclid(3_600_000) * 3_600_000 - hours) / 3_600_000, 10);
    }

    #[test]
    fn tickers_come_from_the_asset_contexts() {
        let meta: SpotMeta = serde_json::from_str(fixtures::SPOT_META).unwrap();
        let ctxs: Vec<AssetCtx> = serde_json::from_str(fixtures::CTXS).unwrap();
        let map = SymbolMap::from_meta(&meta);
        let btc = ticker_of(map.pair("BTCUSDT").unwrap(), &ctxs[1], None);
        assert_eq!(btc.last_price.0, dec!(97123.5), "the mid");
        assert_eq!(btc.price_change_percent, dec!(2.235));
        assert_eq!(btc.quote_volume, dec!(15000000.5));
        assert_eq!((btc.high_price.0, btc.low_price.0), (dec!(97123.5), dec!(95000)));
        let eth = ticker_of(map.pair("ETHUSDT").unwrap(), &ctxs[2], None);
        assert_eq!(
            (eth.last_price.0, eth.price_change_percent),
            (dec!(3320), Decimal::ZERO),
            "no mid: the mark"
        );
        let candles: Vec<Candle> = serde_json::from_str(fixtures::CANDLES).unwrap();
        let purr = ticker_of(map.pair("PURRUSDT").unwrap(), &ctxs[0], Some(&candles));
        assert_eq!((purr.high_price.0, purr.low_price.0), (dec!(0.2), dec!(0.001601)));
    }

    #[test]
    fn all_mids_parse_by_coin() {
        let mids: HashMap<String, Mid> = serde_json::from_str(fixtures::ALL_MIDS).unwrap();
        assert_eq!(mids["@142"].0, dec!(97123.5));
        assert_eq!(mids["PURR/USDC"].0, dec!(0.2));
    }
}
