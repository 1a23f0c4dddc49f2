//! The account's reads: balances, open orders, fills and order lookups, as domain types.
//! Token names are the service's (`UBTC` → `BTC`), client order ids the service's when the
//! client knows the cloid (see [`crate::exchange::exchange_b::cloid`]).

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::ExchangeBClient;
use super::errors::NO_CODE;
use crate::exchange::exchange_b::symbols::{Pair, SymbolMap, service_asset};
use crate::exchange::exchange_b::wire::{
    ClearinghouseState, FillJson, OrderJson, OrderStatusAnswer, OrderWithStatus,
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

/// `a − b` floored at zero (zero when out of range).
fn less(a: Decimal, b: Decimal) -> Decimal {
    a.checked_sub(b).unwrap_or_default().max(Decimal::ZERO)
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

/// The side of `B` (bid, buy) or `A` (ask, sell).
fn side_of(side: &str) -> Side {
    if side == "B" { Side::Buy } else { Side::Sell }
}

/// The domain type of an order by its time in force: `Alo` is LIMIT_MAKER, `Ioc` is the
/// service's MARKET (the only IOC it sends besides LIMIT IOC/FOK, which read back as MARKET
/// too), anything else LIMIT.
fn type_of(tif: Option<&str>) -> (OrderType, Option<TimeInForce>) {
    match tif {
        Some("Alo") => (OrderType::LimitMaker, None),
        Some("Ioc") => (OrderType::Market, None),
        _ => (OrderType::Limit, Some(TimeInForce::Gtc)),
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
    let orig = o.orig_sz.unwrap_or(o.sz);
    let tif = o.tif.as_deref();
    let (order_type, time_in_force) = type_of(tif);
    let executed = if status == "filled" { orig } else { less(orig, o.sz) };
    let status = status_of(status, tif == Some("Ioc"), executed)?;
    let (cumulative_quote_qty, fills) = if fills.is_empty() {
        // No fills read (an open order in a list): resting orders fill at their limit.
        (product(executed, o.limit_px)?.round_dp(8), Vec::new())
    } else {
        let fills = fills.iter().map(fill_of).collect::<Result<Vec<_>, _>>()?;
        let mut quote = Decimal::ZERO;
        for f in &fills {
            quote = quote.checked_add(product(f.price.0, f.qty.0)?).ok_or_else(|| {
                ExchangeError::Decode { detail: "fills beyond the decimal range".into() }
            })?;
        }
        (quote, fills)
    };
    Ok(Order {
        symbol: symbol.to_string(),
        order_id: id_of(o.oid, "oid")?,
        order_list_id: None,
        client_order_id,
        side: side_of(&o.side),
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
        is_buyer: f.side == "B",
        is_maker: !f.crossed,
    })
}

/// Balances with the service's asset names; free = total − hold. Empty balances are left out.
pub fn balances_of(state: ClearinghouseState) -> Vec<Balance> {
    state
        .balances
        .into_iter()
        .filter(|b| !b.total.is_zero())
        .map(|b| Balance {
            asset: service_asset(&b.coin).to_string(),
            free: less(b.total, b.hold),
            locked: b.hold,
        })
        .collect()
}

impl ExchangeBClient {
    fn user(&self) -> Result<String, ExchangeError> {
        Ok(self.account_or_refuse()?.to_string())
    }

    pub(super) async fn fetch_balances(&self) -> Result<Vec<Balance>, ExchangeError> {
        let state: ClearinghouseState =
            self.info("spotClearinghouseState", json!({"user": self.user()?})).await?;
        Ok(balances_of(state))
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
                let id = self.ids.service_id(o.cloid.as_deref());
                order_of(&pair.symbol, o, "open", o.timestamp, id, &[])
            })
            .collect()
    }

    /// `orderStatus` of `id` on `pair`; `None` when the exchange does not know it.
    pub(super) async fn order_status(
        &self,
        pair: &Pair,
        id: &OrderRef,
    ) -> Result<Option<(OrderJson, String, i64)>, ExchangeError> {
        let oid = match id {
            OrderRef::Id(i) => json!(i),
            OrderRef::Client(c) => Value::String(self.ids.learn(c).to_string()),
        };
        let answer: OrderStatusAnswer =
            self.info("orderStatus", json!({"user": self.user()?, "oid": oid})).await?;
        match answer.order {
            Some(found) if answer.status == "order" && found.order.coin == pair.coin => {
                Ok(Some((found.order, found.status, found.status_timestamp)))
            }
            _ => Ok(None),
        }
    }

    /// The order `id` of `symbol` with its fills (`UnknownOrder` when the exchange has none).
    pub(super) async fn get_order(
        &self,
        symbol: &str,
        id: &OrderRef,
    ) -> Result<Order, ExchangeError> {
        let pair = self.pair(symbol).await?;
        let (o, status, at) =
            self.order_status(&pair, id).await?.ok_or_else(|| ExchangeError::UnknownOrder {
                code: NO_CODE,
                msg: format!(
                    "order {} of {symbol} is unknown to exchange B (unknownOid)",
                    describe(id)
                ),
            })?;
        let client_id = self.ids.service_id(o.cloid.as_deref());
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
            let Some((o, status, at)) =
                self.order_status(&pair, &OrderRef::Id(id_of(oid, "oid")?)).await?
            else {
                continue;
            };
            let client_id = self.ids.service_id(o.cloid.as_deref());
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
        let id = self.ids.service_id(pushed.order.cloid.as_deref());
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
    use crate::exchange::exchange_b::wire::{OrderStatusAnswer, fixtures};
    use rust_decimal_macros::dec;

    #[test]
    fn an_order_status_reads_as_a_partly_filled_take_profit_with_its_fills() {
        let a: OrderStatusAnswer = serde_json::from_str(fixtures::ORDER_STATUS_OPEN).unwrap();
        let found = a.order.unwrap();
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
        let unknown: OrderStatusAnswer =
            serde_json::from_str(fixtures::ORDER_STATUS_UNKNOWN).unwrap();
        assert!(unknown.order.is_none());
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
    fn numbers_beyond_the_decimal_range_are_an_unreadable_answer_not_a_panic() {
        let a: OrderStatusAnswer = serde_json::from_str(fixtures::ORDER_STATUS_OPEN).unwrap();
        let mut o = a.order.unwrap().order;
        o.limit_px = Decimal::MAX;
        o.orig_sz = Some(Decimal::MAX);
        o.sz = Decimal::MIN;
        let odd = order_of("BTCUSDT", &o, "open", 0, String::new(), &[]).unwrap();
        assert_eq!(odd.executed_qty.0, Decimal::ZERO, "a difference out of range is nothing");
        o.sz = Decimal::ZERO;
        let e = order_of("BTCUSDT", &o, "open", 0, String::new(), &[]).unwrap_err();
        assert!(matches!(e, ExchangeError::Decode { .. }), "{e:?}");
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
        let b = balances_of(serde_json::from_str(fixtures::BALANCES).unwrap());
        assert_eq!(b.len(), 2, "zero balances left out");
        assert_eq!(
            (b[0].asset.as_str(), b[0].free, b[0].locked),
            ("USDC", dec!(4.125485), dec!(10.5))
        );
        assert_eq!((b[1].asset.as_str(), b[1].free), ("BTC", dec!(0.0015)));
    }
}
