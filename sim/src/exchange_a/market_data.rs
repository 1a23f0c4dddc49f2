//! Exchange A's market data endpoints: `exchangeInfo`, `klines`/`uiKlines`, `ticker/24hr`,
//! `ticker/price`, `avgPrice` and `depth`, all read from the synthetic (or scripted) market.

use super::exchange_info::{self, ExchangeInfoJson};
use super::params::{ApiError, Params, limit_param};
use super::wire::{AvgPriceJson, DepthJson, PriceJson, Ticker24hJson, fmt8, to_value};
use crate::clock::Millis;
use crate::core::Engine;
use crate::market;
use rust_decimal::Decimal;
use serde_json::Value;

/// `GET /api/v3/exchangeInfo`.
pub fn exchange_info(e: &Engine, p: &Params, now: Millis) -> Result<Value, ApiError> {
    let wanted = symbols_param(e, p)?;
    let symbols = e
        .rules
        .iter()
        .filter(|r| wanted.as_ref().is_none_or(|w| w.contains(&r.symbol)))
        .map(|r| r.to_json())
        .collect();
    Ok(to_value(&ExchangeInfoJson {
        timezone: "UTC",
        server_time: now,
        rate_limits: exchange_info::rate_limits(),
        exchange_filters: vec![],
        symbols,
    }))
}

/// `GET /api/v3/ticker/price`: one object for `symbol`, else a list.
pub fn ticker_price(e: &Engine, p: &Params, now: Millis) -> Result<Value, ApiError> {
    let wanted = symbols_param(e, p)?;
    let v: Vec<PriceJson> = e
        .rules
        .iter()
        .filter(|r| wanted.as_ref().is_none_or(|w| w.contains(&r.symbol)))
        .map(|r| PriceJson { symbol: r.symbol.clone(), price: fmt8(e.market.price(r, now)) })
        .collect();
    if p.has("symbol") { Ok(v.first().map(to_value).unwrap_or_default()) } else { Ok(to_value(&v)) }
}

/// `GET /api/v3/avgPrice`: the mean of the last five minutes' prices.
pub fn avg_price(e: &Engine, p: &Params, now: Millis) -> Result<Value, ApiError> {
    let r = e.rules(p.req("symbol")?)?;
    let pts: Vec<Decimal> = (0..5).map(|i| e.market.price(r, now - i * 60_000)).collect();
    let avg = pts.iter().copied().sum::<Decimal>() / Decimal::from(pts.len() as u64);
    Ok(to_value(&AvgPriceJson { mins: 5, price: fmt8(avg.round_dp(8)), close_time: now }))
}

/// `GET /api/v3/depth`: the synthetic book.
pub fn depth(e: &Engine, p: &Params, now: Millis) -> Result<Value, ApiError> {
    let r = e.rules(p.req("symbol")?)?;
    let limit = limit_param(p, 100, 5000)?;
    let book = e.book(r, e.market.price(r, now));
    let side = |v: Vec<(Decimal, Decimal)>| {
        v.into_iter().take(limit).map(|(a, b)| [fmt8(a), fmt8(b)]).collect()
    };
    Ok(to_value(&DepthJson { last_update_id: now, bids: side(book.bids), asks: side(book.asks) }))
}

/// `symbol` or `symbols` (a JSON list), each checked; None for every symbol.
fn symbols_param(e: &Engine, p: &Params) -> Result<Option<Vec<String>>, ApiError> {
    if let Some(s) = p.get("symbol") {
        if p.has("symbols") {
            return Err(ApiError::bad(-1128, "Combination of optional parameters invalid."));
        }
        e.rules(s)?;
        return Ok(Some(vec![s.to_string()]));
    }
    if let Some(list) = p.get("symbols") {
        let v: Vec<String> = serde_json::from_str(list).map_err(|_| {
            ApiError::bad(-1100, "Illegal characters found in parameter 'symbols'; legal range is '^\\[(\"[A-Z0-9-_.]{1,20}\"(,\"[A-Z0-9-_.]{1,20}\"){0,}){0,1}\\]$'.")
        })?;
        for s in &v {
            e.rules(s)?;
        }
        return Ok(Some(v));
    }
    Ok(None)
}

/// `GET /api/v3/klines` and `uiKlines`.
pub fn klines(e: &Engine, p: &Params, now: Millis) -> Result<Value, ApiError> {
    let symbol = p.req("symbol")?;
    let interval = p.req("interval")?;
    let rules = e.rules(symbol)?.clone();
    if market::interval_ms(interval).is_none() {
        return Err(ApiError::bad(-1120, "Invalid interval."));
    }
    let limit = limit_param(p, 500, 1000)?;
    // Times before the epoch or after now carry no candles; clamping keeps the arithmetic safe.
    let start = p.long("startTime")?.map(|t| t.clamp(0, now.max(0)));
    let end = p.long("endTime")?.map_or(now, |t| t.clamp(0, now.max(0)));
    let opens = match start {
        Some(s) => market::candle_opens(interval, s, end, limit),
        None => {
            let mut opens = Vec::with_capacity(limit);
            let mut o = market::candle_open(interval, end);
            while opens.len() < limit {
                opens.push(o);
                o = market::prev_open(interval, o);
            }
            opens.reverse();
            opens
        }
    };
    let rows: Vec<Value> = opens
        .into_iter()
        .map(|o| {
            let c = e.market.candle(&rules, o, market::candle_len(interval, o), now);
            serde_json::json!([
                c.open_time,
                fmt8(c.open),
                fmt8(c.high),
                fmt8(c.low),
                fmt8(c.close),
                fmt8(c.volume),
                c.close_time,
                fmt8(c.quote_volume),
                c.trades,
                fmt8(c.taker_buy_volume),
                fmt8(c.taker_buy_quote_volume),
                "0"
            ])
        })
        .collect();
    Ok(Value::Array(rows))
}

const MINI_FIELDS: &[&str] = &[
    "symbol",
    "openPrice",
    "highPrice",
    "lowPrice",
    "lastPrice",
    "volume",
    "quoteVolume",
    "openTime",
    "closeTime",
    "firstId",
    "lastId",
    "count",
];

/// `GET /api/v3/ticker/24hr`, FULL or MINI.
pub fn ticker_24h(e: &Engine, p: &Params, now: Millis) -> Result<Value, ApiError> {
    let wanted = symbols_param(e, p)?;
    let mini = match p.get("type") {
        None | Some("FULL") => false,
        Some("MINI") => true,
        Some(_) => {
            return Err(ApiError::bad(
                -1100,
                "Illegal characters found in parameter 'type'; legal range is 'FULL, MINI'.",
            ));
        }
    };
    let open_time = now - 86_400_000;
    let mut out = Vec::new();
    for r in e.rules.iter().filter(|r| wanted.as_ref().is_none_or(|w| w.contains(&r.symbol))) {
        let c = e.market.candle(r, open_time, 86_400_000, now);
        let last = e.market.price(r, now);
        let book = e.book(r, last);
        let change = last - c.open;
        let pct = if c.open.is_zero() {
            Decimal::ZERO
        } else {
            (change / c.open * Decimal::from(100)).round_dp(3)
        };
        let wavg = if c.volume.is_zero() { last } else { (c.quote_volume / c.volume).round_dp(8) };
        let count = c.trades as i64;
        let mut full = to_value(&Ticker24hJson {
            symbol: r.symbol.clone(),
            price_change: fmt8(change),
            price_change_percent: format!("{pct:.3}"),
            weighted_avg_price: fmt8(wavg),
            prev_close_price: fmt8(e.market.price(r, open_time - 1)),
            last_price: fmt8(last),
            last_qty: fmt8(r.step),
            bid_price: fmt8(book.bids.first().map_or(last, |b| b.0)),
            bid_qty: fmt8(book.bids.first().map_or(Decimal::ZERO, |b| b.1)),
            ask_price: fmt8(book.asks.first().map_or(last, |a| a.0)),
            ask_qty: fmt8(book.asks.first().map_or(Decimal::ZERO, |a| a.1)),
            open_price: fmt8(c.open),
            high_price: fmt8(c.high.max(last)),
            low_price: fmt8(c.low.min(last)),
            volume: fmt8(c.volume),
            quote_volume: fmt8(c.quote_volume),
            open_time,
            close_time: now,
            first_id: 1,
            last_id: count,
            count,
        });
        if mini {
            // MINI keeps a subset of FULL, in the same order.
            if let Some(m) = full.as_object_mut() {
                m.retain(|k, _| MINI_FIELDS.contains(&k.as_str()));
            }
        }
        out.push(full);
    }
    if p.has("symbol") {
        Ok(out.into_iter().next().unwrap_or_default())
    } else {
        Ok(Value::Array(out))
    }
}
