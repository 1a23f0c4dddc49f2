//! The areas' public faces in one value, cloned into every HTTP handler and every scheduler
//! job: the API and the scheduler reach the areas through it, and neither owns it.

use std::sync::Arc;

use crate::activity::Dashboard;
use crate::clock::SharedClock;
use crate::config::Config;
use crate::store::Store;

/// What every handler and every job can reach, behind one reference count: axum clones the
/// state for every middleware and extractor of every request, and one count is cheaper than
/// one per area (docs/benchmarks.md, API throughput). Reads like [`Areas`] through `Deref`.
#[derive(Clone)]
pub struct AppState(Arc<Areas>);

impl AppState {
    pub fn new(areas: Areas) -> Self {
        Self(Arc::new(areas))
    }
}

impl std::ops::Deref for AppState {
    type Target = Areas;

    fn deref(&self) -> &Areas {
        &self.0
    }
}

/// The areas' public faces.
pub struct Areas {
    pub config: Arc<Config>,
    pub clock: SharedClock,
    pub store: Store,
    /// Who may call the API (tokens, protected mode).
    pub auth: Arc<crate::auth::Auth>,
    /// The append-only log of money and operator actions.
    pub audit: crate::audit::Audit,
    pub dashboard: Arc<Dashboard>,
    /// The dashboard page's live view (closed when the service stops).
    pub live: crate::dashboard::live::Live,
    pub license: Arc<crate::license::License>,
    pub plugins: crate::plugins::Plugins,
    /// The active exchange as agent reads reach it (the read share of the request budget);
    /// `None` when the configured exchange has no client yet (exchange B). Money paths reach
    /// the exchange through execution and protection only.
    pub exchange: Option<Arc<dyn crate::exchange::Exchange>>,
    /// Market contexts of the active exchange (`None` without an exchange client).
    pub market: Option<Arc<crate::market::MarketContexts>>,
    /// The in-process exchange simulator in paper mode (kept alive here; tests and the demo
    /// read it).
    pub paper: Option<Arc<spotbot_sim::RunningSim>>,
    /// The exchange's streams as the host follows them (`[exchange] streams`).
    pub feed: Option<Arc<crate::exchange::feed::Feed>>,
    pub messenger: crate::messenger::Messenger,
    pub execution: crate::execution::Execution,
    pub signals: crate::signals::Signals,
    pub protection: crate::protection::Protection,
    /// The scan pipelines: MR Combined scan-and-signal, Pump Momentum alerts.
    pub scans: crate::scans::Scans,
    /// The built-in jobs and their status (the background loop is owned by the app).
    pub scheduler: crate::scheduler::Scheduler<AppState>,
    /// `GET /api/news`'s sources and its 10-minute cache.
    pub news: Arc<crate::news::News>,
    /// What `GET /metrics` exposes; execution holds a clone to count the orders it sends.
    pub metrics: crate::metrics::Metrics,
}
