//! What the matching core keeps: orders and their lists, trades, accounts with free/locked
//! balances, and the tunables of the synthetic counterparty. No wire spelling lives here: each
//! exchange's front end names these values its own way.

use crate::clock::Millis;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Buy,
    Sell,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderType {
    Limit,
    Market,
    StopLoss,
    StopLossLimit,
    TakeProfit,
    TakeProfitLimit,
    /// A limit order that is refused instead of taking liquidity (post-only).
    LimitMaker,
}

impl OrderType {
    /// Waits for a trigger price before it works.
    pub fn is_stop(self) -> bool {
        matches!(
            self,
            OrderType::StopLoss
                | OrderType::StopLossLimit
                | OrderType::TakeProfit
                | OrderType::TakeProfitLimit
        )
    }
    pub fn is_stop_loss(self) -> bool {
        matches!(self, OrderType::StopLoss | OrderType::StopLossLimit)
    }
    pub fn has_limit_price(self) -> bool {
        matches!(
            self,
            OrderType::Limit
                | OrderType::LimitMaker
                | OrderType::StopLossLimit
                | OrderType::TakeProfitLimit
        )
    }
    pub fn needs_tif(self) -> bool {
        matches!(self, OrderType::Limit | OrderType::StopLossLimit | OrderType::TakeProfitLimit)
    }
}

/// Time in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tif {
    Gtc,
    Ioc,
    Fok,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    New,
    PartiallyFilled,
    Filled,
    Canceled,
    Expired,
}

impl Status {
    pub fn is_open(self) -> bool {
        matches!(self, Status::New | Status::PartiallyFilled)
    }
}

/// Why an order expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// The other leg of its one-cancels-the-other list filled or started working.
    PartnerTriggered,
    /// A market order (or a triggered market stop) ran out of book.
    InsufficientLiquidity,
    UnfilledFok,
    UnfilledIoc,
}

/// One order, in whatever state it is.
#[derive(Debug, Clone)]
pub struct Order {
    pub account: usize,
    pub symbol: String,
    pub order_id: i64,
    /// The list the order is a leg of, or -1.
    pub order_list_id: i64,
    pub client_order_id: String,
    pub price: Decimal,
    pub orig_qty: Decimal,
    pub executed_qty: Decimal,
    pub cum_quote: Decimal,
    pub orig_quote_order_qty: Decimal,
    pub status: Status,
    pub tif: Tif,
    pub order_type: OrderType,
    pub side: Side,
    pub stop_price: Option<Decimal>,
    pub time: Millis,
    pub update_time: Millis,
    /// When the order started working (-1 for a stop not triggered yet).
    pub working_time: Millis,
    pub triggered: bool,
    pub expiry_reason: Option<Expiry>,
    /// Amount of the lock asset this order still holds (list legs hold theirs on the list).
    pub(crate) lock: Decimal,
}

impl Order {
    pub fn is_working(&self) -> bool {
        !self.order_type.is_stop() || self.triggered
    }
    pub fn remaining(&self) -> Decimal {
        self.orig_qty - self.executed_qty
    }

    /// Whether the last price `p` triggers this order: an open stop not triggered yet whose
    /// stop price `p` reached (from above for a sell stop-loss or a buy take-profit, from
    /// below for the other two).
    pub fn triggers_at(&self, p: Decimal) -> bool {
        if !self.status.is_open() || !self.order_type.is_stop() || self.triggered {
            return false;
        }
        let Some(stop) = self.stop_price else { return false };
        match (self.order_type.is_stop_loss(), self.side) {
            (true, Side::Sell) | (false, Side::Buy) => p <= stop,
            (true, Side::Buy) | (false, Side::Sell) => p >= stop,
        }
    }

    /// Whether this order, resting at its limit price, fills against the book's best `bid`
    /// and `ask`: the market trades through its price.
    pub fn fills_against(&self, bid: Decimal, ask: Decimal) -> bool {
        if !self.status.is_open() || !self.is_working() || !self.order_type.has_limit_price() {
            return false;
        }
        match self.side {
            Side::Buy => ask <= self.price,
            Side::Sell => bid >= self.price,
        }
    }
}

/// A one-cancels-the-other pair: a stop-loss leg and a take-profit leg sharing one lock.
#[derive(Debug, Clone)]
pub struct OrderList {
    pub account: usize,
    pub order_list_id: i64,
    pub list_client_order_id: String,
    pub symbol: String,
    /// Leg order ids: the stop leg first, then the limit leg.
    pub orders: Vec<i64>,
    pub done: bool,
    pub transaction_time: Millis,
    pub(crate) lock: Decimal,
}

/// One execution of one order.
#[derive(Debug, Clone)]
pub struct Trade {
    pub account: usize,
    pub symbol: String,
    pub id: i64,
    pub order_id: i64,
    pub order_list_id: i64,
    pub price: Decimal,
    pub qty: Decimal,
    pub quote_qty: Decimal,
    pub commission: Decimal,
    pub commission_asset: String,
    pub time: Millis,
    pub is_buyer: bool,
    pub is_maker: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Balance {
    pub free: Decimal,
    pub locked: Decimal,
}

#[derive(Debug, Clone)]
pub struct Account {
    pub api_key: String,
    pub secret: String,
    pub balances: BTreeMap<String, Balance>,
    pub update_time: Millis,
}

/// The synthetic counterparty: a ladder of (price, quantity) levels on each side of the
/// market price, best first.
#[derive(Debug, Clone)]
pub struct Book {
    pub bids: Vec<(Decimal, Decimal)>,
    pub asks: Vec<(Decimal, Decimal)>,
}

impl Book {
    /// The levels a taker on `side` trades against.
    pub fn against(self, side: Side) -> Vec<(Decimal, Decimal)> {
        match side {
            Side::Buy => self.asks,
            Side::Sell => self.bids,
        }
    }
}

/// Engine tunables.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub maker_fee: Decimal,
    pub taker_fee: Decimal,
    /// Quote notional available at each synthetic book level.
    pub level_notional: Decimal,
    pub levels: usize,
    /// Distance between synthetic levels as a fraction of the price.
    pub level_spacing: Decimal,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            maker_fee: Decimal::new(1, 3),
            taker_fee: Decimal::new(1, 3),
            level_notional: Decimal::from(50_000),
            levels: 20,
            level_spacing: Decimal::new(5, 4),
        }
    }
}

/// Which limit and stop prices the core accepts. The symbol's tick is exchange A's price
/// filter; exchange B allows any price of at most five significant figures and `8 −
/// szDecimals` decimals, which no single tick expresses (65 001 and 1.2345 are both valid
/// there), so its front end checks that rule itself and the core only keeps the price range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceRule {
    /// A multiple of the symbol's tick.
    Tick,
    /// Checked by the front end; any price within the symbol's range.
    FrontEnd,
}

/// A validated order (or a leg of a list) as the core takes it.
#[derive(Debug, Clone)]
pub struct Leg {
    pub order_type: OrderType,
    pub side: Side,
    pub qty: Decimal,
    pub price: Option<Decimal>,
    pub stop: Option<Decimal>,
    pub tif: Tif,
    /// The client's id, or None for one the engine makes up.
    pub client_id: Option<String>,
}

/// One fill of a placement, as the placing client is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fill {
    pub price: Decimal,
    pub qty: Decimal,
    pub commission: Decimal,
    pub commission_asset: String,
    pub trade_id: i64,
    /// The order rested on the book (it did not take).
    pub is_maker: bool,
}

/// An accepted order: its id and what it filled on arrival.
#[derive(Debug, Clone)]
pub struct Placed {
    pub order_id: i64,
    pub fills: Vec<Fill>,
}
