//! Moving the stop of a protected trade (trailing): the new level is put on the tick and
//! checked here (it may only tighten the stop, never cross the take-profit); how the stop
//! moves is the protection's own (`protector`: an OCO is replaced, a watched stop is only
//! journaled).

use rust_decimal::Decimal;

use super::client_id::{ClientOrderId, Purpose};
use super::trade::{ClosedTrade, Direction, Trade};
use super::{Execution, ExecutionError};

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
    /// Moves the stop of `symbol`'s trade to `new_sl` (rounded to the tick away from the price:
    /// down for a long, up for a sold position), keeping its take-profit. Refused when the
    /// move would widen the risk or cross the take-profit.
    pub async fn move_stop(
        &self,
        symbol: &str,
        new_sl: Decimal,
    ) -> Result<StopMove, ExecutionError> {
        let _symbol = self.lock_symbol(symbol).await;
        let trade = self
            .inner
            .book
            .open_trade(symbol)?
            .ok_or_else(|| ExecutionError::NoPosition(symbol.to_string()))?;
        if !trade.protection.is_protected() {
            return Err(ExecutionError::Refused(format!("{symbol} has no protection to move")));
        }
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
        self.replace_stop(trade, new_sl, &rules).await
    }

    /// `trade` without protection on the exchange, with a fresh protection client id for
    /// `purpose`.
    pub(super) fn unplaced(&self, trade: &Trade, purpose: Purpose) -> Trade {
        let id = ClientOrderId::fresh(purpose, self.inner.clock.now_ms(), &trade.symbol);
        Trade { protection: trade.protection.clone().unplaced(id.into_string()), ..trade.clone() }
    }
}
