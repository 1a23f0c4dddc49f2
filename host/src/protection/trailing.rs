//! The protection run, every minute (or on `GET /api/trailing`): first every exit the exchange
//! made on its own is settled (one read of the open order lists for all trades: a filled leg
//! closes its trade, a list gone without a fill marks it unprotected); then, for each trade
//! still open, a stop that triggered without filling is reported
//! and, with `[protection] gap_exit = "market"`, closed at market; otherwise, once the profit
//! reaches `trailing_trigger_pct`, the stop follows the price at `trailing_distance_pct`.
//!
//! The rule only ever tightens: a long's stop only moves up, a sold position's only down, and
//! never past the take-profit. Prices go to the tick away from the market.

use rust_decimal::Decimal;
use serde::Serialize;
use utoipa::ToSchema;

use crate::config::{GapExit, StrategyKeys};
use crate::exchange::Exchange;
use crate::execution::{ClosedTradeView, Direction, Execution, ListRead, StopMove, Trade};
use crate::messenger::templates;
use crate::money::json_number;

/// The trailing keys of a strategy's section (`[strategy.<bot>]`, else MR Combined's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrailSettings {
    pub enabled: bool,
    pub trigger_pct: Decimal,
    pub distance_pct: Decimal,
}

impl TrailSettings {
    /// The trailing keys of a strategy's effective config (`trailing_enabled`,
    /// `trailing_trigger_pct`, `trailing_distance_pct`).
    pub fn of(keys: &StrategyKeys) -> Self {
        Self {
            enabled: keys.trailing_enabled,
            trigger_pct: keys.trailing_trigger_pct,
            distance_pct: keys.trailing_distance_pct,
        }
    }
}

/// The stop the rule wants for `trade` at `price` and the profit in percent, or `None` when
/// the profit is below the trigger or the stop would not tighten.
pub fn wanted_stop(trade: &Trade, price: Decimal, s: &TrailSettings) -> Option<(Decimal, Decimal)> {
    if !s.enabled || trade.entry_px <= Decimal::ZERO || price <= Decimal::ZERO {
        return None;
    }
    let hundred = Decimal::ONE_HUNDRED;
    let (profit_pct, stop) = match trade.direction {
        Direction::Buy => (
            (price - trade.entry_px) / trade.entry_px * hundred,
            price * (Decimal::ONE - s.distance_pct / hundred),
        ),
        Direction::Sell => (
            (trade.entry_px - price) / trade.entry_px * hundred,
            price * (Decimal::ONE + s.distance_pct / hundred),
        ),
    };
    let tighter = match trade.direction {
        Direction::Buy => stop > trade.sl_px && stop < trade.tp_px,
        Direction::Sell => stop < trade.sl_px && stop > trade.tp_px,
    };
    (profit_pct >= s.trigger_pct && tighter).then_some((stop, profit_pct.round_dp(2)))
}

/// One raised stop.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TrailUpdate {
    pub symbol: String,
    pub old_sl: f64,
    pub new_sl: f64,
    pub profit_pct: f64,
}

/// A stop that triggered without filling.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GapRow {
    pub symbol: String,
    pub stop_px: f64,
    pub price: f64,
    /// `closed` (at market), `alerted` (gap_exit = alert) or `close_failed`.
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What one trailing run did.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct TrailingReport {
    /// Trades whose take-profit or stop-loss filled at the exchange since the last run, now
    /// closed (the boss was told).
    pub exits: Vec<ClosedTradeView>,
    /// Trades whose protection ended at the exchange without a fill (cancelled outside the
    /// service): now marked unprotected, and the boss was alerted.
    pub unprotected: Vec<String>,
    pub updated: Vec<TrailUpdate>,
    /// Stops that gapped (see docs/protection.md).
    pub gaps: Vec<GapRow>,
    /// Stops the run wanted to move but could not, and why (protection stayed in place).
    pub errors: Vec<String>,
}

/// One trailing run over every open trade.
pub async fn run(
    execution: &Execution,
    exchange: &dyn Exchange,
    gap_exit: GapExit,
) -> TrailingReport {
    let mut report = TrailingReport::default();
    match execution.open_protection(ListRead::WhenTracked).await {
        Ok(open) => {
            let settled = execution.settle_exits(&open).await;
            report.exits = settled.closed_views();
            report.unprotected = settled.unprotected;
            report.errors.extend(settled.errors);
        }
        Err(err) => report.errors.push(format!("exits not checked: {err}")),
    }
    let trades = match execution.book().open_trades() {
        Ok(trades) => trades,
        Err(err) => {
            report.errors.push(format!("open trades unreadable: {err}"));
            return report;
        }
    };
    for trade in trades {
        match gap_of(execution, &trade, gap_exit).await {
            Ok(Some(row)) => {
                report.gaps.push(row);
                continue;
            }
            Ok(None) => {}
            Err(err) => report.errors.push(err),
        }
        let settings = TrailSettings::of(&execution.strategy_keys(&trade.bot));
        if !settings.enabled || !trade.protection.has_legs() {
            continue;
        }
        let price = match exchange.price(&trade.symbol).await {
            Ok(p) => p.0,
            Err(err) => {
                report.errors.push(format!("{}: no price: {err}", trade.symbol));
                continue;
            }
        };
        match trail_at(execution, &trade, price).await {
            Ok(Some(update)) => report.updated.push(update),
            Ok(None) => {}
            Err(err) => report.errors.push(err),
        }
    }
    report
}

/// The gap check of one trade: a row when its stop triggered without filling (reported, and
/// with `gap_exit = market` the position closed).
pub async fn gap_of(
    execution: &Execution,
    trade: &Trade,
    gap_exit: GapExit,
) -> Result<Option<GapRow>, String> {
    match execution.stop_gap(trade).await {
        Ok(Some(price)) => Ok(Some(exit_gap(execution, trade, price, gap_exit).await)),
        Ok(None) => Ok(None),
        Err(err) => Err(format!("{}: stop not checked: {err}", trade.symbol)),
    }
}

/// The trailing rule for one trade at `price`, with its strategy's settings: the update when
/// its stop moved.
pub async fn trail_at(
    execution: &Execution,
    trade: &Trade,
    price: Decimal,
) -> Result<Option<TrailUpdate>, String> {
    let settings = TrailSettings::of(&execution.strategy_keys(&trade.bot));
    trail_with(execution, trade, price, &settings).await
}

/// The trailing rule for one trade at `price` with `settings` already resolved (a backtest
/// resolves its one strategy's once per run).
pub async fn trail_with(
    execution: &Execution,
    trade: &Trade,
    price: Decimal,
    settings: &TrailSettings,
) -> Result<Option<TrailUpdate>, String> {
    if !trade.protection.has_legs() {
        return Ok(None);
    }
    let Some((stop, profit_pct)) = wanted_stop(trade, price, settings) else {
        return Ok(None);
    };
    match execution.move_stop(&trade.symbol, stop).await {
        Ok(StopMove::Moved(moved)) => Ok(Some(TrailUpdate {
            symbol: trade.symbol.clone(),
            old_sl: json_number(trade.sl_px),
            new_sl: json_number(moved.sl_px),
            profit_pct: json_number(profit_pct),
        })),
        Ok(StopMove::Restored { reason, .. }) => {
            Err(format!("{}: kept the old stop: {reason}", trade.symbol))
        }
        Ok(StopMove::Closed(_)) => Ok(None),
        // Rounding to the tick made the move a no-op: nothing to do.
        Err(crate::execution::ExecutionError::Refused(_)) => Ok(None),
        Err(err) => Err(format!("{}: {err}", trade.symbol)),
    }
}

/// Reports a gapped stop and, with `gap_exit = market`, closes the position.
async fn exit_gap(
    execution: &Execution,
    trade: &Trade,
    price: Decimal,
    gap_exit: GapExit,
) -> GapRow {
    let (action, error) = match gap_exit {
        GapExit::Alert => ("alerted".to_string(), None),
        GapExit::Market => {
            match execution.close(&trade.symbol, "stop gapped: exit at market").await {
                Ok(_) => ("closed".to_string(), None),
                Err(err) => ("close_failed".to_string(), Some(err.to_string())),
            }
        }
    };
    let said = match (gap_exit, &error) {
        (GapExit::Alert, _) => {
            "[protection] gap_exit = \"alert\": close it yourself (POST /api/close).".to_string()
        }
        (GapExit::Market, None) => "Closed at market.".to_string(),
        (GapExit::Market, Some(err)) => format!("Closing at market failed: {err}"),
    };
    execution.notify(
        templates::stop_gapped(&templates::StopGapped {
            symbol: trade.symbol.clone(),
            stop_px: trade.sl_px.normalize().to_string(),
            price: price.normalize().to_string(),
            action: said,
        }),
        "stop gapped",
    );
    GapRow {
        symbol: trade.symbol.clone(),
        stop_px: json_number(trade.sl_px),
        price: json_number(price),
        action,
        error,
    }
}

/// The message for the raised stops of a run.
pub fn raised_message(updated: &[TrailUpdate]) -> crate::messenger::Outgoing {
    let rows: Vec<templates::StopRaised> = updated
        .iter()
        .map(|u| templates::StopRaised {
            symbol: u.symbol.clone(),
            old_sl: u.old_sl.to_string(),
            new_sl: u.new_sl.to_string(),
            profit_pct: u.profit_pct.to_string(),
        })
        .collect();
    templates::stops_raised(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn trade(direction: Direction, entry: Decimal, sl: Decimal, tp: Decimal) -> Trade {
        Trade {
            entry_px: entry,
            entry_quote: entry,
            sl_px: sl,
            tp_px: tp,
            ..Trade::example(direction)
        }
    }

    const ON: TrailSettings =
        TrailSettings { enabled: true, trigger_pct: dec!(2), distance_pct: dec!(1) };

    #[test]
    fn the_stop_follows_a_long_once_the_trigger_is_reached_and_only_moves_up() {
        let t = trade(Direction::Buy, dec!(3000), dec!(2940), dec!(3150));
        assert_eq!(wanted_stop(&t, dec!(3050), &ON), None, "1.67 % is below the 2 % trigger");
        let (stop, profit) = wanted_stop(&t, dec!(3060), &ON).unwrap();
        assert_eq!((stop, profit), (dec!(3029.4), dec!(2)), "1 % below 3060");
        let raised = Trade { sl_px: dec!(3029.4), ..t.clone() };
        assert_eq!(wanted_stop(&raised, dec!(3055), &ON), None, "never lowered");
        assert_eq!(wanted_stop(&t, dec!(3200), &ON), None, "never past the take-profit");
        let off = TrailSettings { enabled: false, ..ON };
        assert_eq!(wanted_stop(&t, dec!(3100), &off), None);
    }

    #[test]
    fn a_sold_positions_stop_only_moves_down() {
        let t = trade(Direction::Sell, dec!(3000), dec!(3060), dec!(2850));
        let (stop, profit) = wanted_stop(&t, dec!(2940), &ON).unwrap();
        assert_eq!((stop, profit), (dec!(2969.4), dec!(2)));
        let lowered = Trade { sl_px: dec!(2969.4), ..t };
        assert_eq!(wanted_stop(&lowered, dec!(2945), &ON), None, "never raised back");
    }
}
