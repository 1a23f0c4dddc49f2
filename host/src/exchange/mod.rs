//! Exchanges: the one [`Exchange`] trait the service trades through, its domain types
//! (`Price`, `Qty` as decimals, orders, OCO lists, balances, klines) and the typed errors.
//!
//! Owns: talking to an exchange and translating its wire format at this edge, once.
//! Never: decides what to trade, stores trades, or re-sends an order whose outcome is unknown
//! without first looking it up by its client order id (see [`ExchangeError::Unknown`]).
//!
//! - [`budget`]: the request budget that keeps money paths alive under a burst of reads;
//!   [`ReadHandle`] is the handle agent reads go through.
//! - [`core_exchange`]: exchange A's rules on the simulator's matching core, in process (the
//!   backtest's exchange: no HTTP).
//! - [`exchange_a`]: exchange A's REST client (signer, wire types, filters, client) and its
//!   stream links.
//! - [`exchange_b`]: exchange B's REST client (symbols, cloids, nonces, wire types, client).
//! - [`feed`]: what the exchange pushes (order updates, prices) in the host's terms, and
//!   whether each stream link is live.
//! - [`rules`]: a symbol's trading rules and the checks an order passes before it is sent.
//! - [`connect`]: the active exchange built from the config (`active`, `mode`, keys), and its
//!   streams started.
//! - [`paper`]: paper mode — the simulator in-process, reached by the real client on loopback.

pub mod account;
pub mod answers;
pub mod budget;
pub mod connect;
pub mod core_exchange;
pub mod exchange_a;
pub mod exchange_b;
pub mod feed;
pub mod links;
pub mod lookup;
mod order_lists;
pub mod paper;
mod read_handle;
pub mod rules;
mod short_cache;
mod symbol;

pub use order_lists::{OrderLists, lists_of, open_lists};
pub use read_handle::ReadHandle;
pub use short_cache::ShortCache;
pub use symbol::Symbol;

use crate::config::ExchangeName;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// A boxed future, so the trait stays object-safe (`Arc<dyn Exchange>`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A price in the quote asset.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Price(pub Decimal);

/// A quantity of the base asset.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Qty(pub Decimal);

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.normalize().fmt(f)
    }
}

impl fmt::Display for Qty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.normalize().fmt(f)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Side {
    Buy,
    Sell,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OrderType {
    Market,
    Limit,
    LimitMaker,
    StopLoss,
    StopLossLimit,
    TakeProfit,
    TakeProfitLimit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TimeInForce {
    Gtc,
    Ioc,
    Fok,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OrderStatus {
    New,
    PendingNew,
    PartiallyFilled,
    Filled,
    Canceled,
    PendingCancel,
    Rejected,
    Expired,
    ExpiredInMatch,
}

impl OrderType {
    /// The type's name as the domain (and exchange A) spell it: `LIMIT`, `STOP_LOSS_LIMIT`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Market => "MARKET",
            Self::Limit => "LIMIT",
            Self::LimitMaker => "LIMIT_MAKER",
            Self::StopLoss => "STOP_LOSS",
            Self::StopLossLimit => "STOP_LOSS_LIMIT",
            Self::TakeProfit => "TAKE_PROFIT",
            Self::TakeProfitLimit => "TAKE_PROFIT_LIMIT",
        }
    }
}

impl OrderStatus {
    /// Still on the book (or waiting for its trigger).
    pub fn is_open(self) -> bool {
        matches!(self, Self::New | Self::PendingNew | Self::PartiallyFilled | Self::PendingCancel)
    }
}

/// How positions can be protected on this exchange, the adapter's capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// The exchange can hold take-profit and stop-loss as one OCO order list; the operator
    /// may still choose the watched stop (`[protection] stop = "service"`).
    Native,
    /// No exchange-side stop on spot: a resting take-profit, and the service watches the stop.
    Watched,
}

/// A new order. `client_order_id` is mandatory: it is how an ambiguous outcome is resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrder {
    pub symbol: String,
    pub side: Side,
    pub order_type: OrderType,
    /// Base quantity; for MARKET either this or `quote_qty`.
    pub qty: Option<Qty>,
    /// MARKET only: quote amount to spend (BUY) or receive (SELL).
    pub quote_qty: Option<Decimal>,
    pub price: Option<Price>,
    pub stop_price: Option<Price>,
    pub time_in_force: Option<TimeInForce>,
    pub client_order_id: String,
}

impl NewOrder {
    pub fn market(symbol: &str, side: Side, qty: Qty, client_order_id: &str) -> Self {
        Self {
            symbol: symbol.into(),
            side,
            order_type: OrderType::Market,
            qty: Some(qty),
            quote_qty: None,
            price: None,
            stop_price: None,
            time_in_force: None,
            client_order_id: client_order_id.into(),
        }
    }

    pub fn limit(symbol: &str, side: Side, qty: Qty, price: Price, client_order_id: &str) -> Self {
        Self {
            order_type: OrderType::Limit,
            price: Some(price),
            time_in_force: Some(TimeInForce::Gtc),
            ..Self::market(symbol, side, qty, client_order_id)
        }
    }
}

/// An OCO bracket: a take-profit LIMIT_MAKER leg and a STOP_LOSS_LIMIT leg sharing one
/// quantity and one order-list id.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOco {
    pub symbol: String,
    /// SELL protects a long position (take profit above, stop below).
    pub side: Side,
    pub qty: Qty,
    pub take_profit: Price,
    pub stop_price: Price,
    pub stop_limit_price: Price,
    pub list_client_order_id: String,
    pub take_profit_client_order_id: Option<String>,
    pub stop_client_order_id: Option<String>,
}

/// One fill of an order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fill {
    pub price: Price,
    pub qty: Qty,
    pub commission: Decimal,
    pub commission_asset: String,
    pub trade_id: i64,
}

/// An order as the exchange reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Order {
    pub symbol: String,
    pub order_id: i64,
    /// The OCO list the order belongs to.
    pub order_list_id: Option<i64>,
    pub client_order_id: String,
    pub side: Side,
    pub order_type: OrderType,
    pub status: OrderStatus,
    pub price: Price,
    pub stop_price: Option<Price>,
    pub orig_qty: Qty,
    pub executed_qty: Qty,
    pub cumulative_quote_qty: Decimal,
    pub time_in_force: Option<TimeInForce>,
    /// Creation or transaction time, epoch ms.
    pub time: i64,
    pub update_time: i64,
    /// False for a stop that has not triggered yet.
    pub working: bool,
    pub fills: Vec<Fill>,
}

impl Order {
    /// Average fill price (cumulative quote / executed qty), if anything filled.
    pub fn avg_price(&self) -> Option<Price> {
        (!self.executed_qty.0.is_zero())
            .then(|| Price((self.cumulative_quote_qty / self.executed_qty.0).round_dp(8)))
    }

    /// Commissions paid in `asset` (base-asset ones reduce what a BUY really received).
    pub fn commission_in(&self, asset: &str) -> Decimal {
        self.fills.iter().filter(|f| f.commission_asset == asset).map(|f| f.commission).sum()
    }
}

/// An OCO order list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrderList {
    pub symbol: String,
    pub order_list_id: i64,
    pub list_client_order_id: String,
    /// False once the list is ALL_DONE.
    pub executing: bool,
    /// (orderId, clientOrderId) of the legs.
    pub legs: Vec<(i64, String)>,
    /// Leg reports, when the exchange sent them (placement and cancel).
    pub orders: Vec<Order>,
    pub transaction_time: i64,
}

/// Refers to an order by exchange id or by client order id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderRef {
    Id(i64),
    Client(String),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Balance {
    pub asset: String,
    pub free: Decimal,
    pub locked: Decimal,
}

/// One candle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Kline {
    pub open_time: i64,
    pub open: Price,
    pub high: Price,
    pub low: Price,
    pub close: Price,
    pub volume: Decimal,
    pub close_time: i64,
    pub quote_volume: Decimal,
    pub trades: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ticker24h {
    pub symbol: String,
    pub last_price: Price,
    pub price_change_percent: Decimal,
    pub high_price: Price,
    pub low_price: Price,
    pub volume: Decimal,
    pub quote_volume: Decimal,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trade {
    pub symbol: String,
    pub id: i64,
    pub order_id: i64,
    pub order_list_id: Option<i64>,
    pub price: Price,
    pub qty: Qty,
    pub quote_qty: Decimal,
    pub commission: Decimal,
    pub commission_asset: String,
    pub time: i64,
    pub is_buyer: bool,
    pub is_maker: bool,
}

impl From<Trade> for Fill {
    /// A fill from the account's trade list (order queries carry no fills; the fee is here).
    fn from(t: Trade) -> Self {
        Fill {
            price: t.price,
            qty: t.qty,
            commission: t.commission,
            commission_asset: t.commission_asset,
            trade_id: t.id,
        }
    }
}

pub use rules::SymbolRules;

/// Why an exchange call did not give an answer. Definite rejections keep the exchange's
/// code and message; an ambiguous outcome is [`ExchangeError::Unknown`], never a failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExchangeError {
    /// -2010 "Account has insufficient balance for requested action."
    #[error("insufficient balance ({code}): {msg}")]
    InsufficientBalance { code: i64, msg: String },
    /// -2010 with another matching-engine message (duplicate order, would trigger, ...).
    #[error("order rejected ({code}): {msg}")]
    OrderRejected { code: i64, msg: String },
    /// -1013 filter failure on the exchange's side.
    #[error("filter failure ({code}): {msg}")]
    FilterFailure { code: i64, msg: String },
    /// -2013 order (list) does not exist, or -2011 "Unknown order sent." on cancel.
    #[error("unknown order ({code}): {msg}")]
    UnknownOrder { code: i64, msg: String },
    /// -2011 cancel rejected for another reason (cancel restrictions).
    #[error("cancel rejected ({code}): {msg}")]
    CancelRejected { code: i64, msg: String },
    /// -1121 invalid symbol.
    #[error("invalid symbol ({code}): {msg}")]
    InvalidSymbol { code: i64, msg: String },
    /// -1021 timestamp outside recvWindow, still after a time resync and one retry.
    #[error("timestamp rejected ({code}): {msg}")]
    InvalidTimestamp { code: i64, msg: String },
    /// -1022 signature rejected (wrong secret).
    #[error("signature rejected ({code}): {msg}")]
    InvalidSignature { code: i64, msg: String },
    /// -2014 / -2015: API key missing, malformed, or without permission.
    #[error("API key rejected ({code}): {msg}")]
    Unauthorized { code: i64, msg: String },
    /// Any other 4xx answer with a code (-1100 .. -1199, ...).
    #[error("request rejected ({code}): {msg}")]
    BadRequest { code: i64, msg: String },
    /// HTTP 429: wait `retry_after` before the next request.
    #[error("rate limited, retry after {retry_after:?}")]
    RateLimited { retry_after: Duration },
    /// Not sent: the service's share of the exchange's request weight for agent reads is
    /// spent until the window rolls over (money paths keep their reserve; see [`budget`]).
    #[error(
        "the exchange's request weight for reads is spent; retry after {} s",
        retry_after.as_secs().max(1)
    )]
    ReadBudgetSpent { retry_after: Duration },
    /// HTTP 418: IP banned; nothing is sent until the ban ends.
    #[error("IP banned by the exchange for {retry_after:?}")]
    Banned { retry_after: Duration },
    /// The request may or may not have been executed (timeout, 5xx, -1007, connection lost
    /// after sending). Look the order up by its client order id before re-sending.
    #[error("outcome unknown: {detail}")]
    Unknown { detail: String },
    /// The request was never sent (connection refused, DNS, TLS before sending).
    #[error("exchange unreachable: {detail}")]
    Unreachable { detail: String },
    /// Refused before sending: the order cannot satisfy the symbol's filters.
    #[error("order refused before sending: {reason}")]
    Refused { reason: String },
    /// The answer could not be read.
    #[error("unreadable exchange answer: {detail}")]
    Decode { detail: String },
    /// Missing credentials or other local configuration problems.
    #[error("exchange client not configured: {detail}")]
    NotConfigured { detail: String },
}

impl ExchangeError {
    /// The exchange's error code, when the exchange answered with one.
    pub fn code(&self) -> Option<i64> {
        match self {
            Self::InsufficientBalance { code, .. }
            | Self::OrderRejected { code, .. }
            | Self::FilterFailure { code, .. }
            | Self::UnknownOrder { code, .. }
            | Self::CancelRejected { code, .. }
            | Self::InvalidSymbol { code, .. }
            | Self::InvalidTimestamp { code, .. }
            | Self::InvalidSignature { code, .. }
            | Self::Unauthorized { code, .. }
            | Self::BadRequest { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// True when the exchange may have executed the request.
    pub fn is_unknown_outcome(&self) -> bool {
        matches!(self, Self::Unknown { .. })
    }
}

/// The currency the account's amounts are in on the active exchange of `config`: `[market]
/// quote_asset` on exchange A, USDC on exchange B (whose pairs all quote USDC while the
/// service names its symbols `<BASE>USDT`). Known without asking the exchange, so every tile,
/// report and message names the same currency as `GET /api/portfolio`.
pub fn account_currency(config: &crate::config::Config) -> &str {
    match config.exchange.active {
        crate::config::ExchangeName::ExchangeA => &config.market.quote_asset,
        crate::config::ExchangeName::ExchangeB => exchange_b::symbols::QUOTE_TOKEN,
    }
}

/// What the service needs from a spot exchange.
pub trait Exchange: Send + Sync {
    fn name(&self) -> ExchangeName;
    fn protection(&self) -> Protection;
    /// Its linked order lists (OCO), where the exchange has them ([`OrderLists`]).
    fn order_lists(&self) -> Option<&dyn OrderLists> {
        None
    }
    /// How much of the request budget is used (`None` for an exchange without one).
    fn budget_use(&self) -> Option<budget::BudgetUse> {
        None
    }
    /// Agent reads refused by the budget so far (`budget_use().refused_reads`, without
    /// building the rest): the API's rate-limit layer compares it before and after every
    /// request.
    fn refused_reads(&self) -> u64 {
        0
    }
    /// While agent reads are refused: how long until they get weight again.
    fn reads_blocked_for(&self) -> Option<Duration> {
        None
    }
    /// Server time, epoch ms.
    fn server_time(&self) -> BoxFuture<'_, Result<i64, ExchangeError>>;
    /// Trading rules of a symbol (cached).
    fn symbol_rules<'a>(
        &'a self,
        symbol: &'a str,
    ) -> BoxFuture<'a, Result<SymbolRules, ExchangeError>>;
    /// Klines, oldest first; `interval` as the exchange spells it (15m, 1h, 4h, 1d, 1w ...).
    fn klines<'a>(
        &'a self,
        symbol: &'a str,
        interval: &'a str,
        limit: u32,
        end_time: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Kline>, ExchangeError>>;
    /// 24 h tickers of the given symbols (all symbols when empty).
    fn tickers_24h<'a>(
        &'a self,
        symbols: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Ticker24h>, ExchangeError>>;
    /// Last prices of every symbol.
    fn prices(&self) -> BoxFuture<'_, Result<Vec<(String, Price)>, ExchangeError>>;
    fn price<'a>(&'a self, symbol: &'a str) -> BoxFuture<'a, Result<Price, ExchangeError>>;
    /// Balances with free and locked amounts (zero balances omitted).
    fn balances(&self) -> BoxFuture<'_, Result<Vec<Balance>, ExchangeError>>;
    /// Places an order after checking it against the symbol's filters. An ambiguous outcome is
    /// resolved by looking the order up by its client order id; `Unknown` only when even the
    /// lookup could not tell.
    fn place_order<'a>(
        &'a self,
        order: &'a NewOrder,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>>;
    fn order<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>>;
    fn cancel_order<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>>;
    /// Open orders of one symbol, or of all symbols.
    fn open_orders<'a>(
        &'a self,
        symbol: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>>;
    /// Recent orders of a symbol in any state (oldest first), for reconciliation by client id.
    fn all_orders<'a>(
        &'a self,
        symbol: &'a str,
        limit: u32,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>>;
    /// Trades of a symbol, optionally of one order.
    fn my_trades<'a>(
        &'a self,
        symbol: &'a str,
        order_id: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Trade>, ExchangeError>>;
}
