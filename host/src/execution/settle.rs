//! Settling what the exchange did on its own: a protection leg that filled there (the
//! take-profit or the stop-loss) closes its trade with the leg's real price and pnl net of
//! fees, updates history and counters, and tells the boss; a list that ended without a fill
//! (cancelled outside the service) leaves the position unprotected, and the boss is alerted.
//!
//! [`Execution::ends_protection`] tells from the exchange's pushed order updates (live: its
//! user data stream; in a backtest: the simulator's event log) whether there is anything to
//! settle. The protection run calls [`Execution::settle_exits`] every minute with the exchange's open
//! protection (its open order lists, and its open orders when a trade's take-profit rests
//! alone), fetched once for all trades; close, trailing and reconciliation reach the same
//! [`Execution::settle_finished`] when they find a protection already gone. Settling is
//! idempotent: a trade is settled under its symbol's lock and only while it is still open
//! with the list that was found finished.

use rust_decimal::prelude::ToPrimitive;

use super::book::close_trade_in;
use super::close::closed_by;
use super::trade::{CloseReason, ClosedTrade, ClosedTradeView, Legs, ProtectionState, Trade};
use super::{Execution, ExecutionError};
use crate::exchange::feed::OrderUpdate;
use crate::exchange::{ExchangeError, Order, OrderList, OrderRef, OrderType, open_lists};
use crate::messenger::templates;

/// The exchange's open protection, read once per run: its open order lists (OCO legs) and,
/// when a trade's stop is watched, its open orders (the resting take-profits).
#[derive(Debug, Clone, Default)]
pub struct OpenProtection {
    pub lists: Vec<OrderList>,
    /// `None` when not read (no trade's take-profit rests alone).
    pub orders: Option<Vec<Order>>,
}

/// What one settlement pass found.
#[derive(Debug, Clone, Default)]
pub struct Settled {
    /// Trades a filled leg closed.
    pub closed: Vec<ClosedTrade>,
    /// Trades whose protection ended without a fill: now unprotected (the boss was alerted).
    pub unprotected: Vec<String>,
    /// Trades that could not be checked, and why (they are checked again next run).
    pub errors: Vec<String>,
}

impl Settled {
    pub fn closed_views(&self) -> Vec<ClosedTradeView> {
        self.closed.iter().map(ClosedTrade::view).collect()
    }
}

/// Whether one of `updates` (what the exchange pushed) ends one of the protection orders of
/// `trades` (a leg filled, cancelled or expired): only then is there an exit to settle.
pub fn ends_protection(trades: &[Trade], updates: &[OrderUpdate]) -> bool {
    updates.iter().filter(|u| !u.status.is_open()).any(|update| {
        trades.iter().filter(|t| t.symbol == update.symbol).any(|t| {
            t.legs.as_ref().is_some_and(|legs| {
                update.list_id.is_some() && legs.list_id() == update.list_id
                    || legs.take_profit_order_id() == Some(update.order_id)
                    || legs.stop_order_id() == Some(update.order_id)
            })
        })
    })
}

/// When [`Execution::open_protection`] reads the exchange's open order lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListRead {
    /// Only when an open trade has an OCO: the protection run, every minute, spends no weight
    /// on lists nothing of ours can be in.
    WhenTracked,
    /// Always: the health check also looks for lists that belong to no trade, which exist
    /// precisely when the store tracks none.
    Always,
}

impl Execution {
    /// [`ends_protection`] of the open trades, read only when an update ended an order (a
    /// store that cannot be read answers true: settling reads it again and reports).
    pub fn ends_protection(&self, updates: &[OrderUpdate]) -> bool {
        if updates.iter().all(|u| u.status.is_open()) {
            return false;
        }
        match self.inner.book.open_trades() {
            Ok(trades) => ends_protection(&trades, updates),
            Err(_) => true,
        }
    }

    /// Reads the exchange's open protection of the open trades: one request for the order
    /// lists when a trade has an OCO (or `lists` says always), one for the open orders when a
    /// trade has a resting take-profit of its own.
    pub async fn open_protection(&self, lists: ListRead) -> Result<OpenProtection, ExecutionError> {
        let exchange = &self.orders()?.exchange;
        let trades = self.inner.book.open_trades()?;
        let with_list = lists == ListRead::Always
            || trades.iter().any(|t| matches!(t.legs, Some(Legs::Oco { .. })));
        let with_take_profit = trades.iter().any(|t| matches!(t.legs, Some(Legs::Watched { .. })));
        let lists = if with_list { open_lists(exchange.as_ref()).await? } else { Vec::new() };
        let orders = if with_take_profit { Some(exchange.open_orders(None).await?) } else { None };
        Ok(OpenProtection { lists, orders })
    }

    /// Settles every protected open trade whose protection is not among `open` (read once by
    /// the caller with [`Execution::open_protection`]).
    pub async fn settle_exits(&self, open: &OpenProtection) -> Settled {
        let mut settled = Settled::default();
        let trades = match self.inner.book.open_trades() {
            Ok(trades) => trades,
            Err(err) => {
                settled.errors.push(format!("open trades unreadable: {err}"));
                return settled;
            }
        };
        for trade in trades.iter().filter(|t| protection_gone(t, open)) {
            let _symbol = self.lock_symbol(&trade.symbol).await;
            // Re-read under the lock: a close or a stop move may have settled it meanwhile.
            let current = match self.inner.book.open_trade(&trade.symbol) {
                Ok(Some(current)) if current.legs == trade.legs => current,
                Ok(_) => continue,
                Err(err) => {
                    settled.errors.push(format!("{}: {err}", trade.symbol));
                    continue;
                }
            };
            match self.settle_finished(&current, false).await {
                Ok(Some(closed)) => {
                    self.announce_exit(&closed);
                    settled.closed.push(closed);
                }
                Ok(None) => {
                    if let Ok(Some(after)) = self.inner.book.open_trade(&trade.symbol)
                        && let ProtectionState::Unprotected { reason } = after.protection
                    {
                        settled.unprotected.push(format!("{}: {reason}", trade.symbol));
                    }
                }
                Err(err) => settled.errors.push(format!("{}: not settled: {err}", trade.symbol)),
            }
        }
        settled
    }

    /// Tells the boss and the activity log that a protection leg closed a trade (filled at
    /// the exchange, or the watched stop the service executed).
    pub(crate) fn announce_exit(&self, closed: &ClosedTrade) {
        let take_profit = closed.reason == CloseReason::TakeProfit;
        let what = if take_profit { "take-profit hit" } else { "stop-loss hit" };
        let pnl = closed.pnl.round_dp(2);
        let status = if closed.pnl.is_sign_negative() { "error" } else { "ok" };
        self.log(
            "finance",
            &format!(
                "{what} {}: sold {} at {}, pnl {pnl}",
                closed.trade.symbol,
                closed.qty_sold.normalize(),
                closed.exit_px.normalize()
            ),
            status,
        );
        tracing::info!(symbol = %closed.trade.symbol, %pnl, what, "exit filled at the exchange");
        self.notify(
            templates::exit_filled(&templates::ExitFilled {
                symbol: closed.trade.symbol.clone(),
                take_profit,
                size: closed.qty_sold.normalize().to_string(),
                entry_px: closed.trade.entry_px.normalize().to_string(),
                exit_px: closed.exit_px.normalize().to_string(),
                pnl: format!("{:.2}", pnl.to_f64().unwrap_or(0.0)),
                currency: crate::exchange::account_currency(&self.inner.config).to_string(),
                bot: closed.trade.bot.clone(),
            }),
            what,
        );
    }

    /// For a trade whose protection finished on the exchange: records the close at the
    /// filled leg's price. `None` when the protection is still working, or nothing filled
    /// (see [`Execution::settle_finished_list`] and [`Execution::settle_finished_take_profit`]).
    pub(crate) async fn settle_finished(
        &self,
        trade: &Trade,
        closing: bool,
    ) -> Result<Option<ClosedTrade>, ExecutionError> {
        match &trade.legs {
            Some(Legs::Oco { list_id, .. }) => {
                self.settle_finished_list(trade, *list_id, closing).await
            }
            Some(Legs::Watched { tp_order_id }) => {
                self.settle_finished_take_profit(trade, *tp_order_id, closing).await
            }
            None => Ok(None),
        }
    }

    /// A watched trade's take-profit that is no longer open: filled, the trade closes at its
    /// price; ended without a fill (cancelled outside the service), the trade is marked
    /// unprotected — the service still watches its stop — unless it is being closed anyway.
    async fn settle_finished_take_profit(
        &self,
        trade: &Trade,
        tp_order_id: i64,
        closing: bool,
    ) -> Result<Option<ClosedTrade>, ExecutionError> {
        let orders = self.orders()?;
        let tp = orders
            .order_with_fills(&trade.symbol, &OrderRef::Id(tp_order_id))
            .await
            .map_err(|e| ExecutionError::from_send(e, &tp_order_id.to_string()))?;
        if tp.status.is_open() {
            return Ok(None);
        }
        if tp.executed_qty.0.is_zero() {
            if !closing {
                self.mark_unprotected(
                    trade.clone(),
                    "the take-profit was cancelled on the exchange without a fill; the service \
                     still watches the stop"
                        .into(),
                );
            }
            return Ok(None);
        }
        self.record_exit(trade, &tp, CloseReason::TakeProfit).await
    }

    /// The close of `trade` by a protection leg that filled, written with its counters.
    async fn record_exit(
        &self,
        trade: &Trade,
        leg: &Order,
        reason: CloseReason,
    ) -> Result<Option<ClosedTrade>, ExecutionError> {
        let rules = self.symbol_rules(&trade.symbol).await?;
        let Some(closed) = closed_by(trade, leg, &rules, reason, &self.now_iso()) else {
            return Ok(None);
        };
        let today = self.today();
        self.inner.book.store().write(|w| close_trade_in(w, &closed, today))?;
        Ok(Some(closed))
    }

    /// An OCO list that may have finished: `None` when it is still working, or no leg filled:
    /// either a stop triggered and rests unfilled (a gap; `closing` cancels it so its coin can
    /// be sold), or the list was cancelled outside the service (the trade is then marked
    /// unprotected).
    async fn settle_finished_list(
        &self,
        trade: &Trade,
        list_id: i64,
        closing: bool,
    ) -> Result<Option<ClosedTrade>, ExecutionError> {
        let orders = self.orders()?;
        let list = orders
            .list_with_legs(&OrderRef::Id(list_id))
            .await
            .map_err(|e| ExecutionError::from_send(e, &list_id.to_string()))?;
        if list.executing {
            return Ok(None);
        }
        let Some(leg) = list.orders.iter().find(|o| !o.executed_qty.0.is_zero()) else {
            let resting: Vec<i64> =
                list.orders.iter().filter(|o| o.status.is_open()).map(|o| o.order_id).collect();
            if resting.is_empty() {
                self.mark_unprotected(
                    trade.clone(),
                    "the OCO was cancelled on the exchange without a fill".into(),
                );
            } else if closing {
                // A stop that triggered without filling rests on the book and holds the coin.
                for id in resting {
                    match orders.exchange.cancel_order(&trade.symbol, &OrderRef::Id(id)).await {
                        Ok(_) | Err(ExchangeError::UnknownOrder { .. }) => {}
                        Err(err) => return Err(err.into()),
                    }
                }
            }
            return Ok(None);
        };
        let leg = orders
            .order_with_fills(&trade.symbol, &OrderRef::Id(leg.order_id))
            .await
            .map_err(|e| ExecutionError::from_send(e, &list_id.to_string()))?;
        let reason = if leg.order_type == OrderType::LimitMaker {
            CloseReason::TakeProfit
        } else {
            CloseReason::StopLoss
        };
        self.record_exit(trade, &leg, reason).await
    }
}

/// A protected trade whose protection the exchange no longer has open (a trade's take-profit
/// counts only when the open orders were read).
pub fn protection_gone(trade: &Trade, open: &OpenProtection) -> bool {
    if trade.protection != ProtectionState::Protected {
        return false;
    }
    match &trade.legs {
        Some(Legs::Oco { list_id, .. }) => !open.lists.iter().any(|l| l.order_list_id == *list_id),
        Some(Legs::Watched { tp_order_id }) => open
            .orders
            .as_ref()
            .is_some_and(|orders| !orders.iter().any(|o| o.order_id == *tp_order_id)),
        None => false,
    }
}
