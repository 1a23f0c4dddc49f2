//! The bracket order on an exchange without native brackets: a MARKET BUY, and only once its
//! fill is confirmed its protection for the quantity actually received — one OCO list (a
//! LIMIT_MAKER take-profit and a STOP_LOSS_LIMIT stop), or, for a stop the service watches, a
//! resting take-profit LIMIT (both through [`super::protector`]). Transient failures are retried (the
//! journal makes a retry safe); if the protection still cannot be placed, the trade is stored
//! as unprotected and the boss is alerted.

use rust_decimal::Decimal;

use super::book::open_trade_in;
use super::journal::{Commit, OrderKind};
use super::plan::EntryPlan;
use super::sizing::{EntryOrder, bracket_prices, size_entry};
use super::trade::TradeProtection;
use super::trade::{Direction, Trade, held_position};
use super::{Execution, ExecutionError, SendError};
use crate::config::{ExchangeName, StopPlacement};
use crate::exchange::{ExchangeError, NewOrder, Order, Qty};
use crate::messenger::templates;

/// The position an entry opened: for a buy the coin held and what it cost (see
/// [`held_position`]); for a sell the coin sold and the quote received net of the fee.
fn position_of(
    order: &Order,
    direction: Direction,
    rules: &crate::exchange::SymbolRules,
) -> (Decimal, Decimal) {
    match direction {
        Direction::Buy => held_position(order, rules),
        Direction::Sell => (
            order.executed_qty.0,
            order.cumulative_quote_qty - order.commission_in(&rules.quote_asset),
        ),
    }
}

impl Execution {
    /// Opens a long position for `plan`: sizes it, buys at market, waits for the fill, records
    /// the trade, then protects it with the OCO. The trade is returned whether or not the
    /// OCO could be placed (see its `protection`).
    pub async fn open_trade(&self, plan: &EntryPlan) -> Result<Trade, ExecutionError> {
        let orders = self.orders()?.clone();
        let _symbol = self.lock_symbol(&plan.symbol).await;
        // One position per symbol: an open trade or a manual entry waiting for its fill.
        if self.inner.book.open_trade(&plan.symbol)?.is_some()
            || self.pending_entry_for(&plan.symbol)?.is_some()
        {
            return Err(ExecutionError::TradeExists(plan.symbol.clone()));
        }
        if let Some(block) = self.entry_block(&plan.bot)? {
            return Err(ExecutionError::EntryBlocked(block));
        }
        let rules = self.symbol_rules(&plan.symbol).await?;
        let price = orders.exchange.price(&plan.symbol).await?.0;
        let balance = orders
            .exchange
            .balances()
            .await?
            .into_iter()
            .find(|b| b.asset == rules.quote_asset)
            .map_or(Decimal::ZERO, |b| b.free);
        let sizing = size_entry(
            balance,
            self.inner.config.risk.max_trading_usdt,
            self.size_pct(&plan.bot, plan.tier),
            price,
            &rules,
            EntryOrder::Market,
        )
        .map_err(ExecutionError::Refused)?;
        self.note_capped(&plan.symbol, &sizing);
        // Refuse before buying when no valid bracket exists at today's price.
        bracket_prices(price, plan.sl_pct, plan.tp_pct, plan.direction, &rules)
            .map_err(ExecutionError::Refused)?;

        let order = NewOrder::market(
            &plan.symbol,
            plan.direction.entry_side(),
            Qty(sizing.qty),
            &plan.entry_client_order_id,
        );
        let today = self.today();
        let now = self.now_iso();
        let exchange_name = self.exchange_name();
        let stop = self.stop_placement();
        let placed = orders
            .place(&order, OrderKind::Entry, &plan.cause, Some(plan), |w, filled| {
                let opened =
                    Opened { exchange: exchange_name, date: &today.iso(), now: &now, stop };
                match trade_from_fill(plan, filled, &rules, &opened) {
                    Some(trade) => open_trade_in(w, &trade, today),
                    None => Ok(()),
                }
            })
            .await
            .map_err(|e| {
                let err = ExecutionError::from_send(e, &plan.entry_client_order_id);
                if let ExecutionError::OutcomeUnknown { .. } = &err {
                    self.notify(
                        templates::entry_unknown_alert(&templates::EntryUnknownAlert {
                            symbol: plan.symbol.clone(),
                            client_order_id: plan.entry_client_order_id.clone(),
                            detail: err.to_string(),
                        }),
                        "entry outcome unknown",
                    );
                }
                err
            })?;
        let trade = match self.inner.book.open_trade(&plan.symbol)? {
            Some(trade)
                if trade.entry_client_order_id.as_deref() == Some(&order.client_order_id) =>
            {
                trade
            }
            _ => {
                // Not final at the answer (or found by lookup): wait, then record it.
                let filled = orders
                    .await_final(placed, self.inner.timing.fill_timeout)
                    .await
                    .map_err(|e| ExecutionError::from_send(e, &plan.entry_client_order_id))?;
                let opened =
                    Opened { exchange: exchange_name, date: &today.iso(), now: &now, stop };
                let trade = trade_from_fill(plan, &filled, &rules, &opened).ok_or_else(|| {
                    ExecutionError::Refused(format!(
                        "the entry {} did not fill ({:?})",
                        filled.client_order_id, filled.status
                    ))
                })?;
                self.inner.book.store().write(|w| open_trade_in(w, &trade, today))?;
                trade
            }
        };
        self.log(
            "bot-ops",
            &format!("entry filled: {} {} @ {}", trade.symbol, trade.size, trade.entry_px),
            "ok",
        );
        // The list's client id is in the entry's durable journal row (its plan), so the list's
        // own row need not wait for the disk (docs/benchmarks.md, "Confirm to OCO accepted").
        Ok(self.protect_and_report(trade, Commit::Recoverable).await)
    }

    /// Protects a freshly opened trade and sends the boss the result (entry, size, stop,
    /// target, order ids).
    pub(crate) async fn protect_and_report(&self, trade: Trade, commit: Commit) -> Trade {
        let trade = self.protect(trade, commit).await;
        self.notify(templates::trade_opened(&opened_message(&trade)), "trade result");
        trade
    }

    /// Places the protection of `trade` (under its protection client id), retrying
    /// transient failures. Returns the trade as stored afterwards: protected, or unprotected
    /// with the boss alerted. `commit` says how the list's journal row is committed
    /// ([`Commit::Recoverable`] only for a trade's first list, whose client id its entry's
    /// durable row already holds).
    pub(crate) async fn protect(&self, trade: Trade, commit: Commit) -> Trade {
        match self.try_protect(trade, commit).await {
            Ok(trade) => trade,
            Err((trade, reason)) => self.mark_unprotected(trade, reason),
        }
    }

    /// Places the protection of `trade` — its OCO list, or for a watched stop its resting
    /// take-profit — retrying transient failures (and, right after a cancel, a balance the
    /// exchange has not freed yet). `Err` gives the trade back unchanged in the store with the
    /// reason; the caller decides what an unprotected position means.
    pub(crate) async fn try_protect(
        &self,
        trade: Trade,
        commit: Commit,
    ) -> Result<Trade, (Trade, String)> {
        if self.orders().is_err() {
            return Err((trade, format!("no exchange client for {}", self.exchange_name())));
        }
        let Some(client_id) = trade.protection.client_id().map(str::to_string) else {
            return Err((trade, "the trade has no protection client order id".into()));
        };
        let cause = format!("protect {} ({})", trade.symbol, trade.size);
        let mut delay = self.inner.timing.retry_delay;
        let mut last_error = String::new();
        let attempts = self.inner.timing.oco_attempts.max(1);
        for attempt in 1..=attempts {
            match self.place_protection(&trade, &client_id, &cause, commit).await {
                Ok(trade) => {
                    self.log(
                        "bot-ops",
                        &format!(
                            "protection placed: {} tp {} sl {} (stop on the {})",
                            trade.symbol,
                            trade.tp_px,
                            trade.sl_px,
                            trade.protection.placement().as_str()
                        ),
                        "ok",
                    );
                    return Ok(trade);
                }
                Err(err) if retry_oco(&err) && attempt < attempts => {
                    tracing::warn!(symbol = %trade.symbol, attempt, %err, "protection not placed yet; retrying");
                    last_error = err.to_string();
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                }
                Err(err) => {
                    last_error = err.to_string();
                    break;
                }
            }
        }
        Err((trade, last_error))
    }

    /// The trade a filled entry opened today (see [`trade_from_fill`]).
    pub(crate) fn trade_of_fill(
        &self,
        plan: &EntryPlan,
        order: &Order,
        rules: &crate::exchange::SymbolRules,
        today: super::Day,
    ) -> Option<Trade> {
        let opened = Opened {
            exchange: self.exchange_name(),
            date: &today.iso(),
            now: &self.now_iso(),
            stop: self.stop_placement(),
        };
        trade_from_fill(plan, order, rules, &opened)
    }

    /// Stores the trade as unprotected, alerts the boss and the dashboard.
    pub(crate) fn mark_unprotected(&self, mut trade: Trade, reason: String) -> Trade {
        tracing::error!(symbol = %trade.symbol, %reason, "position is UNPROTECTED");
        trade.protection = trade.protection.unprotected(reason.clone());
        if let Err(err) = self.inner.book.put_trade(&trade) {
            tracing::error!(%err, "cannot store the unprotected state");
        }
        self.log("bot-ops", &format!("UNPROTECTED {}: {reason}", trade.symbol), "error");
        self.notify(
            templates::unprotected_alert(&templates::UnprotectedAlert {
                symbol: trade.symbol.clone(),
                size: trade.size.normalize().to_string(),
                entry_px: trade.entry_px.normalize().to_string(),
                reason,
                exchange: trade.exchange.to_string(),
            }),
            "unprotected alert",
        );
        trade
    }
}

/// Worth another OCO attempt: a transient failure, or an "insufficient balance" that only
/// means the coin of a just-cancelled list is not free yet.
fn retry_oco(err: &SendError) -> bool {
    err.is_transient()
        || matches!(err, SendError::Exchange(ExchangeError::InsufficientBalance { .. }))
}

/// Where and when a trade opens: the exchange's name, the day and time, where its stop lives.
pub(crate) struct Opened<'a> {
    pub exchange: ExchangeName,
    pub date: &'a str,
    pub now: &'a str,
    pub stop: StopPlacement,
}

/// The trade a filled entry opened, or `None` when nothing was received (yet).
pub(crate) fn trade_from_fill(
    plan: &EntryPlan,
    order: &Order,
    rules: &crate::exchange::SymbolRules,
    opened: &Opened<'_>,
) -> Option<Trade> {
    if order.status.is_open() {
        return None;
    }
    let (size, entry_quote) = position_of(order, plan.direction, rules);
    let entry_px = order.avg_price()?.0;
    if size <= Decimal::ZERO {
        return None;
    }
    let prices = bracket_prices(entry_px, plan.sl_pct, plan.tp_pct, plan.direction, rules);
    // The entry filled: a trade exists whatever happens next. If the bracket cannot be built
    // at the fill price, the trade is recorded without prices and `protect` reports it.
    let (tp_px, sl_px, sl_limit_px) = prices
        .map(|p| (p.tp_px, p.sl_px, p.sl_limit_px))
        .unwrap_or((Decimal::ZERO, Decimal::ZERO, Decimal::ZERO));
    Some(Trade {
        symbol: plan.symbol.clone(),
        direction: plan.direction,
        bot: plan.bot.clone(),
        exchange: opened.exchange,
        size,
        entry_px,
        entry_quote,
        sl_px,
        tp_px,
        sl_pct: plan.sl_pct,
        tp_pct: plan.tp_pct,
        protection: TradeProtection::pending(
            opened.stop,
            sl_limit_px,
            Some(plan.oco_client_order_id.clone()),
        ),
        entry_order_id: Some(order.order_id),
        entry_client_order_id: Some(order.client_order_id.clone()),
        source: plan.source,
        date: opened.date.to_string(),
        opened_at: opened.now.to_string(),
    })
}

fn opened_message(trade: &Trade) -> templates::TradeOpened {
    let text = |d: Decimal| d.normalize().to_string();
    templates::TradeOpened {
        symbol: trade.symbol.clone(),
        direction: trade.direction.as_str().into(),
        bot: trade.bot.clone(),
        size: text(trade.size),
        entry_px: text(trade.entry_px),
        sl_px: text(trade.sl_px),
        tp_px: text(trade.tp_px),
        entry_order_id: trade.entry_order_id.unwrap_or_default(),
        oco_list_id: trade.protection.list_id(),
        sl_oid: trade.protection.stop_order_id(),
        tp_oid: trade.protection.take_profit_order_id(),
        stop_watched: trade.protection.stop_watched(),
        exchange: trade.exchange.to_string(),
    }
}
