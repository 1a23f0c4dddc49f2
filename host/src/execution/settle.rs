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
use super::protector::{OpenProtection, ends_protection, protection_gone};
use super::trade::{CloseReason, ClosedTrade, ClosedTradeView, ProtectionState, Trade};
use super::{Execution, ExecutionError};
use crate::exchange::feed::OrderUpdate;
use crate::exchange::{Order, open_lists};
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
        let (tracked_lists, with_take_profit) = OpenProtection::needed(&trades);
        let with_list = lists == ListRead::Always || tracked_lists;
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
                Ok(Some(current)) if current.protection.same_orders(&trade.protection) => current,
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
                        && let ProtectionState::Unprotected { reason } = after.protection.state()
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

    /// The close of `trade` by a protection leg that filled, written with its counters.
    pub(super) async fn record_exit(
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
}
