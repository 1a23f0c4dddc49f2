//! Closing a position on spot: cancel its protection first (an OCO or a resting take-profit
//! locks the coin), wait until the coin is free, then sell the free quantity at market — so a
//! close never meets -2010. If the protection had already finished on the exchange, the trade
//! is closed at the filled leg's price instead. If the balance cannot be read or the sell
//! fails after the protection was cancelled, the position is protected again; if it fills only part, the rest is offered
//! again (`remainder`). A watched stop exits through the same path.

use std::time::Duration;

use rust_decimal::Decimal;
use serde::Serialize;
use utoipa::ToSchema;

use super::book::close_trade_in;
use super::client_id::{ClientOrderId, Purpose};
use super::entry_cancel::{EntryCancelRow, EntryCancelStatus};
use super::journal::{Commit, OrderKind};
use super::sizing::exit_qty;
use super::trade::{CloseReason, ClosedTrade, Direction, Trade, pnl_of};
use super::{Execution, ExecutionError};
use crate::exchange::{ExchangeError, NewOrder, Order, Qty};
use crate::messenger::templates;
use crate::money::json_number;

/// How closing one position came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseStatus {
    /// Sold (or its protection's leg had filled): the trade is in the history.
    Closed,
    /// Still open; `error` says why.
    Error,
}

impl CloseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Error => "error",
        }
    }
}

/// How a closeall came out as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseAllStatus {
    /// Every position closed and every pending entry cancelled (or there was none).
    Ok,
    /// At least one position or entry failed.
    Error,
}

/// One position in a close or closeall answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CloseRow {
    pub symbol: String,
    pub status: CloseStatus,
    /// Coin quantity sold (closed) or held (error).
    pub size: f64,
    /// Net pnl in the quote asset (closed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pnl: Option<f64>,
    /// Average exit price (closed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_px: Option<f64>,
    /// Why the position is still open (error only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The answer of closeall.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CloseAllReport {
    pub status: CloseAllStatus,
    /// Positions attempted.
    pub count: usize,
    pub closed: Vec<CloseRow>,
    /// The pending LIMIT entries, cancelled first (what had filled is among `closed`).
    pub entries: Vec<EntryCancelRow>,
}

impl CloseRow {
    pub fn closed(c: &ClosedTrade) -> Self {
        Self {
            symbol: c.trade.symbol.clone(),
            status: CloseStatus::Closed,
            size: json_number(c.qty_sold),
            pnl: Some(json_number(c.pnl)),
            exit_px: Some(json_number(c.exit_px)),
            error: None,
        }
    }

    fn error(trade: &Trade, err: &ExecutionError) -> Self {
        Self {
            symbol: trade.symbol.clone(),
            status: CloseStatus::Error,
            size: json_number(trade.size),
            pnl: None,
            exit_px: None,
            error: Some(err.to_string()),
        }
    }

    fn message_row(&self) -> templates::CloseRow {
        let outcome = match self.status {
            CloseStatus::Closed => {
                templates::CloseOutcome::Sold { pnl: self.pnl.map(|p| format!("{p:.2}")) }
            }
            CloseStatus::Error => templates::CloseOutcome::Failed {
                error: self.error.clone().unwrap_or_else(|| "unknown error".into()),
            },
        };
        templates::CloseRow { symbol: self.symbol.clone(), size: self.size.to_string(), outcome }
    }
}

/// The order that exits a position and why.
pub(crate) struct Exit {
    pub client_order_id: String,
    pub reason: CloseReason,
    /// In words, for the journal.
    pub cause: String,
}

/// A closed trade from the order that exited it (a market exit or a filled OCO leg).
pub(crate) fn closed_by(
    trade: &Trade,
    exit: &Order,
    rules: &crate::exchange::SymbolRules,
    reason: CloseReason,
    now: &str,
) -> Option<ClosedTrade> {
    let qty = exit.executed_qty.0;
    let exit_px = exit.avg_price()?.0;
    let exit_quote = match trade.direction {
        // Sold: the fee was taken from the quote received.
        Direction::Buy => exit.cumulative_quote_qty - exit.commission_in(&rules.quote_asset),
        // Bought back: the fee was taken from the coin received; count it at the fill price.
        Direction::Sell => {
            exit.cumulative_quote_qty + exit.commission_in(&rules.base_asset) * exit_px
        }
    };
    Some(ClosedTrade {
        trade: trade.clone(),
        exit_px,
        exit_quote,
        qty_sold: qty,
        pnl: pnl_of(trade, qty, exit_quote),
        reason,
        closed_at: now.to_string(),
    })
}

impl Execution {
    /// Closes the open trade of `symbol` and reports it to the boss.
    pub async fn close(&self, symbol: &str, cause: &str) -> Result<ClosedTrade, ExecutionError> {
        let result = self.close_quietly(symbol, cause).await;
        let row = match &result {
            Ok(closed) => CloseRow::closed(closed),
            Err(ExecutionError::NoPosition(_)) => return result,
            Err(err) => match self.inner.book.open_trade(symbol)? {
                Some(trade) => CloseRow::error(&trade, err),
                None => return result,
            },
        };
        self.report_closes(std::slice::from_ref(&row));
        result
    }

    /// Cancels every pending entry (so none opens a position afterwards), then closes every
    /// open trade — the ones those entries opened too — one after the other; failures are
    /// reported per entry and per position.
    pub async fn close_all(&self, cause: &str) -> Result<CloseAllReport, ExecutionError> {
        let entries = self.cancel_all_pending().await?;
        let trades = self.inner.book.open_trades()?;
        let mut rows = Vec::with_capacity(trades.len());
        for trade in &trades {
            rows.push(match self.close_quietly(&trade.symbol, cause).await {
                Ok(closed) => CloseRow::closed(&closed),
                Err(err) => CloseRow::error(trade, &err),
            });
        }
        if !rows.is_empty() {
            self.report_closes(&rows);
        }
        let failed = rows.iter().any(|r| r.status == CloseStatus::Error)
            || entries.iter().any(|e| e.status == EntryCancelStatus::Error);
        Ok(CloseAllReport {
            status: if failed { CloseAllStatus::Error } else { CloseAllStatus::Ok },
            count: rows.len(),
            closed: rows,
            entries,
        })
    }

    fn report_closes(&self, rows: &[CloseRow]) {
        for row in rows {
            let status = match row.status {
                CloseStatus::Closed => "ok",
                CloseStatus::Error => "error",
            };
            let detail = row.error.as_deref().unwrap_or_default();
            let what = row.status.as_str();
            self.log("bot-ops", &format!("close {}: {what} {detail}", row.symbol), status);
        }
        let report =
            templates::CloseReport { rows: rows.iter().map(CloseRow::message_row).collect() };
        self.notify(templates::close_result(&report), "close result");
    }

    async fn close_quietly(
        &self,
        symbol: &str,
        cause: &str,
    ) -> Result<ClosedTrade, ExecutionError> {
        let exit = Exit {
            client_order_id: ClientOrderId::fresh(
                Purpose::MarketExit,
                self.inner.clock.now_ms(),
                symbol,
            )
            .into_string(),
            reason: CloseReason::Market,
            cause: cause.to_string(),
        };
        self.exit_position(symbol, exit).await
    }

    /// Exits `symbol`'s position with `exit`'s order: its protection is cancelled first (an
    /// OCO or a resting take-profit locks the coin; if it already finished, the leg that
    /// filled closes the trade instead), then the free quantity goes at market.
    pub(crate) async fn exit_position(
        &self,
        symbol: &str,
        exit: Exit,
    ) -> Result<ClosedTrade, ExecutionError> {
        let orders = self.orders()?.clone();
        let _symbol = self.lock_symbol(symbol).await;
        let trade = self
            .inner
            .book
            .open_trade(symbol)?
            .ok_or_else(|| ExecutionError::NoPosition(symbol.to_string()))?;
        let rules = self.symbol_rules(symbol).await?;
        let cancelled = self.cancel_protection(&trade).await;
        match cancelled {
            Ok(()) => {}
            Err(ExchangeError::UnknownOrder { .. }) => {
                // Not cancellable: it finished on the exchange. Did a leg fill?
                if let Some(closed) = self.settle_finished(&trade, true).await? {
                    return Ok(closed);
                }
            }
            Err(err) => return Err(err.into()),
        }
        let qty = match self.exit_quantity(&trade, &rules).await {
            Ok(qty) => qty,
            Err(err) => {
                // The protection is cancelled and nothing was sold: protect it again.
                self.reprotect(trade).await;
                return Err(err);
            }
        };
        if qty <= Decimal::ZERO {
            let err = ExecutionError::Refused(format!(
                "nothing to sell: no free {} after cancelling the protection",
                rules.base_asset
            ));
            self.mark_unprotected(trade, err.to_string());
            return Err(err);
        }
        let Exit { client_order_id: exit_id, reason, cause } = exit;
        let order = NewOrder::market(symbol, trade.direction.exit_side(), Qty(qty), &exit_id);
        let (today, now) = (self.today(), self.now_iso());
        let result = orders
            .place(&order, OrderKind::Exit, &cause, None, |w, sold| {
                // An exit that filled only part is closed after the rest is sold.
                let whole = sold.executed_qty.0 >= qty;
                match closed_by(&trade, sold, &rules, reason, &now) {
                    Some(closed) if !sold.status.is_open() && whole => {
                        close_trade_in(w, &closed, today)
                    }
                    _ => Ok(()),
                }
            })
            .await;
        match result {
            Ok(sold) => {
                let sold = orders
                    .await_final(sold, self.inner.timing.fill_timeout)
                    .await
                    .map_err(|e| ExecutionError::from_send(e, &exit_id))?;
                let sold = self.fill_remainder(&trade, sold, qty, &cause, &rules).await;
                let closed = closed_by(&trade, &sold, &rules, reason, &now).ok_or_else(|| {
                    ExecutionError::Refused(format!("the exit {exit_id} did not fill"))
                })?;
                if self.inner.book.open_trade(symbol)?.is_some() {
                    self.inner.book.store().write(|w| close_trade_in(w, &closed, today))?;
                }
                Ok(closed)
            }
            Err(err) if err.is_unknown_outcome() => {
                // Maybe sold: reconciliation settles the exit by lookup; never re-protect a
                // position that may be gone.
                Err(ExecutionError::from_send(err, &exit_id))
            }
            Err(err) => {
                let err = ExecutionError::from_send(err, &exit_id);
                self.reprotect(trade).await;
                Err(err)
            }
        }
    }

    /// What the exit order of `trade` trades once its cancelled protection has freed the
    /// asset: for a long position the free coin, at most the trade's size and less the coin's
    /// unsellable dust; for a sold one the size bought back once the quote is free.
    async fn exit_quantity(
        &self,
        trade: &Trade,
        rules: &crate::exchange::SymbolRules,
    ) -> Result<Decimal, ExecutionError> {
        Ok(match trade.direction {
            Direction::Buy => {
                let free = self.wait_until_free(&rules.base_asset, trade.size).await?;
                exit_qty(free, trade.size, trade.entry_px, rules)
            }
            Direction::Sell => {
                self.wait_until_free(&rules.quote_asset, Decimal::MAX).await?;
                trade.size
            }
        })
    }

    /// After a failed close the protection is gone: place it again at the same levels.
    async fn reprotect(&self, trade: Trade) {
        if !trade.protection.has_legs() && !trade.protection.is_protected() {
            return;
        }
        let trade = self.unplaced(&trade, Purpose::Reprotect);
        if self.inner.book.put_trade(&trade).is_ok() {
            self.protect(trade, Commit::Durable).await;
        }
    }

    /// Waits until `asset` locked by a cancelled OCO is free (nothing locked, or `wanted` free,
    /// or the timeout); returns the free quantity.
    async fn wait_until_free(
        &self,
        asset: &str,
        wanted: Decimal,
    ) -> Result<Decimal, ExecutionError> {
        let exchange = &self.orders()?.exchange;
        let deadline = tokio::time::Instant::now() + self.inner.timing.free_timeout;
        loop {
            let balance = exchange.balances().await?.into_iter().find(|b| b.asset == asset);
            let (free, locked) =
                balance.map_or((Decimal::ZERO, Decimal::ZERO), |b| (b.free, b.locked));
            if free >= wanted || locked.is_zero() || tokio::time::Instant::now() >= deadline {
                return Ok(free);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
