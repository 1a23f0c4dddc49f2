//! The audit log: one append-only row per money or operator action — who (the token's agent),
//! what (route, symbol), which approval, the outcome, and the orders it sent with their
//! exchange ids, quantities and prices (table `audit`, `GET /api/audit`).
//!
//! Owns: the row shape, the acting request's identity while it runs ([`Acting`], a task-local
//! that the execution carries into its own task, so every order the journal records names the
//! request that sent it) and the table. Must never: offer a way to change or delete a row,
//! hold a secret (bodies are not recorded: a license key travels in one), or lose the row of an
//! action because the action failed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::store::{Store, StoreError, tables};

/// Who is acting for the request being served, and which request it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Acting {
    /// The token's agent (`coo`), `open access` on a service without tokens, or
    /// `the boss in the messenger`.
    pub agent: String,
    /// The token's public id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    /// This process's number of the request (it joins the audit row and the journal's
    /// orders).
    pub request: u64,
}

tokio::task_local! {
    static ACTING: Acting;
}

static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

impl Acting {
    pub fn new(agent: String, token_id: Option<String>) -> Self {
        Self { agent, token_id, request: NEXT_REQUEST.fetch_add(1, Ordering::Relaxed) }
    }

    /// The request being served by this task, if one is.
    pub fn current() -> Option<Acting> {
        ACTING.try_with(Clone::clone).ok()
    }

    /// Runs `work` as this request.
    pub async fn scope<F: std::future::Future>(self, work: F) -> F::Output {
        ACTING.scope(self, work).await
    }
}

/// Runs `work` as the current task's acting request, if any: for work moved to another task.
pub async fn carry<F: std::future::Future>(acting: Option<Acting>, work: F) -> F::Output {
    match acting {
        Some(acting) => acting.scope(work).await,
        None => work.await,
    }
}

/// One row of the audit log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditRow {
    /// Position in the log, from 1 (filled in when read).
    #[serde(default)]
    pub seq: u64,
    /// RFC 3339.
    pub at: String,
    /// Who: the token's agent, or `open access`.
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    /// `POST /api/signal/{symbol}/confirm`: the method and the route pattern.
    pub route: String,
    /// The path and query as called (no body: bodies may hold a license key).
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Who approved the signal it executed (the boss's YES), when it executed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
    /// The HTTP status of the answer.
    pub status: u16,
    /// `ok`, `refused` (the answer said `ok: false`) or the error code.
    pub outcome: String,
    /// The refusal's or error's sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The orders this request sent, as the journal recorded them.
    pub orders: Vec<AuditOrder>,
}

/// One order a request sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditOrder {
    pub client_order_id: String,
    /// entry, oco, take_profit, watched_stop, exit.
    pub kind: String,
    pub symbol: String,
    /// The order as sent: side, type, quantity, prices.
    pub request: serde_json::Value,
    /// The exchange's order id (an OCO's list id) once placed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange_id: Option<i64>,
    /// The journal's outcome: placed (with the exchange's status), rejected, unknown, absent.
    pub outcome: serde_json::Value,
}

/// Where the orders a request sent are read from: the order journal, whose entries name the
/// request that sent them (execution's `Journal` is it; the audit log does not know its
/// shape).
pub trait RequestOrders: Send + Sync {
    /// The orders the journal recorded for `request` after `mark`.
    fn orders_of(&self, request: u64, mark: u64) -> Result<Vec<AuditOrder>, StoreError>;
}

/// What an action was and how it ended, for its row.
#[derive(Debug, Clone, Default)]
pub struct Done {
    /// RFC 3339, from the service clock.
    pub at: String,
    pub route: String,
    pub target: String,
    pub symbol: Option<String>,
    pub approval: Option<String>,
    pub status: u16,
    pub outcome: String,
    pub detail: Option<String>,
}

/// The log in the store.
#[derive(Clone)]
pub struct Audit {
    store: Store,
    orders: Arc<dyn RequestOrders>,
}

impl Audit {
    pub fn new(store: Store, orders: Arc<dyn RequestOrders>) -> Self {
        Self { store, orders }
    }

    /// Where the order journal stands now: the orders of a request are those after it.
    pub fn journal_mark(&self) -> Result<u64, StoreError> {
        self.store.read(|r| r.last_seq(tables::ORDER_JOURNAL))
    }

    /// Appends the row of an action `acting` ran (the journal stood at `mark` before it),
    /// with the orders it sent. A failure to write is logged: the action already happened.
    pub fn write(&self, acting: &Acting, mark: Result<u64, StoreError>, done: Done) {
        let orders = match mark.and_then(|mark| self.orders.orders_of(acting.request, mark)) {
            Ok(orders) => orders,
            Err(err) => {
                tracing::error!(%err, "the audit row's orders cannot be read from the journal");
                Vec::new()
            }
        };
        let row = AuditRow {
            seq: 0,
            at: done.at,
            agent: acting.agent.clone(),
            token_id: acting.token_id.clone(),
            route: done.route,
            target: done.target,
            symbol: done.symbol,
            approval: done.approval,
            status: done.status,
            outcome: done.outcome,
            detail: done.detail,
            orders,
        };
        if let Err(err) = self.store.write(|w| w.append(tables::AUDIT, &row)) {
            tracing::error!(%err, route = %row.route, "the audit row cannot be written");
        }
    }

    /// Rows newest first, after skipping `offset`, at most `limit`; and how many there are.
    pub fn page(&self, offset: usize, limit: usize) -> Result<(Vec<AuditRow>, u64), StoreError> {
        self.store.read(|r| {
            let rows: Vec<(u64, AuditRow)> = r.newest(tables::AUDIT, offset, limit)?;
            let total = r.count(tables::AUDIT)?;
            Ok((rows.into_iter().map(|(seq, row)| AuditRow { seq, ..row }).collect(), total))
        })
    }
}
