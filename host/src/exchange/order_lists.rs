//! Linked order lists at the exchange: an OCO, a take-profit and a stop of which the first to
//! fill cancels the other. Exchange A's wire has them; exchange B's spot market has none, so
//! its adapter offers none ([`Exchange::order_lists`] answers `None`) and the service watches
//! its stop instead. The list calls exist only on the face an adapter hands out, so a caller
//! cannot reach them without asking first.

use super::{BoxFuture, Exchange, ExchangeError, NewOco, OrderList, OrderRef};

/// The order-list calls of an exchange that has them.
pub trait OrderLists: Send + Sync {
    /// Places an OCO order list (an ambiguous outcome is resolved as for `place_order`, by the
    /// list's client order id).
    fn place_oco<'a>(&'a self, oco: &'a NewOco) -> BoxFuture<'a, Result<OrderList, ExchangeError>>;
    fn order_list<'a>(
        &'a self,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<OrderList, ExchangeError>>;
    fn cancel_order_list<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<OrderList, ExchangeError>>;
    fn open_order_lists(&self) -> BoxFuture<'_, Result<Vec<OrderList>, ExchangeError>>;
}

/// The order lists of `exchange`, or the refusal a list call gets where it has none.
pub fn lists_of(exchange: &dyn Exchange) -> Result<&dyn OrderLists, ExchangeError> {
    exchange.order_lists().ok_or_else(|| ExchangeError::Refused {
        reason: format!("{} has no OCO order lists (its protection is watched)", exchange.name()),
    })
}

/// The open order lists of `exchange`: none where it has no lists.
pub async fn open_lists(exchange: &dyn Exchange) -> Result<Vec<OrderList>, ExchangeError> {
    match exchange.order_lists() {
        Some(lists) => lists.open_order_lists().await,
        None => Ok(Vec::new()),
    }
}
