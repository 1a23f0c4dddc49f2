//! Orders `/exchange` refused before the core saw them (the core's event log never has
//! them), kept so `orderUpdates` can report them with their `*Rejected` status. They get order
//! ids of their own, far above the core's, that no `orderStatus` knows.

use crate::clock::Millis;

/// Order ids of refused orders start here.
pub const REFUSED_OID_BASE: u64 = 1 << 48;

/// One refused order, as `orderUpdates` shows it.
#[derive(Debug, Clone)]
pub struct RefusedOrder {
    pub account: usize,
    pub coin: String,
    pub side: &'static str,
    pub limit_px: String,
    pub sz: String,
    pub cloid: Option<String>,
    pub status: &'static str,
    pub time: Millis,
    /// Given when logged.
    pub oid: u64,
}

/// Every refused order, oldest first.
#[derive(Debug, Default)]
pub struct RefusedLog {
    orders: Vec<RefusedOrder>,
}

impl RefusedLog {
    pub fn push(&mut self, mut order: RefusedOrder) {
        order.oid = REFUSED_OID_BASE + self.orders.len() as u64;
        self.orders.push(order);
    }

    /// The orders from position `from` on.
    pub fn since(&self, from: usize) -> &[RefusedOrder] {
        &self.orders[from.min(self.orders.len())..]
    }

    /// How many the log holds (the cursor of a reader that is up to date).
    pub fn count(&self) -> usize {
        self.orders.len()
    }
}
