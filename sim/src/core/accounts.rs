//! Accounts and their balances: funding, free and locked amounts, and the locks orders and
//! lists hold until they finish.

use super::{Account, Balance, Engine, Order, Side};
use crate::clock::Millis;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

impl Engine {
    /// The account of `api_key`, made (empty) if it does not exist yet.
    pub fn add_account(&mut self, api_key: &str, secret: &str) -> usize {
        if let Some(i) = self.account_by_key(api_key) {
            return i;
        }
        self.accounts.push(Account {
            api_key: api_key.to_string(),
            secret: secret.to_string(),
            balances: BTreeMap::new(),
            update_time: 0,
        });
        self.accounts.len() - 1
    }

    pub fn account_by_key(&self, api_key: &str) -> Option<usize> {
        self.accounts.iter().position(|a| a.api_key == api_key)
    }

    /// Adds (or with a negative amount removes, down to zero) free balance at `t`.
    pub fn fund(&mut self, account: usize, asset: &str, amount: Decimal, t: Millis) {
        let Some(b) = self.balance_mut(account, asset) else { return };
        let before = b.free;
        b.free = b.free.checked_add(amount).unwrap_or(b.free).max(Decimal::ZERO);
        let delta = b.free - before;
        self.emit_transfer(account, asset, delta, t);
        self.flush_balances(t);
    }

    /// The account's balance of `asset` (zero if it never held any).
    pub fn balance(&self, account: usize, asset: &str) -> Balance {
        self.accounts.get(account).and_then(|a| a.balances.get(asset)).cloned().unwrap_or_default()
    }

    /// The balance to change; the change is reported with the action's next flush.
    pub(super) fn balance_mut(&mut self, account: usize, asset: &str) -> Option<&mut Balance> {
        if account < self.accounts.len() {
            self.touch(account, asset);
        }
        self.accounts.get_mut(account).map(|a| a.balances.entry(asset.to_string()).or_default())
    }

    pub(super) fn free(&self, account: usize, asset: &str) -> Decimal {
        self.balance(account, asset).free
    }

    /// Moves `amount` from free to locked.
    pub(super) fn lock(&mut self, account: usize, asset: &str, amount: Decimal) {
        if let Some(b) = self.balance_mut(account, asset) {
            b.free -= amount;
            b.locked += amount;
        }
    }

    /// Moves `amount` from locked back to free.
    pub(super) fn unlock(&mut self, account: usize, asset: &str, amount: Decimal) {
        if amount <= Decimal::ZERO {
            return;
        }
        if let Some(b) = self.balance_mut(account, asset) {
            let a = amount.min(b.locked);
            b.locked -= a;
            b.free += a;
        }
    }

    /// The asset an order pays with: base for a sell, quote for a buy.
    pub(super) fn lock_asset(&self, o: &Order) -> String {
        let rules = self.rules(&o.symbol).ok();
        match o.side {
            Side::Sell => rules.map(|r| r.base.clone()).unwrap_or_default(),
            Side::Buy => rules.map(|r| r.quote.clone()).unwrap_or_default(),
        }
    }

    /// Takes `amount` out of the order's (or its list's) lock, returning how much came from it.
    pub(super) fn take_lock(&mut self, idx: usize, amount: Decimal) -> Decimal {
        let list = self.orders[idx].order_list_id;
        let holder = if list > 0 {
            match self.list_idx(list) {
                Some(li) => &mut self.lists[li].lock,
                None => &mut self.orders[idx].lock,
            }
        } else {
            &mut self.orders[idx].lock
        };
        let from_lock = amount.min(*holder).max(Decimal::ZERO);
        *holder -= from_lock;
        from_lock
    }
}
