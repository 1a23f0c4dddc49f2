//! Which tables each committed write touched, announced after the commit.
//!
//! Readers that follow the service live (the dashboard's event stream) learn from here that
//! something they show changed, whichever area wrote it, instead of polling the store. Only
//! the table names travel: a follower reads what it needs itself, so a slow follower that
//! misses announcements (the channel keeps the newest [`CAPACITY`]) re-reads everything once.
//!
//! Each table also counts the committed writes that touched it ([`Generations`]): a reader
//! that decoded a table keeps what it decoded until the count moves.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

/// Announcements kept for a follower that has not read them yet.
const CAPACITY: usize = 256;

/// The tables one committed write transaction wrote to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed(Arc<BTreeSet<String>>);

impl Changed {
    pub(crate) fn new(tables: BTreeSet<String>) -> Self {
        Self(Arc::new(tables))
    }

    /// Whether the write touched the table named `table` (`tables::X.name()`).
    pub fn touched(&self, table: &str) -> bool {
        self.0.contains(table)
    }
}

/// How many committed writes touched each table since the store opened.
#[derive(Debug, Default)]
pub struct Generations(Mutex<HashMap<String, u64>>);

impl Generations {
    /// Counts one committed write that touched `tables`.
    pub(super) fn bump(&self, tables: &BTreeSet<String>) {
        let mut counts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for table in tables {
            *counts.entry(table.clone()).or_default() += 1;
        }
    }

    /// The count of the table named `table`: unchanged since an earlier read means that no
    /// write touched the table in between.
    pub fn of(&self, table: &str) -> u64 {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).get(table).copied().unwrap_or(0)
    }
}

pub(super) fn channel() -> broadcast::Sender<Changed> {
    broadcast::channel(CAPACITY).0
}

#[cfg(test)]
mod tests {
    use redb::TableHandle;

    use super::super::{Store, tables};

    #[tokio::test]
    async fn a_commit_announces_the_tables_it_wrote_and_a_failed_write_announces_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut changes = store.changes();
        store
            .write(|w| {
                w.put(tables::OPEN_TRADES, "BTCUSDT", &serde_json::json!({}))?;
                w.set_counter("trades_today", 1)
            })
            .unwrap();
        let changed = changes.try_recv().unwrap();
        assert!(changed.touched(tables::OPEN_TRADES.name()));
        assert!(changed.touched(tables::COUNTERS.name()));
        assert!(!changed.touched(tables::ORDER_JOURNAL.name()));

        let failed: Result<(), _> = store.write(|w| {
            w.append(tables::ORDER_JOURNAL, &serde_json::json!({}))?;
            Err(super::super::StoreError::Database("refused".into()))
        });
        assert!(failed.is_err());
        store.read(|r| r.counter("trades_today")).unwrap();
        assert!(changes.try_recv().is_err(), "nothing was committed");

        store.write(|w| w.remove(tables::OPEN_TRADES, "ETHUSDT")).unwrap();
        assert!(changes.try_recv().is_err(), "removing nothing changes nothing");
    }
}
