//! A trade's protection behind one face, one component per kind.
//!
//! Where a trade's stop lives is chosen when it opens (`[protection] stop` and the exchange's
//! capability) and never changes:
//! - [`oco`]: one OCO order list on the book — a LIMIT_MAKER take-profit and a STOP_LOSS_LIMIT
//!   stop (exchange A's native bracket). Moving the stop replaces the list; a stop that
//!   triggered without filling is a gap.
//! - [`watched`]: a resting take-profit LIMIT while the service watches the stop and exits at
//!   market when the price crosses it ([`watch`] polls the prices when no stream brings them).
//!
//! What a trade holds is its `TradeProtection` (`execution::trade::protection`, the type's
//! definition): the kind, its orders once placed, and whether they are in place, in one type
//! that cannot name the orders of the other kind, call a trade protected without its orders,
//! or give a watched stop a stop-limit price. Execution and the protection jobs place, cancel,
//! move, settle and reconcile through the face below ([`Execution::place_protection`] and its
//! neighbours) and never branch on the kind: this file is the only place outside the type's
//! definition and the two components that does.

mod oco;
pub mod watch;
mod watched;

use rust_decimal::Decimal;

pub(crate) use oco::protected_by_list;
pub(crate) use watched::protected_by_take_profit;

use super::journal::Commit;
use super::restop::StopMove;
use super::trade::protection::Kind;
use super::trade::{ClosedTrade, Trade};
use super::{Execution, ExecutionError, SendError};
use crate::exchange::feed::OrderUpdate;
use crate::exchange::{ExchangeError, Order, OrderList, SymbolRules};

/// The exchange's open protection, read once per run: its open order lists (OCO legs) and,
/// when a trade's stop is watched, its open orders (the resting take-profits).
#[derive(Debug, Clone, Default)]
pub struct OpenProtection {
    pub lists: Vec<OrderList>,
    /// `None` when not read (no trade's take-profit rests alone).
    pub orders: Option<Vec<Order>>,
}

impl OpenProtection {
    /// Which reads `trades` need: the order lists when one has an OCO, the open orders when
    /// one's take-profit rests alone.
    pub(crate) fn needed(trades: &[Trade]) -> (bool, bool) {
        let lists = trades.iter().any(|t| t.protection.list_id().is_some());
        let orders = trades.iter().any(|t| t.protection.lone_take_profit().is_some());
        (lists, orders)
    }
}

/// Whether one of `updates` (what the exchange pushed) ends one of the protection orders of
/// `trades` (a leg filled, cancelled or expired): only then is there an exit to settle.
pub fn ends_protection(trades: &[Trade], updates: &[OrderUpdate]) -> bool {
    updates.iter().filter(|u| !u.status.is_open()).any(|update| {
        trades.iter().filter(|t| t.symbol == update.symbol).any(|t| t.protection.ended_by(update))
    })
}

/// A protected trade whose protection the exchange no longer has open (a trade's take-profit
/// counts only when the open orders were read).
pub fn protection_gone(trade: &Trade, open: &OpenProtection) -> bool {
    if !trade.protection.is_protected() {
        return false;
    }
    if let Some(list_id) = trade.protection.list_id() {
        return !open.lists.iter().any(|l| l.order_list_id == list_id);
    }
    match (trade.protection.lone_take_profit(), &open.orders) {
        (Some(tp), Some(orders)) => !orders.iter().any(|o| o.order_id == tp),
        _ => false,
    }
}

/// What a price means for a trade's stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceReaction {
    /// Nothing to do.
    Nothing,
    /// The watched stop was crossed: exit at market now.
    ExitAtStop,
    /// The price is past the exchange stop's limit: it may have triggered without filling.
    CheckGap,
    /// The exchange stop is working: the trailing rule may raise it.
    Trail,
}

/// What `price` means for `trade`'s stop.
pub fn price_reaction(trade: &Trade, price: Decimal) -> PriceReaction {
    match trade.protection.kind() {
        Kind::Oco { stop_limit_px, .. } => oco::price_reaction(trade, *stop_limit_px, price),
        Kind::Watched { .. } if watched::stop_crossed(trade, price) => PriceReaction::ExitAtStop,
        Kind::Watched { .. } => PriceReaction::Nothing,
    }
}

impl Execution {
    /// Places `trade`'s protection under `client_id` once (the caller retries): the trade
    /// comes back protected, as stored.
    pub(crate) async fn place_protection(
        &self,
        trade: &Trade,
        client_id: &str,
        cause: &str,
        commit: Commit,
    ) -> Result<Trade, SendError> {
        match trade.protection.kind() {
            Kind::Oco { stop_limit_px, .. } => {
                self.place_oco(trade, *stop_limit_px, client_id, cause, commit).await
            }
            Kind::Watched { .. } => self.place_watched(trade, client_id, cause).await,
        }
    }

    /// Cancels what protects `trade` on the exchange, so its coin is free to sell (nothing to
    /// do before anything was placed). `UnknownOrder` means it had already finished there.
    pub(crate) async fn cancel_protection(&self, trade: &Trade) -> Result<(), ExchangeError> {
        match trade.protection.kind() {
            Kind::Oco { placement, .. } => match placement.legs() {
                Some(legs) => self.cancel_oco(&trade.symbol, legs.list_id).await,
                None => Ok(()),
            },
            Kind::Watched { placement } => match placement.legs() {
                Some(tp) => self.cancel_take_profit(&trade.symbol, *tp).await,
                None => Ok(()),
            },
        }
    }

    /// For a trade whose protection finished on the exchange: records the close at the
    /// filled leg's price. `None` when the protection is still working, or nothing filled
    /// (a stop that triggered without filling; `closing` cancels it so its coin can be sold),
    /// or when the orders ended without a fill (the trade is then marked unprotected, unless
    /// it is being closed anyway).
    pub(crate) async fn settle_finished(
        &self,
        trade: &Trade,
        closing: bool,
    ) -> Result<Option<ClosedTrade>, ExecutionError> {
        match trade.protection.kind() {
            Kind::Oco { placement, .. } => match placement.legs() {
                Some(legs) => self.settle_finished_list(trade, legs.list_id, closing).await,
                None => Ok(None),
            },
            Kind::Watched { placement } => match placement.legs() {
                Some(tp) => self.settle_finished_take_profit(trade, *tp, closing).await,
                None => Ok(None),
            },
        }
    }

    /// Moves the stop of `trade` (protected) to `new_sl`, already checked and on the tick.
    pub(crate) async fn replace_stop(
        &self,
        trade: Trade,
        new_sl: Decimal,
        rules: &SymbolRules,
    ) -> Result<StopMove, ExecutionError> {
        match trade.protection.kind() {
            Kind::Oco { placement, .. } => match placement.legs() {
                Some(legs) => {
                    let list_id = legs.list_id;
                    self.replace_oco(trade, list_id, new_sl, rules).await
                }
                None => Err(not_placed(&trade)),
            },
            Kind::Watched { .. } => self.move_watched_stop(trade, new_sl),
        }
    }

    /// The price, when `trade`'s stop triggered but did not fill because the market gapped
    /// beyond its limit (the position is still open: spec, bracket step 3). `None` otherwise
    /// (a watched stop has no limit to miss).
    pub async fn stop_gap(&self, trade: &Trade) -> Result<Option<Decimal>, ExecutionError> {
        match (trade.protection.stop_order_id(), trade.protection.is_protected()) {
            (Some(sl_order_id), true) => self.oco_stop_gap(trade, sl_order_id).await,
            _ => Ok(None),
        }
    }

    /// Looks up, by its client id, protection of `trade` that may have been placed although
    /// the store does not name it (its journal row did not wait for the disk). `Ok(None)`
    /// when the exchange has none, or the kind leaves nothing to look up; `Err` when the
    /// exchange cannot tell.
    pub(crate) async fn find_placed(&self, trade: &Trade) -> Result<Option<Trade>, String> {
        match (trade.protection.kind(), trade.protection.client_id()) {
            (Kind::Oco { .. }, Some(client_id)) => self.find_oco(trade, client_id).await,
            _ => Ok(None),
        }
    }
}

/// The error of an order call without an exchange client, as the exchange layer words it.
fn no_client(err: ExecutionError) -> ExchangeError {
    ExchangeError::NotConfigured { detail: err.to_string() }
}

fn not_placed(trade: &Trade) -> ExecutionError {
    ExecutionError::Refused(format!("{} has no protection to move", trade.symbol))
}
