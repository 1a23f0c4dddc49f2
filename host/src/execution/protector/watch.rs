//! The stops the service watches, polled: every `[protection] watch_interval_ms` (1 s by default) the
//! last prices are read once (one request for all symbols, from the money share of the
//! request budget), and every open trade whose stop lives with the service and whose price
//! crossed it is exited at market ([`super::watched`]). The loop reads the open trades from the
//! store on every tick, so a restart rebuilds the watch by itself; without such trades it asks
//! the exchange nothing. While the exchange's price stream is live the loop asks nothing
//! either: the streamed prices reach the same check (`protection::reactions`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;

use super::watched::stop_crossed;
use crate::background::Background;
use crate::exchange::feed::Feed;
use crate::execution::Execution;

/// Starts the watch loop (with an exchange client only). Stopping ends the loop after the
/// check in progress (an exit under way finishes).
pub fn spawn(
    execution: &Execution,
    every: Duration,
    feed: Option<Arc<Feed>>,
) -> Option<Background> {
    execution.orders().ok()?;
    let execution = execution.clone();
    Some(Background::spawn(|mut stopped| async move {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                _ = interval.tick() => {
                    if !feed.as_ref().is_some_and(|f| f.prices_live()) {
                        execution.check_watched_stops().await;
                    }
                }
            }
        }
    }))
}

impl Execution {
    /// One check of every watched stop; exits what crossed. Failures are logged and the next
    /// tick tries again (an exit is journaled, so a retry never sells twice).
    pub async fn check_watched_stops(&self) {
        let watched: Vec<_> = match self.book().open_trades() {
            Ok(trades) => trades.into_iter().filter(|t| t.protection.stop_watched()).collect(),
            Err(err) => {
                tracing::error!(%err, "watched stops: open trades unreadable");
                return;
            }
        };
        let Ok(orders) = self.orders() else { return };
        if watched.is_empty() {
            return;
        }
        let prices: HashMap<String, Decimal> = match orders.exchange.prices().await {
            Ok(prices) => prices.into_iter().map(|(symbol, price)| (symbol, price.0)).collect(),
            Err(err) => {
                tracing::warn!(%err, "watched stops: no prices this tick");
                return;
            }
        };
        for trade in watched {
            let Some(price) = prices.get(&trade.symbol).copied() else { continue };
            if stop_crossed(&trade, price) {
                self.exit_at_crossed_stop(&trade.symbol, price).await;
            }
        }
    }

    /// Exits `symbol`'s trade whose watched stop `price` crossed; a failure is logged and
    /// shown in the activity log (the next price tries again).
    pub async fn exit_at_crossed_stop(&self, symbol: &str, price: Decimal) {
        if let Err(err) = self.exit_at_watched_stop(symbol, price).await {
            tracing::error!(%symbol, %err, "watched stop crossed but the exit failed");
            self.log(
                "finance",
                &format!("watched stop {symbol} crossed; exit failed: {err}"),
                "error",
            );
        }
    }
}
