//! The account answers of `/info`: balances, open orders (two shapes), one order's status,
//! fills and the address-based request budget. An address that owns no account (unknown, or
//! an API wallet) reads as empty, as on the exchange.

use super::listing::{Listing, Pair};
use super::render::{self, FillJson};
use crate::clock::Millis;
use crate::core::{Engine, Order};
use crate::state::exchange_b::action_budget;
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::{Value, json};
use spotbot_exchange_b_protocol::Cloid;
use spotbot_exchange_b_protocol::numbers::to_wire;

/// Fills in one `userFills` / `userFillsByTime` answer.
pub const FILLS_PER_ANSWER: usize = 2000;
/// Only the most recent fills can be reached by time.
pub const FILLS_REACHABLE: usize = 10_000;

/// The open orders of `account` on listed pairs, newest first.
fn open<'a>(
    e: &'a Engine,
    l: &'a Listing,
    account: Option<usize>,
) -> impl Iterator<Item = (&'a Pair, &'a Order)> {
    let mut orders: Vec<(&Pair, &Order)> = e
        .open_orders()
        .filter(|o| Some(o.account) == account)
        .filter_map(|o| Some((l.pair_by_symbol(&o.symbol)?, o)))
        .collect();
    orders.reverse();
    orders.into_iter()
}

/// `spotClearinghouseState`.
pub fn balances(e: &Engine, l: &Listing, account: Option<usize>) -> Value {
    let balances = match account.and_then(|a| e.accounts.get(a)) {
        Some(a) => render::balances(l, a.balances.iter()),
        None => Vec::new(),
    };
    json!({ "balances": balances })
}

/// `openOrders`.
pub fn open_orders(e: &Engine, l: &Listing, account: Option<usize>) -> Value {
    let v: Vec<_> = open(e, l, account).map(|(p, o)| render::open_order(p, o)).collect();
    json!(v)
}

/// `frontendOpenOrders`.
pub fn frontend_open_orders(e: &Engine, l: &Listing, account: Option<usize>) -> Value {
    let v: Vec<_> = open(e, l, account).map(|(p, o)| render::frontend_order(p, o)).collect();
    json!(v)
}

/// `orderStatus`'s `oid`: an order id, or a cloid in the same field.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum OrderRef {
    Oid(u64),
    Cloid(Cloid),
}

/// `orderStatus` by order id or cloid (the newest order with it); `unknownOid` when the
/// account has no such order.
pub fn order_status(e: &Engine, l: &Listing, account: Option<usize>, oid: OrderRef) -> Value {
    let found = account.and_then(|account| {
        let o = match oid {
            OrderRef::Oid(id) => e.order(i64::try_from(id).ok()?)?,
            OrderRef::Cloid(c) => {
                let cloid = c.to_string();
                e.orders
                    .iter()
                    .rev()
                    .find(|o| o.account == account && o.client_order_id == cloid)?
            }
        };
        let pair = l.pair_by_symbol(&o.symbol)?;
        (o.account == account).then_some((pair, o))
    });
    match found {
        Some((pair, o)) => json!({"status": "order", "order": render::order_with_status(pair, o)}),
        None => json!({"status": "unknownOid"}),
    }
}

/// `userFills` (the newest [`FILLS_PER_ANSWER`], newest first) or, with a time window,
/// `userFillsByTime` (fills in [start, end] among the newest [`FILLS_REACHABLE`], oldest first,
/// at most [`FILLS_PER_ANSWER`]).
pub fn user_fills(
    e: &Engine,
    l: &Listing,
    account: Option<usize>,
    window: Option<(Millis, Millis)>,
) -> Vec<FillJson> {
    let newest_first = e
        .trades
        .iter()
        .rev()
        .filter(|t| Some(t.account) == account)
        .filter_map(|t| Some(render::fill(l.pair_by_symbol(&t.symbol)?, t)));
    match window {
        None => newest_first.take(FILLS_PER_ANSWER).collect(),
        Some((start, end)) => {
            let mut reachable: Vec<FillJson> = newest_first
                .take(FILLS_REACHABLE)
                .filter(|f| f.time >= start && f.time <= end)
                .collect();
            reachable.reverse();
            reachable.truncate(FILLS_PER_ANSWER);
            reachable
        }
    }
}

/// `userRateLimit`: volume traded, actions used, and the budget: `initial` plus one per USDC
/// traded (enforced by [`action_budget`]).
pub fn rate_limit(e: &Engine, account: Option<usize>, used: u64, initial: u64) -> Value {
    let volume = account.map_or(Decimal::ZERO, |a| action_budget::traded_volume(e, a));
    let cap = action_budget::cap(initial, volume);
    json!({
        "cumVlm": to_wire(volume),
        "nRequestsUsed": used,
        "nRequestsCap": cap,
        "nRequestsSurplus": 0,
    })
}
