//! The order journal: every order the service sends is written here before it is sent and
//! updated with each outcome (table `order_journal`, plus `journal_index` from client order id
//! to its newest entry).
//!
//! The journal is what makes a re-send safe. An order whose outcome is unknown (timeout, 5xx,
//! dropped connection, a crash between sending and recording) stays *unsettled*; while it is,
//! [`Journal::begin`] refuses a second send with the same client order id, so the only way
//! forward is a lookup by that id at the exchange ([`super::orders`]). That closes the
//! double-send window the exchange client alone leaves open when the exchange answers
//! "unknown" twice.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::plan::EntryPlan;
use crate::audit::{AuditOrder, RequestOrders};
use crate::metrics::MetricLabel;
use crate::store::{Store, StoreError, Writer, tables};

/// What an order is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrderKind {
    /// The MARKET BUY that opens a trade.
    Entry,
    /// The take-profit/stop-loss OCO list of a trade.
    Oco,
    /// The resting take-profit LIMIT of a trade whose stop the service watches.
    TakeProfit,
    /// A stop level the service watches, set or moved: nothing is sent (the entry records the
    /// level for the trade's stop history), until the price crosses it and an `Exit` goes.
    WatchedStop,
    /// The MARKET SELL that closes a trade.
    Exit,
}

/// The outcome of one send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Outcome {
    /// Written, about to be sent (a crash here leaves it unsettled).
    Sending,
    /// The exchange has it: order id (or order-list id for an OCO) and its status then.
    Placed { id: i64, status: String },
    /// A definite refusal (by the exchange or by the filters); nothing exists.
    Rejected { error: String },
    /// The exchange may or may not have it; settled by a lookup by client order id.
    Unknown { detail: String },
    /// A lookup after an unknown outcome found nothing: it was never placed.
    Absent,
}

/// The `purpose` label of `spotbot_orders_total`.
impl MetricLabel for OrderKind {
    fn metric_label(&self) -> &'static str {
        match self {
            OrderKind::Entry => "entry",
            OrderKind::Oco => "oco",
            OrderKind::TakeProfit => "take_profit",
            OrderKind::WatchedStop => "watched_stop",
            OrderKind::Exit => "exit",
        }
    }
}

/// The `outcome` label of `spotbot_orders_total` for a send that did not simply succeed: an
/// operator alerts on the rate of `rejected` and `unknown`.
impl MetricLabel for Outcome {
    fn metric_label(&self) -> &'static str {
        match self {
            Outcome::Placed { .. } => "placed",
            Outcome::Rejected { .. } => "rejected",
            Outcome::Sending | Outcome::Unknown { .. } | Outcome::Absent => "unknown",
        }
    }
}

impl Outcome {
    /// Sending and Unknown are unsettled: nothing may be sent with that id until a lookup.
    pub fn is_settled(&self) -> bool {
        !matches!(self, Self::Sending | Self::Unknown { .. })
    }
}

/// One journal entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    pub client_order_id: String,
    pub kind: OrderKind,
    pub symbol: String,
    /// What caused the order, in words ("signal 1kq2x BTCUSDT confirmed", "close ETHUSDT").
    pub cause: String,
    /// The order as sent (side, type, quantity, prices).
    pub request: serde_json::Value,
    /// For entries: what to build the trade from if the process dies after the fill.
    pub plan: Option<EntryPlan>,
    pub outcome: Outcome,
    /// ISO 8601.
    pub created_at: String,
    pub updated_at: String,
    /// The API request (and its agent) that sent the order; absent for the service's own
    /// work (reconciliation, the watched stops, the scheduler's jobs) and older entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acting: Option<crate::audit::Acting>,
}

/// Where the newest entry of a client order id is, and whether it is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct IndexRow {
    seq: u64,
    settled: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error(
        "order {client_order_id} from an earlier attempt has an unknown outcome; it must be \
         looked up before anything is sent again"
    )]
    Unsettled { client_order_id: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How an entry's first row reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// Flushed before the order is sent.
    Durable,
    /// Committed without waiting for the disk (see [`Journal::begin_recoverable`]).
    Recoverable,
}

/// The order journal's face. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Journal {
    store: Store,
}

impl RequestOrders for Journal {
    fn orders_of(&self, request: u64, mark: u64) -> Result<Vec<AuditOrder>, StoreError> {
        let entries: Vec<(u64, JournalEntry)> =
            self.store.read(|r| r.after(tables::ORDER_JOURNAL, mark))?;
        Ok(entries
            .iter()
            .filter(|(_, e)| e.acting.as_ref().is_some_and(|a| a.request == request))
            .map(|(_, e)| audit_order(e))
            .collect())
    }
}

/// One journal entry as its request's audit row lists it.
fn audit_order(entry: &JournalEntry) -> AuditOrder {
    let exchange_id = match &entry.outcome {
        Outcome::Placed { id, .. } => Some(*id),
        _ => None,
    };
    AuditOrder {
        client_order_id: entry.client_order_id.clone(),
        kind: entry.kind.metric_label().to_string(),
        symbol: entry.symbol.clone(),
        request: entry.request.clone(),
        exchange_id,
        outcome: serde_json::to_value(&entry.outcome).unwrap_or_default(),
    }
}

impl Journal {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Writes `entry` (outcome `Sending`) before it is sent, durably. Refused while an earlier
    /// entry with the same client order id is unsettled.
    pub fn begin(&self, entry: &JournalEntry) -> Result<u64, JournalError> {
        self.begin_committed(entry, Commit::Durable)
    }

    /// [`Journal::begin`] for an order whose client order id an earlier durable entry already
    /// holds (a trade's first OCO, named in its entry's plan): the commit does not wait for
    /// the disk. A crash that loses it leaves no row, and reconciliation looks the order up by
    /// that id before it would send one (`reconcile.rs`, an open trade without protection).
    pub fn begin_recoverable(&self, entry: &JournalEntry) -> Result<u64, JournalError> {
        self.begin_committed(entry, Commit::Recoverable)
    }

    fn begin_committed(&self, entry: &JournalEntry, commit: Commit) -> Result<u64, JournalError> {
        let id = entry.client_order_id.as_str();
        let mut unsettled = false;
        let write = |w: &Writer| {
            if let Some(row) = w.get::<IndexRow>(tables::JOURNAL_INDEX, id)?
                && !row.settled
            {
                unsettled = true;
                return Ok(0);
            }
            let seq = w.append(tables::ORDER_JOURNAL, entry)?;
            w.put(tables::JOURNAL_INDEX, id, &IndexRow { seq, settled: false })?;
            Ok(seq)
        };
        let seq = match commit {
            Commit::Durable => self.store.write(write)?,
            Commit::Recoverable => self.store.write_recoverable(write)?,
        };
        if unsettled {
            return Err(JournalError::Unsettled { client_order_id: id.to_string() });
        }
        Ok(seq)
    }

    /// Records the outcome of entry `seq`; `also` writes in the same transaction (e.g. the trade
    /// the fill opened), so a crash can never keep one without the other.
    ///
    /// The commit does not wait for the disk ([`Store::write_recoverable`]): [`Journal::begin`]
    /// made the entry durable before the order was sent (or, after
    /// [`Journal::begin_recoverable`], an earlier durable entry names its client id), so a
    /// crash that loses a settlement leaves the entry unsettled (or the trade unprotected), and
    /// reconciliation settles it again from the exchange (looking the order up by client order
    /// id, rebuilding the trade of an entry fill from its plan). The next `begin`, or any
    /// durable write, takes it to the disk. With `begin_recoverable` for its OCO, a confirm
    /// flushes once (docs/benchmarks.md, "Confirm to OCO accepted").
    pub fn settle(
        &self,
        seq: u64,
        outcome: Outcome,
        now: &str,
        also: impl FnOnce(&Writer) -> Result<(), StoreError>,
    ) -> Result<JournalEntry, StoreError> {
        self.store.write_recoverable(|w| {
            let mut entry: JournalEntry = w
                .get_seq(tables::ORDER_JOURNAL, seq)?
                .ok_or_else(|| StoreError::Database(format!("journal entry {seq} is missing")))?;
            entry.outcome = outcome;
            entry.updated_at = now.to_string();
            w.replace(tables::ORDER_JOURNAL, seq, &entry)?;
            let row = IndexRow { seq, settled: entry.outcome.is_settled() };
            w.put(tables::JOURNAL_INDEX, &entry.client_order_id, &row)?;
            also(w)?;
            Ok(entry)
        })
    }

    /// The newest entry with this client order id.
    pub fn latest(&self, client_order_id: &str) -> Result<Option<(u64, JournalEntry)>, StoreError> {
        self.store.read(|r| {
            let Some(row) = r.get::<IndexRow>(tables::JOURNAL_INDEX, client_order_id)? else {
                return Ok(None);
            };
            Ok(r.get_seq(tables::ORDER_JOURNAL, row.seq)?.map(|e| (row.seq, e)))
        })
    }

    /// Every client order id the journal knows (an exchange that carries shorter ids than
    /// ours, exchange B's 16-byte cloids, learns them at start to name what it finds).
    pub fn client_ids(&self) -> Result<Vec<String>, StoreError> {
        self.store.read(|r| {
            let rows: Vec<(String, IndexRow)> = r.all(tables::JOURNAL_INDEX)?;
            Ok(rows.into_iter().map(|(id, _)| id).collect())
        })
    }

    /// Every unsettled entry, oldest first (reconciliation settles them).
    pub fn unsettled(&self) -> Result<Vec<(u64, JournalEntry)>, StoreError> {
        self.store.read(|r| {
            let rows: Vec<(String, IndexRow)> = r.all(tables::JOURNAL_INDEX)?;
            let mut out = Vec::new();
            for (_, row) in rows.into_iter().filter(|(_, row)| !row.settled) {
                if let Some(entry) = r.get_seq(tables::ORDER_JOURNAL, row.seq)? {
                    out.push((row.seq, entry));
                }
            }
            out.sort_by_key(|(seq, _)| *seq);
            Ok(out)
        })
    }

    /// The newest `limit` entries (of `symbol` only, when given), newest first.
    pub fn newest(
        &self,
        symbol: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(u64, JournalEntry)>, StoreError> {
        self.store.read(|r| {
            r.newest_matching(tables::ORDER_JOURNAL, limit, |_, e: &JournalEntry| {
                symbol.is_none_or(|s| e.symbol == s)
            })
        })
    }

    /// Every entry written since `created_after` (an RFC 3339 time of the service's clock),
    /// newest first. Entries are appended in clock order, so the read stops at the first
    /// older one.
    pub fn since(&self, created_after: DateTime<Utc>) -> Result<Vec<JournalEntry>, StoreError> {
        let entries = self.store.read(|r| {
            r.newest_while(tables::ORDER_JOURNAL, |e: &JournalEntry| {
                DateTime::parse_from_rfc3339(&e.created_at)
                    .is_ok_and(|t| t.with_timezone(&Utc) >= created_after)
            })
        })?;
        Ok(entries.into_iter().map(|(_, e)| e).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_counted_by_purpose_and_by_how_a_send_failed() {
        assert_eq!(OrderKind::TakeProfit.metric_label(), "take_profit");
        assert_eq!(Outcome::Rejected { error: "-2010".into() }.metric_label(), "rejected");
        assert_eq!(Outcome::Unknown { detail: "timeout".into() }.metric_label(), "unknown");
        assert_eq!(Outcome::Placed { id: 1, status: "NEW".into() }.metric_label(), "placed");
    }

    fn entry(id: &str) -> JournalEntry {
        JournalEntry {
            client_order_id: id.into(),
            kind: OrderKind::Entry,
            symbol: "BTCUSDT".into(),
            cause: "test".into(),
            request: serde_json::json!({}),
            plan: None,
            outcome: Outcome::Sending,
            created_at: "t".into(),
            acting: None,
            updated_at: "t".into(),
        }
    }

    #[test]
    fn a_second_send_is_refused_while_the_first_is_unsettled() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(Store::open(dir.path()).unwrap());
        let seq = journal.begin(&entry("SE_1_BTCUSDT")).unwrap();
        assert!(matches!(
            journal.begin(&entry("SE_1_BTCUSDT")),
            Err(JournalError::Unsettled { .. })
        ));
        journal
            .settle(seq, Outcome::Unknown { detail: "timeout".into() }, "t", |_| Ok(()))
            .unwrap();
        assert!(journal.begin(&entry("SE_1_BTCUSDT")).is_err(), "unknown is still unsettled");
        assert_eq!(journal.unsettled().unwrap().len(), 1);
        journal.settle(seq, Outcome::Absent, "t", |_| Ok(())).unwrap();
        assert!(journal.unsettled().unwrap().is_empty());
        let again = journal.begin(&entry("SE_1_BTCUSDT")).unwrap();
        assert!(again > seq, "a settled absent order may be sent again");
        assert_eq!(journal.latest("SE_1_BTCUSDT").unwrap().unwrap().0, again);
    }
}
