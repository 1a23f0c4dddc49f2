//! Cancelling pending manual entries on request: one (`POST /api/pending-entries/cancel`) or
//! all of them (closeall, before it closes the positions). The LIMIT order is cancelled at the
//! exchange by its id; its final state then decides, exactly as a check would: nothing filled →
//! the entry is gone; a part filled → that part is a trade, protected; it filled completely
//! before the cancel arrived → it is a trade, protected. A filled entry is never left without
//! its OCO, and a cancel that fails leaves the entry pending (the next check sees it again).

use serde::Serialize;
use utoipa::ToSchema;

use super::manual::{Ending, Outcome, PendingEntry, PendingEntryView, classify};
use super::trade::TradeView;
use super::{Execution, ExecutionError};
use crate::store::tables;

/// What a cancelled entry became.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryCancelStatus {
    /// Nothing had filled: the order is cancelled and the entry removed.
    Cancelled,
    /// Part had filled: the rest is cancelled, the part is an open trade with its OCO.
    PartiallyFilled,
    /// It filled completely before the cancel reached the exchange: an open trade with its OCO.
    Filled,
    /// The cancel failed (closeall rows only); the entry is still pending.
    Error,
}

impl EntryCancelStatus {
    /// The name the API answers (and the activity log shows).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::PartiallyFilled => "partially_filled",
            Self::Filled => "filled",
            Self::Error => "error",
        }
    }
}

/// The answer of `POST /api/pending-entries/cancel`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CancelledEntry {
    pub ok: bool,
    pub symbol: String,
    /// `cancelled`, `partially_filled` or `filled`.
    pub status: EntryCancelStatus,
    /// The entry as it was pending.
    pub entry: PendingEntryView,
    /// The open trade of what had filled (`partially_filled`, `filled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trade: Option<TradeView>,
}

/// One pending entry in the closeall answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EntryCancelRow {
    pub symbol: String,
    /// Starts with `MT_`.
    pub client_order_id: String,
    pub status: EntryCancelStatus,
    /// Why the entry is still pending (`error` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Execution {
    /// Cancels the pending entry of `given` (a symbol such as ETHUSDT, or its base asset with
    /// the configured quote asset). `None` when no entry waits for that symbol.
    pub async fn cancel_pending(
        &self,
        given: &str,
    ) -> Result<Option<CancelledEntry>, ExecutionError> {
        let with_quote = format!("{given}{}", self.inner.config.market.quote_asset);
        for symbol in [given, with_quote.as_str()] {
            if let Some(entry) = self.pending_entry_for(symbol)? {
                return self.cancel_entry(&entry).await;
            }
        }
        Ok(None)
    }

    /// Cancels every pending entry, one after the other; a failure is reported in its row and
    /// the others go on.
    pub async fn cancel_all_pending(&self) -> Result<Vec<EntryCancelRow>, ExecutionError> {
        let mut rows = Vec::new();
        for entry in self.pending_entries()? {
            let row = |status, error| EntryCancelRow {
                symbol: entry.plan.symbol.clone(),
                client_order_id: entry.plan.entry_client_order_id.clone(),
                status,
                error,
            };
            rows.push(match self.cancel_entry(&entry).await {
                Ok(Some(cancelled)) => row(cancelled.status, None),
                // Settled by a concurrent check meanwhile: nothing waits any more.
                Ok(None) => continue,
                Err(err) => row(EntryCancelStatus::Error, Some(err.to_string())),
            });
        }
        Ok(rows)
    }

    /// Cancels one entry under its symbol's lock (re-read there: a concurrent check may have
    /// settled it) and settles its order's final state.
    async fn cancel_entry(
        &self,
        listed: &PendingEntry,
    ) -> Result<Option<CancelledEntry>, ExecutionError> {
        let _symbol = self.lock_symbol(&listed.plan.symbol).await;
        let key = &listed.plan.entry_client_order_id;
        let stored: Option<PendingEntry> =
            self.inner.book.store().read(|r| r.get(tables::PENDING_ENTRIES, key))?;
        let Some(entry) = stored else {
            return Ok(None);
        };
        let (order, ending) = match classify(self.cancel_entry_order(&entry).await?) {
            Outcome::Filled(order) => (order, None),
            Outcome::Ended(order) => (order, Some(Ending::Cancelled)),
            Outcome::Waiting => {
                return Err(ExecutionError::Refused(format!(
                    "the entry {key} is still on the book after its cancel; it stays pending"
                )));
            }
        };
        let trade = self.settle_entry(&entry, &order, ending).await?;
        let status = match (&ending, &trade) {
            (None, _) => EntryCancelStatus::Filled,
            (Some(_), Some(_)) => EntryCancelStatus::PartiallyFilled,
            (Some(_), None) => EntryCancelStatus::Cancelled,
        };
        Ok(Some(CancelledEntry {
            ok: true,
            symbol: entry.plan.symbol.clone(),
            status,
            entry: entry.view(),
            trade,
        }))
    }
}
