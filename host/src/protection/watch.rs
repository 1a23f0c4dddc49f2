//! The stops the service watches, polled: every `[protection] watch_interval_ms` (1 s by default) the
//! last prices are read once (one request for all symbols, from the money share of the
//! request budget), and every open trade whose stop lives with the service and whose price
//! crossed it is exited at market through execution (see `execution::watched`). The loop reads
//! the open trades from the store on every tick, so a restart rebuilds the watch by itself;
//! without such trades it asks the exchange nothing.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;

use super::Protection;
use crate::background::Background;
use crate::exchange::feed::Feed;
use crate::execution::watched::stop_crossed;

/// Starts the watch loop (with an exchange client only). While `feed`'s price stream is live
/// the loop asks the exchange nothing: the stream's prices reach the same check
/// ([`super::reactions`]). Stopping ends the loop after the check in progress (an exit under
/// way finishes).
pub fn spawn(
    protection: &Protection,
    every: Duration,
    feed: Option<Arc<Feed>>,
) -> Option<Background> {
    protection.inner.exchange.as_ref()?;
    let protection = protection.clone();
    Some(Background::spawn(|mut stopped| async move {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                _ = interval.tick() => {
                    if !feed.as_ref().is_some_and(|f| f.prices_live()) {
                        protection.check_watched_stops().await;
                    }
                }
            }
        }
    }))
}

impl Protection {
    /// One check of every watched stop; exits what crossed. Failures are logged and the next
    /// tick tries again (an exit is journaled, so a retry never sells twice).
    pub async fn check_watched_stops(&self) {
        let execution = &self.inner.execution;
        let watched: Vec<_> = match execution.book().open_trades() {
            Ok(trades) => trades.into_iter().filter(|t| t.stop_watched()).collect(),
            Err(err) => {
                tracing::error!(%err, "watched stops: open trades unreadable");
                return;
            }
        };
        let Some(exchange) = &self.inner.exchange else { return };
        if watched.is_empty() {
            return;
        }
        let prices: HashMap<String, Decimal> = match exchange.prices().await {
            Ok(prices) => prices.into_iter().map(|(symbol, price)| (symbol, price.0)).collect(),
            Err(err) => {
                tracing::warn!(%err, "watched stops: no prices this tick");
                return;
            }
        };
        for trade in watched {
            let Some(price) = prices.get(&trade.symbol).copied() else { continue };
            if !stop_crossed(&trade, price) {
                continue;
            }
            if let Err(err) = execution.exit_at_watched_stop(&trade.symbol, price).await {
                tracing::error!(symbol = %trade.symbol, %err, "watched stop crossed but the exit failed");
                self.log(
                    "finance",
                    &format!("watched stop {} crossed; exit failed: {err}", trade.symbol),
                    "error",
                );
            }
        }
    }
}
