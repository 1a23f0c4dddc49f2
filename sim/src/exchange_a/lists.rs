//! Exchange A's order-list endpoints: OCO placement (`orderList/oco` with above/below legs
//! and the deprecated `order/oco`), `orderList` (GET and DELETE), `allOrderList` and
//! `openOrderList`.

use super::names::{self, RespType, resp_type};
use super::orders::known_symbol;
use super::params::{ApiError, Params, limit_param};
use super::render;
use super::wire::{OrderListJson, to_value};
use crate::clock::Millis;
use crate::core::{Engine, Leg, OrderType, Side, Tif};
use rust_decimal::Decimal;
use serde_json::Value;

/// `POST /api/v3/orderList/oco`.
pub fn new_oco(e: &mut Engine, account: usize, p: &Params, now: Millis) -> Result<Value, ApiError> {
    let (side, qty) = oco_basics(e, p)?;
    let above = leg_from(p, "above", side, qty)?;
    let below = leg_from(p, "below", side, qty)?;
    place(e, account, p, now, above, below)
}

/// `POST /api/v3/order/oco` (deprecated form): translated to above/below legs.
pub fn new_oco_legacy(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    let (side, qty) = oco_basics(e, p)?;
    let price = p.req_decimal("price")?;
    let stop = p.req_decimal("stopPrice")?;
    let stop_limit = p.decimal("stopLimitPrice")?;
    let stop_tif = match (stop_limit, p.get("stopLimitTimeInForce")) {
        (Some(_), Some(t)) => names::parse_tif(t)?,
        (Some(_), None) => return Err(ApiError::mandatory("stopLimitTimeInForce")),
        (None, Some(_)) => return Err(ApiError::not_required("stopLimitTimeInForce")),
        (None, None) => Tif::Gtc,
    };
    let limit_leg = Leg {
        order_type: OrderType::LimitMaker,
        side,
        qty,
        price: Some(price),
        stop: None,
        tif: Tif::Gtc,
        client_id: p.client_id("limitClientOrderId")?,
    };
    let stop_leg = Leg {
        order_type: if stop_limit.is_some() {
            OrderType::StopLossLimit
        } else {
            OrderType::StopLoss
        },
        side,
        qty,
        price: stop_limit,
        stop: Some(stop),
        tif: stop_tif,
        client_id: p.client_id("stopClientOrderId")?,
    };
    let (above, below) = match side {
        Side::Sell => (limit_leg, stop_leg),
        Side::Buy => (stop_leg, limit_leg),
    };
    place(e, account, p, now, above, below)
}

/// Side and quantity of an OCO (both forms), after checking the symbol.
fn oco_basics(e: &Engine, p: &Params) -> Result<(Side, Decimal), ApiError> {
    known_symbol(e, p)?;
    Ok((names::parse_side(p.req("side")?)?, p.req_decimal("quantity")?))
}

/// One leg of `orderList/oco` from its `above…`/`below…` parameters.
fn leg_from(p: &Params, prefix: &str, side: Side, qty: Decimal) -> Result<Leg, ApiError> {
    let name = |s: &str| format!("{prefix}{s}");
    let unsupported = || ApiError::bad(-1158, "Order type not supported in OCO.");
    let order_type = names::parse_order_type(p.req(&name("Type"))?).map_err(|_| unsupported())?;
    if matches!(order_type, OrderType::Limit | OrderType::Market) {
        return Err(unsupported());
    }
    let price = p.decimal(&name("Price"))?;
    let stop = p.decimal(&name("StopPrice"))?;
    if order_type.has_limit_price() && price.is_none() {
        return Err(ApiError::mandatory(&name("Price")));
    }
    if !order_type.has_limit_price() && price.is_some() {
        return Err(ApiError::not_required(&name("Price")));
    }
    if order_type.is_stop() && stop.is_none() {
        return Err(ApiError::mandatory(&name("StopPrice")));
    }
    if !order_type.is_stop() && stop.is_some() {
        return Err(ApiError::not_required(&name("StopPrice")));
    }
    let tif = match (order_type.needs_tif(), p.get(&name("TimeInForce"))) {
        (true, Some(t)) => names::parse_tif(t)?,
        (true, None) => return Err(ApiError::mandatory(&name("TimeInForce"))),
        (false, Some(_)) => return Err(ApiError::not_required(&name("TimeInForce"))),
        (false, None) => Tif::Gtc,
    };
    Ok(Leg {
        order_type,
        side,
        qty,
        price,
        stop,
        tif,
        client_id: p.client_id(&name("ClientOrderId"))?,
    })
}

/// Checks what only exchange A's above/below form can get wrong, then places the list.
fn place(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
    above: Leg,
    below: Leg,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let symbol = known_symbol(e, p)?.to_string();
    let resp = resp_type(p, RespType::Full)?;
    let list_client_id = p.client_id("listClientOrderId")?;
    // The take-profit leg sits above a sell's price and below a buy's.
    match above.side {
        Side::Sell if above.order_type.is_stop_loss() => {
            return Err(ApiError::bad(-1166, "A limit order in a sell OCO must be above."));
        }
        Side::Buy if below.order_type.is_stop_loss() => {
            return Err(ApiError::bad(-1165, "A limit order in a buy OCO must be below."));
        }
        _ => {}
    }
    let list_id = e.place_oco(account, &symbol, [above, below], list_client_id, now)?;
    let l = list(e, list_id)?;
    let reports = render::legs(e, l).map(|o| render::placement(o, resp, now, None)).collect();
    Ok(to_value(&render::list(e, l, Some(reports))))
}

fn list(e: &Engine, list_id: i64) -> Result<&crate::core::OrderList, ApiError> {
    e.list(list_id).ok_or_else(|| ApiError::bad(-2013, "Order list does not exist."))
}

/// Finds a list of `account` by its id and/or client id (parameter names differ per path).
fn find_list(
    e: &Engine,
    account: usize,
    p: &Params,
    id_name: &str,
    cid_name: &str,
    unknown: ApiError,
) -> Result<i64, ApiError> {
    let id = p.long(id_name)?;
    let cid = p.get(cid_name);
    let found = match (id, cid) {
        (None, None) => {
            return Err(ApiError::bad(
                -1102,
                format!(
                    "Param '{id_name}' or '{cid_name}' must be sent, but both were empty/null!"
                ),
            ));
        }
        (Some(id), _) => Some(id),
        (None, Some(c)) => e.list_by_client_id(account, c),
    };
    let l = found.and_then(|id| e.list(id)).ok_or_else(|| unknown.clone())?;
    if l.account != account || cid.is_some_and(|c| c != l.list_client_order_id) {
        return Err(unknown);
    }
    Ok(l.order_list_id)
}

/// `DELETE /api/v3/orderList`.
pub fn cancel_list(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let symbol = known_symbol(e, p)?;
    let unknown = ApiError::bad(-2011, "Unknown order list sent.");
    let id = find_list(e, account, p, "orderListId", "listClientOrderId", unknown.clone())?;
    let l = list(e, id)?;
    if l.done || l.symbol != symbol {
        return Err(unknown);
    }
    let cancel_id = match p.client_id("newClientOrderId")? {
        Some(c) => c,
        None => e.new_client_id(),
    };
    e.cancel_list(id, &cancel_id, now).map_err(|_| unknown)?;
    let l = list(e, id)?;
    let reports = render::legs(e, l).map(|o| render::cancel(o, &cancel_id, now)).collect();
    Ok(to_value(&render::list(e, l, Some(reports))))
}

/// `GET /api/v3/orderList`.
pub fn query_list(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let unknown = ApiError::bad(-2013, "Order list does not exist.");
    let id = find_list(e, account, p, "orderListId", "origClientOrderId", unknown)?;
    Ok(to_value(&render::list(e, list(e, id)?, None)))
}

/// `GET /api/v3/openOrderList`.
pub fn open_lists(e: &mut Engine, account: usize, now: Millis) -> Value {
    e.catch_up(now);
    let v: Vec<OrderListJson> = e
        .lists
        .iter()
        .filter(|l| l.account == account && !l.done)
        .map(|l| render::list(e, l, None))
        .collect();
    to_value(&v)
}

/// `GET /api/v3/allOrderList`.
pub fn all_lists(
    e: &mut Engine,
    account: usize,
    p: &Params,
    now: Millis,
) -> Result<Value, ApiError> {
    e.catch_up(now);
    let from = p.long("fromId")?.unwrap_or(0);
    let start = p.long("startTime")?.unwrap_or(i64::MIN);
    let end = p.long("endTime")?.unwrap_or(i64::MAX);
    let limit = limit_param(p, 500, 1000)?;
    let v: Vec<OrderListJson> = e
        .lists
        .iter()
        .filter(|l| {
            l.account == account
                && l.order_list_id >= from
                && l.transaction_time >= start
                && l.transaction_time <= end
        })
        .take(limit)
        .map(|l| render::list(e, l, None))
        .collect();
    Ok(to_value(&v))
}
