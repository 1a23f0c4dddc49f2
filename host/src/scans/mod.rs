//! The scan pipelines: a strategy's scan-and-signal (MR Combined's, or any strategy plugin's
//! through the earlier route set; results become pending signals) and Pump Momentum's alert
//! scan (alerts are stored and notified, never traded), plus the pump alerts' outcome
//! evaluation.
//!
//! Owns: which symbols a scan looks at ([`universe`]), the pump alert history
//! (`PUMP_ALERTS`). Must never: place an order (trades go through the signal flow and its
//! confirm), or run a plugin other than through the plugins area.

mod pump;
mod pump_outcomes;
mod signal_scan;
mod universe;

use std::sync::Arc;

pub use pump::{
    AlertFilter, IgnitionCandle, PUMP_MOMENTUM, PumpAlert, PumpOutcome, PumpScan, PumpScanRow,
};
pub use pump_outcomes::OutcomeReport;
pub use signal_scan::{
    DayBudget, GateScores, MR_COMBINED, ScanAndSignal, Scored, SignalRun, Signaled, Skipped,
    StrategyScan,
};
pub(crate) use signal_scan::{result_scores, signal_input};

use crate::activity::Dashboard;
use crate::clock::SharedClock;
use crate::config::Config;
use crate::exchange::Exchange;
use crate::execution::{Execution, ExecutionError};
use crate::messenger::Messenger;
use crate::plugins::{PluginError, Plugins};
use crate::signals::{SignalError, Signals};
use crate::store::{Store, StoreError};

/// Why a scan pipeline failed as a whole (a single symbol's trouble is reported inside the
/// answer instead).
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error(transparent)]
    Signal(#[from] SignalError),
    #[error(transparent)]
    Execution(#[from] ExecutionError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the scan universe is unavailable: {0}")]
    Universe(String),
}

/// What the pipelines need from the rest of the host.
pub struct Parts {
    pub plugins: Plugins,
    pub signals: Signals,
    pub execution: Execution,
    pub exchange: Option<Arc<dyn Exchange>>,
    pub store: Store,
    pub messenger: Messenger,
    pub dashboard: Arc<Dashboard>,
    pub config: Arc<Config>,
    pub clock: SharedClock,
}

/// The scan pipelines' public face. Cheap to clone.
#[derive(Clone)]
pub struct Scans {
    parts: Arc<Parts>,
}

impl std::fmt::Debug for Scans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scans").finish_non_exhaustive()
    }
}

impl Scans {
    pub fn new(parts: Parts) -> Self {
        Scans { parts: Arc::new(parts) }
    }

    /// The symbols a strategy scans when the caller names none.
    async fn symbols_for(
        &self,
        keys: &crate::config::StrategyKeys,
    ) -> Result<Vec<String>, ScanError> {
        let p = &self.parts;
        universe::symbols(keys, &p.config, p.exchange.as_deref()).await.map_err(ScanError::Universe)
    }
}
