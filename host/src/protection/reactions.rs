//! Protection driven by the exchange's streams: an order update on a symbol with an open trade
//! settles what the exchange did (a filled take-profit or stop closes its trade, with the same
//! settlement as the minute's run), a filled pending LIMIT entry gets its protection, a price
//! that crosses a watched stop exits at once, and every (re)subscription catches up with what
//! the stream missed. Everything here is idempotent with the polled paths: a settled exit is
//! settled once, an exit is journaled before it is sent.
//!
//! The loop also tells the feed which symbols to follow: those of the open trades.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use tokio::sync::broadcast::error::RecvError;

use super::Protection;
use crate::background::Background;
use crate::exchange::OrderStatus;
use crate::exchange::feed::{ExchangeEvent, Feed, OrderUpdate};
use crate::execution::{ListRead, watched::stop_crossed};

/// How often the followed symbols are brought in line with the open trades.
const SYMBOLS_EVERY: Duration = Duration::from_secs(1);

/// Starts reacting to `feed`; stopping ends the loop after the reaction in progress.
pub fn spawn(protection: &Protection, feed: Arc<Feed>) -> Background {
    let protection = protection.clone();
    Background::spawn(|mut stopped| async move {
        let mut events = feed.subscribe();
        let mut symbols = tokio::time::interval(SYMBOLS_EVERY);
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                _ = symbols.tick() => feed.watch_symbols(protection.open_symbols()),
                event = events.recv() => match event {
                    Ok(event) => protection.react(event).await,
                    // Events were dropped: read everything through the polled path once.
                    Err(RecvError::Lagged(_)) => protection.react(ExchangeEvent::CaughtUp).await,
                    Err(RecvError::Closed) => break,
                },
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

    async fn react(&self, event: ExchangeEvent) {
        match event {
            ExchangeEvent::Order(update) => {
                if self.has_open_trade(&update.symbol) {
                    self.settle_pushed_exits().await;
                }
                if may_fill_an_entry(&update) {
                    self.check_pending_entries().await;
                }
            }
            ExchangeEvent::Price { symbol, price, .. } => {
                self.watched_stop_at(&symbol, price).await
            }
            ExchangeEvent::CaughtUp => {
                self.settle_pushed_exits().await;
                self.check_pending_entries().await;
            }
        }
    }

    fn has_open_trade(&self, symbol: &str) -> bool {
        self.inner
            .execution
            .book()
            .open_trades()
            .is_ok_and(|t| t.iter().any(|t| t.symbol == symbol))
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

    /// Exits a trade whose watched stop `price` crossed.
    async fn watched_stop_at(&self, symbol: &str, price: Decimal) {
        let execution = &self.inner.execution;
        let Ok(trades) = execution.book().open_trades() else { return };
        let crossed =
            trades.iter().any(|t| t.symbol == symbol && t.stop_watched() && stop_crossed(t, price));
        if !crossed {
            return;
        }
        if let Err(err) = execution.exit_at_watched_stop(symbol, price).await {
            tracing::error!(%symbol, %err, "watched stop crossed but the exit failed");
            self.log(
                "finance",
                &format!("watched stop {symbol} crossed; exit failed: {err}"),
                "error",
            );
        }
    }
}

/// A fill of a plain order (not a list leg) may be a pending LIMIT entry's.
fn may_fill_an_entry(update: &OrderUpdate) -> bool {
    update.list_id.is_none()
        && matches!(update.status, OrderStatus::Filled | OrderStatus::PartiallyFilled)
}
