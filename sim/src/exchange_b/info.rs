//! `POST /info`: the request types exchange B serves (dispatch on `type`), their weights, and
//! the market-data answers (listing, contexts, mids, book, candles). The account answers are
//! in [`super::account`].

use super::account::{self, OrderRef};
use super::listing::{Listing, Pair};
use super::render;
use crate::clock::Millis;
use crate::core::Engine;
use crate::market::{self, DAY};
use crate::state::Sim;
use crate::symbols::SymbolRules;
use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use spotbot_exchange_b_protocol::Address;
use spotbot_exchange_b_protocol::numbers::to_wire;

/// The candle intervals exchange B serves.
pub const INTERVALS: [&str; 14] =
    ["1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "8h", "12h", "1d", "3d", "1w", "1M"];
/// Only the most recent candles of an interval exist.
pub const CANDLES_KEPT: usize = 5000;
/// Candles per answer (page on with the last `t`).
pub const CANDLES_PER_ANSWER: usize = 500;
/// Book levels per side.
pub const BOOK_LEVELS: usize = 20;

/// A `user` address in either case.
pub(super) fn address<'de, D: Deserializer<'de>>(d: D) -> Result<Address, D::Error> {
    let text = String::deserialize(d)?;
    text.parse().map_err(|_| serde::de::Error::custom(format!("{text:?} is not an address")))
}

/// One `/info` request body.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum InfoRequest {
    Meta {},
    SpotMeta {},
    SpotMetaAndAssetCtxs {},
    AllMids {},
    L2Book {
        coin: String,
    },
    CandleSnapshot {
        req: CandleRequest,
    },
    SpotClearinghouseState {
        #[serde(deserialize_with = "address")]
        user: Address,
    },
    OpenOrders {
        #[serde(deserialize_with = "address")]
        user: Address,
    },
    FrontendOpenOrders {
        #[serde(deserialize_with = "address")]
        user: Address,
    },
    OrderStatus {
        #[serde(deserialize_with = "address")]
        user: Address,
        oid: OrderRef,
    },
    UserFills {
        #[serde(deserialize_with = "address")]
        user: Address,
    },
    #[serde(rename_all = "camelCase")]
    UserFillsByTime {
        #[serde(deserialize_with = "address")]
        user: Address,
        start_time: Millis,
        #[serde(default)]
        end_time: Option<Millis>,
    },
    UserRateLimit {
        #[serde(deserialize_with = "address")]
        user: Address,
    },
}

/// The nested `req` of `candleSnapshot`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CandleRequest {
    pub coin: String,
    pub interval: String,
    pub start_time: Millis,
    #[serde(default)]
    pub end_time: Option<Millis>,
}

impl InfoRequest {
    /// The IP weight before the per-item surcharges: 2 for the light reads, 20 for the rest.
    pub fn weight(&self) -> u64 {
        match self {
            Self::AllMids {}
            | Self::L2Book { .. }
            | Self::SpotClearinghouseState { .. }
            | Self::OrderStatus { .. } => 2,
            _ => 20,
        }
    }

    /// The account address the request reads, if it reads one.
    fn user(&self) -> Option<&Address> {
        match self {
            Self::SpotClearinghouseState { user }
            | Self::OpenOrders { user }
            | Self::FrontendOpenOrders { user }
            | Self::OrderStatus { user, .. }
            | Self::UserFills { user }
            | Self::UserFillsByTime { user, .. }
            | Self::UserRateLimit { user } => Some(user),
            _ => None,
        }
    }
}

/// The answer to an `/info` request.
pub struct Answer {
    pub body: Value,
    /// Weight on top of the request's own: +1 per 20 fills, +1 per 60 candles.
    pub surcharge: u64,
}

impl Answer {
    fn plain(body: Value) -> Result<Self, String> {
        Ok(Self { body, surcharge: 0 })
    }
}

/// Answers `req` at `now`, or says why the body is not a valid request (HTTP 422).
pub fn answer(sim: &Sim, req: &InfoRequest, now: Millis) -> Result<Answer, String> {
    let state = sim.exchange_b();
    let (account, actions_used) = {
        let wallets = state.wallets();
        let account = req.user().and_then(|u| wallets.user(u));
        (account, account.map_or(0, |a| wallets.actions_used(a)))
    };
    let mut engine = sim.engine();
    let e = &mut *engine;
    e.catch_up(now);
    let listing = Listing::new(&e.rules);
    let l = &listing;
    use InfoRequest as R;
    match req {
        R::Meta {} => Answer::plain(json!({"universe": [], "marginTables": []})),
        R::SpotMeta {} => Answer::plain(spot_meta(l)),
        R::SpotMetaAndAssetCtxs {} => {
            let ctxs: Vec<Value> = pairs_with_rules(e, l).map(|(p, r)| ctx(e, p, r, now)).collect();
            Answer::plain(json!([spot_meta(l), ctxs]))
        }
        R::AllMids {} => Answer::plain(Value::Object(mids(e, l, now))),
        R::L2Book { coin } => Answer::plain(book(e, l, coin, now)),
        R::CandleSnapshot { req } => {
            let candles = candles(e, l, req, now)?;
            let surcharge = candles.len() as u64 / 60;
            Ok(Answer { body: json!(candles), surcharge })
        }
        R::SpotClearinghouseState { .. } => Answer::plain(account::balances(e, l, account)),
        R::OpenOrders { .. } => Answer::plain(account::open_orders(e, l, account)),
        R::FrontendOpenOrders { .. } => Answer::plain(account::frontend_open_orders(e, l, account)),
        R::OrderStatus { oid, .. } => Answer::plain(account::order_status(e, l, account, *oid)),
        R::UserFills { .. } => Ok(fills(account::user_fills(e, l, account, None))),
        R::UserFillsByTime { start_time, end_time, .. } => {
            let window = (*start_time, end_time.unwrap_or(Millis::MAX));
            Ok(fills(account::user_fills(e, l, account, Some(window))))
        }
        R::UserRateLimit { .. } => {
            let initial = state.initial_requests;
            Answer::plain(account::rate_limit(e, account, actions_used, initial))
        }
    }
}

/// Every pair's mid (the market price when a side of the book is empty), by coin.
pub(super) fn mids(e: &Engine, l: &Listing, now: Millis) -> serde_json::Map<String, Value> {
    pairs_with_rules(e, l)
        .map(|(p, r)| {
            let mid = mid(e, r, now).unwrap_or_else(|| e.market.price(r, now));
            (p.name.clone(), Value::String(to_wire(mid)))
        })
        .collect()
}

/// A fills answer with its surcharge.
fn fills(fills: Vec<render::FillJson>) -> Answer {
    let surcharge = fills.len() as u64 / 20;
    Answer { body: json!(fills), surcharge }
}

/// Every pair with its symbol's rules.
fn pairs_with_rules<'a>(
    e: &'a Engine,
    l: &'a Listing,
) -> impl Iterator<Item = (&'a Pair, &'a SymbolRules)> {
    l.pairs.iter().filter_map(|p| e.rules(&p.symbol).ok().map(|r| (p, r)))
}

/// The pair named `coin` with its symbol's rules.
pub(super) fn listed<'a>(
    e: &'a Engine,
    l: &'a Listing,
    coin: &str,
) -> Option<(&'a Pair, &'a SymbolRules)> {
    let pair = l.pair_by_coin(coin)?;
    Some((pair, e.rules(&pair.symbol).ok()?))
}

fn spot_meta(l: &Listing) -> Value {
    let tokens: Vec<Value> = l
        .tokens
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "szDecimals": t.sz_decimals,
                "weiDecimals": super::listing::WEI_DECIMALS,
                "index": t.index,
                "tokenId": t.token_id(),
                "isCanonical": true,
                "evmContract": null,
                "fullName": null,
            })
        })
        .collect();
    let universe: Vec<Value> = l
        .pairs
        .iter()
        .map(|p| {
            json!({"name": p.name, "tokens": [p.base, p.quote], "index": p.index, "isCanonical": true})
        })
        .collect();
    json!({"tokens": tokens, "universe": universe})
}

/// The middle of the synthetic book's best bid and ask.
fn mid(e: &Engine, r: &SymbolRules, now: Millis) -> Option<Decimal> {
    let book = e.book(r, e.market.price(r, now));
    let (bid, ask) = (book.bids.first()?.0, book.asks.first()?.0);
    Some((bid + ask) / Decimal::TWO)
}

/// One context of `spotMetaAndAssetCtxs`: the last day's quote volume, the last price as the
/// mark, the book's mid, the price a day ago, and the listing's largest order size standing in
/// for the circulating supply.
fn ctx(e: &Engine, p: &Pair, r: &SymbolRules, now: Millis) -> Value {
    let day = e.market.candle(r, now - DAY, DAY, now);
    json!({
        "dayNtlVlm": to_wire(day.quote_volume),
        "markPx": to_wire(e.market.price(r, now)),
        "midPx": mid(e, r, now).map(to_wire),
        "prevDayPx": to_wire(e.market.price(r, now - DAY)),
        "circulatingSupply": to_wire(r.max_qty),
        "coin": p.name,
    })
}

/// `l2Book`: `null` for a coin that is not listed.
pub(super) fn book(e: &Engine, l: &Listing, coin: &str, now: Millis) -> Value {
    let Some((pair, rules)) = listed(e, l, coin) else { return Value::Null };
    let b = e.book(rules, e.market.price(rules, now));
    let levels = [render::levels(b.bids, BOOK_LEVELS), render::levels(b.asks, BOOK_LEVELS)];
    json!({"coin": pair.name, "time": now, "levels": levels})
}

/// `candleSnapshot`: the candles opening in [startTime, endTime] among the newest
/// [`CANDLES_KEPT`], oldest first, at most [`CANDLES_PER_ANSWER`]; none for an unlisted coin.
fn candles(
    e: &Engine,
    l: &Listing,
    req: &CandleRequest,
    now: Millis,
) -> Result<Vec<render::CandleJson>, String> {
    let interval = req.interval.as_str();
    if !INTERVALS.contains(&interval) {
        return Err(format!("unknown interval {interval:?}"));
    }
    let Some((pair, rules)) = listed(e, l, &req.coin) else { return Ok(Vec::new()) };
    let mut oldest = market::candle_open(interval, now);
    for _ in 1..CANDLES_KEPT {
        oldest = market::prev_open(interval, oldest);
    }
    let start = req.start_time.max(oldest);
    let end = req.end_time.unwrap_or(now).min(now);
    Ok(market::candle_opens(interval, start, end, CANDLES_PER_ANSWER)
        .into_iter()
        .map(|o| {
            let c = e.market.candle(rules, o, market::candle_len(interval, o), now);
            render::candle(pair, interval, &c)
        })
        .collect())
}
