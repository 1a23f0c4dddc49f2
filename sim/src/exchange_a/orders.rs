//! Exchange A's order endpoints: `POST/GET/DELETE /api/v3/order`, `openOrders` (GET and
//! DELETE), `allOrders` and `myTrades`. Each reads its parameters with the exchange's rules
//! and error codes, asks the core, and renders the answer.

use super::names::{self, RespType, resp_type};
use super::params::{ApiError, Params, limit_param};
use super::render;
use super::wire::{OrderJson, TradeJson, to_value};
use crate::clock::Millis;
use crate::core::{Engine, Leg, Order, OrderType, Status, Tif, Trade};
use serde_json::Value;

/// `POST /api/v3/order`.
pub fn new_order(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let symbol = known_symbol(e, p)?.to_string();
    let side = names::parse_side(p.req("side")?)?;
    let order_type = names::parse_order_type(p.req("type")?)?;
    let client_id = p.client_id("newClientOrderId")?;
    let default_resp = if matches!(order_type, OrderType::Market | OrderType::Limit) {
        RespType::Full
    } else {
        RespType::Ack
    };
    let resp = resp_type(p, default_resp)?;
    // Parameter presence per type.
    for (name, wanted) in [
        ("timeInForce", order_type.needs_tif()),
        ("price", order_type.has_limit_price()),
        ("stopPrice", order_type.is_stop()),
    ] {
        if wanted {
            p.req(name)?;
        } else if p.has(name) {
            return Err(ApiError::not_required(name));
        }
    }
    let tif = match p.get("timeInForce") {
        Some(t) => names::parse_tif(t)?,
        None => Tif::Gtc,
    };
    let price = p.decimal("price")?;
    let stop = p.decimal("stopPrice")?;
    let quote_qty = p.decimal("quoteOrderQty")?;
    let qty = p.decimal("quantity")?;
    if quote_qty.is_some() && (order_type != OrderType::Market || qty.is_some()) {
        return Err(ApiError::not_required("quoteOrderQty"));
    }
    if order_type == OrderType::Market && qty.is_none() && quote_qty.is_none() {
        return Err(ApiError::bad(
            -1102,
            "Param 'quantity' or 'quoteOrderQty' must be sent, but both were empty/null!",
        ));
    }
    let placed = match (qty, quote_qty) {
        (_, Some(q)) => e.place_market_by_quote(account, &symbol, side, q, client_id, now)?,
        (Some(qty), None) => {
            let leg = Leg { order_type, side, qty, price, stop, tif, client_id };
            e.place_order(account, &symbol, leg, now)?
        }
        (None, None) => {
            // The exchange reports a reused client id before the missing quantity.
            if let Some(c) = &client_id {
                e.ensure_client_id_free(account, c)?;
            }
            return Err(ApiError::mandatory("quantity"));
        }
    };
    let o = order(e, placed.order_id)?;
    Ok(to_value(&render::placement(o, resp, now, Some(&placed.fills))))
}

/// The `symbol` parameter, which must be listed.
pub(super) fn known_symbol<'p>(e: &Engine, p: &'p Params) -> Result<&'p str, ApiError> {
    let symbol = p.req("symbol")?;
    e.rules(symbol)?;
    Ok(symbol)
}

/// The order the core just named (always there; an error rather than a panic if not).
fn order(e: &Engine, order_id: i64) -> Result<&Order, ApiError> {
    e.order(order_id).ok_or_else(|| ApiError::bad(-2013, "Order does not exist."))
}

/// Finds an order of `account` on `symbol` by orderId and/or origClientOrderId.
fn find_order(e: &Engine, account: usize, p: &Params, unknown: ApiError) -> Result<i64, ApiError> {
    let symbol = known_symbol(e, p)?;
    let id = p.long("orderId")?;
    let cid = p.get("origClientOrderId");
    let found = match (id, cid) {
        (None, None) => {
            return Err(ApiError::bad(
                -1102,
                "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!",
            ));
        }
        (Some(id), _) => e.order(id).map(|o| o.order_id),
        (None, Some(c)) => e.order_by_client_id(account, symbol, c),
    };
    let o = found.and_then(|id| e.order(id)).ok_or_else(|| unknown.clone())?;
    if o.account != account || o.symbol != symbol || cid.is_some_and(|c| c != o.client_order_id) {
        return Err(unknown);
    }
    Ok(o.order_id)
}

/// `GET /api/v3/order`.
pub fn query_order(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let id = find_order(e, account, p, ApiError::bad(-2013, "Order does not exist."))?;
    Ok(to_value(&render::query(order(e, id)?)))
}

/// `DELETE /api/v3/order`. Cancelling a leg cancels its whole list.
pub fn cancel_order(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let unknown = ApiError::bad(-2011, "Unknown order sent.");
    let id = find_order(e, account, p, unknown.clone())?;
    let status = order(e, id)?.status;
    if !status.is_open() {
        return Err(unknown);
    }
    let restricted = match p.get("cancelRestrictions") {
        Some("ONLY_NEW") => status != Status::New,
        Some("ONLY_PARTIALLY_FILLED") => status != Status::PartiallyFilled,
        _ => false,
    };
    if restricted {
        return Err(ApiError::bad(-2011, "Order was not canceled due to cancel restrictions."));
    }
    let cancel_id = match p.client_id("newClientOrderId")? {
        Some(c) => c,
        None => e.new_client_id(),
    };
    e.cancel_order(id, cancel_id.clone(), now).map_err(|_| unknown)?;
    Ok(to_value(&render::cancel(order(e, id)?, &cancel_id, now)))
}

/// `GET /api/v3/openOrders`.
pub fn open_orders(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let symbol = p.get("symbol");
    if let Some(s) = symbol {
        e.rules(s)?;
    }
    let v: Vec<OrderJson> = e
        .orders
        .iter()
        .filter(|o| {
            o.account == account && o.status.is_open() && symbol.is_none_or(|s| s == o.symbol)
        })
        .map(render::query)
        .collect();
    Ok(to_value(&v))
}

/// `DELETE /api/v3/openOrders`: cancels plain orders and order lists of the symbol.
pub fn cancel_open_orders(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let symbol = known_symbol(e, p)?.to_string();
    let ids: Vec<i64> = e
        .orders
        .iter()
        .filter(|o| o.account == account && o.symbol == symbol && o.status.is_open())
        .map(|o| o.order_id)
        .collect();
    let mut out: Vec<Value> = Vec::new();
    for id in ids {
        // A list's second leg is no longer open here: cancelling the first took the list.
        if !order(e, id)?.status.is_open() {
            continue;
        }
        let cancel_id = e.new_client_id();
        let list_id = order(e, id)?.order_list_id;
        e.cancel_order(id, cancel_id.clone(), now)?;
        match e.list(list_id) {
            Some(l) if list_id > 0 => {
                let reports =
                    render::legs(e, l).map(|o| render::cancel(o, &cancel_id, now)).collect();
                out.push(to_value(&render::list(e, l, Some(reports))));
            }
            _ => out.push(to_value(&render::cancel(order(e, id)?, &cancel_id, now))),
        }
    }
    if out.is_empty() {
        return Err(ApiError::bad(-2011, "Unknown order sent."));
    }
    Ok(Value::Array(out))
}

/// `GET /api/v3/allOrders`.
pub fn all_orders(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let symbol = known_symbol(e, p)?;
    let from = p.long("orderId")?.unwrap_or(0);
    let start = p.long("startTime")?.unwrap_or(i64::MIN);
    let end = p.long("endTime")?.unwrap_or(i64::MAX);
    let limit = limit_param(p, 500, 1000)?;
    let matching: Vec<&Order> = e
        .orders
        .iter()
        .filter(|o| {
            o.account == account
                && o.symbol == symbol
                && o.order_id >= from
                && o.time >= start
                && o.time <= end
        })
        .collect();
    let from_the_start = p.has("orderId") || p.has("startTime");
    let v: Vec<OrderJson> =
        newest_unless(matching, from_the_start, limit).into_iter().map(render::query).collect();
    Ok(to_value(&v))
}

/// At most `limit` items: the first ones when the client named where to start, else the
/// newest ones (still oldest first).
fn newest_unless<T>(items: Vec<T>, from_the_start: bool, limit: usize) -> Vec<T> {
    let skip = if from_the_start { 0 } else { items.len().saturating_sub(limit) };
    items.into_iter().skip(skip).take(limit).collect()
}

/// `GET /api/v3/myTrades`.
pub fn my_trades(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let symbol = known_symbol(e, p)?;
    let order_id = p.long("orderId")?;
    let from = p.long("fromId")?;
    let start = p.long("startTime")?;
    let end = p.long("endTime")?;
    if from.is_some() && (start.is_some() || end.is_some()) {
        return Err(ApiError::bad(-1128, "Combination of optional parameters invalid."));
    }
    if let (Some(s), Some(e)) = (start, end)
        && e.saturating_sub(s) > 24 * 3_600_000
    {
        return Err(ApiError::bad(-1127, "More than 24 hours between startTime and endTime."));
    }
    let limit = limit_param(p, 500, 1000)?;
    let matching: Vec<&Trade> = e
        .trades
        .iter()
        .filter(|t| {
            t.account == account
                && t.symbol == symbol
                && order_id.is_none_or(|o| t.order_id == o)
                && from.is_none_or(|f| t.id >= f)
                && start.is_none_or(|s| t.time >= s)
                && end.is_none_or(|e| t.time <= e)
        })
        .collect();
    let from_the_start = from.is_some() || start.is_some();
    let v: Vec<TradeJson> =
        newest_unless(matching, from_the_start, limit).into_iter().map(render::trade).collect();
    Ok(to_value(&v))
}
