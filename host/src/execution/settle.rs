//! Settling what the exchange did on its own: a protection leg that filled there (the
//! take-profit or the stop-loss) closes its trade with the leg's real price and pnl net of
//! fees, updates history and counters, and tells the boss; a list that ended without a fill
//! (cancelled outside the service) leaves the position unprotected, and the boss is alerted.
//!
//! The protection run calls [`Execution::settle_exits`] every minute with the exchange's open
//! order lists, fetched once for all trades; close, trailing and reconciliation reach the same
//! [`Execution::settle_finished_list`] when they find a list already gone. Settling is
//! idempotent: a trade is settled under its symbol's lock and only while it is still open
//! with the list that was found finished.

use std::collections::HashSet;

use rust_decimal::prelude::ToPrimitive;

use super::book::close_trade_in;
use super::close::closed_by;
use super::trade::{CloseReason, ClosedTrade, ClosedTradeView, ProtectionState, Trade};
use super::{Execution, ExecutionError};
use crate::exchange::{ExchangeError, OrderList, OrderRef, OrderType};
use crate::messenger::templates;

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

impl Execution {
    /// Settles every protected open trade whose order list is not among `open_lists` (the
    /// exchange's open order lists, read once by the caller).
    pub async fn settle_exits(&self, open_lists: &[OrderList]) -> Settled {
        let open: HashSet<i64> = open_lists.iter().map(|l| l.order_list_id).collect();
        let mut settled = Settled::default();
        let trades = match self.inner.book.open_trades() {
            Ok(trades) => trades,
            Err(err) => {
                settled.errors.push(format!("open trades unreadable: {err}"));
                return settled;
            }
        };
        for trade in trades.iter().filter(|t| finished(t, &open)) {
            let _symbol = self.lock_symbol(&trade.symbol).await;
            // Re-read under the lock: a close or a stop move may have settled it meanwhile.
            let current = match self.inner.book.open_trade(&trade.symbol) {
                Ok(Some(current)) if current.oco_list_id == trade.oco_list_id => current,
                Ok(_) => continue,
                Err(err) => {
                    settled.errors.push(format!("{}: {err}", trade.symbol));
                    continue;
                }
            };
            match self.settle_finished_list(&current, false).await {
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

    /// Tells the boss and the activity log that a leg filled at the exchange.
    fn announce_exit(&self, closed: &ClosedTrade) {
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
                currency: self.inner.config.market.quote_asset.clone(),
                bot: closed.trade.bot.clone(),
            }),
            what,
        );
    }

    /// For a trade whose OCO list is finished on the exchange: records the close at the filled
    /// leg's price. `None` when the list is still working, or no leg filled: either a stop
    /// triggered and rests unfilled (a gap; `closing` cancels it so its coin can be sold), or
    /// the list was cancelled outside the service (the trade is then marked unprotected).
    pub(crate) async fn settle_finished_list(
        &self,
        trade: &Trade,
        closing: bool,
    ) -> Result<Option<ClosedTrade>, ExecutionError> {
        let orders = self.orders()?;
        let Some(list_id) = trade.oco_list_id else {
            return Ok(None);
        };
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
        let rules = self.symbol_rules(&trade.symbol).await?;
        let now = self.now_iso();
        let Some(closed) = closed_by(trade, &leg, &rules, reason, &now) else {
            return Ok(None);
        };
        let today = self.today();
        self.inner.book.store().write(|w| close_trade_in(w, &closed, today))?;
        Ok(Some(closed))
    }
}

/// A protected trade whose list the exchange no longer has open.
fn finished(trade: &Trade, open: &HashSet<i64>) -> bool {
    trade.protection == ProtectionState::Protected
        && trade.oco_list_id.is_some_and(|id| !open.contains(&id))
}
