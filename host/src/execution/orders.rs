//! Sending orders through the journal: write first, send, record the outcome; and before any
//! send, settle an earlier attempt with the same client order id by looking it up at the
//! exchange. This is the only place in the host that calls `place_order` / `place_oco`.

use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;

use super::journal::{Commit, Journal, JournalEntry, JournalError, OrderKind, Outcome};
use super::plan::EntryPlan;
use crate::clock::SharedClock;
use crate::exchange::lookup::{self, TradeEvidence};
use crate::exchange::{
    Exchange, ExchangeError, Fill, NewOco, NewOrder, Order, OrderList, OrderRef, OrderStatus, Side,
    lists_of,
};
use crate::store::{StoreError, Writer};

/// Why an order was not placed (or is not known to be).
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error(transparent)]
    Exchange(ExchangeError),
    #[error(transparent)]
    Unsettled(JournalError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl SendError {
    /// Worth another attempt after a pause: the exchange may answer next time, and the
    /// journal guarantees the retry cannot duplicate the order.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Exchange(e) => matches!(
                e,
                ExchangeError::Unknown { .. }
                    | ExchangeError::Unreachable { .. }
                    | ExchangeError::RateLimited { .. }
            ),
            Self::Unsettled(_) => true,
            Self::Store(_) => false,
        }
    }

    /// The exchange may hold the order: do not report "nothing happened".
    pub fn is_unknown_outcome(&self) -> bool {
        matches!(self, Self::Exchange(ExchangeError::Unknown { .. }) | Self::Unsettled(_))
    }
}

/// What the journaled sender found at the exchange for a client order id.
enum Lookup<T> {
    Found(T),
    Absent,
    CannotTell(String),
}

/// Journaled order placement on one exchange.
#[derive(Clone)]
pub struct Orders {
    pub exchange: Arc<dyn Exchange>,
    pub journal: Journal,
    clock: SharedClock,
    /// Pause between the two lookups that must both say "absent".
    lookup_delay: Duration,
    metrics: crate::metrics::Metrics,
    /// Notified whenever a send ends with an unknown outcome (execution then reconciles soon).
    unknown_outcome: Option<Arc<tokio::sync::Notify>>,
}

impl Orders {
    pub fn new(
        exchange: Arc<dyn Exchange>,
        journal: Journal,
        clock: SharedClock,
        lookup_delay: Duration,
        metrics: crate::metrics::Metrics,
    ) -> Self {
        Self { exchange, journal, clock, lookup_delay, metrics, unknown_outcome: None }
    }

    /// Notifies `wanted` whenever a send's outcome is unknown.
    pub fn on_unknown_outcome(mut self, wanted: Arc<tokio::sync::Notify>) -> Self {
        self.unknown_outcome = Some(wanted);
        self
    }

    /// Journals a failed send's outcome, and asks for a reconciliation when it is unknown.
    fn settle_failed(&self, seq: u64, outcome: Outcome) -> Result<(), StoreError> {
        if let (Outcome::Unknown { .. }, Some(wanted)) = (&outcome, &self.unknown_outcome) {
            wanted.notify_one();
        }
        self.journal.settle(seq, outcome, &self.now(), |_| Ok(()))?;
        Ok(())
    }

    fn now(&self) -> String {
        self.clock.now().to_rfc3339()
    }

    fn entry(
        &self,
        id: &str,
        kind: OrderKind,
        symbol: &str,
        cause: &str,
        request: serde_json::Value,
        plan: Option<&EntryPlan>,
    ) -> JournalEntry {
        let now = self.now();
        JournalEntry {
            client_order_id: id.to_string(),
            kind,
            symbol: symbol.to_string(),
            cause: cause.to_string(),
            request,
            plan: plan.cloned(),
            outcome: Outcome::Sending,
            created_at: now.clone(),
            updated_at: now,
            acting: crate::audit::Acting::current(),
        }
    }

    /// Places `order` unless the journal shows it was already placed (then that order is
    /// returned). `on_placed` writes in the transaction that records the fill.
    pub async fn place(
        &self,
        order: &NewOrder,
        kind: OrderKind,
        cause: &str,
        plan: Option<&EntryPlan>,
        on_placed: impl FnOnce(&Writer, &Order) -> Result<(), StoreError>,
    ) -> Result<Order, SendError> {
        let id = order.client_order_id.as_str();
        if let Some((seq, earlier)) = self.journal.latest(id)? {
            match earlier.outcome {
                Outcome::Placed { id: order_id, .. } => {
                    return self.order_with_fills(&order.symbol, &OrderRef::Id(order_id)).await;
                }
                Outcome::Sending | Outcome::Unknown { .. } => {
                    match self.look_up_order(&earlier).await {
                        Lookup::Found(found) => {
                            let found = self.with_fills(found).await;
                            self.settle_order(seq, &found, on_placed)?;
                            return Ok(found);
                        }
                        Lookup::Absent => {
                            self.journal.settle(seq, Outcome::Absent, &self.now(), |_| Ok(()))?;
                        }
                        Lookup::CannotTell(detail) => {
                            tracing::warn!(client_order_id = id, %detail, "earlier attempt still unsettled");
                            return Err(SendError::Unsettled(JournalError::Unsettled {
                                client_order_id: id.to_string(),
                            }));
                        }
                    }
                }
                Outcome::Rejected { .. } | Outcome::Absent => {}
            }
        }
        let request = order_request(order);
        let seq = self
            .journal
            .begin(&self.entry(id, kind, &order.symbol, cause, request, plan))
            .map_err(SendError::Unsettled)?;
        match self.exchange.place_order(order).await {
            Ok(placed) => {
                // Exchange B's answer carries no fills: the fee (in the coin, for a buy) is
                // read before the trade is sized from it.
                let placed = self.with_fills(placed).await;
                self.metrics.order(self.exchange.name().as_str(), kind, Ok(()));
                self.settle_order(seq, &placed, on_placed)?;
                Ok(placed)
            }
            Err(err) => {
                let outcome = outcome_of_error(&err);
                self.metrics.order(self.exchange.name().as_str(), kind, Err(&outcome));
                self.settle_failed(seq, outcome)?;
                Err(SendError::Exchange(err))
            }
        }
    }

    /// Journals the level of a stop the service watches (kind `watched_stop`): nothing is sent,
    /// the entry is settled at once and records the stop for the trade's history.
    pub fn note_watched_stop(
        &self,
        id: &str,
        symbol: &str,
        stop: Decimal,
        tp_order_id: Option<i64>,
        cause: &str,
    ) -> Result<(), SendError> {
        let request = serde_json::json!({"type": "WATCHED_STOP", "stop_price": stop});
        let entry = self.entry(id, OrderKind::WatchedStop, symbol, cause, request, None);
        let seq = self.journal.begin(&entry).map_err(SendError::Unsettled)?;
        let outcome = placed_outcome(tp_order_id.unwrap_or_default(), "WATCHED");
        self.journal.settle(seq, outcome, &self.now(), |_| Ok(()))?;
        Ok(())
    }

    /// Places an OCO list the same way (looked up by its list client order id).
    pub async fn place_oco(
        &self,
        oco: &NewOco,
        cause: &str,
        commit: Commit,
        on_placed: impl FnOnce(&Writer, &OrderList) -> Result<(), StoreError>,
    ) -> Result<OrderList, SendError> {
        // Refused before anything is journaled where the exchange has no lists.
        let lists = lists_of(self.exchange.as_ref()).map_err(SendError::Exchange)?;
        let id = oco.list_client_order_id.as_str();
        if let Some((seq, earlier)) = self.journal.latest(id)? {
            match earlier.outcome {
                Outcome::Placed { id: list_id, .. } => {
                    return self.list_with_legs(&OrderRef::Id(list_id)).await;
                }
                Outcome::Sending | Outcome::Unknown { .. } => match self.look_up_list(id).await {
                    Lookup::Found(list) => {
                        self.settle_list(seq, &list, on_placed)?;
                        return Ok(list);
                    }
                    Lookup::Absent => {
                        self.journal.settle(seq, Outcome::Absent, &self.now(), |_| Ok(()))?;
                    }
                    Lookup::CannotTell(_) => {
                        return Err(SendError::Unsettled(JournalError::Unsettled {
                            client_order_id: id.to_string(),
                        }));
                    }
                },
                Outcome::Rejected { .. } | Outcome::Absent => {}
            }
        }
        let request = serde_json::json!({
            "type": "OCO", "side": oco.side, "quantity": oco.qty, "take_profit": oco.take_profit,
            "stop_price": oco.stop_price, "stop_limit_price": oco.stop_limit_price,
        });
        let entry = self.entry(id, OrderKind::Oco, &oco.symbol, cause, request, None);
        let seq = match commit {
            Commit::Durable => self.journal.begin(&entry),
            Commit::Recoverable => self.journal.begin_recoverable(&entry),
        }
        .map_err(SendError::Unsettled)?;
        match lists.place_oco(oco).await {
            Ok(list) => {
                self.metrics.order(self.exchange.name().as_str(), OrderKind::Oco, Ok(()));
                self.settle_list(seq, &list, on_placed)?;
                Ok(list)
            }
            Err(err) => {
                let outcome = outcome_of_error(&err);
                self.metrics.order(self.exchange.name().as_str(), OrderKind::Oco, Err(&outcome));
                self.settle_failed(seq, outcome)?;
                Err(SendError::Exchange(err))
            }
        }
    }

    /// Settles an unsettled journal entry by lookup (reconciliation). `Ok(None)` when the
    /// exchange still cannot tell.
    pub async fn settle_by_lookup(
        &self,
        seq: u64,
        entry: &JournalEntry,
    ) -> Result<Option<Settled>, StoreError> {
        let now = self.now();
        let settled = match entry.kind {
            OrderKind::Oco => match self.look_up_list(&entry.client_order_id).await {
                Lookup::Found(list) => Settled::List(list),
                Lookup::Absent => Settled::Absent,
                Lookup::CannotTell(_) => return Ok(None),
            },
            // A note that was never sent: nothing to look up.
            OrderKind::WatchedStop => Settled::Absent,
            OrderKind::Entry | OrderKind::Exit | OrderKind::TakeProfit => {
                match self.look_up_order(entry).await {
                    Lookup::Found(order) => Settled::Order(self.with_fills(order).await),
                    Lookup::Absent => Settled::Absent,
                    Lookup::CannotTell(_) => return Ok(None),
                }
            }
        };
        let outcome = match &settled {
            Settled::Order(o) => placed_outcome(o.order_id, &format!("{:?}", o.status)),
            Settled::List(l) => placed_outcome(l.order_list_id, list_status(l)),
            Settled::Absent => Outcome::Absent,
        };
        self.journal.settle(seq, outcome, &now, |_| Ok(()))?;
        Ok(Some(settled))
    }

    fn settle_order(
        &self,
        seq: u64,
        order: &Order,
        on_placed: impl FnOnce(&Writer, &Order) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let outcome = placed_outcome(order.order_id, &format!("{:?}", order.status));
        self.journal.settle(seq, outcome, &self.now(), |w| on_placed(w, order))?;
        Ok(())
    }

    fn settle_list(
        &self,
        seq: u64,
        list: &OrderList,
        on_placed: impl FnOnce(&Writer, &OrderList) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let outcome = placed_outcome(list.order_list_id, list_status(list));
        self.journal.settle(seq, outcome, &self.now(), |w| on_placed(w, list))?;
        Ok(())
    }

    /// Looks the order of a journal entry up by client order id. Absent only when two lookups
    /// a moment apart both say so (the exchange may still be processing it) **and** the
    /// account's trades since the entry was written show nothing of it
    /// ([`lookup::trades_since`]): a trade by this order is the order found; one that cannot
    /// be attributed means the exchange cannot tell, and nothing is sent again.
    async fn look_up_order(&self, entry: &JournalEntry) -> Lookup<Order> {
        let id = OrderRef::Client(entry.client_order_id.clone());
        match self.look_up(|| self.exchange.order(&entry.symbol, &id)).await {
            Lookup::Absent => {}
            other => return other,
        }
        let side = serde_json::from_value::<Side>(entry.request["side"].clone()).ok();
        let now = self.clock.now_ms();
        let since = match lookup::exchange_time_of(&*self.exchange, &entry.created_at, now).await {
            Ok(since) => since,
            Err(why) => return Lookup::CannotTell(why),
        };
        let evidence = lookup::trades_since(
            &*self.exchange,
            &entry.symbol,
            side,
            &entry.client_order_id,
            since,
        )
        .await;
        match evidence {
            TradeEvidence::Clear => Lookup::Absent,
            TradeEvidence::Ours(order) => Lookup::Found(order),
            TradeEvidence::Doubt(why) => Lookup::CannotTell(why),
        }
    }

    /// The list with this client order id at the exchange, with its legs: `None` when two
    /// lookups a moment apart both say it does not exist, `Err` when the exchange cannot tell.
    pub(crate) async fn find_list(&self, client_id: &str) -> Result<Option<OrderList>, String> {
        match self.look_up_list(client_id).await {
            Lookup::Found(list) => Ok(Some(list)),
            Lookup::Absent => Ok(None),
            Lookup::CannotTell(why) => Err(why),
        }
    }

    async fn look_up_list(&self, client_id: &str) -> Lookup<OrderList> {
        // No list can exist at an exchange that has none.
        let Some(lists) = self.exchange.order_lists() else { return Lookup::Absent };
        let id = OrderRef::Client(client_id.to_string());
        match self.look_up(|| lists.order_list(&id)).await {
            Lookup::Found(list) => match self.with_legs(list).await {
                Ok(list) => Lookup::Found(list),
                Err(e) => Lookup::CannotTell(e.to_string()),
            },
            other => other,
        }
    }

    async fn look_up<T, F, Fut>(&self, query: F) -> Lookup<T>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, ExchangeError>>,
    {
        let mut absent = 0;
        for attempt in 0..4u32 {
            if attempt > 0 {
                tokio::time::sleep(self.lookup_delay * attempt).await;
            }
            match query().await {
                Ok(found) => return Lookup::Found(found),
                Err(ExchangeError::UnknownOrder { .. }) => {
                    absent += 1;
                    if absent == 2 {
                        return Lookup::Absent;
                    }
                }
                Err(e) if attempt == 3 => return Lookup::CannotTell(e.to_string()),
                Err(_) => {}
            }
        }
        Lookup::CannotTell("the exchange did not answer the lookups".into())
    }

    /// An order with its fills (queries carry none; the fee is in the fills).
    pub async fn order_with_fills(&self, symbol: &str, id: &OrderRef) -> Result<Order, SendError> {
        let order = self.exchange.order(symbol, id).await.map_err(SendError::Exchange)?;
        Ok(self.with_fills(order).await)
    }

    /// The order with its fills read from the account's trades when its answer had none (the
    /// fee is in them: on exchange B a buy's fee is taken in the coin, and a trade sized
    /// without it could not be protected). Read up to three times; a trade sized without its
    /// fee is corrected by reconciliation against the holdings.
    async fn with_fills(&self, mut order: Order) -> Order {
        if order.executed_qty.0.is_zero() || !order.fills.is_empty() {
            return order;
        }
        for attempt in 0..3u32 {
            // Not even a zero sleep on the first read: tokio rounds it up to the timer's next
            // millisecond, which cost a backtest about 1 ms per order (issue 42's benchmark run).
            if attempt > 0 {
                tokio::time::sleep(self.lookup_delay * attempt).await;
            }
            match self.exchange.my_trades(&order.symbol, Some(order.order_id)).await {
                Ok(trades) => {
                    order.fills = trades.into_iter().map(Fill::from).collect();
                    break;
                }
                Err(e) => tracing::warn!(order_id = order.order_id, %e, "fills unreadable"),
            }
        }
        order
    }

    /// An order list with its leg reports.
    pub async fn list_with_legs(&self, id: &OrderRef) -> Result<OrderList, SendError> {
        let lists = lists_of(self.exchange.as_ref()).map_err(SendError::Exchange)?;
        let list = lists.order_list(id).await.map_err(SendError::Exchange)?;
        self.with_legs(list).await.map_err(SendError::Exchange)
    }

    async fn with_legs(&self, mut list: OrderList) -> Result<OrderList, ExchangeError> {
        if list.orders.len() < list.legs.len() {
            list.orders.clear();
            for (id, _) in list.legs.clone() {
                list.orders.push(self.exchange.order(&list.symbol, &OrderRef::Id(id)).await?);
            }
        }
        Ok(list)
    }

    /// Waits until a MARKET order is final (FILLED, or EXPIRED with what the book gave).
    pub async fn await_final(&self, order: Order, timeout: Duration) -> Result<Order, SendError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut order = order;
        while matches!(
            order.status,
            OrderStatus::New | OrderStatus::PendingNew | OrderStatus::PartiallyFilled
        ) {
            if tokio::time::Instant::now() >= deadline {
                return Err(SendError::Exchange(ExchangeError::Unknown {
                    detail: format!(
                        "order {} still {:?} after {} ms",
                        order.client_order_id,
                        order.status,
                        timeout.as_millis()
                    ),
                }));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            order = self.order_with_fills(&order.symbol, &OrderRef::Id(order.order_id)).await?;
        }
        Ok(order)
    }
}

/// What a lookup settled an unsettled journal entry to.
pub enum Settled {
    Order(Order),
    List(OrderList),
    Absent,
}

fn placed_outcome(id: i64, status: &str) -> Outcome {
    Outcome::Placed { id, status: status.to_string() }
}

fn list_status(list: &OrderList) -> &'static str {
    if list.executing { "EXECUTING" } else { "ALL_DONE" }
}

fn outcome_of_error(err: &ExchangeError) -> Outcome {
    if err.is_unknown_outcome() {
        Outcome::Unknown { detail: err.to_string() }
    } else {
        Outcome::Rejected { error: err.to_string() }
    }
}

fn order_request(o: &NewOrder) -> serde_json::Value {
    serde_json::json!({
        "side": o.side, "type": o.order_type, "quantity": o.qty, "quote_quantity": o.quote_qty,
        "price": o.price, "stop_price": o.stop_price, "time_in_force": o.time_in_force,
    })
}
