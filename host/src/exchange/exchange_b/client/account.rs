//! The account's reads: balances, open orders, fills and order lookups, as domain types.
//! Token names are the service's (`UBTC` → `BTC`), client order ids the service's when the
//! client knows the cloid (see [`crate::exchange::exchange_b::cloid`]). What the wire types
//! cannot say alone is checked here, so an impossible answer is `Decode` and never an order:
//! an open size above the order's, fills beyond it, a hold above the balance, an order found
//! for a lookup that is not the one asked for. Only `orderStatus`'s documented `unknownOid`
//! says an order does not exist.

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::ExchangeBClient;
use super::errors::NO_CODE;
use crate::exchange::exchange_b::symbols::{Pair, SymbolMap, service_asset};
use spotbot_exchange_b_protocol::Cloid;

use crate::exchange::exchange_b::wire::{
    ClearinghouseState, FillJson, OrderJson, OrderStatusAnswer, OrderWithStatus, SideJson, TifJson,
};
use crate::exchange::feed::OrderUpdate;
use crate::exchange::{
    Balance, ExchangeError, Fill, Order, OrderRef, OrderStatus, OrderType, Price, Qty, Side,
    TimeInForce, Trade,
};

/// The most orders [`ExchangeBClient::recent_orders`] looks up one by one (weight 2 each).
const RECENT_ORDER_LOOKUPS: usize = 100;

/// `a × b`, or a `Decode` error when the product leaves the decimal range: no number in an
/// answer can make the client panic.
pub fn product(a: Decimal, b: Decimal) -> Result<Decimal, ExchangeError> {
    a.checked_mul(b).ok_or_else(|| ExchangeError::Decode {
        detail: format!("{a} × {b} is beyond the decimal range"),
    })
}

/// `a + b`, or a `Decode` error beyond the decimal range.
fn sum(a: Decimal, b: Decimal) -> Result<Decimal, ExchangeError> {
    a.checked_add(b).ok_or_else(|| ExchangeError::Decode {
        detail: format!("{a} + {b} is beyond the decimal range"),
    })
}

fn decode(detail: String) -> ExchangeError {
    ExchangeError::Decode { detail }
}

fn id_of(v: u64, what: &str) -> Result<i64, ExchangeError> {
    i64::try_from(v)
        .map_err(|_| ExchangeError::Decode { detail: format!("{what} {v} is out of range") })
}

/// The domain status of an order exchange B reports as `status`. An IOC that ended unfilled
/// or partly filled (`iocCancelRejected`, `marketOrderNoLiquidityRejected`, `canceled`) is
/// `Expired`, as exchange A reports a MARKET or IOC order that did not fill completely.
pub fn status_of(status: &str, ioc: bool, executed: Decimal) -> Result<OrderStatus, ExchangeError> {
    Ok(match status {
        "open" | "triggered" if executed > Decimal::ZERO => OrderStatus::PartiallyFilled,
        "open" | "triggered" => OrderStatus::New,
        "filled" => OrderStatus::Filled,
        "iocCancelRejected" | "marketOrderNoLiquidityRejected" if ioc => OrderStatus::Expired,
        s if ioc && (s == "canceled" || s.ends_with("Canceled")) => OrderStatus::Expired,
        s if s == "canceled" || s == "scheduledCancel" || s.ends_with("Canceled") => {
            OrderStatus::Canceled
        }
        s if s == "rejected" || s.ends_with("Rejected") => OrderStatus::Rejected,
        other => {
            return Err(ExchangeError::Decode {
                detail: format!("unknown order status {other:?}"),
            });
        }
    })
}

fn side_of(side: SideJson) -> Side {
    match side {
        SideJson::Bid => Side::Buy,
        SideJson::Ask => Side::Sell,
    }
}

/// The domain type of an order by its time in force: `Alo` is LIMIT_MAKER, `Ioc` is the
/// service's MARKET (the only IOC it sends besides LIMIT IOC/FOK, which read back as MARKET
/// too), as are the front end's IOC-like market orders; `Gtc` or none is LIMIT.
fn type_of(tif: Option<TifJson>) -> (OrderType, Option<TimeInForce>) {
    match tif {
        Some(TifJson::Alo) => (OrderType::LimitMaker, None),
        Some(TifJson::Ioc | TifJson::FrontendMarket | TifJson::LiquidationMarket) => {
            (OrderType::Market, None)
        }
        Some(TifJson::Gtc) | None => (OrderType::Limit, Some(TimeInForce::Gtc)),
    }
}

/// `o` with `status` as a domain order of `symbol`; the cumulative quote and fills are the
/// caller's (`fills` of this order, when read).
pub fn order_of(
    symbol: &str,
    o: &OrderJson,
    status: &str,
    status_time: i64,
    client_order_id: String,
    fills: &[FillJson],
) -> Result<Order, ExchangeError> {
    let orig = o.orig_sz;
    let (order_type, time_in_force) = type_of(o.tif.flatten());
    if o.sz > orig {
        return Err(decode(format!("order {}: {} open of {orig} placed", o.oid, o.sz)));
    }
    // Both sizes read as zero or more, the open one at most the placed one: no overflow.
    let executed = if status == "filled" { orig } else { orig - o.sz };
    let status = status_of(status, order_type == OrderType::Market, executed)?;
    let (cumulative_quote_qty, fills) = if fills.is_empty() {
        // No fills read (an open order in a list): resting orders fill at their limit.
        (product(executed, o.limit_px)?.round_dp(8), Vec::new())
    } else {
        let fills = fills.iter().map(fill_of).collect::<Result<Vec<_>, _>>()?;
        let (mut quote, mut filled) = (Decimal::ZERO, Decimal::ZERO);
        for f in &fills {
            quote = sum(quote, product(f.price.0, f.qty.0)?)?;
            filled = sum(filled, f.qty.0)?;
        }
        if filled > orig {
            return Err(decode(format!("order {}: fills of {filled}, {orig} placed", o.oid)));
        }
        (quote, fills)
    };
    Ok(Order {
        symbol: symbol.to_string(),
        order_id: id_of(o.oid, "oid")?,
        order_list_id: None,
        client_order_id,
        side: side_of(o.side),
        order_type,
        status,
        price: Price(o.limit_px),
        stop_price: None,
        orig_qty: Qty(orig),
        executed_qty: Qty(executed),
        cumulative_quote_qty,
        time_in_force,
        time: o.timestamp,
        update_time: status_time.max(o.timestamp),
        working: true,
        fills,
    })
}

fn fill_of(f: &FillJson) -> Result<Fill, ExchangeError> {
    Ok(Fill {
        price: Price(f.px),
        qty: Qty(f.sz),
        commission: f.fee,
        commission_asset: service_asset(&f.fee_token).to_string(),
        trade_id: id_of(f.tid, "tid")?,
    })
}

/// A fill of `symbol` as the service's trade.
pub fn trade_of(symbol: &str, f: &FillJson) -> Result<Trade, ExchangeError> {
    Ok(Trade {
        symbol: symbol.to_string(),
        id: id_of(f.tid, "tid")?,
        order_id: id_of(f.oid, "oid")?,
        order_list_id: None,
        price: Price(f.px),
        qty: Qty(f.sz),
        quote_qty: product(f.px, f.sz)?,
        commission: f.fee,
        commission_asset: service_asset(&f.fee_token).to_string(),
        time: f.time,
        is_buyer: f.side == SideJson::Bid,
        is_maker: !f.crossed,
    })
}

/// Balances with the service's asset names; free = total − hold. Empty balances are left out;
/// a hold above its total is impossible (`Decode`).
pub fn balances_of(state: ClearinghouseState) -> Result<Vec<Balance>, ExchangeError> {
    let mut out = Vec::new();
    for b in state.balances {
        if b.hold > b.total {
            return Err(decode(format!("{} {} held of {}", b.coin, b.hold, b.total)));
        }
        if !b.total.is_zero() {
            // Both read as zero or more, the hold at most the total: no overflow.
            let free = b.total - b.hold;
            out.push(Balance { asset: service_asset(&b.coin).to_string(), free, locked: b.hold });
        }
    }
    Ok(out)
}

/// How an order is looked up with `orderStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    Oid(i64),
    Cloid(Cloid),
}

/// Checks that `found`, the order `orderStatus` answered for `asked` on the pair `coin`, is
/// that order and carries what the REST answer always does (its time in force): an answer
/// about another order, or one missing a field, says nothing about the one asked for.
pub fn found_as_asked(coin: &str, asked: Asked, found: &OrderJson) -> Result<(), ExchangeError> {
    let same = match asked {
        Asked::Oid(oid) => i64::try_from(found.oid) == Ok(oid),
        Asked::Cloid(cloid) => found.cloid == Some(cloid),
    };
    if !same || found.coin != coin {
        return Err(decode(format!(
            "orderStatus for {asked:?} on {coin} answered order {} on {}",
            found.oid, found.coin
        )));
    }
    rest_order(found)
}

/// An order of a REST answer (`frontendOpenOrders`, `orderStatus`) names its time in force,
/// `null` for a trigger order; only the WebSocket's pushes leave it out.
fn rest_order(o: &OrderJson) -> Result<(), ExchangeError> {
    match o.tif {
        Some(_) => Ok(()),
        None => Err(decode(format!("order {} has no tif", o.oid))),
    }
}

impl ExchangeBClient {
    fn user(&self) -> Result<String, ExchangeError> {
        Ok(self.account_or_refuse()?.to_string())
    }

    pub(super) async fn fetch_balances(&self) -> Result<Vec<Balance>, ExchangeError> {
        let state: ClearinghouseState =
            self.info("spotClearinghouseState", json!({"user": self.user()?})).await?;
        balances_of(state)
    }

    /// The account's fills (the newest 2000, newest first).
    async fn fills(&self) -> Result<Vec<FillJson>, ExchangeError> {
        self.info_list("userFills", json!({"user": self.user()?})).await
    }

    /// Fills of `symbol` (of one order when given), oldest first.
    pub(super) async fn trades(
        &self,
        symbol: &str,
        order_id: Option<i64>,
    ) -> Result<Vec<Trade>, ExchangeError> {
        let pair = self.pair(symbol).await?;
        let mut trades = self
            .fills()
            .await?
            .iter()
            .filter(|f| {
                f.coin == pair.coin && order_id.is_none_or(|id| i64::try_from(f.oid) == Ok(id))
            })
            .map(|f| trade_of(symbol, f))
            .collect::<Result<Vec<_>, _>>()?;
        trades.sort_by_key(|t| (t.time, t.id));
        Ok(trades)
    }

    /// Open orders of one symbol or all, as `frontendOpenOrders` lists them.
    pub(super) async fn fetch_open_orders(
        &self,
        symbol: Option<&str>,
    ) -> Result<Vec<Order>, ExchangeError> {
        let map = self.symbol_map().await?;
        let wanted = match symbol {
            Some(s) => Some(self.pair(s).await?.coin),
            None => None,
        };
        let open: Vec<OrderJson> =
            self.info("frontendOpenOrders", json!({"user": self.user()?})).await?;
        open.iter()
            .filter(|o| wanted.as_ref().is_none_or(|c| *c == o.coin))
            .filter_map(|o| Some((map.by_coin(&o.coin)?, o)))
            .map(|(pair, o)| {
                rest_order(o)?;
                let id = self.ids.service_id(o.cloid);
                order_of(&pair.symbol, o, "open", o.timestamp, id, &[])
            })
            .collect()
    }

    /// `orderStatus` of `id` on `pair`: `None` only for the documented `unknownOid`; an
    /// answer that does not read, or names another order, is `Decode` (the caller cannot
    /// tell, and never concludes the order is absent).
    pub(super) async fn order_status(
        &self,
        pair: &Pair,
        id: &OrderRef,
    ) -> Result<Option<OrderWithStatus>, ExchangeError> {
        let asked = match id {
            OrderRef::Id(i) => Asked::Oid(*i),
            OrderRef::Client(c) => Asked::Cloid(self.ids.learn(c)),
        };
        let oid = match asked {
            Asked::Oid(i) => json!(i),
            Asked::Cloid(c) => Value::String(c.to_string()),
        };
        let answer: OrderStatusAnswer =
            self.info("orderStatus", json!({"user": self.user()?, "oid": oid})).await?;
        match answer {
            OrderStatusAnswer::UnknownOid => Ok(None),
            OrderStatusAnswer::Found(found) => {
                found_as_asked(&pair.coin, asked, &found.order)?;
                Ok(Some(found))
            }
        }
    }

    /// The order `id` of `symbol` with its fills (`UnknownOrder` when the exchange has none).
    pub(super) async fn get_order(
        &self,
        symbol: &str,
        id: &OrderRef,
    ) -> Result<Order, ExchangeError> {
        let pair = self.pair(symbol).await?;
        let OrderWithStatus { order: o, status, status_timestamp: at } =
            self.order_status(&pair, id).await?.ok_or_else(|| ExchangeError::UnknownOrder {
                code: NO_CODE,
                msg: format!(
                    "order {} of {symbol} is unknown to exchange B (unknownOid)",
                    describe(id)
                ),
            })?;
        let client_id = self.ids.service_id(o.cloid);
        let order = order_of(symbol, &o, &status, at, client_id.clone(), &[])?;
        if order.executed_qty.0.is_zero() {
            return Ok(order);
        }
        let fills: Vec<FillJson> =
            self.fills().await?.into_iter().filter(|f| f.oid == o.oid).collect();
        order_of(symbol, &o, &status, at, client_id, &fills)
    }

    /// Recent orders of `symbol` in any state, oldest first, at most `limit`. Exchange B has
    /// no order history endpoint: these are the open orders plus the orders of the account's
    /// recent fills (the newest 2000 of all symbols), each looked up by `orderStatus` — at
    /// most [`RECENT_ORDER_LOOKUPS`] of them, newest first. Orders that ended without a fill
    /// and are no longer open are not found this way.
    pub(super) async fn recent_orders(
        &self,
        symbol: &str,
        limit: u32,
    ) -> Result<Vec<Order>, ExchangeError> {
        let pair = self.pair(symbol).await?;
        let mut orders: BTreeMap<u64, Order> = BTreeMap::new();
        for o in self.fetch_open_orders(Some(symbol)).await? {
            orders.insert(u64::try_from(o.order_id).unwrap_or_default(), o);
        }
        let mut by_order: HashMap<u64, Vec<FillJson>> = HashMap::new();
        let mut newest_first: Vec<u64> = Vec::new();
        for f in self.fills().await?.into_iter().filter(|f| f.coin == pair.coin) {
            if !by_order.contains_key(&f.oid) {
                newest_first.push(f.oid);
            }
            by_order.entry(f.oid).or_default().push(f);
        }
        let lookups: Vec<u64> = newest_first
            .into_iter()
            .filter(|oid| !orders.contains_key(oid))
            .take(RECENT_ORDER_LOOKUPS.min(limit as usize))
            .collect();
        for oid in lookups {
            let Some(found) = self.order_status(&pair, &OrderRef::Id(id_of(oid, "oid")?)).await?
            else {
                continue;
            };
            let OrderWithStatus { order: o, status, status_timestamp: at } = found;
            let client_id = self.ids.service_id(o.cloid);
            let fills = by_order.get(&oid).map(Vec::as_slice).unwrap_or_default();
            orders.insert(oid, order_of(symbol, &o, &status, at, client_id, fills)?);
        }
        let mut all: Vec<Order> = orders.into_values().collect();
        all.sort_by_key(|o| (o.time, o.order_id));
        let skip = all.len().saturating_sub(limit as usize);
        Ok(all.into_iter().skip(skip).collect())
    }
}

impl ExchangeBClient {
    /// One element of the WebSocket's `orderUpdates` (the same shape as `orderStatus`'s
    /// order) as the host's order update: the pair's symbol from `map` (`None` for a pair the
    /// service does not trade), the service's client id from the cloid (hex when unknown), the
    /// status mapped as for REST reads, executed = `origSz − sz`, the time of the status.
    /// The push carries no time in force, so an IOC's unfilled rest reads `Canceled`.
    pub(crate) fn order_update(
        &self,
        map: &SymbolMap,
        pushed: &OrderWithStatus,
    ) -> Result<Option<OrderUpdate>, ExchangeError> {
        let Some(pair) = map.by_coin(&pushed.order.coin) else { return Ok(None) };
        let id = self.ids.service_id(pushed.order.cloid);
        let at = pushed.status_timestamp;
        let o = order_of(&pair.symbol, &pushed.order, &pushed.status, at, id, &[])?;
        Ok(Some(OrderUpdate {
            symbol: o.symbol,
            order_id: o.order_id,
            client_order_id: o.client_order_id,
            list_id: None,
            status: o.status,
            executed_qty: o.executed_qty.0,
            time_ms: at,
        }))
    }
}

/// `id` as text for a message.
fn describe(id: &OrderRef) -> String {
    match id {
        OrderRef::Id(i) => i.to_string(),
        OrderRef::Client(c) => c.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::answers;
    use crate::exchange::exchange_b::wire::fixtures;
    use rust_decimal_macros::dec;

    /// The cloid [`fixtures::ORDER_STATUS_OPEN`] was looked up by.
    fn tp_cloid() -> Cloid {
        "0x534f5f0102030405060708090a0b0c0d".parse().unwrap()
    }

    /// What `get_order` makes of the `orderStatus` answer `text` for the fixture's cloid on
    /// `@142`: `None` for "does not exist", the order, or the error.
    fn lookup(text: &str) -> Result<Option<Order>, ExchangeError> {
        let answer: OrderStatusAnswer =
            answers::parse(text.as_bytes()).map_err(|e| e.read("/info orderStatus"))?;
        let found = match answer {
            OrderStatusAnswer::UnknownOid => return Ok(None),
            OrderStatusAnswer::Found(found) => found,
        };
        found_as_asked("@142", Asked::Cloid(tp_cloid()), &found.order)?;
        let OrderWithStatus { order, status, status_timestamp } = found;
        order_of("BTCUSDT", &order, &status, status_timestamp, "SO_x".into(), &[]).map(Some)
    }

    fn assert_unreadable(text: &str, why: &str) {
        let answer = lookup(text);
        assert!(matches!(answer, Err(ExchangeError::Decode { .. })), "{why}: {answer:?}\n{text}");
    }

    #[test]
    fn an_order_status_reads_as_a_partly_filled_take_profit_with_its_fills() {
        let OrderStatusAnswer::Found(found) =
            serde_json::from_str(fixtures::ORDER_STATUS_OPEN).unwrap()
        else {
            panic!("found")
        };
        let fills: Vec<FillJson> = serde_json::from_str(fixtures::USER_FILLS).unwrap();
        let mine: Vec<FillJson> = fills.into_iter().filter(|f| f.oid == found.order.oid).collect();
        let o = order_of(
            "BTCUSDT",
            &found.order,
            &found.status,
            found.status_timestamp,
            "SO_x_BTCUSDT".into(),
            &mine,
        )
        .unwrap();
        assert_eq!((o.order_id, o.side, o.order_type), (91490942, Side::Sell, OrderType::Limit));
        assert_eq!(o.status, OrderStatus::PartiallyFilled);
        assert_eq!(
            (o.orig_qty.0, o.executed_qty.0, o.price.0),
            (dec!(0.003), dec!(0.001), dec!(101000))
        );
        assert_eq!(o.cumulative_quote_qty, dec!(97.05));
        assert_eq!(o.fills.len(), 1);
        assert_eq!(o.fills[0].commission_asset, "USDC");
        assert_eq!(o.update_time, 1681247412600);
        assert_eq!(lookup(fixtures::ORDER_STATUS_UNKNOWN), Ok(None));
        let reordered = r#"{"order":{"statusTimestamp":1681247412600,"status":"open","order":{
          "cloid":"0x534f5f0102030405060708090a0b0c0d","timestamp":1681247412573,"tif":"Gtc",
          "sz":"0.002","side":"A","origSz":"0.003","oid":91490942,"limitPx":"101000.0",
          "coin":"@142"}},"status":"order"}"#;
        assert_eq!(lookup(reordered).unwrap().unwrap().executed_qty.0, dec!(0.001), "key order");
    }

    /// Only `{"status":"unknownOid"}` says an order does not exist; every damaged form of
    /// either answer is unreadable (the lookup cannot tell), never "absent" and never an order.
    #[test]
    fn a_damaged_order_status_is_unreadable_never_absent_or_an_order() {
        let open = fixtures::ORDER_STATUS_OPEN;
        let unknown = fixtures::ORDER_STATUS_UNKNOWN;
        for answer in [open, unknown] {
            for cut in 0..answer.len() {
                assert_unreadable(&answer[..cut], "cut");
            }
        }
        let damaged = |from: &str, to: &str| {
            assert!(open.contains(from), "{from}");
            open.replacen(from, to, 1)
        };
        let listed = damaged(r#""order":{"order":{"#, r#""order":[{"order":{"#);
        let listed = format!("{}]}}", listed.strip_suffix('}').unwrap());
        let cases = [
            // Valid JSON of the wrong shape.
            (format!("[{open}]"), "a list around the answer"),
            (listed, "the order in a list"),
            (damaged(r#""oid":91490942"#, r#""oid":"91490942""#), "an oid as text"),
            (damaged(r#""limitPx":"101000.0""#, r#""limitPx":101000.0"#), "a price as a number"),
            (
                damaged(r#""statusTimestamp":1681247412600"#, r#""statusTimestamp":"soon""#),
                "a time as text",
            ),
            // A field the order needs is missing.
            (damaged(r#""status":"open","#, ""), "no status"),
            (damaged(r#""origSz":"0.003","#, ""), "no placed size"),
            (damaged(r#""sz":"0.002","#, ""), "no open size"),
            (damaged(r#""tif":"Gtc","#, ""), "no time in force"),
            (damaged(r#","statusTimestamp":1681247412600"#, ""), "no status time"),
            (damaged(r#""status":"order","#, ""), "no answer status"),
            // Impossible numbers.
            (damaged(r#""sz":"0.002""#, r#""sz":"1e400""#), "1e400"),
            (damaged(r#""sz":"0.002""#, r#""sz":"2e-3""#), "an exponent"),
            (damaged(r#""sz":"0.002""#, r#""sz":"-0.0001""#), "a negative open size"),
            (damaged(r#""limitPx":"101000.0""#, r#""limitPx":"-0.0001""#), "a negative price"),
            (damaged(r#""limitPx":"101000.0""#, r#""limitPx":"0""#), "a price of 0"),
            (damaged(r#""origSz":"0.003""#, r#""origSz":"0.0""#), "an order of nothing"),
            (damaged(r#""sz":"0.002""#, r#""sz":"0.004""#), "more open than placed"),
            (damaged(r#""limitPx":"101000.0""#, r#""limitPx":"NaN""#), "not a number"),
            (damaged(r#""oid":91490942"#, r#""oid":1e400"#), "an oid beyond any number"),
            // Unknown enum values.
            (damaged(r#""status":"open""#, r#""status":"opened""#), "an unknown order status"),
            (damaged(r#""status":"order""#, r#""status":"found""#), "an unknown answer status"),
            (damaged(r#""side":"A""#, r#""side":"S""#), "an unknown side"),
            (damaged(r#""tif":"Gtc""#, r#""tif":"Day""#), "an unknown time in force"),
            // Duplicated keys.
            (
                damaged(r#""status":"open""#, r#""status":"open","status":"filled""#),
                "a status twice",
            ),
            (damaged(r#""sz":"0.002""#, r#""sz":"0.002","sz":"0""#), "a size twice"),
            // Another order than the one asked for.
            (damaged(r#""coin":"@142""#, r#""coin":"@151""#), "another pair"),
            (
                damaged("0x534f5f0102030405060708090a0b0c0d", "0x534f5f0102030405060708090a0b0c0e"),
                "another cloid",
            ),
            (
                damaged(r#""cloid":"0x534f5f0102030405060708090a0b0c0d""#, r#""cloid":null"#),
                "no cloid",
            ),
            (damaged(r#""cloid":"#, r#""clientId":"#), "no cloid key"),
            (damaged("0x534f5f0102030405060708090a0b0c0d", "0x534f5f"), "a malformed cloid"),
            // Not the exchange's answer at all.
            ("<html><body><h1>502 Bad Gateway</h1></body></html>".into(), "an HTML page"),
            (String::new(), "an empty answer"),
            ("null".into(), "null"),
            // "Does not exist", but not in its documented form.
            (r#"{"status":"unknownOid","order":null}"#.into(), "unknownOid with an order"),
            (r#"{"status":"unknownOid","reason":"x"}"#.into(), "unknownOid with more"),
            (r#"{"status":"UnknownOid"}"#.into(), "unknownOid misspelt"),
            (r#"{"status":"unknownOid","status":"unknownOid"}"#.into(), "unknownOid twice"),
            (r#"{"status":"order"}"#.into(), "found without an order"),
            (r#"{"status":"order","order":null}"#.into(), "found with a null order"),
        ];
        for (text, why) in cases {
            assert_unreadable(&text, why);
        }
    }

    #[test]
    fn statuses_map_to_the_domains() {
        let s = |text, ioc, executed| status_of(text, ioc, executed).unwrap();
        assert_eq!(s("open", false, dec!(0)), OrderStatus::New);
        assert_eq!(s("open", false, dec!(1)), OrderStatus::PartiallyFilled);
        assert_eq!(s("filled", true, dec!(1)), OrderStatus::Filled);
        assert_eq!(s("canceled", false, dec!(0)), OrderStatus::Canceled);
        assert_eq!(s("siblingFilledCanceled", false, dec!(0)), OrderStatus::Canceled);
        assert_eq!(s("canceled", true, dec!(1)), OrderStatus::Expired, "an IOC remainder");
        assert_eq!(s("iocCancelRejected", true, dec!(0)), OrderStatus::Expired);
        assert_eq!(s("tickRejected", false, dec!(0)), OrderStatus::Rejected);
        assert_eq!(s("rejected", false, dec!(0)), OrderStatus::Rejected);
        assert!(status_of("somethingNew", false, dec!(0)).is_err());
    }

    #[test]
    fn time_in_force_gives_the_type_and_the_front_end_s_market_orders_are_iocs() {
        let mut o = match serde_json::from_str(fixtures::ORDER_STATUS_OPEN).unwrap() {
            OrderStatusAnswer::Found(found) => found.order,
            OrderStatusAnswer::UnknownOid => panic!("found"),
        };
        for (tif, kind) in [
            (Some(TifJson::Alo), OrderType::LimitMaker),
            (Some(TifJson::Ioc), OrderType::Market),
            (Some(TifJson::FrontendMarket), OrderType::Market),
            (None, OrderType::Limit),
        ] {
            o.tif = Some(tif);
            let order = order_of("BTCUSDT", &o, "canceled", 0, String::new(), &[]).unwrap();
            assert_eq!(order.order_type, kind, "{tif:?}");
            let ended = if kind == OrderType::Market {
                OrderStatus::Expired
            } else {
                OrderStatus::Canceled
            };
            assert_eq!(order.status, ended, "{tif:?}");
        }
        o.tif = None;
        let pushed = order_of("BTCUSDT", &o, "open", 0, String::new(), &[]).unwrap();
        assert_eq!(pushed.order_type, OrderType::Limit, "a push carries no time in force");
        let e = found_as_asked("@142", Asked::Cloid(tp_cloid()), &o).unwrap_err();
        assert!(matches!(e, ExchangeError::Decode { .. }), "a REST answer always does: {e:?}");
    }

    #[test]
    fn numbers_beyond_the_decimal_range_are_an_unreadable_answer_not_a_panic() {
        let mut o = match serde_json::from_str(fixtures::ORDER_STATUS_OPEN).unwrap() {
            OrderStatusAnswer::Found(found) => found.order,
            OrderStatusAnswer::UnknownOid => panic!("found"),
        };
        o.limit_px = Decimal::MAX;
        o.orig_sz = Decimal::MAX;
        o.sz = Decimal::ZERO;
        let e = order_of("BTCUSDT", &o, "open", 0, String::new(), &[]).unwrap_err();
        assert!(matches!(e, ExchangeError::Decode { .. }), "{e:?}");
        let beyond = fixtures::ORDER_STATUS_OPEN
            .replace(r#""origSz":"0.003""#, r#""origSz":"99999999999999999999999999999999""#);
        assert_unreadable(&beyond, "more digits than a decimal holds");
    }

    #[test]
    fn fills_beyond_the_order_are_unreadable() {
        let OrderStatusAnswer::Found(found) =
            serde_json::from_str(fixtures::ORDER_STATUS_OPEN).unwrap()
        else {
            panic!("found")
        };
        let fills: Vec<FillJson> = serde_json::from_str(fixtures::USER_FILLS).unwrap();
        let mut mine: Vec<FillJson> =
            fills.into_iter().filter(|f| f.oid == found.order.oid).collect();
        mine[0].sz = dec!(0.004);
        let e = order_of("BTCUSDT", &found.order, "open", 0, String::new(), &mine).unwrap_err();
        assert!(matches!(e, ExchangeError::Decode { .. }), "{e:?}");
        for (from, to) in [
            (r#""px":"97050.0""#, r#""px":"0""#),
            (r#""sz":"0.001""#, r#""sz":"-0.001""#),
            (r#""side":"A""#, r#""side":"Sell""#),
            (r#""crossed":false,"#, ""),
            (r#""fee":"0.097""#, r#""fee":0.097"#),
        ] {
            let text = fixtures::USER_FILLS.replacen(from, to, 1);
            let read = answers::parse::<Vec<FillJson>>(text.as_bytes());
            assert!(read.is_err(), "{from} → {to}");
        }
        let rebate = fixtures::USER_FILLS.replacen(r#""fee":"0.097""#, r#""fee":"-0.01""#, 1);
        let fills: Vec<FillJson> = answers::parse(rebate.as_bytes()).unwrap();
        assert_eq!(fills[0].fee, dec!(-0.01), "a maker rebate");
    }

    #[test]
    fn fills_read_as_trades_and_balances_with_service_names() {
        let fills: Vec<FillJson> = serde_json::from_str(fixtures::USER_FILLS).unwrap();
        let buy = trade_of("BTCUSDT", &fills[2]).unwrap();
        assert!(buy.is_buyer && !buy.is_maker);
        assert_eq!(
            (buy.id, buy.order_id, buy.commission_asset.as_str()),
            (118906512037700, 91490900, "BTC")
        );
        assert_eq!(buy.quote_qty, dec!(194.000));
        let sell = trade_of("BTCUSDT", &fills[0]).unwrap();
        assert!(!sell.is_buyer && sell.is_maker);
        let b = balances_of(serde_json::from_str(fixtures::BALANCES).unwrap()).unwrap();
        assert_eq!(b.len(), 2, "zero balances left out");
        assert_eq!(
            (b[0].asset.as_str(), b[0].free, b[0].locked),
            ("USDC", dec!(4.125485), dec!(10.5))
        );
        assert_eq!((b[1].asset.as_str(), b[1].free), ("BTC", dec!(0.0015)));
    }

    #[test]
    fn an_impossible_balance_is_unreadable() {
        let held = fixtures::BALANCES.replacen(r#""hold":"10.5""#, r#""hold":"20""#, 1);
        let e = balances_of(serde_json::from_str(&held).unwrap()).unwrap_err();
        assert!(matches!(e, ExchangeError::Decode { .. }), "{e:?}");
        for (from, to) in [
            (r#""total":"14.625485""#, r#""total":"-0.0001""#),
            (r#""total":"14.625485""#, r#""total":"1e400""#),
            (r#""hold":"10.5","#, ""),
        ] {
            let text = fixtures::BALANCES.replacen(from, to, 1);
            assert!(answers::parse::<ClearinghouseState>(text.as_bytes()).is_err(), "{to}");
        }
    }
}
