//! The exchange-neutral matching core: accounts with free/locked balances, orders and
//! one-cancels-the-other lists, fills against a synthetic book, fees and trades, triggers
//! along the market's price path. It speaks no wire: requests come in as typed values
//! ([`Leg`], order ids), refusals go out as [`Reject`], and each exchange's front end (see
//! `crate::exchange_a`) translates its own protocol into these calls.
//!
//! The map:
//! - [`types`]: the records (orders, lists, trades, balances) and the request types.
//! - [`reject`]: why a request is refused.
//! - `accounts`: balances, locks and funding.
//! - `book`: the synthetic counterparty around the market price.
//! - `placement`: checks and placement of orders and lists.
//! - `matching`: fills, fees, triggers and the catch-up along the price path.
//! - `cancel`: cancelling an order or a list.
//! - [`events`]: the log of what happened, for front ends that push.
//!
//! The core never reads the clock: every call takes "now" from its front end.

mod accounts;
mod book;
mod cancel;
pub mod events;
mod matching;
mod placement;
pub mod reject;
pub mod types;

#[cfg(test)]
mod tests;

pub use events::{Event, EventKind, OrderChange};
pub use reject::{Filter, Reject};
pub use types::{
    Account, Balance, Book, EngineConfig, Expiry, Fill, Leg, Order, OrderList, OrderType, Placed,
    PriceRule, Side, Status, Tif, Trade,
};

use crate::clock::Millis;
use crate::market::Market;
use crate::symbols::SymbolRules;
use rust_decimal::Decimal;
use std::collections::HashMap;

/// Everything the simulated exchange knows.
#[derive(Debug)]
pub struct Engine {
    pub config: EngineConfig,
    pub rules: Vec<SymbolRules>,
    index: HashMap<String, usize>,
    pub market: Market,
    /// Every order ever accepted; order id `n` is at index `n - 1`.
    pub orders: Vec<Order>,
    /// Every list ever accepted; list id `n` is at index `n - 1`.
    pub lists: Vec<OrderList>,
    pub trades: Vec<Trade>,
    pub accounts: Vec<Account>,
    /// Everything that happened, in order (see [`events`]).
    pub events: Vec<Event>,
    touched: events::Touched,
    /// Until when resting orders have been evaluated against the market (every symbol's
    /// window ends at the same time: the last catch-up).
    evaluated_until: Option<Millis>,
    id_seed: u64,
    /// Indices of the orders that may still be open, oldest first: every order is added when
    /// accepted (an order never reopens), and finished ones are dropped at each catch-up, so
    /// matching and open-order scans never walk the whole history.
    maybe_open: Vec<usize>,
}

impl Engine {
    pub fn new(rules: Vec<SymbolRules>, market: Market, config: EngineConfig) -> Self {
        let index = rules.iter().enumerate().map(|(i, r)| (r.symbol.clone(), i)).collect();
        let id_seed = market.synthetic.seed;
        Self {
            config,
            rules,
            index,
            market,
            orders: Vec::new(),
            lists: Vec::new(),
            trades: Vec::new(),
            accounts: Vec::new(),
            events: Vec::new(),
            touched: events::Touched::new(),
            evaluated_until: None,
            id_seed,
            maybe_open: Vec::new(),
        }
    }

    pub fn rules(&self, symbol: &str) -> Result<&SymbolRules, Reject> {
        self.index.get(symbol).and_then(|i| self.rules.get(*i)).ok_or(Reject::UnknownSymbol)
    }

    /// The market price of `symbol` at `t`.
    pub fn price(&self, symbol: &str, t: Millis) -> Result<Decimal, Reject> {
        let r = self.rules(symbol)?;
        Ok(self.market.price(r, t))
    }

    pub fn order(&self, order_id: i64) -> Option<&Order> {
        self.order_idx(order_id).map(|i| &self.orders[i])
    }

    pub fn list(&self, list_id: i64) -> Option<&OrderList> {
        self.list_idx(list_id).map(|i| &self.lists[i])
    }

    /// The newest order of `account` on `symbol` with this client id, open or not.
    pub fn order_by_client_id(&self, account: usize, symbol: &str, client_id: &str) -> Option<i64> {
        self.orders
            .iter()
            .rev()
            .find(|o| o.account == account && o.symbol == symbol && o.client_order_id == client_id)
            .map(|o| o.order_id)
    }

    /// The newest list of `account` with this client id, open or not.
    pub fn list_by_client_id(&self, account: usize, client_id: &str) -> Option<i64> {
        self.lists
            .iter()
            .rev()
            .find(|l| l.account == account && l.list_client_order_id == client_id)
            .map(|l| l.order_list_id)
    }

    /// Refuses a client id that an open order of the account already carries.
    pub fn ensure_client_id_free(&self, account: usize, client_id: &str) -> Result<(), Reject> {
        let in_use =
            self.open_orders().any(|o| o.account == account && o.client_order_id == client_id);
        if in_use { Err(Reject::DuplicateClientId) } else { Ok(()) }
    }

    /// A fresh 22-character client id for an order, list or cancel the client left unnamed.
    pub fn new_client_id(&mut self) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        self.id_seed = self.id_seed.wrapping_add(1);
        let mut z = self.id_seed ^ (self.orders.len() as u64) << 20;
        (0..22)
            .map(|_| {
                z = crate::market::mix(z);
                ALPHABET[(z % ALPHABET.len() as u64) as usize] as char
            })
            .collect()
    }

    /// Orders of `account` created in [since, newest] (for the exchanges' order-count limits).
    pub fn order_count_since(&self, account: usize, since: Millis) -> usize {
        // Orders are created in time order: walk back from the newest.
        self.orders
            .iter()
            .rev()
            .take_while(|o| o.time >= since)
            .filter(|o| o.account == account)
            .count()
    }

    /// The open orders, oldest first.
    pub fn open_orders(&self) -> impl Iterator<Item = &Order> {
        self.maybe_open.iter().map(|&i| &self.orders[i]).filter(|o| o.status.is_open())
    }

    fn order_idx(&self, order_id: i64) -> Option<usize> {
        let i = usize::try_from(order_id.checked_sub(1)?).ok()?;
        (i < self.orders.len()).then_some(i)
    }

    fn list_idx(&self, list_id: i64) -> Option<usize> {
        let i = usize::try_from(list_id.checked_sub(1)?).ok()?;
        (i < self.lists.len()).then_some(i)
    }
}
