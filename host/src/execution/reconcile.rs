//! Reconciliation: compares the store's open trades, the order journal and the exchange (open
//! order lists, orders by client order id, balances) and settles every difference. It runs at
//! every start and on `GET /api/trades/recover`:
//!
//! 1. a journal entry with an unknown outcome is looked up by its client order id: a found
//!    entry becomes its trade (and is protected), a found OCO is attached to its trade, a found
//!    exit closes its trade; an absent one is recorded as never placed;
//! 2. an open trade without an OCO (the process died between the fill and the OCO, the OCO
//!    failed, or a crash lost the row of an OCO a confirm had placed: that row does not wait
//!    for the disk) is first looked up by its protection client id, and gets its OCO only
//!    when the exchange has none; one whose protection was cancelled outside the service gets
//!    a new one under a fresh client id;
//! 3. an open trade whose OCO finished while the service was down is closed with its pnl;
//! 4. an open OCO list on the exchange for a symbol the store does not track is adopted as a
//!    trade with source `recovered`;
//! 5. the account's holdings are compared with the open trades ([`super::holdings`]): a trade
//!    whose coin is gone is settled (before step 2 would try to protect it), coin held without
//!    a trade is adopted and protected.
//!
//! It also runs every minute (the `reconciliation` job) and soon after any order's outcome was
//! unknown ([`Execution::reconcile_soon`]); those runs tell the boss only what they have not
//! told before. What was settled goes to the log, the activity log and the boss.

use rust_decimal::Decimal;
use serde::Serialize;
use utoipa::ToSchema;

use super::book::{close_trade_in, open_trade_in};
use super::client_id::{ClientOrderId, Purpose};
use super::close::{CloseRow, closed_by};
use super::journal::{Commit, JournalEntry, OrderKind};
use super::orders::Settled;
use super::protector::{protected_by_list, protected_by_take_profit};
use super::trade::protection::{OcoLegs, TradeProtection};
use super::trade::{CloseReason, Direction, ProtectionState, Trade, TradeSource, TradeView};
use super::{Execution, ExecutionError};
use crate::exchange::{OrderList, OrderType, Side, open_lists};
use crate::messenger::templates;

/// How many findings the minute's reconciliation remembers having told.
const TOLD_MEMORY: usize = 1000;

/// Who hears of a reconciliation's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Telling {
    /// Every finding (at start and on `GET /api/trades/recover`: someone asked).
    All,
    /// Only findings not told before (the minute's run and the run after an unknown outcome,
    /// so a difference that stays unsettled is not repeated every minute).
    New,
}

/// What one reconciliation did.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct ReconcileReport {
    /// Trades adopted (source `recovered`): open OCO lists, and coin held without a trade.
    pub recovered: Vec<TradeView>,
    /// Trades closed because their OCO finished while the service was away, or their coin
    /// is no longer held.
    pub closed: Vec<CloseRow>,
    /// One sentence per settled difference, in order.
    pub actions: Vec<String>,
}

impl Execution {
    /// Runs one reconciliation (one at a time) and reports every finding.
    pub async fn reconcile(&self) -> Result<ReconcileReport, ExecutionError> {
        self.reconcile_telling(Telling::All).await
    }

    /// Runs one reconciliation (one at a time); `telling` says which findings reach the log,
    /// the activity log and the boss (the answer always has them all).
    pub async fn reconcile_telling(
        &self,
        telling: Telling,
    ) -> Result<ReconcileReport, ExecutionError> {
        let _one = self.inner.reconciling.lock().await;
        let mut report = ReconcileReport::default();
        self.settle_journal(&mut report).await?;
        self.compare_trades_with_holdings(&mut report).await?;
        self.check_open_trades(&mut report).await?;
        self.adopt_unknown_lists(&mut report).await?;
        self.adopt_holdings(&mut report).await?;
        let news = self.not_told_yet(&report.actions, telling);
        if !news.is_empty() {
            for action in &news {
                tracing::warn!(%action, "reconciliation");
                self.log("bot-ops", &format!("reconciliation: {action}"), "ok");
            }
            self.notify(
                templates::reconciliation_report(&templates::ReconciliationReport {
                    actions: news,
                }),
                "reconciliation report",
            );
        }
        Ok(report)
    }

    /// The findings to tell: all of them, or those not told since the process started. Every
    /// finding told is remembered (at most [`TOLD_MEMORY`] of them).
    fn not_told_yet(&self, actions: &[String], telling: Telling) -> Vec<String> {
        let mut told = self.inner.told.lock().unwrap_or_else(|p| p.into_inner());
        if told.len() > TOLD_MEMORY {
            told.clear();
        }
        actions
            .iter()
            .filter(|action| told.insert((*action).clone()) || telling == Telling::All)
            .cloned()
            .collect()
    }

    /// Asks for a reconciliation soon, in the background (after an order's outcome was
    /// unknown: whatever the exchange holds gets protected without waiting for the minute).
    /// Requests made while one waits are one run.
    pub fn reconcile_soon(&self) {
        self.inner.reconcile_wanted.notify_one();
    }

    /// Waits until [`Execution::reconcile_soon`] asked for a run (the background loop).
    pub async fn reconcile_wanted(&self) {
        self.inner.reconcile_wanted.notified().await;
    }

    async fn settle_journal(&self, report: &mut ReconcileReport) -> Result<(), ExecutionError> {
        let orders = self.orders()?.clone();
        for (seq, entry) in orders.journal.unsettled()? {
            let _symbol = self.lock_symbol(&entry.symbol).await;
            let Some(settled) = orders.settle_by_lookup(seq, &entry).await? else {
                report.actions.push(format!(
                    "{} order {} still has an unknown outcome; the exchange did not answer",
                    entry.symbol, entry.client_order_id
                ));
                continue;
            };
            match settled {
                Settled::Absent => report.actions.push(format!(
                    "{} order {} was never placed (not on the exchange)",
                    entry.symbol, entry.client_order_id
                )),
                Settled::Order(order) => self.settle_order(&entry, &order, report).await?,
                Settled::List(list) => self.attach_list(&entry, &list, report)?,
            }
        }
        Ok(())
    }

    /// An entry or exit found by lookup after an unknown outcome.
    async fn settle_order(
        &self,
        entry: &JournalEntry,
        order: &crate::exchange::Order,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        let tracked = self.inner.book.open_trade(&entry.symbol)?;
        match entry.kind {
            OrderKind::Entry => {
                let (Some(plan), None) = (&entry.plan, &tracked) else {
                    return Ok(());
                };
                if order.status.is_open() {
                    // A manual LIMIT entry still on the book: it waits as a pending entry.
                    if self.pending_entry_for(&entry.symbol)?.is_none()
                        && self.entry_from_open_order(plan.clone(), order).await?.is_some()
                    {
                        report.actions.push(format!(
                            "{}: LIMIT entry {} is on the book; pending entry restored",
                            entry.symbol, entry.client_order_id
                        ));
                    }
                    return Ok(());
                }
                let rules = self.symbol_rules(&entry.symbol).await?;
                let today = self.today();
                let Some(trade) = self.trade_of_fill(plan, order, &rules, today) else {
                    return Ok(());
                };
                self.inner.book.store().write(|w| open_trade_in(w, &trade, today))?;
                report.actions.push(format!(
                    "{}: entry {} had filled ({} @ {}); trade recorded",
                    trade.symbol, entry.client_order_id, trade.size, trade.entry_px
                ));
            }
            OrderKind::Exit => {
                let Some(trade) = tracked else {
                    return Ok(());
                };
                let rules = self.symbol_rules(&entry.symbol).await?;
                let Some(closed) =
                    closed_by(&trade, order, &rules, CloseReason::Market, &self.now_iso())
                else {
                    return Ok(());
                };
                let today = self.today();
                self.inner.book.store().write(|w| close_trade_in(w, &closed, today))?;
                report.actions.push(format!(
                    "{}: exit {} had filled; trade closed with pnl {}",
                    closed.trade.symbol, entry.client_order_id, closed.pnl
                ));
                report.closed.push(CloseRow::closed(&closed));
            }
            OrderKind::TakeProfit => {
                if let Some(trade) = tracked
                    && trade.protection.client_id() == Some(&entry.client_order_id)
                    && order.status.is_open()
                {
                    self.inner.book.put_trade(&protected_by_take_profit(&trade, order))?;
                    report.actions.push(format!(
                        "{}: take-profit {} had been placed; trade marked protected (stop \
                         watched by the service)",
                        trade.symbol, entry.client_order_id
                    ));
                }
            }
            OrderKind::Oco | OrderKind::WatchedStop => {}
        }
        Ok(())
    }

    /// An OCO list found by lookup after an unknown outcome: the trade is protected.
    fn attach_list(
        &self,
        entry: &JournalEntry,
        list: &OrderList,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        if let Some(trade) = self.inner.book.open_trade(&entry.symbol)?
            && trade.protection.client_id() == Some(&entry.client_order_id)
        {
            self.inner.book.put_trade(&protected_by_list(&trade, list))?;
            report.actions.push(format!(
                "{}: OCO {} had been placed; trade marked protected",
                trade.symbol, entry.client_order_id
            ));
        }
        Ok(())
    }

    async fn check_open_trades(&self, report: &mut ReconcileReport) -> Result<(), ExecutionError> {
        for trade in self.inner.book.open_trades()? {
            let _symbol = self.lock_symbol(&trade.symbol).await;
            // Re-read under the lock: a close may have finished meanwhile.
            let Some(trade) = self.inner.book.open_trade(&trade.symbol)? else {
                continue;
            };
            match trade.protection.state() {
                ProtectionState::Protected => self.close_if_finished(&trade, report).await?,
                ProtectionState::Pending | ProtectionState::Unprotected { .. } => {
                    let trade = self.with_fresh_protection_id(trade)?;
                    if self.found_its_protection(&trade, report).await? {
                        continue;
                    }
                    let after = self.protect(trade.clone(), Commit::Durable).await;
                    let what = trade.protection.name();
                    let outcome = match after.protection.state() {
                        ProtectionState::Protected => format!("{what} placed"),
                        ProtectionState::Unprotected { reason } => {
                            format!("still UNPROTECTED: {reason}")
                        }
                        ProtectionState::Pending => format!("{what} pending"),
                    };
                    report.actions.push(format!(
                        "{}: filled entry without its {what}; {outcome}",
                        trade.symbol
                    ));
                }
            }
        }
        Ok(())
    }

    /// A trade without protection whose list is on the exchange after all: a confirm journals
    /// a trade's first list without waiting for the disk ([`Commit::Recoverable`]), so a crash
    /// can lose the row of a list that was placed. Looked up by the trade's protection client
    /// id before anything is sent (a second list with that id would be refused as a
    /// duplicate); a found list protects the trade, and one that finished while the service
    /// was down closes it. True when the list was found (or the exchange could not tell, so
    /// nothing is sent this time).
    async fn found_its_protection(
        &self,
        trade: &Trade,
        report: &mut ReconcileReport,
    ) -> Result<bool, ExecutionError> {
        let client_id = trade.protection.client_id().unwrap_or_default();
        let trade = match self.find_placed(trade).await {
            Ok(Some(found)) => found,
            Ok(None) => return Ok(false),
            Err(why) => {
                report.actions.push(format!(
                    "{}: cannot tell whether OCO {client_id} exists ({why}); nothing sent, \
                     retried at the next reconciliation",
                    trade.symbol
                ));
                return Ok(true);
            }
        };
        self.inner.book.put_trade(&trade)?;
        report.actions.push(format!(
            "{}: OCO {client_id} had been placed; trade marked protected",
            trade.symbol
        ));
        self.close_if_finished(&trade, report).await?;
        Ok(true)
    }

    /// An unprotected trade that still names legs had its protection placed, and it ended at
    /// the exchange without a fill (cancelled outside the service). Its client id is journaled
    /// as placed, so placing "again" under it would only find the dead legs: the protection
    /// gets a fresh id (purpose `Reprotect`) and is placed anew. A pending trade, or one whose
    /// placement failed, keeps its id, so a half-sent protection is found, never doubled.
    fn with_fresh_protection_id(&self, mut trade: Trade) -> Result<Trade, ExecutionError> {
        let unprotected = matches!(trade.protection.state(), ProtectionState::Unprotected { .. });
        if !unprotected || !trade.protection.has_legs() {
            return Ok(trade);
        }
        let now = self.inner.clock.now_ms();
        let id = ClientOrderId::fresh(Purpose::Reprotect, now, &trade.symbol).into_string();
        trade.protection = trade.protection.renewed(id);
        self.inner.book.put_trade(&trade)?;
        Ok(trade)
    }

    /// Closes a protected trade whose list finished while the service was away.
    async fn close_if_finished(
        &self,
        trade: &Trade,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        if let Some(closed) = self.settle_finished(trade, false).await? {
            report.actions.push(format!(
                "{}: {:?} filled at {} while the service was away; pnl {}",
                trade.symbol, closed.reason, closed.exit_px, closed.pnl
            ));
            report.closed.push(CloseRow::closed(&closed));
        }
        Ok(())
    }

    async fn adopt_unknown_lists(
        &self,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        let orders = self.orders()?.clone();
        for list in open_lists(orders.exchange.as_ref()).await? {
            let _symbol = self.lock_symbol(&list.symbol).await;
            if self.inner.book.open_trade(&list.symbol)?.is_some() {
                continue;
            }
            let list = orders
                .list_with_legs(&crate::exchange::OrderRef::Id(list.order_list_id))
                .await
                .map_err(|e| ExecutionError::from_send(e, &list.list_client_order_id))?;
            let Some(trade) = self.adopted(&list).await? else {
                continue;
            };
            self.inner.book.put_trade(&trade)?;
            report.actions.push(format!(
                "{}: open OCO {} adopted as a recovered trade ({} @ {})",
                trade.symbol, list.list_client_order_id, trade.size, trade.entry_px
            ));
            report.recovered.push(trade.view());
        }
        Ok(())
    }

    /// A trade from an open SELL OCO list: size, take-profit and stop from the legs, entry
    /// price from the newest buy of the symbol (else the middle of the bracket).
    async fn adopted(&self, list: &OrderList) -> Result<Option<Trade>, ExecutionError> {
        let tp = list.orders.iter().find(|o| o.order_type == OrderType::LimitMaker);
        let sl = list
            .orders
            .iter()
            .find(|o| matches!(o.order_type, OrderType::StopLossLimit | OrderType::StopLoss));
        let (Some(tp), Some(sl)) = (tp, sl) else {
            return Ok(None);
        };
        if tp.side != Side::Sell {
            return Ok(None);
        }
        let exchange = &self.orders()?.exchange;
        let last_buy = exchange
            .my_trades(&list.symbol, None)
            .await?
            .into_iter()
            .rev()
            .find(|t| t.is_buyer)
            .map(|t| t.price.0);
        let sl_px = sl.stop_price.map_or(sl.price.0, |p| p.0);
        let entry_px =
            last_buy.unwrap_or_else(|| ((tp.price.0 + sl_px) / Decimal::TWO).round_dp(8));
        let pct = |a: Decimal, b: Decimal| {
            if entry_px.is_zero() {
                Decimal::ZERO
            } else {
                ((a - b) / entry_px * Decimal::ONE_HUNDRED).round_dp(4)
            }
        };
        let size = tp.orig_qty.0;
        Ok(Some(Trade {
            symbol: list.symbol.clone(),
            direction: Direction::Buy,
            bot: "recovered".into(),
            exchange: self.exchange_name(),
            size,
            entry_px,
            entry_quote: entry_px * size,
            sl_px,
            tp_px: tp.price.0,
            sl_pct: pct(entry_px, sl_px),
            tp_pct: pct(tp.price.0, entry_px),
            protection: TradeProtection::list_in_place(
                Some(list.list_client_order_id.clone()),
                sl.price.0,
                OcoLegs {
                    list_id: list.order_list_id,
                    tp_order_id: Some(tp.order_id),
                    sl_order_id: Some(sl.order_id),
                },
            ),
            entry_order_id: None,
            entry_client_order_id: None,
            source: TradeSource::Recovered,
            date: self.today().iso(),
            opened_at: self.now_iso(),
        }))
    }
}
