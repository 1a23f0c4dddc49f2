//! The core's orders, fills, lists and trades in exchange A's JSON shapes: placement answers
//! (ACK/RESULT/FULL), the query shape, cancel answers and order lists.

use super::names::{self, RespType};
use super::wire::{FillJson, ListLegJson, OrderJson, OrderListJson, TradeJson, fmt8, to_value};
use crate::clock::Millis;
use crate::core::{Engine, Fill, Order, OrderList, Status, Trade};
use crate::state::Sim;
use rust_decimal::Decimal;

pub fn fill(f: &Fill) -> FillJson {
    FillJson {
        price: fmt8(f.price),
        qty: fmt8(f.qty),
        commission: fmt8(f.commission),
        commission_asset: f.commission_asset.clone(),
        trade_id: f.trade_id,
    }
}

/// A placement answer of the kind `resp` asks for; `fills` only shows in FULL.
pub fn placement(o: &Order, resp: RespType, now: Millis, fills: Option<&[Fill]>) -> OrderJson {
    if resp == RespType::Ack {
        return OrderJson {
            symbol: o.symbol.clone(),
            order_id: o.order_id,
            order_list_id: o.order_list_id,
            client_order_id: o.client_order_id.clone(),
            transact_time: Some(now),
            ..OrderJson::default()
        };
    }
    OrderJson {
        transact_time: Some(now),
        working_time: Some(o.working_time),
        expiry_reason: expiry_reason(o),
        fills: (resp == RespType::Full)
            .then(|| fills.unwrap_or_default().iter().map(fill).collect()),
        ..detail(o)
    }
}

/// Fields every full order shape (RESULT, query, cancel) has.
fn detail(o: &Order) -> OrderJson {
    OrderJson {
        symbol: o.symbol.clone(),
        order_id: o.order_id,
        order_list_id: o.order_list_id,
        client_order_id: o.client_order_id.clone(),
        price: Some(fmt8(o.price)),
        orig_qty: Some(fmt8(o.orig_qty)),
        executed_qty: Some(fmt8(o.executed_qty)),
        orig_quote_order_qty: Some(fmt8(o.orig_quote_order_qty)),
        cummulative_quote_qty: Some(fmt8(o.cum_quote)),
        status: Some(names::status(o.status)),
        time_in_force: Some(names::tif(o.tif)),
        order_type: Some(names::order_type(o.order_type)),
        side: Some(names::side(o.side)),
        stop_price: o.stop_price.map(fmt8),
        self_trade_prevention_mode: Some("NONE"),
        ..OrderJson::default()
    }
}

fn expiry_reason(o: &Order) -> Option<&'static str> {
    (o.status == Status::Expired).then_some(o.expiry_reason.map_or("NONE", names::expiry))
}

/// The query shape (`GET /api/v3/order`, `openOrders`, `allOrders`).
pub fn query(o: &Order) -> OrderJson {
    OrderJson {
        stop_price: Some(fmt8(o.stop_price.unwrap_or_default())),
        iceberg_qty: Some(fmt8(Decimal::ZERO)),
        time: Some(o.time),
        update_time: Some(o.update_time),
        is_working: Some(o.is_working()),
        working_time: Some(o.working_time),
        expiry_reason: expiry_reason(o),
        ..detail(o)
    }
}

/// A cancel answer: the order under the cancel's own client id.
pub fn cancel(o: &Order, cancel_id: &str, now: Millis) -> OrderJson {
    OrderJson {
        orig_client_order_id: Some(o.client_order_id.clone()),
        client_order_id: cancel_id.to_string(),
        transact_time: Some(now),
        ..detail(o)
    }
}

/// A list with its legs, and `reports` (the legs' own shapes) where the answer has them.
pub fn list(e: &Engine, l: &OrderList, reports: Option<Vec<OrderJson>>) -> OrderListJson {
    let (status_type, order_status) =
        if l.done { ("ALL_DONE", "ALL_DONE") } else { ("EXEC_STARTED", "EXECUTING") };
    OrderListJson {
        order_list_id: l.order_list_id,
        contingency_type: "OCO",
        list_status_type: status_type,
        list_order_status: order_status,
        list_client_order_id: l.list_client_order_id.clone(),
        transaction_time: l.transaction_time,
        symbol: l.symbol.clone(),
        orders: legs(e, l)
            .map(|o| ListLegJson {
                symbol: o.symbol.clone(),
                order_id: o.order_id,
                client_order_id: o.client_order_id.clone(),
            })
            .collect(),
        order_reports: reports,
    }
}

/// The list's leg orders, stop leg first.
pub fn legs<'a>(e: &'a Engine, l: &'a OrderList) -> impl Iterator<Item = &'a Order> {
    l.orders.iter().filter_map(|id| e.order(*id))
}

pub fn trade(t: &Trade) -> TradeJson {
    TradeJson {
        symbol: t.symbol.clone(),
        id: t.id,
        order_id: t.order_id,
        order_list_id: t.order_list_id,
        price: fmt8(t.price),
        qty: fmt8(t.qty),
        quote_qty: fmt8(t.quote_qty),
        commission: fmt8(t.commission),
        commission_asset: t.commission_asset.clone(),
        time: t.time,
        is_buyer: t.is_buyer,
        is_maker: t.is_maker,
        is_best_match: true,
    }
}

/// The handle's view of the orders in exchange A's shape (tests assert on what the exchange
/// holds).
impl Sim {
    /// Every order the engine accepted (any status), in the query shape plus nothing else.
    pub fn orders(&self) -> Vec<serde_json::Value> {
        let e = self.engine();
        e.orders.iter().map(|o| to_value(&query(o))).collect()
    }
}
