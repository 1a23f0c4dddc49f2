//! The account feeds' messages, read off the core's event log (so orders and fills made
//! through exchange A's REST on the same account show too) and the log of refused orders:
//! `orderUpdates` (one element per status change), `userFills` (a snapshot, then each new fill),
//! `userEvents` on channel `user` (`fills`, `nonUserCancel`) and `spotState`.

use crate::core::{Engine, Event, EventKind, Expiry, Order, OrderChange, OrderType, Status, Tif};
use crate::exchange_b::account;
use crate::exchange_b::listing::Listing;
use crate::exchange_b::render::{self, FillJson};
use crate::state::exchange_b::refused::RefusedOrder;
use serde_json::{Value, json};
use spotbot_exchange_b_protocol::Address;
use spotbot_exchange_b_protocol::numbers::to_wire;

/// A size as `orderUpdates` writes it: `"0.0"` when nothing is left (as the exchange does).
fn size(remaining: rust_decimal::Decimal) -> String {
    if remaining.is_zero() { "0.0".to_string() } else { to_wire(remaining) }
}

/// One element of `orderUpdates`; `cloid` only when the order has one.
fn update(order: Value, cloid: Option<String>, status: &str, time: i64) -> Value {
    let mut order = order;
    if let Some(c) = cloid {
        order["cloid"] = json!(c);
    }
    json!({"order": order, "status": status, "statusTimestamp": time})
}

/// The status change an order event is, if it is one: `open` when an order comes to rest (an
/// IOC, FOK or market order never does), `filled` on the last fill, the end status otherwise.
/// A partial fill changes no status.
fn status_change(o: &Order, change: &OrderChange) -> Option<&'static str> {
    match change {
        OrderChange::New => {
            (o.tif == Tif::Gtc && o.order_type != OrderType::Market).then_some("open")
        }
        OrderChange::Trade(_) => (o.status == Status::Filled).then_some("filled"),
        OrderChange::Canceled { .. } | OrderChange::Expired => Some(render::status(o)),
    }
}

/// The `orderUpdates` element of a core order event of a listed pair.
pub fn order_update(l: &Listing, ev: &Event) -> Option<Value> {
    let EventKind::Order { order: o, change } = &ev.kind else { return None };
    let status = status_change(o, change)?;
    let pair = l.pair_by_symbol(&o.symbol)?;
    let order = json!({
        "coin": pair.name,
        "side": render::side(o.side),
        "limitPx": to_wire(o.price),
        "sz": size(o.remaining()),
        "oid": u64::try_from(o.order_id).unwrap_or(0),
        "timestamp": o.time,
        "origSz": to_wire(o.orig_qty),
    });
    Some(update(order, render::cloid(o), status, ev.time))
}

/// The `orderUpdates` element of an order refused before the core saw it.
pub fn refused_update(r: &RefusedOrder) -> Value {
    let order = json!({
        "coin": r.coin,
        "side": r.side,
        "limitPx": r.limit_px,
        "sz": r.sz,
        "oid": r.oid,
        "timestamp": r.time,
        "origSz": r.sz,
    });
    update(order, r.cloid.clone(), r.status, r.time)
}

/// The fill of a fill event of a listed pair.
pub fn fill(e: &Engine, l: &Listing, ev: &Event) -> Option<FillJson> {
    let EventKind::Order { change: OrderChange::Trade(f), .. } = &ev.kind else { return None };
    let trade = e.trades.get(usize::try_from(f.trade_id).ok()?.checked_sub(1)?)?;
    Some(render::fill(l.pair_by_symbol(&trade.symbol)?, trade))
}

/// `{"coin", "oid"}` of an order the system ended (its one-cancels-the-other partner filled),
/// for `nonUserCancel`.
pub fn non_user_cancel(l: &Listing, ev: &Event) -> Option<Value> {
    let EventKind::Order { order: o, change: OrderChange::Expired } = &ev.kind else {
        return None;
    };
    if o.expiry_reason != Some(Expiry::PartnerTriggered) {
        return None;
    }
    let pair = l.pair_by_symbol(&o.symbol)?;
    Some(json!({"coin": pair.name, "oid": u64::try_from(o.order_id).unwrap_or(0)}))
}

/// A `userFills` message: the snapshot (the same fills REST `userFills` answers) or new fills.
pub fn fills_message(user: Address, fills: &[FillJson], snapshot: bool) -> String {
    let data = json!({"isSnapshot": snapshot, "user": user.to_string(), "fills": fills});
    message("userFills", &data)
}

/// The `userFills` snapshot of `account` (none for an address without one).
pub fn snapshot(e: &Engine, l: &Listing, user: Address, account: Option<usize>) -> String {
    fills_message(user, &account::user_fills(e, l, account, None), true)
}

/// `spotState`'s data: the balances as `spotClearinghouseState` answers them.
pub fn spot_state(e: &Engine, l: &Listing, user: Address, account: Option<usize>) -> Value {
    json!({"user": user.to_string(), "spotState": account::balances(e, l, account)})
}

/// A data message on `channel`.
pub fn message(channel: &str, data: &impl serde::Serialize) -> String {
    json!({"channel": channel, "data": data}).to_string()
}
