//! The stop the service watches (`[protection] stop = "service"`, and every trade on an
//! exchange without exchange-side stops): only the take-profit rests on the exchange, as a
//! LIMIT for the trade's size; the stop is a level in the store. Setting or moving it sends
//! nothing — it is journaled (kind `watched_stop`) so the trade's stop history reads the same
//! as with an OCO. When the price crosses it ([`super::watch`], at least once a second), the
//! take-profit is cancelled and the coin sold at market, with one client order id per trade's
//! protection (its own id plus `X`): a second trigger, a restart or an ambiguous answer finds
//! that exit in the journal and looks it up instead of selling again.

use rust_decimal::Decimal;

use super::{StopMove, no_client};
use crate::exchange::{ExchangeError, NewOrder, Order, OrderRef, Price, Qty};
use crate::execution::book::put_trade_in;
use crate::execution::client_id::{ClientOrderId, Purpose};
use crate::execution::close::Exit;
use crate::execution::journal::OrderKind;
use crate::execution::trade::{CloseReason, ClosedTrade, Direction, Trade};
use crate::execution::{Execution, ExecutionError, SendError};

/// True when `price` has crossed `trade`'s stop: at or below it for a long, at or above it for
/// a sold position.
pub fn stop_crossed(trade: &Trade, price: Decimal) -> bool {
    if trade.sl_px <= Decimal::ZERO || price <= Decimal::ZERO {
        return false;
    }
    match trade.direction {
        Direction::Buy => price <= trade.sl_px,
        Direction::Sell => price >= trade.sl_px,
    }
}

/// `trade` protected by its resting take-profit `tp`, the stop watched.
pub(crate) fn protected_by_take_profit(trade: &Trade, tp: &Order) -> Trade {
    Trade { protection: trade.protection.clone().placed_take_profit(tp.order_id), ..trade.clone() }
}

/// The client order id of the market exit at a watched stop: one per trade's protection.
fn exit_id(trade: &Trade, now_ms: i64) -> String {
    trade.protection.client_id().and_then(|id| ClientOrderId::leg(id, 'X')).unwrap_or_else(|| {
        ClientOrderId::fresh(Purpose::WatchedExit, now_ms, &trade.symbol).into_string()
    })
}

impl Execution {
    /// Places the resting take-profit of a watched trade (client id `client_id`) and journals
    /// its stop; the trade comes back protected.
    pub(super) async fn place_watched(
        &self,
        trade: &Trade,
        client_id: &str,
        cause: &str,
    ) -> Result<Trade, SendError> {
        let orders = self.orders().map_err(|e| SendError::Exchange(no_client(e)))?;
        let order = NewOrder::limit(
            &trade.symbol,
            trade.direction.exit_side(),
            Qty(trade.size),
            Price(trade.tp_px),
            client_id,
        );
        let placed = trade.clone();
        let tp = orders
            .place(&order, OrderKind::TakeProfit, cause, None, |w, tp| {
                put_trade_in(w, &protected_by_take_profit(&placed, tp))
            })
            .await?;
        let trade = protected_by_take_profit(trade, &tp);
        self.journal_watched_stop(&trade, cause)?;
        Ok(trade)
    }

    /// Records the level of a watched stop in the journal (nothing is sent).
    fn journal_watched_stop(&self, trade: &Trade, cause: &str) -> Result<(), SendError> {
        let orders = self.orders().map_err(|e| SendError::Exchange(no_client(e)))?;
        let now = self.inner.clock.now_ms();
        let id = ClientOrderId::fresh(Purpose::WatchedStop, now, &trade.symbol);
        let tp_order_id = trade.protection.take_profit_order_id();
        orders.note_watched_stop(id.as_str(), &trade.symbol, trade.sl_px, tp_order_id, cause)?;
        Ok(())
    }

    /// Exits `symbol`'s trade at market because the price `price` crossed its watched stop.
    /// `None` when there is nothing to do (no such trade any more, its stop is not watched, or
    /// the price no longer crosses it). The boss hears "Stop-loss hit".
    pub async fn exit_at_watched_stop(
        &self,
        symbol: &str,
        price: Decimal,
    ) -> Result<Option<ClosedTrade>, ExecutionError> {
        let Some(trade) = self.inner.book.open_trade(symbol)? else {
            return Ok(None);
        };
        if !trade.protection.stop_watched() || !stop_crossed(&trade, price) {
            return Ok(None);
        }
        let exit = Exit {
            client_order_id: exit_id(&trade, self.inner.clock.now_ms()),
            reason: CloseReason::StopLoss,
            cause: format!(
                "watched stop {} of {symbol} crossed at {}",
                trade.sl_px.normalize(),
                price.normalize()
            ),
        };
        tracing::warn!(%symbol, stop = %trade.sl_px, %price, "watched stop crossed: exiting at market");
        let closed = self.exit_position(symbol, exit).await?;
        self.announce_exit(&closed);
        Ok(Some(closed))
    }

    /// Moves a watched stop to `new_sl`: nothing on the exchange to replace, the service
    /// watches the new level (journaled like a placed stop).
    pub(super) fn move_watched_stop(
        &self,
        trade: Trade,
        new_sl: Decimal,
    ) -> Result<StopMove, ExecutionError> {
        let moved = Trade { sl_px: new_sl, ..trade };
        self.inner.book.put_trade(&moved)?;
        self.journal_watched_stop(&moved, &format!("trailing stop {}", moved.symbol))
            .map_err(|e| ExecutionError::from_send(e, "watched stop"))?;
        Ok(StopMove::Moved(moved))
    }

    pub(super) async fn cancel_take_profit(
        &self,
        symbol: &str,
        tp_order_id: i64,
    ) -> Result<(), ExchangeError> {
        let orders = self.orders().map_err(no_client)?;
        orders.exchange.cancel_order(symbol, &OrderRef::Id(tp_order_id)).await.map(|_| ())
    }

    /// A watched trade's take-profit that is no longer open: filled, the trade closes at its
    /// price; ended without a fill (cancelled outside the service), the trade is marked
    /// unprotected — the service still watches its stop — unless it is being closed anyway.
    pub(super) async fn settle_finished_take_profit(
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StopPlacement;
    use crate::execution::trade::TradeProtection;
    use rust_decimal_macros::dec;

    fn trade(direction: Direction, sl: Decimal) -> Trade {
        let pending =
            TradeProtection::pending(StopPlacement::Service, sl, Some("SO_abc_ETHUSDT".into()));
        Trade { sl_px: sl, protection: pending.placed_take_profit(9), ..Trade::example(direction) }
    }

    #[test]
    fn a_long_stop_is_crossed_at_or_below_it_and_a_sold_positions_at_or_above() {
        let long = trade(Direction::Buy, dec!(2940));
        assert!(!stop_crossed(&long, dec!(2940.01)));
        assert!(stop_crossed(&long, dec!(2940)));
        assert!(stop_crossed(&long, dec!(2500)), "a gap exits too: there is no limit to miss");
        let short = trade(Direction::Sell, dec!(3060));
        assert!(!stop_crossed(&short, dec!(3059)));
        assert!(stop_crossed(&short, dec!(3060)));
        assert!(!stop_crossed(&trade(Direction::Buy, Decimal::ZERO), dec!(1)), "no stop set");
    }

    #[test]
    fn the_exit_id_is_the_protections_own_so_a_second_trigger_finds_it() {
        let t = trade(Direction::Buy, dec!(2940));
        assert_eq!(exit_id(&t, 1), "SO_abc_ETHUSDTX");
        assert_eq!(exit_id(&t, 2), exit_id(&t, 1));
    }
}
