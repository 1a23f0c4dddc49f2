//! The core's events in exchange A's user data shapes: `executionReport`, `listStatus`,
//! `outboundAccountPosition` and `balanceUpdate`, with the exact keys, their order and JSON
//! types of the exchange (`n` "0" and `N` null without commission, `t` -1 without a trade,
//! `W` only once the order works, `eR` only on expiry).

use crate::core::{Engine, Event, EventKind, Order, OrderChange, OrderList, Status};
use crate::exchange_a::names;
use crate::exchange_a::wire::fmt8;
use serde::Serialize;

#[derive(Serialize)]
struct ExecutionReport {
    e: &'static str,
    #[serde(rename = "E")]
    event_time: i64,
    s: String,
    c: String,
    #[serde(rename = "S")]
    side: &'static str,
    o: &'static str,
    f: &'static str,
    q: String,
    p: String,
    #[serde(rename = "P")]
    stop_price: String,
    #[serde(rename = "F")]
    iceberg_qty: String,
    g: i64,
    #[serde(rename = "C")]
    orig_client_id: String,
    x: &'static str,
    #[serde(rename = "X")]
    status: &'static str,
    r: &'static str,
    i: i64,
    l: String,
    z: String,
    #[serde(rename = "L")]
    last_price: String,
    n: String,
    #[serde(rename = "N")]
    commission_asset: Option<String>,
    #[serde(rename = "T")]
    transaction_time: i64,
    t: i64,
    #[serde(rename = "I")]
    execution_id: u64,
    w: bool,
    m: bool,
    #[serde(rename = "M")]
    ignore: bool,
    #[serde(rename = "O")]
    created: i64,
    #[serde(rename = "Z")]
    cum_quote: String,
    #[serde(rename = "Y")]
    last_quote: String,
    #[serde(rename = "Q")]
    quote_order_qty: String,
    #[serde(rename = "W", skip_serializing_if = "Option::is_none")]
    working_time: Option<i64>,
    #[serde(rename = "V")]
    stp_mode: &'static str,
    #[serde(rename = "eR", skip_serializing_if = "Option::is_none")]
    expiry_reason: Option<&'static str>,
}

#[derive(Serialize)]
struct ListStatus {
    e: &'static str,
    #[serde(rename = "E")]
    event_time: i64,
    s: String,
    g: i64,
    c: &'static str,
    l: &'static str,
    #[serde(rename = "L")]
    order_status: &'static str,
    r: &'static str,
    #[serde(rename = "C")]
    list_client_id: String,
    #[serde(rename = "T")]
    transaction_time: i64,
    #[serde(rename = "O")]
    orders: Vec<ListLeg>,
}

#[derive(Serialize)]
struct ListLeg {
    s: String,
    i: i64,
    c: String,
}

#[derive(Serialize)]
struct AccountPosition {
    e: &'static str,
    #[serde(rename = "E")]
    event_time: i64,
    u: i64,
    #[serde(rename = "B")]
    balances: Vec<AssetBalance>,
}

#[derive(Serialize)]
struct AssetBalance {
    a: String,
    f: String,
    l: String,
}

#[derive(Serialize)]
struct BalanceUpdate {
    e: &'static str,
    #[serde(rename = "E")]
    event_time: i64,
    a: String,
    d: String,
    #[serde(rename = "T")]
    clear_time: i64,
}

/// The payload of one core event (the `event` of a user data frame) as JSON text, keys in the
/// exchange's order.
pub fn render(e: &Engine, ev: &Event) -> String {
    match &ev.kind {
        EventKind::Order { order, change } => text(&execution_report(ev, order, change)),
        EventKind::List(list) => text(&list_status(e, ev.time, list)),
        EventKind::Balances { balances, .. } => text(&AccountPosition {
            e: "outboundAccountPosition",
            event_time: ev.time,
            u: ev.time,
            balances: balances
                .iter()
                .map(|(a, b)| AssetBalance { a: a.clone(), f: fmt8(b.free), l: fmt8(b.locked) })
                .collect(),
        }),
        EventKind::Transfer { asset, delta, .. } => text(&BalanceUpdate {
            e: "balanceUpdate",
            event_time: ev.time,
            a: asset.clone(),
            d: fmt8(*delta),
            clear_time: ev.time,
        }),
    }
}

fn text<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn execution_report(ev: &Event, o: &Order, change: &OrderChange) -> ExecutionReport {
    let zero = || fmt8(rust_decimal::Decimal::ZERO);
    let fill = match change {
        OrderChange::Trade(f) => Some(f),
        _ => None,
    };
    let (c, orig) = match change {
        OrderChange::Canceled { cancel_client_id } => {
            (cancel_client_id.clone(), o.client_order_id.clone())
        }
        _ => (o.client_order_id.clone(), String::new()),
    };
    ExecutionReport {
        e: "executionReport",
        event_time: ev.time,
        s: o.symbol.clone(),
        c,
        side: names::side(o.side),
        o: names::order_type(o.order_type),
        f: names::tif(o.tif),
        q: fmt8(o.orig_qty),
        p: fmt8(o.price),
        stop_price: fmt8(o.stop_price.unwrap_or_default()),
        iceberg_qty: zero(),
        g: o.order_list_id,
        orig_client_id: orig,
        x: match change {
            OrderChange::New => "NEW",
            OrderChange::Trade(_) => "TRADE",
            OrderChange::Canceled { .. } => "CANCELED",
            OrderChange::Expired => "EXPIRED",
        },
        status: names::status(o.status),
        r: "NONE",
        i: o.order_id,
        l: fill.map_or_else(zero, |f| fmt8(f.qty)),
        z: fmt8(o.executed_qty),
        last_price: fill.map_or_else(zero, |f| fmt8(f.price)),
        n: fill.map_or_else(|| "0".to_string(), |f| fmt8(f.commission)),
        commission_asset: fill.map(|f| f.commission_asset.clone()),
        transaction_time: ev.time,
        t: fill.map_or(-1, |f| f.trade_id),
        execution_id: ev.seq + 1,
        w: o.status.is_open() && o.is_working(),
        m: fill.is_some_and(|f| f.is_maker),
        ignore: fill.is_some(),
        created: o.time,
        cum_quote: fmt8(o.cum_quote),
        last_quote: fill.map_or_else(zero, |f| fmt8((f.price * f.qty).round_dp(8))),
        quote_order_qty: fmt8(o.orig_quote_order_qty),
        working_time: (o.working_time >= 0).then_some(o.working_time),
        stp_mode: "NONE",
        expiry_reason: (o.status == Status::Expired)
            .then(|| o.expiry_reason.map_or("NONE", names::expiry)),
    }
}

fn list_status(e: &Engine, time: i64, l: &OrderList) -> ListStatus {
    let (status_type, order_status) =
        if l.done { ("ALL_DONE", "ALL_DONE") } else { ("EXEC_STARTED", "EXECUTING") };
    ListStatus {
        e: "listStatus",
        event_time: time,
        s: l.symbol.clone(),
        g: l.order_list_id,
        c: "OCO",
        l: status_type,
        order_status,
        r: "NONE",
        list_client_id: l.list_client_order_id.clone(),
        transaction_time: l.transaction_time,
        orders: l
            .orders
            .iter()
            .filter_map(|id| e.order(*id))
            .map(|o| ListLeg { s: o.symbol.clone(), i: o.order_id, c: o.client_order_id.clone() })
            .collect(),
    }
}
