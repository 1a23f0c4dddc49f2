//! Exchange B's JSON shapes of the core's records: orders as `openOrders`,
//! `frontendOpenOrders` and `orderStatus` show them, fills, balances and book levels. Every
//! price, size and amount is a canonical decimal string (no trailing zeros), every time epoch
//! ms, every order id a `u64`. The WebSocket front end renders its messages with these too.

use super::listing::{Listing, Pair, token_name};
use crate::core::{Balance, Expiry, Order, OrderType, Side, Status, Tif, Trade};
use crate::market::mix;
use crate::state::Sim;
use rust_decimal::Decimal;
use serde::Serialize;
use spotbot_exchange_b_protocol::Cloid;
use spotbot_exchange_b_protocol::numbers::to_wire;

/// `"B"` for a buy, `"A"` (ask) for a sell.
pub fn side(side: Side) -> &'static str {
    match side {
        Side::Buy => "B",
        Side::Sell => "A",
    }
}

/// The order's client id when it is a cloid (orders placed on exchange B with one; an order
/// without one carries a core-made id, which is not).
pub fn cloid(o: &Order) -> Option<String> {
    o.client_order_id.parse::<Cloid>().ok().map(|c| c.to_string())
}

/// The order status string of exchange B.
pub fn status(o: &Order) -> &'static str {
    let unfilled = o.executed_qty.is_zero();
    match (o.status, o.expiry_reason) {
        (Status::New | Status::PartiallyFilled, _) => "open",
        (Status::Filled, _) => "filled",
        (Status::Canceled, _) => "canceled",
        (Status::Expired, Some(Expiry::UnfilledIoc | Expiry::UnfilledFok)) if unfilled => {
            "iocCancelRejected"
        }
        (Status::Expired, Some(Expiry::InsufficientLiquidity)) if unfilled => {
            "marketOrderNoLiquidityRejected"
        }
        (Status::Expired, Some(Expiry::PartnerTriggered)) => "siblingFilledCanceled",
        (Status::Expired, _) => "canceled",
    }
}

/// `openOrders` entry.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenOrderJson {
    pub coin: String,
    pub limit_px: String,
    pub oid: u64,
    pub side: &'static str,
    pub sz: String,
    pub timestamp: i64,
    pub cloid: Option<String>,
}

/// `frontendOpenOrders` entry, and the order inside an `orderStatus` answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FrontendOrderJson {
    pub coin: String,
    pub is_position_tpsl: bool,
    pub is_trigger: bool,
    pub limit_px: String,
    pub oid: u64,
    pub order_type: &'static str,
    pub orig_sz: String,
    pub reduce_only: bool,
    pub side: &'static str,
    pub sz: String,
    pub tif: Option<&'static str>,
    pub timestamp: i64,
    pub trigger_condition: String,
    pub trigger_px: String,
    pub children: Vec<serde_json::Value>,
    pub cloid: Option<String>,
}

fn oid(o: &Order) -> u64 {
    u64::try_from(o.order_id).unwrap_or(0)
}

pub fn open_order(pair: &Pair, o: &Order) -> OpenOrderJson {
    OpenOrderJson {
        coin: pair.name.clone(),
        limit_px: to_wire(o.price),
        oid: oid(o),
        side: side(o.side),
        sz: to_wire(o.remaining()),
        timestamp: o.time,
        cloid: cloid(o),
    }
}

/// Exchange B's order type and time in force of a core order. Orders placed on exchange A
/// show as their nearest kind: a market order is an IOC limit there, a stop a trigger order.
fn kind(o: &Order) -> (&'static str, Option<&'static str>) {
    match (o.order_type, o.tif) {
        (OrderType::Limit, Tif::Gtc) => ("Limit", Some("Gtc")),
        (OrderType::Limit | OrderType::Market, _) => ("Limit", Some("Ioc")),
        (OrderType::LimitMaker, _) => ("Limit", Some("Alo")),
        (OrderType::StopLoss, _) => ("Stop Market", None),
        (OrderType::StopLossLimit, _) => ("Stop Limit", None),
        (OrderType::TakeProfit, _) => ("Take Profit Market", None),
        (OrderType::TakeProfitLimit, _) => ("Take Profit Limit", None),
    }
}

pub fn frontend_order(pair: &Pair, o: &Order) -> FrontendOrderJson {
    let (order_type, tif) = kind(o);
    let trigger_condition = match o.stop_price {
        Some(stop) if o.order_type.is_stop() => {
            // As `Order::triggers_at`: a sell stop-loss or a buy take-profit waits for a fall.
            let falls = matches!(
                (o.order_type.is_stop_loss(), o.side),
                (true, Side::Sell) | (false, Side::Buy)
            );
            format!("Price {} {}", if falls { "below" } else { "above" }, to_wire(stop))
        }
        _ => "N/A".to_string(),
    };
    FrontendOrderJson {
        coin: pair.name.clone(),
        is_position_tpsl: false,
        is_trigger: o.order_type.is_stop(),
        limit_px: to_wire(o.price),
        oid: oid(o),
        order_type,
        orig_sz: to_wire(o.orig_qty),
        reduce_only: false,
        side: side(o.side),
        sz: to_wire(o.remaining()),
        tif,
        timestamp: o.time,
        trigger_condition,
        trigger_px: to_wire(o.stop_price.unwrap_or_default()),
        children: Vec::new(),
        cloid: cloid(o),
    }
}

/// `{"order", "status", "statusTimestamp"}`: an order with its status, as `orderStatus`
/// answers it.
pub fn order_with_status(pair: &Pair, o: &Order) -> serde_json::Value {
    serde_json::json!({
        "order": frontend_order(pair, o),
        "status": status(o),
        "statusTimestamp": o.update_time,
    })
}

/// One fill of `userFills`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FillJson {
    pub coin: String,
    pub px: String,
    pub sz: String,
    pub side: &'static str,
    pub time: i64,
    pub start_position: String,
    pub dir: &'static str,
    pub closed_pnl: String,
    pub hash: String,
    pub oid: u64,
    pub crossed: bool,
    pub fee: String,
    pub fee_token: String,
    pub tid: u64,
}

/// A fill: the fee is in the token received (the base for a buy, USDC for a sell), as the
/// core books it. `startPosition` and `closedPnl` are display fields the simulator leaves at 0.
pub fn fill(pair: &Pair, t: &Trade) -> FillJson {
    let tid = u64::try_from(t.id).unwrap_or(0);
    let side = if t.is_buyer { Side::Buy } else { Side::Sell };
    FillJson {
        coin: pair.name.clone(),
        px: to_wire(t.price),
        sz: to_wire(t.qty),
        side: self::side(side),
        time: t.time,
        start_position: "0".to_string(),
        dir: if t.is_buyer { "Buy" } else { "Sell" },
        closed_pnl: "0".to_string(),
        hash: format!(
            "0x{:016x}{:016x}{:016x}{:016x}",
            mix(tid),
            mix(tid ^ 1),
            mix(tid ^ 2),
            mix(tid ^ 3)
        ),
        oid: u64::try_from(t.order_id).unwrap_or(0),
        crossed: !t.is_maker,
        fee: to_wire(t.commission),
        fee_token: token_name(&t.commission_asset).to_string(),
        tid,
    }
}

/// One balance of `spotClearinghouseState`: `hold` is what open orders lock.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BalanceJson {
    pub coin: String,
    pub token: u32,
    pub hold: String,
    pub total: String,
    pub entry_ntl: String,
}

/// The account's balances of listed tokens, by token index (`entryNtl` is left at 0).
pub fn balances<'a>(
    listing: &Listing,
    balances: impl Iterator<Item = (&'a String, &'a Balance)>,
) -> Vec<BalanceJson> {
    let mut out: Vec<BalanceJson> = balances
        .filter_map(|(asset, b)| {
            let token = listing.token_by_asset(asset)?;
            Some(BalanceJson {
                coin: token.name.clone(),
                token: token.index,
                hold: to_wire(b.locked),
                total: to_wire(b.free + b.locked),
                entry_ntl: "0".to_string(),
            })
        })
        .collect();
    out.sort_by_key(|b| b.token);
    out
}

/// One book level: price, size, number of orders (the synthetic book has one per level).
#[derive(Debug, Serialize)]
pub struct LevelJson {
    pub px: String,
    pub sz: String,
    pub n: u32,
}

pub fn levels(side: Vec<(Decimal, Decimal)>, most: usize) -> Vec<LevelJson> {
    side.into_iter()
        .take(most)
        .map(|(px, sz)| LevelJson { px: to_wire(px), sz: to_wire(sz), n: 1 })
        .collect()
}

/// One candle of `candleSnapshot`: open and close time, coin, interval, prices, base volume
/// and number of trades.
#[derive(Debug, Serialize)]
pub struct CandleJson {
    pub t: i64,
    #[serde(rename = "T")]
    pub close_time: i64,
    pub s: String,
    pub i: String,
    pub o: String,
    pub c: String,
    pub h: String,
    pub l: String,
    pub v: String,
    pub n: u64,
}

pub fn candle(pair: &Pair, interval: &str, c: &crate::market::Candle) -> CandleJson {
    CandleJson {
        t: c.open_time,
        close_time: c.close_time,
        s: pair.name.clone(),
        i: interval.to_string(),
        o: to_wire(c.open),
        c: to_wire(c.close),
        h: to_wire(c.high),
        l: to_wire(c.low),
        v: to_wire(c.volume),
        n: c.trades,
    }
}

/// The handle's view of the orders in exchange B's shape (tests assert on what the exchange
/// holds).
impl Sim {
    /// Every order the engine accepted on a listed pair, as exchange B's `orderStatus` shows
    /// it, with the `user` address of its account (null for an account without one).
    pub fn exchange_b_orders(&self) -> Vec<serde_json::Value> {
        let e = self.engine();
        let listing = Listing::new(&e.rules);
        let wallets = self.exchange_b().wallets();
        e.orders
            .iter()
            .filter_map(|o| {
                let pair = listing.pair_by_symbol(&o.symbol)?;
                let mut v = order_with_status(pair, o);
                v["user"] = serde_json::json!(wallets.address_of(o.account).map(|a| a.to_string()));
                Some(v)
            })
            .collect()
    }
}
