//! Protection: the finance loop's safety nets around the account and its open positions.
//!
//! Owns: the drawdown watch (equity against its high-water mark and the entry pause, table
//! `protection`, so a pause survives restarts), the daily PnL report and the health check.
//! Must never: place, move or cancel an order through anything but [`Execution`]; the pause
//! stops new entries only through execution's own pause (`execution::limits`), which the
//! drawdown watch sets and clears, and exits stay possible while it holds.
//!
//! - [`equity`]: the account's value in the quote asset (balance plus positions at market).
//! - [`drawdown`]: equity against its high-water mark, the pause, and resuming.
//! - [`equity_series`]: the equity of every minute, kept bounded, for the equity chart.
//! - [`report`]: the daily PnL report (`POST /api/status/report`, 21:00).
//! - [`health`]: the health check (exchange, clock, license, stops, messenger).
//! - [`trailing`]: the protection run, every minute: exits the exchange made, gapped stops,
//!   the trailing stop.
//! - [`reactions`]: the same safety nets driven by the exchange's streams (fills, prices).
//!
//! Each kind of protection (an OCO on the exchange, a stop the service watches, with its own
//! polling loop) is one component of `execution::protector`; these jobs call its face.

mod drawdown;
mod equity;
pub mod equity_series;
mod health;
pub mod reactions;
mod report;
mod stream_outage;
mod trailing;

use std::sync::Arc;

use chrono_tz::Tz;

pub use drawdown::{DrawdownStatus, EquitySeries, Paused, Resumed};
pub use health::{Check, Finding, HealthReport, MAX_CLOCK_SKEW_MS, Verdict};
pub use report::{DailyReport, OpenPosition, ReportOutcome};
pub use trailing::{GapRow, TrailSettings, TrailUpdate, TrailingReport, trail_at, trail_with};

use crate::activity::Dashboard;
use crate::clock::SharedClock;
use crate::config::Config;
use crate::exchange::{Exchange, ExchangeError};
use crate::execution::Execution;
use crate::license::License;
use crate::messenger::{Messenger, Outgoing};
use crate::store::{Store, StoreError};

/// Why a protection step could not measure or record what it needs.
#[derive(Debug, thiserror::Error)]
pub enum ProtectionError {
    #[error("no exchange client for the active exchange {0}; equity cannot be measured")]
    NoExchange(crate::config::ExchangeName),
    #[error("exchange error: {0}")]
    Exchange(#[from] ExchangeError),
    /// An open position's symbol has no last price, so its value is unknown.
    #[error("no last price for {0}; equity cannot be measured")]
    NoPrice(String),
    #[error("store error: {0}")]
    Store(#[from] StoreError),
    /// An execution step (a stop move, an exit) or its time limit.
    #[error(transparent)]
    Execution(#[from] crate::execution::ExecutionError),
}

/// What protection needs from the rest of the host.
pub struct Parts {
    pub execution: Execution,
    pub exchange: Option<Arc<dyn Exchange>>,
    pub store: Store,
    pub messenger: Messenger,
    pub dashboard: Arc<Dashboard>,
    pub license: Arc<License>,
    pub config: Arc<Config>,
    pub clock: SharedClock,
    /// Where the drawdown watch's equity measurements are exposed (`GET /metrics`).
    pub metrics: crate::metrics::Metrics,
}

struct Inner {
    execution: Execution,
    exchange: Option<Arc<dyn Exchange>>,
    store: Store,
    messenger: Messenger,
    dashboard: Arc<Dashboard>,
    license: Arc<License>,
    config: Arc<Config>,
    clock: SharedClock,
    metrics: crate::metrics::Metrics,
    /// `[market] timezone`: the day of the daily report.
    tz: Tz,
    /// One trailing run at a time (the scheduler's and an agent's never overlap).
    trailing: tokio::sync::Mutex<()>,
    /// Stops raised on streamed prices since the last run, one row per symbol; the run tells
    /// the boss of them together with its own.
    raised: std::sync::Mutex<Vec<TrailUpdate>>,
}

/// The protection area's public face. Cheap to clone.
#[derive(Clone)]
pub struct Protection {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Protection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protection").finish_non_exhaustive()
    }
}

impl Protection {
    pub fn new(parts: Parts) -> Self {
        let tz = parts.config.market.tz();
        Self {
            inner: Arc::new(Inner {
                execution: parts.execution,
                exchange: parts.exchange,
                store: parts.store,
                messenger: parts.messenger,
                dashboard: parts.dashboard,
                license: parts.license,
                config: parts.config,
                clock: parts.clock,
                metrics: parts.metrics,
                tz,
                trailing: tokio::sync::Mutex::new(()),
                raised: std::sync::Mutex::new(Vec::new()),
            }),
        }
    }

    /// One trailing run: gapped stops are exited (or reported), then every profitable trade's
    /// stop follows the price. A second call while one runs waits for it. The boss hears of
    /// raised stops in one message.
    pub async fn trailing_run(&self) -> Result<TrailingReport, ProtectionError> {
        let _one = self.inner.trailing.lock().await;
        let exchange = self
            .inner
            .exchange
            .as_ref()
            .ok_or(ProtectionError::NoExchange(self.inner.execution.exchange_name()))?;
        let gap_exit = self.inner.config.protection.gap_exit;
        let mut report = trailing::run(&self.inner.execution, exchange.as_ref(), gap_exit).await;
        let streamed =
            std::mem::take(&mut *self.inner.raised.lock().unwrap_or_else(|e| e.into_inner()));
        report.updated.splice(0..0, streamed);
        if !report.updated.is_empty() {
            self.alert(trailing::raised_message(&report.updated), "trailing stop update");
        }
        Ok(report)
    }

    fn currency(&self) -> &str {
        crate::exchange::account_currency(&self.inner.config)
    }

    fn now_iso(&self) -> String {
        self.inner.clock.now().to_rfc3339()
    }

    fn log(&self, agent: &str, action: &str, status: &str) {
        self.inner.dashboard.record(agent, action, status);
    }

    /// Sends an alert without waiting: protection runs every minute and must never stall on
    /// the messenger; a failure becomes an activity-log entry instead.
    fn alert(&self, message: Outgoing, what: &'static str) {
        let messenger = self.inner.messenger.clone();
        if !messenger.is_configured() {
            self.log("finance", &format!("{what} not sent: messenger not configured"), "error");
            return;
        }
        let dashboard = self.inner.dashboard.clone();
        tokio::spawn(async move {
            if let Err(err) = messenger.send(&message).await {
                tracing::warn!(%err, what, "messenger send failed");
                dashboard.record("finance", &format!("messenger failed ({what}): {err}"), "error");
            }
        });
    }
}
