//! The market feeds' data, from the same state `/info` answers from: `allMids` (wrapped in
//! `mids`), `bbo` (`null` for an empty side), `l2Book` (the `/info` snapshot), `candle` (the
//! open candle) and `trades` (every fill of any account on the coin; the synthetic book is the
//! other side, at the zero address).

use super::feeds::Feed;
use crate::clock::Millis;
use crate::core::{Engine, Trade};
use crate::exchange_b::info::{book, listed, mids};
use crate::exchange_b::listing::Listing;
use crate::exchange_b::render;
use crate::market;
use serde_json::{Value, json};
use spotbot_exchange_b_protocol::Address;

/// What a market feed shows now: the part whose change makes a new message, and the `data` of
/// that message. None for a feed that is not a polled market feed (or an unlisted coin).
pub fn state(e: &Engine, l: &Listing, feed: &Feed, now: Millis) -> Option<(Value, Value)> {
    match feed {
        Feed::AllMids {} => {
            let data = json!({"mids": mids(e, l, now)});
            Some((data.clone(), data))
        }
        Feed::Bbo { coin } => {
            let (pair, rules) = listed(e, l, coin)?;
            let b = e.book(rules, e.market.price(rules, now));
            let best = |side: Vec<_>| {
                render::levels(side, 1).pop().map_or(Value::Null, |level| json!(level))
            };
            let bbo = json!([best(b.bids), best(b.asks)]);
            Some((bbo.clone(), json!({"coin": pair.name, "time": now, "bbo": bbo})))
        }
        Feed::L2Book { coin } => {
            let data = book(e, l, coin, now);
            Some((data.get("levels")?.clone(), data))
        }
        Feed::Candle { coin, interval } => {
            let (pair, rules) = listed(e, l, coin)?;
            let open = market::candle_open(interval, now);
            let c = e.market.candle(rules, open, market::candle_len(interval, open), now);
            let data = json!(render::candle(pair, interval, &c));
            Some((data.clone(), data))
        }
        _ => None,
    }
}

/// One element of `trades`: a fill of `account` (at `address`) against the synthetic book.
/// The side is the taker's; `users` are [buyer, seller].
pub fn trade(l: &Listing, t: &Trade, address: Option<Address>) -> Option<Value> {
    let pair = l.pair_by_symbol(&t.symbol)?;
    let f = render::fill(pair, t);
    let account = address.unwrap_or(Address([0; 20])).to_string();
    let book = Address([0; 20]).to_string();
    let users = if t.is_buyer { [account, book] } else { [book, account] };
    let taker_buys = t.is_buyer != t.is_maker;
    Some(json!({
        "coin": f.coin,
        "side": if taker_buys { "B" } else { "A" },
        "px": f.px,
        "sz": f.sz,
        "hash": f.hash,
        "time": f.time,
        "tid": f.tid,
        "users": users,
    }))
}
