//! The OCO component: a trade's take-profit and stop rest on the exchange as one OCO order list
//! (a LIMIT_MAKER take-profit and a STOP_LOSS_LIMIT stop whose limit is the stop × 0.998 on
//! the tick), so the exchange exits by itself, even while the service is down.
//!
//! - Placing journals the list under the trade's protection client id (legs `T` and `S`).
//! - An OCO list cannot be edited on exchange A: moving the stop cancels the list and places a
//!   new one with the same take-profit and the new stop. The position is without a stop only
//!   between those two requests. If the new list cannot be placed (after the usual retries),
//!   protection is restored at the last good levels and the boss is alerted; if even that
//!   fails the trade is marked unprotected (with its own alert).
//! - A list that finished closes its trade at the filled leg's price; one that ended without
//!   a fill leaves the position unprotected.
//! - A stop that triggered but did not fill (the market gapped past its limit) is a gap.

use rust_decimal::Decimal;

use super::{PriceReaction, StopMove, no_client};
use crate::exchange::{
    ExchangeError, NewOco, OrderList, OrderRef, OrderType, Price, Qty, SymbolRules, lists_of,
};
use crate::execution::book::put_trade_in;
use crate::execution::client_id::{ClientOrderId, Purpose};
use crate::execution::journal::Commit;
use crate::execution::sizing::stop_limit_px;
use crate::execution::trade::{CloseReason, ClosedTrade, Direction, Trade};
use crate::execution::{Execution, ExecutionError, SendError};
use crate::messenger::templates;

/// `trade` protected by its placed OCO list.
pub(crate) fn protected_by_list(trade: &Trade, list: &OrderList) -> Trade {
    Trade { protection: trade.protection.clone().protected_by_list(list), ..trade.clone() }
}

/// What a price means for a stop resting on the exchange: past its limit the stop may have
/// triggered without filling (a gap); otherwise the trailing rule may raise it.
pub(super) fn price_reaction(
    trade: &Trade,
    stop_limit_px: Decimal,
    price: Decimal,
) -> PriceReaction {
    let past_limit = match trade.direction {
        Direction::Buy => price < stop_limit_px,
        Direction::Sell => price > stop_limit_px,
    };
    if past_limit { PriceReaction::CheckGap } else { PriceReaction::Trail }
}

/// The OCO list that protects `trade`, with client order id `list_id` (legs `T` and `S`).
fn oco_of(trade: &Trade, stop_limit_px: Decimal, list_id: &str) -> NewOco {
    NewOco {
        symbol: trade.symbol.clone(),
        side: trade.direction.exit_side(),
        qty: Qty(trade.size),
        take_profit: Price(trade.tp_px),
        stop_price: Price(trade.sl_px),
        stop_limit_price: Price(stop_limit_px),
        take_profit_client_order_id: ClientOrderId::leg(list_id, 'T'),
        stop_client_order_id: ClientOrderId::leg(list_id, 'S'),
        list_client_order_id: list_id.to_string(),
    }
}

impl Execution {
    /// Places `trade`'s OCO list under `client_id`; the trade is stored protected in the same
    /// write that settles the list's journal row.
    pub(super) async fn place_oco(
        &self,
        trade: &Trade,
        stop_limit_px: Decimal,
        client_id: &str,
        cause: &str,
        commit: Commit,
    ) -> Result<Trade, SendError> {
        let orders = self.orders().map_err(|e| SendError::Exchange(no_client(e)))?;
        let oco = oco_of(trade, stop_limit_px, client_id);
        let placed = trade.clone();
        orders
            .place_oco(&oco, cause, commit, |w, list| {
                put_trade_in(w, &protected_by_list(&placed, list))
            })
            .await
            .map(|list| protected_by_list(trade, &list))
    }

    pub(super) async fn cancel_oco(&self, symbol: &str, list_id: i64) -> Result<(), ExchangeError> {
        let orders = self.orders().map_err(no_client)?;
        let lists = lists_of(orders.exchange.as_ref())?;
        lists.cancel_order_list(symbol, &OrderRef::Id(list_id)).await.map(|_| ())
    }

    /// An OCO list that may have finished: `None` when it is still working, or no leg filled:
    /// either a stop triggered and rests unfilled (a gap; `closing` cancels it so its coin can
    /// be sold), or the list was cancelled outside the service (the trade is then marked
    /// unprotected).
    pub(super) async fn settle_finished_list(
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

    /// Replaces the OCO list `list_id` of `trade` with one at the same take-profit and the
    /// stop at `new_sl`.
    pub(super) async fn replace_oco(
        &self,
        trade: Trade,
        list_id: i64,
        new_sl: Decimal,
        rules: &SymbolRules,
    ) -> Result<StopMove, ExecutionError> {
        let symbol = trade.symbol.clone();
        match self.cancel_oco(&symbol, list_id).await {
            Ok(()) => {}
            Err(ExchangeError::UnknownOrder { .. }) => {
                return match self.settle_finished(&trade, false).await? {
                    Some(closed) => Ok(StopMove::Closed(closed)),
                    None => Err(ExecutionError::Refused(format!(
                        "{symbol}'s OCO is no longer on the exchange; reconciliation settles it"
                    ))),
                };
            }
            Err(err) => return Err(err.into()),
        }
        let unplaced = self.unplaced(&trade, Purpose::TrailingReplace);
        let moved = Trade {
            sl_px: new_sl,
            protection: unplaced.protection.with_stop_limit(stop_limit_px(
                new_sl,
                trade.direction,
                rules,
            )),
            ..unplaced
        };
        // Stored before the send: a crash now leaves a trade reconciliation protects.
        self.inner.book.put_trade(&moved)?;
        match self.try_protect(moved, Commit::Durable).await {
            Ok(moved) => Ok(StopMove::Moved(moved)),
            Err((_, reason)) => {
                let old = self.unplaced(&trade, Purpose::Reprotect);
                self.inner.book.put_trade(&old)?;
                let restored = self.protect(old, Commit::Durable).await;
                if restored.protection.is_protected() {
                    self.notify(
                        templates::stop_move_failed(&templates::StopMoveFailed {
                            symbol: symbol.clone(),
                            wanted_sl: new_sl.normalize().to_string(),
                            kept_sl: trade.sl_px.normalize().to_string(),
                            reason: reason.clone(),
                        }),
                        "stop move failed",
                    );
                }
                Ok(StopMove::Restored { trade: restored, reason })
            }
        }
    }

    /// The price, when the stop leg `sl_order_id` of `trade` triggered but did not fill
    /// because the market gapped beyond its limit. `None` otherwise.
    pub(super) async fn oco_stop_gap(
        &self,
        trade: &Trade,
        sl_order_id: i64,
    ) -> Result<Option<Decimal>, ExecutionError> {
        let orders = self.orders()?;
        let stop = orders.exchange.order(&trade.symbol, &OrderRef::Id(sl_order_id)).await?;
        let triggered = stop.status.is_open()
            && stop.working
            && matches!(stop.order_type, OrderType::StopLossLimit);
        if !triggered {
            return Ok(None);
        }
        let price = orders.exchange.price(&trade.symbol).await?.0;
        let gapped = match trade.direction {
            Direction::Buy => price < stop.price.0,
            Direction::Sell => price > stop.price.0,
        };
        Ok(gapped.then_some(price))
    }

    /// The list placed under `client_id` for `trade`, as the trade it protects.
    pub(super) async fn find_oco(
        &self,
        trade: &Trade,
        client_id: &str,
    ) -> Result<Option<Trade>, String> {
        let orders = self.orders().map_err(|e| e.to_string())?;
        let list = orders.find_list(client_id).await?;
        Ok(list.map(|list| protected_by_list(trade, &list)))
    }
}
