//! Moving the stop of a protected trade (trailing), and spotting a stop that gapped.
//!
//! An OCO list cannot be edited on exchange A: moving the stop cancels the list and places a
//! new one with the same take-profit and the new stop. The position is without a stop only
//! between those two requests. If the new list cannot be placed (after the usual retries),
//! protection is restored at the last good levels and the boss is alerted; if even that fails
//! the trade is marked unprotected (with its own alert).

use rust_decimal::Decimal;

use super::client_id::{ClientOrderId, Purpose};
use super::journal::Commit;
use super::sizing::stop_limit_px;
use super::trade::{ClosedTrade, Direction, Legs, ProtectionState, Trade};
use super::{Execution, ExecutionError};
use crate::exchange::{ExchangeError, OrderRef, OrderType, lists_of};
use crate::messenger::templates;

/// What moving a stop came to.
#[derive(Debug, Clone)]
pub enum StopMove {
    /// The new OCO is in place with the moved stop.
    Moved(Trade),
    /// The new OCO could not be placed; the old levels protect the position again.
    Restored { trade: Trade, reason: String },
    /// The list had finished before it could be cancelled: a leg filled, the trade is closed.
    Closed(ClosedTrade),
}

impl Execution {
    /// Replaces the OCO of `symbol`'s trade with one at the same take-profit and the stop at
    /// `new_sl` (rounded to the tick away from the price: down for a long, up for a sold
    /// position). Refused when the move would widen the risk or cross the take-profit.
    pub async fn move_stop(
        &self,
        symbol: &str,
        new_sl: Decimal,
    ) -> Result<StopMove, ExecutionError> {
        let orders = self.orders()?.clone();
        let _symbol = self.lock_symbol(symbol).await;
        let trade = self
            .inner
            .book
            .open_trade(symbol)?
            .ok_or_else(|| ExecutionError::NoPosition(symbol.to_string()))?;
        let legs = trade.legs.clone().filter(|_| trade.protection == ProtectionState::Protected);
        let Some(legs) = legs else {
            return Err(ExecutionError::Refused(format!("{symbol} has no protection to move")));
        };
        let rules = self.symbol_rules(symbol).await?;
        let new_sl = match trade.direction {
            Direction::Buy => rules.floor_price(new_sl).0,
            Direction::Sell => rules.ceil_price(new_sl).0,
        };
        let tighter = match trade.direction {
            Direction::Buy => new_sl > trade.sl_px && new_sl < trade.tp_px,
            Direction::Sell => new_sl < trade.sl_px && new_sl > trade.tp_px,
        };
        if !tighter {
            return Err(ExecutionError::Refused(format!(
                "a stop at {new_sl} would not tighten {symbol}'s stop {} below its target {}",
                trade.sl_px.normalize(),
                trade.tp_px.normalize()
            )));
        }
        let list_id = match legs {
            Legs::Oco { list_id, .. } => list_id,
            Legs::Watched { .. } => {
                // Nothing on the exchange to replace: the service watches the new level.
                let moved = Trade { sl_px: new_sl, ..trade };
                self.inner.book.put_trade(&moved)?;
                self.journal_watched_stop(&moved, &format!("trailing stop {symbol}"))
                    .map_err(|e| ExecutionError::from_send(e, "watched stop"))?;
                return Ok(StopMove::Moved(moved));
            }
        };
        let lists = lists_of(orders.exchange.as_ref())?;
        match lists.cancel_order_list(symbol, &OrderRef::Id(list_id)).await {
            Ok(_) => {}
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
        let moved = Trade {
            sl_px: new_sl,
            sl_limit_px: stop_limit_px(new_sl, trade.direction, &rules),
            ..self.unplaced(&trade, Purpose::TrailingReplace)
        };
        // Stored before the send: a crash now leaves a trade reconciliation protects.
        self.inner.book.put_trade(&moved)?;
        match self.try_protect(moved, Commit::Durable).await {
            Ok(moved) => Ok(StopMove::Moved(moved)),
            Err((_, reason)) => {
                let old = self.unplaced(&trade, Purpose::Reprotect);
                self.inner.book.put_trade(&old)?;
                let restored = self.protect(old, Commit::Durable).await;
                if restored.protection == ProtectionState::Protected {
                    self.notify(
                        templates::stop_move_failed(&templates::StopMoveFailed {
                            symbol: symbol.to_string(),
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

    /// `trade` without protection on the exchange, with a fresh protection client id for
    /// `purpose`.
    fn unplaced(&self, trade: &Trade, purpose: Purpose) -> Trade {
        Trade {
            protection_client_id: Some(
                ClientOrderId::fresh(purpose, self.inner.clock.now_ms(), &trade.symbol)
                    .into_string(),
            ),
            legs: None,
            protection: ProtectionState::Pending,
            ..trade.clone()
        }
    }

    /// The price, when `trade`'s stop triggered but did not fill because the market gapped
    /// beyond its limit (the position is still open: spec, bracket step 3). `None` otherwise.
    pub async fn stop_gap(&self, trade: &Trade) -> Result<Option<Decimal>, ExecutionError> {
        let orders = self.orders()?;
        let sl_oid = trade.legs.as_ref().and_then(Legs::stop_order_id);
        let (Some(sl_oid), ProtectionState::Protected) = (sl_oid, &trade.protection) else {
            return Ok(None);
        };
        let stop = orders.exchange.order(&trade.symbol, &OrderRef::Id(sl_oid)).await?;
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
}
