//! Cancelling: one order, or a list with all its legs (cancelling one leg of a list cancels
//! the list), releasing what they lock.

use super::events::OrderChange;
use super::matching::End;
use super::{Engine, Reject, Status};
use crate::clock::Millis;

impl Engine {
    /// Cancels open order `order_id` by the request with client id `cancel_client_id`; a leg of
    /// a list takes its whole list with it.
    pub fn cancel_order(
        &mut self,
        order_id: i64,
        cancel_client_id: String,
        now: Millis,
    ) -> Result<(), Reject> {
        self.catch_up(now);
        let idx = self.order_idx(order_id).ok_or(Reject::UnknownOrder)?;
        if !self.orders[idx].status.is_open() {
            return Err(Reject::UnknownOrder);
        }
        match self.orders[idx].order_list_id {
            list_id if list_id > 0 => {
                if let Some(li) = self.list_idx(list_id) {
                    self.cancel_list_legs(li, &cancel_client_id, now);
                }
            }
            _ => self.finish(idx, End::Canceled { cancel_client_id }, now),
        }
        self.flush_balances(now);
        Ok(())
    }

    /// Cancels every open leg of list `list_id` (a finished list is unknown).
    pub fn cancel_list(
        &mut self,
        list_id: i64,
        cancel_client_id: &str,
        now: Millis,
    ) -> Result<(), Reject> {
        self.catch_up(now);
        let li = self.list_idx(list_id).ok_or(Reject::UnknownOrder)?;
        if self.lists[li].done {
            return Err(Reject::UnknownOrder);
        }
        self.cancel_list_legs(li, cancel_client_id, now);
        self.flush_balances(now);
        Ok(())
    }

    fn cancel_list_legs(&mut self, li: usize, cancel_client_id: &str, now: Millis) {
        let legs = self.lists[li].orders.clone();
        // Every open leg ends first; then the list, so its lock is released once.
        for &id in &legs {
            if let Some(j) = self.order_idx(id)
                && self.orders[j].status.is_open()
            {
                self.orders[j].status = Status::Canceled;
                self.orders[j].update_time = now;
                let cancel_client_id = cancel_client_id.to_string();
                self.emit_order(j, OrderChange::Canceled { cancel_client_id }, now);
            }
        }
        self.lists[li].transaction_time = now;
        for &id in &legs {
            if let Some(j) = self.order_idx(id) {
                self.release_if_done(j);
            }
        }
        self.lists[li].done = true;
    }
}
