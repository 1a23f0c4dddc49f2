//! What happened in the core, in order: every order change (placed, each fill, cancel,
//! expiry, a stop starting to work), every list change, the balances each action touched, and
//! transfers from outside. Front ends that push (exchange A's user data stream) read the log
//! from their own cursor; the log never changes what it has recorded.

use super::{Balance, Engine, Fill, Order, OrderList};
use crate::clock::Millis;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// How an order changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderChange {
    /// Accepted, or (again) when a stop starts to work.
    New,
    /// One fill.
    Trade(Fill),
    /// Cancelled by the request with this client id.
    Canceled { cancel_client_id: String },
    /// Expired (the reason is on the order).
    Expired,
}

#[derive(Debug, Clone)]
pub enum EventKind {
    /// The order as it is right after `change`.
    Order { order: Order, change: OrderChange },
    /// The list as it is right after it was placed or finished.
    List(OrderList),
    /// Balances of the assets an action changed, as they are after it.
    Balances { account: usize, balances: Vec<(String, Balance)> },
    /// Balance added (or removed) from outside trading.
    Transfer { account: usize, asset: String, delta: Decimal },
}

#[derive(Debug, Clone)]
pub struct Event {
    /// Position in the log (0-based).
    pub seq: u64,
    pub time: Millis,
    pub kind: EventKind,
}

impl Event {
    /// The account the event belongs to.
    pub fn account(&self) -> usize {
        match &self.kind {
            EventKind::Order { order, .. } => order.account,
            EventKind::List(l) => l.account,
            EventKind::Balances { account, .. } | EventKind::Transfer { account, .. } => *account,
        }
    }
}

impl Engine {
    /// Events from position `from` on.
    pub fn events_since(&self, from: u64) -> &[Event] {
        let from = usize::try_from(from).unwrap_or(usize::MAX).min(self.events.len());
        &self.events[from..]
    }

    /// How many events the log holds (the cursor of a reader that is up to date).
    pub fn event_count(&self) -> u64 {
        self.events.len() as u64
    }

    fn emit(&mut self, time: Millis, kind: EventKind) {
        let seq = self.events.len() as u64;
        self.events.push(Event { seq, time, kind });
    }

    pub(super) fn emit_order(&mut self, idx: usize, change: OrderChange, time: Millis) {
        let order = self.orders[idx].clone();
        self.emit(time, EventKind::Order { order, change });
    }

    pub(super) fn emit_list(&mut self, li: usize, time: Millis) {
        let list = self.lists[li].clone();
        self.emit(time, EventKind::List(list));
    }

    pub(super) fn emit_transfer(&mut self, account: usize, asset: &str, delta: Decimal, t: Millis) {
        let kind = EventKind::Transfer { account, asset: asset.to_string(), delta };
        self.emit(t, kind);
    }

    /// Records that an action changed `asset` of `account` (reported by the next flush).
    pub(super) fn touch(&mut self, account: usize, asset: &str) {
        self.touched.entry(account).or_default().insert(asset.to_string());
    }

    /// Runs one action of a front end: the market is caught up to `now` first, and the
    /// balances the action changed are reported after it.
    pub(super) fn action<T>(&mut self, now: Millis, act: impl FnOnce(&mut Self) -> T) -> T {
        self.catch_up(now);
        let done = act(self);
        self.flush_balances(now);
        done
    }

    /// One balances event per account whose balances the action changed.
    pub(super) fn flush_balances(&mut self, time: Millis) {
        let touched = std::mem::take(&mut self.touched);
        for (account, assets) in touched {
            let balances =
                assets.into_iter().map(|a| (a.clone(), self.balance(account, &a))).collect();
            self.emit(time, EventKind::Balances { account, balances });
        }
    }
}

/// Assets per account changed since the last flush.
pub(super) type Touched = BTreeMap<usize, std::collections::BTreeSet<String>>;
