//! Protection driven by the exchange's streams: an update that ends one of an open trade's
//! protection orders settles what the exchange did (a filled take-profit or stop closes its
//! trade, with the same settlement as the minute's run; a burst of updates settles once), a
//! filled pending LIMIT entry gets its protection, a price that crosses a watched stop exits at
//! once, a price past an exchange stop's limit checks for a gap at once (at most every 2 s per
//! symbol), trailing follows streamed prices (at most one move per symbol per
//! `[protection] trail_interval_ms`; the boss hears of those moves with the minute's run), and
//! every (re)subscription catches up with what the stream missed.
//! Everything here is idempotent with the polled paths: a settled exit is settled once, an exit
//! is journaled before it is sent.
//!
//! The loop also tells the feed which symbols to follow (those of the open trades) and the
//! boss when the streams stay down (`stream_outage`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use super::Protection;
use super::trailing::{self, TrailSettings, wanted_stop};
use crate::background::Background;
use crate::exchange::OrderStatus;
use crate::exchange::feed::{ExchangeEvent, Feed, OrderUpdate};
use crate::execution::trade::Trade;
use crate::execution::{ListRead, PriceReaction, price_reaction};

/// How often the followed symbols are brought in line with the open trades.
const SYMBOLS_EVERY: Duration = Duration::from_secs(1);
/// How often a symbol's stop is checked for a gap on streamed prices at most, ms.
const GAP_CHECK_EVERY_MS: i64 = 2_000;

/// Starts reacting to `feed`; stopping ends the loop after the reaction in progress.
pub fn spawn(protection: &Protection, feed: Arc<Feed>) -> Background {
    let protection = protection.clone();
    Background::spawn(|mut stopped| async move {
        let mut events = feed.subscribe();
        let mut due = Due::default();
        let mut symbols = tokio::time::interval(SYMBOLS_EVERY);
        let mut outage = protection.outage_watch();
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                _ = symbols.tick() => {
                    feed.watch_symbols(protection.open_symbols());
                    protection.observe_streams(&feed.status(), &mut outage);
                    // Prices that came too soon for trailing: their turn may have come.
                    for (symbol, price) in std::mem::take(&mut due.deferred) {
                        protection.price_moved(&symbol, price, &mut due).await;
                    }
                }
                event = events.recv() => {
                    // One reaction for everything that has arrived: a burst of updates (an OCO
                    // placed, a fill and its partner's expiry) settles once.
                    let mut batch = Batch::default();
                    match event {
                        Ok(event) => batch.add(event),
                        Err(RecvError::Lagged(_)) => batch.caught_up = true,
                        Err(RecvError::Closed) => break,
                    }
                    loop {
                        match events.try_recv() {
                            Ok(event) => batch.add(event),
                            Err(TryRecvError::Lagged(_)) => batch.caught_up = true,
                            Err(TryRecvError::Empty | TryRecvError::Closed) => break,
                        }
                    }
                    protection.react(batch, &mut due).await;
                }
            }
        }
    })
}

impl Protection {
    /// The symbols of the open trades.
    fn open_symbols(&self) -> BTreeSet<String> {
        self.inner
            .execution
            .book()
            .open_trades()
            .map(|trades| trades.into_iter().map(|t| t.symbol).collect())
            .unwrap_or_default()
    }

    async fn react(&self, batch: Batch, due: &mut Due) {
        if batch.caught_up || self.inner.execution.ends_protection(&batch.orders) {
            self.settle_pushed_exits().await;
        }
        if batch.caught_up || batch.orders.iter().any(may_fill_an_entry) {
            self.check_pending_entries().await;
        }
        for (symbol, price) in batch.prices {
            self.price_moved(&symbol, price, due).await;
        }
    }

    /// Settles every exit the exchange made (the first step of the minute's run), one run at a
    /// time with it.
    async fn settle_pushed_exits(&self) {
        let _one = self.inner.trailing.lock().await;
        let execution = &self.inner.execution;
        match execution.open_protection(ListRead::WhenTracked).await {
            Ok(open) => {
                let settled = execution.settle_exits(&open).await;
                for err in settled.errors {
                    tracing::warn!(%err, "pushed exit not settled; the minute's run retries");
                }
            }
            Err(err) => tracing::warn!(%err, "pushed exit not checked; the minute's run retries"),
        }
    }

    async fn check_pending_entries(&self) {
        let execution = &self.inner.execution;
        if execution.pending_entries().is_ok_and(|p| p.is_empty()) {
            return;
        }
        if let Err(err) = execution.check_pending().await {
            tracing::warn!(%err, "pending entries not checked; the scheduled check retries");
        }
    }

    /// A streamed price for `symbol`'s trade, as its protection reads it: a watched stop it
    /// crossed exits at once; an exchange stop is checked for a gap once the price is past
    /// its limit (at most every 2 s), else the trailing rule runs (at most one move per
    /// `[protection] trail_interval_ms`; a price that comes too soon is tried again later).
    async fn price_moved(&self, symbol: &str, price: Decimal, due: &mut Due) {
        let execution = &self.inner.execution;
        let Ok(trades) = execution.book().open_trades() else { return };
        let Some(trade) = trades.into_iter().find(|t| t.symbol == symbol) else { return };
        let now = self.inner.clock.now_ms();
        match price_reaction(&trade, price) {
            PriceReaction::Nothing => {}
            PriceReaction::ExitAtStop => execution.exit_at_crossed_stop(symbol, price).await,
            PriceReaction::CheckGap => {
                if due.take(symbol, Step::Gap, now, GAP_CHECK_EVERY_MS) {
                    let _one = self.inner.trailing.lock().await;
                    let gap_exit = self.inner.config.protection.gap_exit;
                    if let Err(err) = trailing::gap_of(execution, &trade, gap_exit).await {
                        tracing::warn!(%err, "gap check on a streamed price failed");
                    }
                }
            }
            PriceReaction::Trail => self.trail_on(&trade, price, now, due).await,
        }
    }

    /// The trailing rule on a streamed price, for a stop resting on the exchange.
    async fn trail_on(&self, trade: &Trade, price: Decimal, now: i64, due: &mut Due) {
        let execution = &self.inner.execution;
        let symbol = trade.symbol.as_str();
        let settings = TrailSettings::of(&execution.strategy_keys(&trade.bot));
        if wanted_stop(trade, price, &settings).is_none() {
            return;
        }
        let every =
            i64::try_from(self.inner.config.protection.trail_interval_ms).unwrap_or(i64::MAX);
        if !due.take(symbol, Step::Trail, now, every) {
            // Too soon after the last move: the latest such price is tried again later.
            due.deferred.insert(symbol.to_string(), price);
            return;
        }
        let _one = self.inner.trailing.lock().await;
        match trailing::trail_at(execution, trade, price).await {
            Ok(Some(update)) => {
                let mut raised = self.inner.raised.lock().unwrap_or_else(|e| e.into_inner());
                // One row per symbol (from its first old stop to its latest), so the list is
                // bounded by the open trades even when no trailing run drains it.
                match raised.iter_mut().find(|r| r.symbol == update.symbol) {
                    Some(row) => {
                        row.new_sl = update.new_sl;
                        row.profit_pct = update.profit_pct;
                    }
                    None => raised.push(update),
                }
            }
            Ok(None) => {}
            Err(err) => tracing::warn!(%err, "trailing on a streamed price failed"),
        }
    }
}

/// The events that arrived together.
#[derive(Default)]
struct Batch {
    orders: Vec<OrderUpdate>,
    /// The latest price per symbol.
    prices: BTreeMap<String, Decimal>,
    caught_up: bool,
}

impl Batch {
    fn add(&mut self, event: ExchangeEvent) {
        match event {
            ExchangeEvent::Order(update) => self.orders.push(update),
            ExchangeEvent::Price { symbol, price, .. } => {
                self.prices.insert(symbol, price);
            }
            ExchangeEvent::CaughtUp => self.caught_up = true,
        }
    }
}

/// What a streamed price may set off, per symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Step {
    Gap,
    Trail,
}

/// When each (symbol, step) last ran, on the service's clock, and the latest price per symbol
/// that came too soon to trail on.
#[derive(Default)]
struct Due {
    last: HashMap<(String, Step), i64>,
    deferred: HashMap<String, Decimal>,
}

impl Due {
    /// Whether the step may run now (at least `every` ms after its last run); if so, records it.
    fn take(&mut self, symbol: &str, step: Step, now: i64, every: i64) -> bool {
        let key = (symbol.to_string(), step);
        if self.last.get(&key).is_some_and(|last| now - last < every) {
            return false;
        }
        self.last.insert(key, now);
        true
    }
}

/// A fill of a plain order (not a list leg) may be a pending LIMIT entry's.
fn may_fill_an_entry(update: &OrderUpdate) -> bool {
    update.list_id.is_none()
        && matches!(update.status, OrderStatus::Filled | OrderStatus::PartiallyFilled)
}
