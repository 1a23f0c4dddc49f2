//! Execution: sizing, the bracket order (MARKET entry, then one OCO after the confirmed fill),
//! closing, the order journal and reconciliation with the exchange.
//!
//! Owns: every order the service sends (only through [`orders::Orders`], which journals it),
//! the open trades, the closed-trade history and the daily counters. Must never: send an
//! order without a client order id derived from its cause, re-send while an earlier attempt is
//! unsettled, leave a filled entry unprotected without alerting the boss, or sell while an OCO
//! still locks the coin. It talks to the exchange only through the `Exchange` trait.
//!
//! - [`bracket`]: entry + protection (and re-protection).
//! - [`protector`]: a trade's protection, one component per kind behind one face (an OCO
//!   list, or a resting take-profit and a stop the service watches, with its polling loop).
//! - [`close`]: close and closeall (cancel the OCO, wait for the coin, sell what is free).
//! - [`manual`]: manual LIMIT entries with a time to live (pending entries).
//! - [`reconcile`]: settles differences between the store, the journal and the exchange.
//! - [`journal`], [`orders`]: write-before-send and lookup-before-resend; [`client_id`]: the
//!   order ids that name their cause and purpose.
//! - [`book`]: open trades, history and daily counters in the store.
//! - [`settle`]: what the exchange closed on its own (a filled take-profit or stop-loss).
//! - [`restop`]: checking a new stop for a protected trade (trailing) before its kind moves it.
//! - [`restore`]: an operator puts a trade record into the book.
//! - [`stats`]: aggregates of the closed-trade history; [`sync`]: round trips made outside the
//!   service copied into that history.
//! - [`limits`]: what blocks new entries (daily limits, the drawdown pause it owns).
//! - [`sizing`], [`plan`], [`trade`]: the pure parts.

pub mod book;
mod bracket;
pub mod client_id;
mod close;
mod entry_cancel;
mod holdings;
pub mod journal;
pub mod limits;
pub mod manual;
pub mod orders;
pub mod plan;
pub mod protector;
mod reconcile;
mod remainder;
mod restop;
mod restore;
mod settle;
pub mod sizing;
pub mod stats;
pub mod sync;
pub mod trade;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use rust_decimal::Decimal;

pub use book::{Book, Counters, Day};
pub use close::{CloseAllReport, CloseAllStatus, CloseRow, CloseStatus};
pub use entry_cancel::{CancelledEntry, EntryCancelRow, EntryCancelStatus};
pub use limits::{EntryBlock, EntryPause};
pub use orders::SendError;
pub use plan::EntryPlan;
pub use protector::{
    OpenProtection, PriceReaction, ends_protection, price_reaction, protection_gone,
};
pub use reconcile::{ReconcileReport, Telling};
pub use restop::StopMove;
pub use restore::RestoreInput;
pub use settle::{ListRead, Settled};
pub use trade::{
    ClosedTrade, ClosedTradeView, Direction, ProtectionState, Trade, TradeProtection, TradeSource,
    TradeView,
};

use crate::activity::Dashboard;
use crate::clock::SharedClock;
use crate::config::{Config, ExchangeName, StopPlacement, StrategyKeys, Tier};
use crate::exchange::{Exchange, ExchangeError, SymbolRules};
use crate::messenger::{Messenger, Outgoing};
use crate::plugins::Plugins;
use crate::store::{Store, StoreError};
use journal::Journal;
use orders::Orders;

/// Timing of the execution steps; the defaults suit a real exchange, tests shorten them.
#[derive(Debug, Clone)]
pub struct Timing {
    /// How long to wait for a MARKET order to become final.
    pub fill_timeout: Duration,
    /// Attempts to place an OCO before the trade is declared unprotected.
    pub oco_attempts: u32,
    /// Pause before the second OCO attempt (doubles each time).
    pub retry_delay: Duration,
    /// How long a close waits for the cancelled OCO to free the coin.
    pub free_timeout: Duration,
    /// Pause between two lookups of an order with an unknown outcome.
    pub lookup_delay: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            fill_timeout: Duration::from_secs(10),
            oco_attempts: 4,
            retry_delay: Duration::from_millis(500),
            free_timeout: Duration::from_secs(10),
            lookup_delay: Duration::from_millis(300),
        }
    }
}

/// Why an execution did not happen (or did not finish).
#[derive(Debug, thiserror::Error)]
pub enum ExecutionError {
    #[error("no exchange client for the active exchange {0}; trading is unavailable")]
    NoExchange(ExchangeName),
    /// A request field is invalid; the text names it.
    #[error("{0}")]
    Invalid(String),
    /// A limit blocks new entries (daily limits, drawdown pause).
    #[error("{0}")]
    EntryBlocked(EntryBlock),
    #[error("a trade (or a manual entry waiting for its fill) for {0} is already open")]
    TradeExists(String),
    #[error("no open position for {0}")]
    NoPosition(String),
    #[error("{symbol} is not listed on the exchange")]
    UnknownSymbol { symbol: String },
    #[error("order refused: {0}")]
    Refused(String),
    #[error("exchange error: {0}")]
    Exchange(ExchangeError),
    #[error(
        "the outcome of order {client_order_id} is unknown; it is settled by a lookup by client \
         order id before anything is sent again (the boss was alerted): {detail}"
    )]
    OutcomeUnknown { client_order_id: String, detail: String },
    #[error(
        "the execution ran longer than 300 s; it goes on and its result is reported to the boss"
    )]
    Timeout,
    #[error("store error: {0}")]
    Store(#[from] StoreError),
}

/// Longest an API call waits for an execution (spec: 504 after 300 s).
pub const EXECUTION_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs an execution in its own task and waits up to [`EXECUTION_TIMEOUT`]: past that the
/// caller gets `Timeout` while the execution finishes — an entry is never abandoned between
/// its fill and its OCO because a caller gave up.
pub async fn run_bounded<T, E>(
    job: impl std::future::Future<Output = Result<T, E>> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<ExecutionError> + Send + 'static,
{
    // The acting request goes along, so the journal names it on every order the job sends.
    let job = crate::audit::carry(crate::audit::Acting::current(), job);
    match tokio::time::timeout(EXECUTION_TIMEOUT, tokio::spawn(job)).await {
        Ok(Ok(result)) => result,
        Ok(Err(join)) => {
            Err(ExecutionError::Refused(format!("the execution stopped: {join}")).into())
        }
        Err(_) => Err(ExecutionError::Timeout.into()),
    }
}

impl ExecutionError {
    fn from_send(err: SendError, client_order_id: &str) -> Self {
        match err {
            e if e.is_unknown_outcome() => Self::OutcomeUnknown {
                client_order_id: client_order_id.to_string(),
                detail: e.to_string(),
            },
            SendError::Exchange(ExchangeError::Refused { reason }) => Self::Refused(reason),
            SendError::Exchange(e) => Self::Exchange(e),
            SendError::Store(e) => Self::Store(e),
            SendError::Unsettled(e) => Self::OutcomeUnknown {
                client_order_id: client_order_id.to_string(),
                detail: e.to_string(),
            },
        }
    }
}

impl From<ExchangeError> for ExecutionError {
    fn from(err: ExchangeError) -> Self {
        match err {
            ExchangeError::InvalidSymbol { .. } => Self::Refused(err.to_string()),
            ExchangeError::Refused { reason } => Self::Refused(reason),
            other => Self::Exchange(other),
        }
    }
}

struct Inner {
    orders: Option<Orders>,
    exchange_name: ExchangeName,
    book: Book,
    messenger: Messenger,
    dashboard: Arc<Dashboard>,
    config: Arc<Config>,
    plugins: Plugins,
    clock: SharedClock,
    tz: Tz,
    timing: Timing,
    /// Where the stops of new trades live: the exchange's capability and `[protection] stop`.
    stop_placement: StopPlacement,
    /// One lock per symbol: entries, closes and reconciliation of a symbol never overlap.
    symbol_locks: crate::keyed_locks::KeyedLocks,
    /// One reconciliation at a time.
    reconciling: tokio::sync::Mutex<()>,
    /// Findings of reconciliation the boss was told (the minute's run tells only new ones).
    told: Mutex<std::collections::HashSet<String>>,
    /// Set when an order's outcome was unknown: the background loop reconciles soon.
    reconcile_wanted: Arc<tokio::sync::Notify>,
}

/// The execution area's public face. Cheap to clone.
#[derive(Clone)]
pub struct Execution {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Execution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Execution").field("exchange", &self.inner.exchange_name).finish()
    }
}

/// What execution needs from the rest of the host.
pub struct Parts {
    pub exchange: Option<Arc<dyn Exchange>>,
    pub store: Store,
    pub messenger: Messenger,
    pub dashboard: Arc<Dashboard>,
    pub config: Arc<Config>,
    /// Where the strategies' effective configs come from (size, daily limit, tier risk).
    pub plugins: Plugins,
    pub clock: SharedClock,
    pub timing: Timing,
    /// Counts the orders sent.
    pub metrics: crate::metrics::Metrics,
}

impl Execution {
    pub fn new(parts: Parts) -> Self {
        let Parts {
            exchange,
            store,
            messenger,
            dashboard,
            config,
            plugins,
            clock,
            timing,
            metrics,
        } = parts;
        let tz = config.market.tz();
        let exchange_name = match &exchange {
            Some(e) => e.name(),
            None => config.exchange.active,
        };
        let stop_placement = match exchange.as_ref().map(|e| e.protection()) {
            Some(crate::exchange::Protection::Watched) => StopPlacement::Service,
            _ => config.protection.stop,
        };
        let reconcile_wanted = Arc::new(tokio::sync::Notify::new());
        let orders = exchange.map(|exchange| {
            Orders::new(
                exchange,
                Journal::new(store.clone()),
                clock.clone(),
                timing.lookup_delay,
                metrics,
            )
            .on_unknown_outcome(reconcile_wanted.clone())
        });
        Self {
            inner: Arc::new(Inner {
                orders,
                exchange_name,
                book: Book::new(store),
                messenger,
                dashboard,
                config,
                plugins,
                clock,
                tz,
                timing,
                stop_placement,
                symbol_locks: crate::keyed_locks::KeyedLocks::default(),
                reconciling: tokio::sync::Mutex::new(()),
                told: Mutex::new(std::collections::HashSet::new()),
                reconcile_wanted,
            }),
        }
    }

    /// The exchange's name (`exchange_a`), as trades record it.
    pub fn exchange_name(&self) -> ExchangeName {
        self.inner.exchange_name
    }

    /// Where the stops of new trades live.
    pub fn stop_placement(&self) -> StopPlacement {
        self.inner.stop_placement
    }

    pub fn book(&self) -> &Book {
        &self.inner.book
    }

    /// The order journal (read-only use: reports and tests).
    pub fn journal(&self) -> Journal {
        Journal::new(self.inner.book.store().clone())
    }

    fn orders(&self) -> Result<&Orders, ExecutionError> {
        self.inner.orders.as_ref().ok_or(ExecutionError::NoExchange(self.inner.exchange_name))
    }

    pub fn now_ms(&self) -> i64 {
        self.inner.clock.now_ms()
    }

    /// The symbol of an open position given as a symbol (BTCUSDT) or a base asset (BTC).
    pub fn position_symbol(&self, given: &str) -> Result<String, ExecutionError> {
        let with_quote = format!("{given}{}", self.inner.config.market.quote_asset);
        for candidate in [given, with_quote.as_str()] {
            if self.inner.book.open_trade(candidate)?.is_some() {
                return Ok(candidate.to_string());
            }
        }
        Err(ExecutionError::NoPosition(given.to_string()))
    }

    /// Today in the configured time zone.
    pub fn today(&self) -> Day {
        Day::of(self.inner.clock.now(), self.inner.tz)
    }

    /// The day `time` falls on in the configured time zone.
    pub fn day_of(&self, time: DateTime<Utc>) -> Day {
        Day::of(time, self.inner.tz)
    }

    pub fn counters(&self) -> Result<Counters, StoreError> {
        self.inner.book.counters(self.today())
    }

    /// Orders sent today (in the configured time zone): the journal's entries since local
    /// midnight, whatever their outcome.
    pub fn orders_today(&self) -> Result<Vec<journal::JournalEntry>, StoreError> {
        let local = self.inner.clock.now().with_timezone(&self.inner.tz);
        let midnight = local
            .date_naive()
            .and_hms_opt(0, 0, 0)
            .and_then(|t| t.and_local_timezone(self.inner.tz).earliest())
            .map_or(local.to_utc(), |t| t.to_utc());
        self.journal().since(midnight)
    }

    /// The symbol's rules; `UnknownSymbol` when the exchange does not list it.
    pub async fn symbol_rules(&self, symbol: &str) -> Result<SymbolRules, ExecutionError> {
        match self.orders()?.exchange.symbol_rules(symbol).await {
            Ok(rules) => Ok(rules),
            Err(ExchangeError::InvalidSymbol { .. }) => {
                Err(ExecutionError::UnknownSymbol { symbol: symbol.to_string() })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Zeroes trades_today; returns (before, after).
    pub fn reset_daily(&self) -> Result<(i64, i64), StoreError> {
        let before = self.inner.book.reset_trades_today(self.today())?;
        Ok((before, 0))
    }

    /// The keys of `bot`'s effective config that execution acts on.
    pub fn strategy_keys(&self, bot: &str) -> StrategyKeys {
        self.inner.plugins.strategy_keys(bot)
    }

    /// Percent of the capital base for an entry of `bot`: its `size_pct` times the risk
    /// multiplier of the setup's tier (`risk_normal`, `risk_aplus`, `risk_aplusplus`).
    fn size_pct(&self, bot: &str, tier: Option<Tier>) -> Decimal {
        let keys = self.strategy_keys(bot);
        let pct = keys.size_pct.saturating_mul(keys.risk_of_tier(tier));
        pct.clamp(Decimal::ZERO, Decimal::ONE_HUNDRED).round_dp(8)
    }

    async fn lock_symbol(&self, symbol: &str) -> tokio::sync::OwnedMutexGuard<()> {
        self.inner.symbol_locks.lock(symbol).await
    }

    fn now_iso(&self) -> String {
        self.inner.clock.now().to_rfc3339()
    }

    /// Sends a message to the boss without waiting: a messenger failure never blocks or
    /// undoes a trade; it is written to the activity log instead.
    pub fn notify(&self, message: Outgoing, what: &'static str) {
        let messenger = self.inner.messenger.clone();
        if !messenger.is_configured() {
            return;
        }
        let dashboard = self.inner.dashboard.clone();
        tokio::spawn(async move {
            if let Err(err) = messenger.send(&message).await {
                tracing::warn!(%err, what, "messenger send failed");
                dashboard.record("bot-ops", &format!("messenger failed ({what}): {err}"), "error");
            }
        });
    }

    fn log(&self, agent: &str, action: &str, status: &str) {
        self.inner.dashboard.record(agent, action, status);
    }

    /// An entry smaller than its size asks, because a filter of the symbol caps it, is said
    /// in the log and the activity log before it is sent.
    fn note_capped(&self, symbol: &str, sizing: &sizing::Sizing) {
        if let Some(why) = &sizing.capped {
            tracing::warn!(symbol, why, "entry capped by the symbol's filters");
            self.log("bot-ops", &format!("entry {symbol} capped: {why}"), "warning");
        }
    }
}
