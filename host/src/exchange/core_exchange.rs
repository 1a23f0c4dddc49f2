//! Exchange A's rules straight on the simulator's matching core, in this process: the
//! backtest's exchange. No HTTP, no signing, no JSON on the money path — an order is checked
//! and rounded by the symbol's filters exactly as the HTTP client does ([`SymbolRules`]), then
//! handed to the core as a [`Leg`], and the core's records come back as the service's
//! [`Order`]s in the shapes exchange A answers with (a placement, a query, a cancel). Refusals
//! carry exchange A's codes and messages (the simulator front end's own table), mapped onto
//! [`ExchangeError`] by the HTTP client's own rule, so execution cannot tell the two apart;
//! the conformance suite runs over both.
//!
//! Market data reads (klines, tickers), off the money path, go through the simulator front
//! end's read handlers and the client's wire types, so their shapes and errors are exchange A's
//! too.
//!
//! [`CoreExchange::order_updates`] reads the core's event log as the user data stream would
//! push it: fills are learnt as events rather than by asking about every open order.
//!
//! What it leaves out, on purpose: the request budget, rate limits, fault injection and the
//! time skew of a real link — a replay has no wire to be slow or to fail.

use crate::config::ExchangeName;
use std::collections::HashMap;

use reqwest::StatusCode;
use rust_decimal::Decimal;
use serde::de::DeserializeOwned;
use spotbot_sim::core::{self, Engine, EventKind, Leg, Reject};
use spotbot_sim::exchange_a::market_data;
use spotbot_sim::params::{ApiError, Params};
use spotbot_sim::{Millis, Sim};

use super::exchange_a::client::{check_client_id, map_error};
use super::exchange_a::wire;
use super::feed::OrderUpdate;
use super::{
    Balance, BoxFuture, Exchange, ExchangeError, Fill, Kline, NewOco, NewOrder, Order, OrderList,
    OrderLists, OrderRef, OrderStatus, OrderType, Price, Protection, Qty, Side, SymbolRules,
    Ticker24h, TimeInForce, Trade,
};

/// Newest trades `my_trades` returns (exchange A's default limit).
const TRADES_LIMIT: usize = 500;

/// See the module documentation.
pub struct CoreExchange {
    sim: Sim,
    account: usize,
    rules: HashMap<String, SymbolRules>,
}

impl CoreExchange {
    /// Trades as the account of `api_key` on `sim`; `None` when the simulator has no such
    /// account or its listing does not parse as exchange A's filters.
    pub fn new(sim: Sim, api_key: &str) -> Result<Self, String> {
        let (account, listing) = {
            let e = sim.engine();
            let account = e.account_by_key(api_key).ok_or("no simulator account for the key")?;
            (account, e.rules.iter().map(|r| r.to_json()).collect::<Vec<_>>())
        };
        let mut rules = HashMap::new();
        for json in listing {
            let value = serde_json::to_value(&json).map_err(|e| e.to_string())?;
            let info: wire::SymbolInfo =
                serde_json::from_value(value).map_err(|e| e.to_string())?;
            let parsed = SymbolRules::from_info(&info)?;
            rules.insert(parsed.symbol.clone(), parsed);
        }
        Ok(Self { sim, account, rules })
    }

    /// The account's order changes in the core's log from `cursor` on, as the user data stream
    /// pushes them; moves `cursor` past them.
    pub fn order_updates(&self, cursor: &mut u64) -> Vec<OrderUpdate> {
        let e = self.sim.engine();
        let events = e.events_since(*cursor);
        *cursor += events.len() as u64;
        events
            .iter()
            .filter_map(|event| match &event.kind {
                EventKind::Order { order, .. } if order.account == self.account => {
                    Some(OrderUpdate {
                        symbol: order.symbol.clone(),
                        order_id: order.order_id,
                        client_order_id: order.client_order_id.clone(),
                        list_id: (order.order_list_id >= 0).then_some(order.order_list_id),
                        status: status(order.status),
                        executed_qty: order.executed_qty,
                        time_ms: event.time,
                    })
                }
                _ => None,
            })
            .collect()
    }

    fn now(&self) -> Millis {
        self.sim.now_ms()
    }

    /// The engine, caught up with the market at `now` (as every front-end request is).
    fn engine_at(&self, now: Millis) -> std::sync::MutexGuard<'_, Engine> {
        let mut e = self.sim.engine();
        e.catch_up(now);
        e
    }

    fn rules_of(&self, symbol: &str) -> Result<&SymbolRules, ExchangeError> {
        self.rules.get(symbol).ok_or_else(invalid_symbol)
    }

    /// One of the simulator front end's read handlers, parsed with the client's wire types.
    fn read<T: DeserializeOwned>(
        &self,
        handler: fn(&Engine, &Params, Millis) -> Result<serde_json::Value, ApiError>,
        params: &[(&str, String)],
    ) -> Result<T, ExchangeError> {
        let now = self.now();
        let p = Params::from_pairs(params.iter().map(|(k, v)| (k.to_string(), v.clone())));
        let value = handler(&self.engine_at(now), &p, now).map_err(api_error)?;
        serde_json::from_value(value).map_err(|e| ExchangeError::Decode { detail: e.to_string() })
    }

    fn place(&self, o: &NewOrder) -> Result<Order, ExchangeError> {
        check_client_id(&o.client_order_id)?;
        let rules = self.rules_of(&o.symbol)?;
        let o = rules.round_order(o);
        let now = self.now();
        let mut e = self.engine_at(now);
        let market = o.order_type == OrderType::Market;
        let last = if market && o.qty.is_some() {
            Some(Price(e.price(&o.symbol, now).map_err(reject)?))
        } else {
            None
        };
        rules.check_order(&o, last)?;
        let order_type = core_type(o.order_type);
        for (name, wanted, given) in [
            ("timeInForce", order_type.needs_tif(), o.time_in_force.is_some()),
            ("price", order_type.has_limit_price(), o.price.is_some()),
            ("stopPrice", order_type.is_stop(), o.stop_price.is_some()),
        ] {
            match (wanted, given) {
                (true, false) => return Err(api_error(ApiError::mandatory(name))),
                (false, true) => return Err(api_error(ApiError::not_required(name))),
                _ => {}
            }
        }
        let client_id = Some(o.client_order_id.clone());
        let side = core_side(o.side);
        let placed = match (o.qty, o.quote_qty) {
            (_, Some(quote)) => {
                e.place_market_by_quote(self.account, &o.symbol, side, quote, client_id, now)
            }
            (Some(qty), None) => {
                let leg = Leg {
                    order_type,
                    side,
                    qty: qty.0,
                    price: o.price.map(|p| p.0),
                    stop: o.stop_price.map(|p| p.0),
                    tif: o.time_in_force.map_or(core::Tif::Gtc, core_tif),
                    client_id,
                };
                e.place_order(self.account, &o.symbol, leg, now)
            }
            (None, None) => return Err(api_error(ApiError::mandatory("quantity"))),
        }
        .map_err(reject)?;
        let order = e.order(placed.order_id).ok_or_else(unknown_order)?;
        Ok(Shape::Placement { now, fills: &placed.fills }.order(order))
    }

    fn place_list(&self, o: &NewOco) -> Result<OrderList, ExchangeError> {
        check_client_id(&o.list_client_order_id)?;
        for id in [&o.take_profit_client_order_id, &o.stop_client_order_id].into_iter().flatten() {
            check_client_id(id)?;
        }
        let rules = self.rules_of(&o.symbol)?;
        let o = rules.round_oco(o);
        rules.check_oco(&o)?;
        let side = core_side(o.side);
        let take_profit = Leg {
            order_type: core::OrderType::LimitMaker,
            side,
            qty: o.qty.0,
            price: Some(o.take_profit.0),
            stop: None,
            tif: core::Tif::Gtc,
            client_id: o.take_profit_client_order_id.clone(),
        };
        let stop = Leg {
            order_type: core::OrderType::StopLossLimit,
            side,
            qty: o.qty.0,
            price: Some(o.stop_limit_price.0),
            stop: Some(o.stop_price.0),
            tif: core::Tif::Gtc,
            client_id: o.stop_client_order_id.clone(),
        };
        // Above the price: a sell's take-profit, a buy's stop.
        let legs = match o.side {
            Side::Sell => [take_profit, stop],
            Side::Buy => [stop, take_profit],
        };
        let now = self.now();
        let mut e = self.engine_at(now);
        let list_client_id = Some(o.list_client_order_id.clone());
        let id = e.place_oco(self.account, &o.symbol, legs, list_client_id, now).map_err(reject)?;
        let list = e.list(id).ok_or_else(unknown_list)?;
        Ok(list_of(&e, list, Some(Shape::Placement { now, fills: &[] })))
    }

    /// The account's order `id` on `symbol`, else `unknown`.
    fn find_order<'e>(
        &self,
        e: &'e Engine,
        symbol: &str,
        id: &OrderRef,
        unknown: fn() -> ExchangeError,
    ) -> Result<&'e core::Order, ExchangeError> {
        e.rules(symbol).map_err(reject)?;
        let found = match id {
            OrderRef::Id(i) => e.order(*i),
            OrderRef::Client(c) => {
                e.order_by_client_id(self.account, symbol, c).and_then(|i| e.order(i))
            }
        };
        found
            .filter(|o| o.account == self.account && o.symbol == symbol)
            .filter(|o| !matches!(id, OrderRef::Client(c) if *c != o.client_order_id))
            .ok_or_else(unknown)
    }

    /// The account's list `id`, else `unknown`.
    fn find_list<'e>(
        &self,
        e: &'e Engine,
        id: &OrderRef,
        unknown: fn() -> ExchangeError,
    ) -> Result<&'e core::OrderList, ExchangeError> {
        let found = match id {
            OrderRef::Id(i) => e.list(*i),
            OrderRef::Client(c) => e.list_by_client_id(self.account, c).and_then(|i| e.list(i)),
        };
        found
            .filter(|l| l.account == self.account)
            .filter(|l| !matches!(id, OrderRef::Client(c) if *c != l.list_client_order_id))
            .ok_or_else(unknown)
    }

    fn cancel(&self, symbol: &str, id: &OrderRef) -> Result<Order, ExchangeError> {
        let now = self.now();
        let mut e = self.engine_at(now);
        let order = self.find_order(&e, symbol, id, cancel_unknown)?;
        if !order.status.is_open() {
            return Err(cancel_unknown());
        }
        let order_id = order.order_id;
        let cancel_id = e.new_client_id();
        e.cancel_order(order_id, cancel_id, now).map_err(|_| cancel_unknown())?;
        let order = e.order(order_id).ok_or_else(unknown_order)?;
        Ok(Shape::Cancel { now }.order(order))
    }

    fn cancel_list(&self, symbol: &str, id: &OrderRef) -> Result<OrderList, ExchangeError> {
        let now = self.now();
        let mut e = self.engine_at(now);
        e.rules(symbol).map_err(reject)?;
        let list = self.find_list(&e, id, cancel_list_unknown)?;
        if list.done || list.symbol != symbol {
            return Err(cancel_list_unknown());
        }
        let list_id = list.order_list_id;
        let cancel_id = e.new_client_id();
        e.cancel_list(list_id, &cancel_id, now).map_err(|_| cancel_list_unknown())?;
        let list = e.list(list_id).ok_or_else(unknown_list)?;
        Ok(list_of(&e, list, Some(Shape::Cancel { now })))
    }
}

/// Which of exchange A's answers an order is rendered as; they differ in the times and in
/// whether a stop shows as working, and the service reads them as the HTTP client parses them.
#[derive(Clone, Copy)]
enum Shape<'a> {
    /// A placement (FULL): transaction time, working time, the fills of the placement.
    Placement { now: Millis, fills: &'a [core::Fill] },
    /// A query (`GET order`, open orders, all orders): creation and update times.
    Query,
    /// A cancel answer: transaction time, the order's own client id.
    Cancel { now: Millis },
}

impl Shape<'_> {
    fn order(self, o: &core::Order) -> Order {
        let (time, update_time, working) = match self {
            Shape::Placement { now, .. } => (now, now, o.working_time >= 0),
            Shape::Query => (o.time, o.update_time, o.is_working()),
            Shape::Cancel { now } => (now, now, !o.order_type.is_stop()),
        };
        let fills = match self {
            Shape::Placement { fills, .. } => fills.iter().map(fill).collect(),
            _ => Vec::new(),
        };
        Order {
            symbol: o.symbol.clone(),
            order_id: o.order_id,
            order_list_id: (o.order_list_id >= 0).then_some(o.order_list_id),
            client_order_id: o.client_order_id.clone(),
            side: match o.side {
                core::Side::Buy => Side::Buy,
                core::Side::Sell => Side::Sell,
            },
            order_type: host_type(o.order_type),
            status: status(o.status),
            price: Price(wire8(o.price)),
            stop_price: o.stop_price.map(wire8).filter(|p| !p.is_zero()).map(Price),
            orig_qty: Qty(wire8(o.orig_qty)),
            executed_qty: Qty(wire8(o.executed_qty)),
            cumulative_quote_qty: wire8(o.cum_quote),
            time_in_force: Some(match o.tif {
                core::Tif::Gtc => TimeInForce::Gtc,
                core::Tif::Ioc => TimeInForce::Ioc,
                core::Tif::Fok => TimeInForce::Fok,
            }),
            time,
            update_time,
            working,
            fills,
        }
    }
}

/// A list with its legs, and the legs' own reports in `reports`' shape where the answer has
/// them (placement and cancel).
fn list_of(e: &Engine, l: &core::OrderList, reports: Option<Shape<'_>>) -> OrderList {
    let legs: Vec<&core::Order> = l.orders.iter().filter_map(|id| e.order(*id)).collect();
    OrderList {
        symbol: l.symbol.clone(),
        order_list_id: l.order_list_id,
        list_client_order_id: l.list_client_order_id.clone(),
        executing: !l.done,
        legs: legs.iter().map(|o| (o.order_id, o.client_order_id.clone())).collect(),
        orders: reports
            .map(|shape| legs.iter().map(|o| shape.order(o)).collect())
            .unwrap_or_default(),
        transaction_time: l.transaction_time,
    }
}

/// The newest `limit` of `items` (oldest first), as exchange A's history reads answer without
/// a starting point.
fn newest<T>(items: impl DoubleEndedIterator<Item = T>, limit: usize) -> impl Iterator<Item = T> {
    let mut newest: Vec<T> = items.rev().take(limit).collect();
    newest.reverse();
    newest.into_iter()
}

/// A decimal as exchange A's wire carries it: eight decimals.
fn wire8(v: Decimal) -> Decimal {
    let mut v = v.round_dp(8);
    v.rescale(8);
    v
}

fn fill(f: &core::Fill) -> Fill {
    Fill {
        price: Price(wire8(f.price)),
        qty: Qty(wire8(f.qty)),
        commission: wire8(f.commission),
        commission_asset: f.commission_asset.clone(),
        trade_id: f.trade_id,
    }
}

fn trade(t: &core::Trade) -> Trade {
    Trade {
        symbol: t.symbol.clone(),
        id: t.id,
        order_id: t.order_id,
        order_list_id: (t.order_list_id >= 0).then_some(t.order_list_id),
        price: Price(wire8(t.price)),
        qty: Qty(wire8(t.qty)),
        quote_qty: wire8(t.quote_qty),
        commission: wire8(t.commission),
        commission_asset: t.commission_asset.clone(),
        time: t.time,
        is_buyer: t.is_buyer,
        is_maker: t.is_maker,
    }
}

fn status(s: core::Status) -> OrderStatus {
    match s {
        core::Status::New => OrderStatus::New,
        core::Status::PartiallyFilled => OrderStatus::PartiallyFilled,
        core::Status::Filled => OrderStatus::Filled,
        core::Status::Canceled => OrderStatus::Canceled,
        core::Status::Expired => OrderStatus::Expired,
    }
}

fn core_side(s: Side) -> core::Side {
    match s {
        Side::Buy => core::Side::Buy,
        Side::Sell => core::Side::Sell,
    }
}

fn core_tif(t: TimeInForce) -> core::Tif {
    match t {
        TimeInForce::Gtc => core::Tif::Gtc,
        TimeInForce::Ioc => core::Tif::Ioc,
        TimeInForce::Fok => core::Tif::Fok,
    }
}

fn core_type(t: OrderType) -> core::OrderType {
    match t {
        OrderType::Market => core::OrderType::Market,
        OrderType::Limit => core::OrderType::Limit,
        OrderType::LimitMaker => core::OrderType::LimitMaker,
        OrderType::StopLoss => core::OrderType::StopLoss,
        OrderType::StopLossLimit => core::OrderType::StopLossLimit,
        OrderType::TakeProfit => core::OrderType::TakeProfit,
        OrderType::TakeProfitLimit => core::OrderType::TakeProfitLimit,
    }
}

fn host_type(t: core::OrderType) -> OrderType {
    match t {
        core::OrderType::Market => OrderType::Market,
        core::OrderType::Limit => OrderType::Limit,
        core::OrderType::LimitMaker => OrderType::LimitMaker,
        core::OrderType::StopLoss => OrderType::StopLoss,
        core::OrderType::StopLossLimit => OrderType::StopLossLimit,
        core::OrderType::TakeProfit => OrderType::TakeProfit,
        core::OrderType::TakeProfitLimit => OrderType::TakeProfitLimit,
    }
}

/// A front-end error as the HTTP client types it.
fn api_error(e: ApiError) -> ExchangeError {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
    map_error(status, e.code, e.msg)
}

/// A core refusal in exchange A's code and message.
fn reject(r: Reject) -> ExchangeError {
    api_error(ApiError::from(r))
}

fn invalid_symbol() -> ExchangeError {
    reject(Reject::UnknownSymbol)
}

fn unknown_order() -> ExchangeError {
    api_error(ApiError::bad(-2013, "Order does not exist."))
}

fn unknown_list() -> ExchangeError {
    api_error(ApiError::bad(-2013, "Order list does not exist."))
}

fn cancel_unknown() -> ExchangeError {
    api_error(ApiError::bad(-2011, "Unknown order sent."))
}

fn cancel_list_unknown() -> ExchangeError {
    api_error(ApiError::bad(-2011, "Unknown order list sent."))
}

impl Exchange for CoreExchange {
    fn name(&self) -> ExchangeName {
        ExchangeName::ExchangeA
    }

    fn protection(&self) -> Protection {
        Protection::Native
    }

    fn order_lists(&self) -> Option<&dyn OrderLists> {
        Some(self)
    }

    fn server_time(&self) -> BoxFuture<'_, Result<i64, ExchangeError>> {
        Box::pin(async move { Ok(self.now()) })
    }

    fn symbol_rules<'a>(
        &'a self,
        symbol: &'a str,
    ) -> BoxFuture<'a, Result<SymbolRules, ExchangeError>> {
        Box::pin(async move { self.rules_of(symbol).cloned() })
    }

    fn klines<'a>(
        &'a self,
        symbol: &'a str,
        interval: &'a str,
        limit: u32,
        end_time: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Kline>, ExchangeError>> {
        Box::pin(async move {
            let mut p = vec![
                ("symbol", symbol.to_string()),
                ("interval", interval.to_string()),
                ("limit", limit.clamp(1, 1000).to_string()),
            ];
            p.extend(end_time.map(|t| ("endTime", t.to_string())));
            let rows: Vec<wire::KlineRow> = self.read(market_data::klines, &p)?;
            Ok(rows.into_iter().map(Kline::from).collect())
        })
    }

    fn tickers_24h<'a>(
        &'a self,
        symbols: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Ticker24h>, ExchangeError>> {
        Box::pin(async move {
            let p = match symbols {
                [] => vec![],
                [one] => vec![("symbol", one.clone())],
                many => vec![("symbols", serde_json::to_string(many).unwrap_or_default())],
            };
            let value: serde_json::Value = self.read(market_data::ticker_24h, &p)?;
            let rows: Vec<wire::Ticker24hJson> = match value {
                serde_json::Value::Array(_) => serde_json::from_value(value),
                one => serde_json::from_value(one).map(|t| vec![t]),
            }
            .map_err(|e| ExchangeError::Decode { detail: e.to_string() })?;
            Ok(rows.into_iter().map(Ticker24h::from).collect())
        })
    }

    fn prices(&self) -> BoxFuture<'_, Result<Vec<(String, Price)>, ExchangeError>> {
        Box::pin(async move {
            let now = self.now();
            let e = self.engine_at(now);
            Ok(e.rules
                .iter()
                .map(|r| (r.symbol.clone(), Price(wire8(e.market.price(r, now)))))
                .collect())
        })
    }

    fn price<'a>(&'a self, symbol: &'a str) -> BoxFuture<'a, Result<Price, ExchangeError>> {
        Box::pin(async move {
            let now = self.now();
            let price = self.engine_at(now).price(symbol, now).map_err(reject)?;
            Ok(Price(wire8(price)))
        })
    }

    fn balances(&self) -> BoxFuture<'_, Result<Vec<Balance>, ExchangeError>> {
        Box::pin(async move {
            let e = self.engine_at(self.now());
            let account = e.accounts.get(self.account).ok_or_else(|| {
                ExchangeError::NotConfigured { detail: "the simulator account is gone".into() }
            })?;
            Ok(account
                .balances
                .iter()
                .filter(|(_, b)| !(b.free.is_zero() && b.locked.is_zero()))
                .map(|(asset, b)| Balance {
                    asset: asset.clone(),
                    free: wire8(b.free),
                    locked: wire8(b.locked),
                })
                .collect())
        })
    }

    fn place_order<'a>(
        &'a self,
        order: &'a NewOrder,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        Box::pin(async move { self.place(order) })
    }

    fn order<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        Box::pin(async move {
            let e = self.engine_at(self.now());
            Ok(Shape::Query.order(self.find_order(&e, symbol, id, unknown_order)?))
        })
    }

    fn cancel_order<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        Box::pin(async move { self.cancel(symbol, id) })
    }

    fn open_orders<'a>(
        &'a self,
        symbol: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>> {
        Box::pin(async move {
            let e = self.engine_at(self.now());
            if let Some(s) = symbol {
                e.rules(s).map_err(reject)?;
            }
            Ok(e.open_orders()
                .filter(|o| o.account == self.account && symbol.is_none_or(|s| s == o.symbol))
                .map(|o| Shape::Query.order(o))
                .collect())
        })
    }

    fn all_orders<'a>(
        &'a self,
        symbol: &'a str,
        limit: u32,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>> {
        Box::pin(async move {
            let e = self.engine_at(self.now());
            e.rules(symbol).map_err(reject)?;
            let mine = e.orders.iter().filter(|o| o.account == self.account && o.symbol == symbol);
            Ok(newest(mine, limit.clamp(1, 1000) as usize).map(|o| Shape::Query.order(o)).collect())
        })
    }

    fn my_trades<'a>(
        &'a self,
        symbol: &'a str,
        order_id: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Trade>, ExchangeError>> {
        Box::pin(async move {
            let e = self.engine_at(self.now());
            e.rules(symbol).map_err(reject)?;
            // The integer comparisons first: the list holds every trade of the run.
            let mine = e.trades.iter().filter(|t| {
                order_id.is_none_or(|id| t.order_id == id)
                    && t.account == self.account
                    && t.symbol == symbol
            });
            Ok(newest(mine, TRADES_LIMIT).map(trade).collect())
        })
    }
}

impl OrderLists for CoreExchange {
    fn place_oco<'a>(&'a self, oco: &'a NewOco) -> BoxFuture<'a, Result<OrderList, ExchangeError>> {
        Box::pin(async move { self.place_list(oco) })
    }

    fn order_list<'a>(
        &'a self,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<OrderList, ExchangeError>> {
        Box::pin(async move {
            let e = self.engine_at(self.now());
            Ok(list_of(&e, self.find_list(&e, id, unknown_list)?, None))
        })
    }

    fn cancel_order_list<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<OrderList, ExchangeError>> {
        Box::pin(async move { self.cancel_list(symbol, id) })
    }

    fn open_order_lists(&self) -> BoxFuture<'_, Result<Vec<OrderList>, ExchangeError>> {
        Box::pin(async move {
            let e = self.engine_at(self.now());
            Ok(e.lists
                .iter()
                .filter(|l| l.account == self.account && !l.done)
                .map(|l| list_of(&e, l, None))
                .collect())
        })
    }
}
