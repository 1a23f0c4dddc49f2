//! Persistence: one redb database in the data folder, a schema version, a table per
//! persistent thing (see [`tables`]).
//!
//! Every write is one committed transaction. [`Store::write`] commits with redb's immediate
//! durability, so a write the API reports as done survives a crash (also `kill -9`);
//! [`Store::write_recoverable`] does not wait for the disk and is only for what the service
//! redoes on its own after a crash (the order journal's settlements, found again by looking
//! the order up at the exchange). Callers never see redb types: they read and write JSON
//! documents through [`Store::read`] and [`Store::write`].

pub mod changes;
pub mod decoded;
pub mod tables;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use redb::{
    Database, Durability, ReadTransaction, ReadableDatabase, ReadableTable, ReadableTableMetadata,
    TableHandle, WriteTransaction,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use changes::{Changed, Generations};
use tables::{KeyedTable, SequencedTable};

/// The schema this build writes. Bump it with a migration when a stored shape changes
/// incompatibly; an older build then refuses the newer database instead of misreading it.
pub const SCHEMA_VERSION: u64 = 3;

const SCHEMA_KEY: &str = "schema_version";
const DB_FILE: &str = "spotbot.redb";
/// Memory redb may use to cache the database's pages (its default is 1 GiB, which a store that
/// only grows — journal, audit, closed trades — would fill over months). The hot pages (open
/// trades, the day's counters, recent rows) are a small part of it.
const CACHE_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the database at {path} has schema version {found}, newer than the {supported} this build \
         understands; run a newer spotbot or restore a backup"
    )]
    NewerSchema { path: String, found: u64, supported: u64 },
    #[error("database error: {0}")]
    Database(String),
    #[error("stored record in table {table} is unreadable: {source}")]
    Corrupt { table: String, source: serde_json::Error },
}

fn db_err(err: impl std::fmt::Display) -> StoreError {
    StoreError::Database(err.to_string())
}

/// The service's database. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    db: Arc<Database>,
    changes: tokio::sync::broadcast::Sender<Changed>,
    generations: Arc<Generations>,
    /// The durability of [`Store::write`]: `None` in memory, where there is no disk to wait
    /// for.
    durable: Durability,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}

impl Store {
    /// Opens (or creates) the database in `data_dir`, creating every table and refusing a
    /// database written by a newer schema.
    pub fn open(data_dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|err| {
            StoreError::Database(format!("cannot create data folder {}: {err}", data_dir.display()))
        })?;
        let path = data_dir.join(DB_FILE);
        let db = Database::builder().set_cache_size(CACHE_BYTES).create(&path).map_err(db_err)?;
        let store = Self::with(db);
        store.prepare_schema(&path.display().to_string())?;
        Ok(store)
    }

    /// A database in memory, gone when the last handle drops: for a run that keeps nothing
    /// (a backtest's replay), where a commit that waits for the disk would only cost time.
    pub fn in_memory() -> Result<Self, StoreError> {
        let db = Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(db_err)?;
        let store = Self { durable: Durability::None, ..Self::with(db) };
        store.prepare_schema("(in memory)")?;
        Ok(store)
    }

    fn with(db: Database) -> Self {
        Self {
            db: Arc::new(db),
            changes: changes::channel(),
            generations: Arc::default(),
            durable: Durability::Immediate,
        }
    }

    fn prepare_schema(&self, path: &str) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(db_err)?;
        {
            let mut meta = tx.open_table(tables::META).map_err(db_err)?;
            let found = meta.get(SCHEMA_KEY).map_err(db_err)?.map(|v| v.value());
            match found {
                Some(found) if found > SCHEMA_VERSION => {
                    return Err(StoreError::NewerSchema {
                        path: path.to_string(),
                        found,
                        supported: SCHEMA_VERSION,
                    });
                }
                Some(found) if found < SCHEMA_VERSION => {
                    migrate(&tx, found)?;
                    meta.insert(SCHEMA_KEY, SCHEMA_VERSION).map_err(db_err)?;
                }
                Some(_) => {}
                None => {
                    meta.insert(SCHEMA_KEY, SCHEMA_VERSION).map_err(db_err)?;
                }
            }
        }
        for table in tables::KEYED_TABLES {
            tx.open_table(*table).map_err(db_err)?;
        }
        for table in tables::SEQUENCED_TABLES {
            tx.open_table(*table).map_err(db_err)?;
        }
        tx.open_table(tables::COUNTERS).map_err(db_err)?;
        tx.commit().map_err(db_err)
    }

    /// The schema version recorded in the database.
    pub fn schema_version(&self) -> Result<u64, StoreError> {
        self.read(|r| {
            let meta = r.tx.open_table(tables::META).map_err(db_err)?;
            Ok(meta.get(SCHEMA_KEY).map_err(db_err)?.map_or(0, |v| v.value()))
        })
    }

    /// Runs `f` in one read transaction (a consistent snapshot).
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Reader) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let tx = self.db.begin_read().map_err(db_err)?;
        f(&Reader { tx })
    }

    /// Runs `f` in one write transaction and commits it durably (on disk; a store in memory has
    /// none) before returning; nothing is
    /// written when `f` fails.
    pub fn write<T>(
        &self,
        f: impl FnOnce(&Writer) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.write_with(self.durable, f)
    }

    /// Like [`Store::write`], but the commit does not wait for the disk (redb's
    /// `Durability::None`): it is atomic and every later read sees it, and it reaches the disk
    /// with the next durable commit or when the database closes cleanly; a crash before then
    /// loses it. Only for writes whose loss the service recovers from on its own: the order
    /// journal's settlements, which reconciliation redoes by looking the order up at the
    /// exchange (`Journal::settle`).
    pub fn write_recoverable<T>(
        &self,
        f: impl FnOnce(&Writer) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.write_with(Durability::None, f)
    }

    fn write_with<T>(
        &self,
        durability: Durability,
        f: impl FnOnce(&Writer) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut tx = self.db.begin_write().map_err(db_err)?;
        tx.set_durability(durability).map_err(db_err)?;
        let writer = Writer { tx: &tx, touched: RefCell::default() };
        let value = f(&writer)?;
        let touched = writer.touched.into_inner();
        tx.commit().map_err(db_err)?;
        self.generations.bump(&touched);
        if !touched.is_empty() {
            // Nobody following the store is fine.
            let _ = self.changes.send(Changed::new(touched));
        }
        Ok(value)
    }

    /// How many committed writes touched `table` so far (see [`Generations`]).
    pub fn generation(&self, table: impl TableHandle) -> u64 {
        self.generations.of(table.name())
    }

    /// The tables of every write committed from now on (see [`changes`]).
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<Changed> {
        self.changes.subscribe()
    }

    /// Waits until this handle is the last one, so that dropping it closes the database and
    /// releases its file lock; background work (a plugin reload, a license tick) that still
    /// holds a handle finishes first. False when `timeout` passed first.
    pub async fn wait_until_sole_handle(&self, timeout: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        while Arc::strong_count(&self.db) > 1 {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        true
    }

    /// Sets the schema version; only migrations and tests call this.
    pub fn set_schema_version(&self, version: u64) -> Result<(), StoreError> {
        self.write(|w| {
            let mut meta = w.tx.open_table(tables::META).map_err(db_err)?;
            meta.insert(SCHEMA_KEY, version).map_err(db_err)?;
            Ok(())
        })
    }
}

/// Brings a database of schema `from` up to [`SCHEMA_VERSION`] inside the opening transaction.
fn migrate(tx: &WriteTransaction, from: u64) -> Result<(), StoreError> {
    if from < 2 {
        // Schema 1 declared market snapshots as a sequenced table and never wrote to it;
        // schema 2 keys them by symbol and time.
        tx.delete_table(tables::MARKET_SNAPSHOTS_V1).map_err(db_err)?;
    }
    if from < 3 {
        move_entry_pause(tx)?;
    }
    Ok(())
}

/// Schema 3 gives the entry pause to execution: a pause stored inside protection's
/// `drawdown` document moves to table `entry_pause`, so a paused service stays paused.
fn move_entry_pause(tx: &WriteTransaction) -> Result<(), StoreError> {
    let mut protection = tx.open_table(tables::PROTECTION).map_err(db_err)?;
    let stored = protection.get("drawdown").map_err(db_err)?.map(|v| v.value().to_vec());
    let Some(bytes) = stored else {
        return Ok(());
    };
    let mut drawdown: serde_json::Value = decode(tables::PROTECTION.name(), &bytes)?;
    let pause = drawdown.as_object_mut().and_then(|d| d.remove("pause"));
    if let Some(pause) = pause.filter(|p| !p.is_null()) {
        let mut entry_pause = tx.open_table(tables::ENTRY_PAUSE).map_err(db_err)?;
        entry_pause.insert("drawdown", encode(&pause)?.as_slice()).map_err(db_err)?;
    }
    protection.insert("drawdown", encode(&drawdown)?.as_slice()).map_err(db_err)?;
    Ok(())
}

/// The smallest key after every key that starts with `prefix` (for range scans).
fn prefix_end(prefix: &str) -> String {
    format!("{prefix}\u{10FFFF}")
}

fn decode<T: DeserializeOwned>(table: &str, bytes: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(bytes)
        .map_err(|source| StoreError::Corrupt { table: table.to_string(), source })
}

fn get_document<T: DeserializeOwned>(
    open: &impl ReadableTable<&'static str, &'static [u8]>,
    table: KeyedTable,
    key: &str,
) -> Result<Option<T>, StoreError> {
    let value = open.get(key).map_err(db_err)?;
    value.map(|v| decode(table.name(), v.value())).transpose()
}

fn get_sequenced<T: DeserializeOwned>(
    open: &impl ReadableTable<u64, &'static [u8]>,
    table: SequencedTable,
    seq: u64,
) -> Result<Option<T>, StoreError> {
    let value = open.get(seq).map_err(db_err)?;
    value.map(|v| decode(table.name(), v.value())).transpose()
}

fn all_documents<T: DeserializeOwned>(
    open: &impl ReadableTable<&'static str, &'static [u8]>,
    table: KeyedTable,
) -> Result<Vec<(String, T)>, StoreError> {
    range_documents(open, table, "", None)
}

/// Documents whose key is in `from..to` (`to` None: to the end), in key order.
fn range_documents<T: DeserializeOwned>(
    open: &impl ReadableTable<&'static str, &'static [u8]>,
    table: KeyedTable,
    from: &str,
    to: Option<&str>,
) -> Result<Vec<(String, T)>, StoreError> {
    let entries = match to {
        Some(to) => open.range::<&str>(from..to),
        None => open.range::<&str>(from..),
    };
    let mut out = Vec::new();
    for entry in entries.map_err(db_err)? {
        let (key, value) = entry.map_err(db_err)?;
        out.push((key.value().to_string(), decode(table.name(), value.value())?));
    }
    Ok(out)
}

fn encode(value: &impl Serialize) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value).map_err(|err| StoreError::Database(format!("cannot encode: {err}")))
}

/// Read access inside [`Store::read`].
pub struct Reader {
    tx: ReadTransaction,
}

impl Reader {
    pub fn get<T: DeserializeOwned>(
        &self,
        table: KeyedTable,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        get_document(&self.tx.open_table(table).map_err(db_err)?, table, key)
    }

    /// Every document of a keyed table, in key order.
    pub fn all<T: DeserializeOwned>(
        &self,
        table: KeyedTable,
    ) -> Result<Vec<(String, T)>, StoreError> {
        all_documents(&self.tx.open_table(table).map_err(db_err)?, table)
    }

    /// The documents of a keyed table whose key is in `from..to`, in key order.
    pub fn range<T: DeserializeOwned>(
        &self,
        table: KeyedTable,
        from: &str,
        to: &str,
    ) -> Result<Vec<(String, T)>, StoreError> {
        range_documents(&self.tx.open_table(table).map_err(db_err)?, table, from, Some(to))
    }

    /// Documents of a sequenced table, newest first, after skipping `offset`, at most `limit`.
    pub fn newest<T: DeserializeOwned>(
        &self,
        table: SequencedTable,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(u64, T)>, StoreError> {
        let t = self.tx.open_table(table).map_err(db_err)?;
        let mut out = Vec::new();
        for entry in t.iter().map_err(db_err)?.rev().skip(offset).take(limit) {
            let (seq, value) = entry.map_err(db_err)?;
            out.push((seq.value(), decode(table.name(), value.value())?));
        }
        Ok(out)
    }

    /// The document at `seq` of a sequenced table.
    pub fn get_seq<T: DeserializeOwned>(
        &self,
        table: SequencedTable,
        seq: u64,
    ) -> Result<Option<T>, StoreError> {
        get_sequenced(&self.tx.open_table(table).map_err(db_err)?, table, seq)
    }

    /// The newest sequence number of a sequenced table (0 when it is empty).
    pub fn last_seq(&self, table: SequencedTable) -> Result<u64, StoreError> {
        let t = self.tx.open_table(table).map_err(db_err)?;
        Ok(t.last().map_err(db_err)?.map_or(0, |(seq, _)| seq.value()))
    }

    /// Documents of a sequenced table appended after `seq`, oldest first.
    pub fn after<T: DeserializeOwned>(
        &self,
        table: SequencedTable,
        seq: u64,
    ) -> Result<Vec<(u64, T)>, StoreError> {
        let t = self.tx.open_table(table).map_err(db_err)?;
        let mut out = Vec::new();
        for entry in t.range(seq.saturating_add(1)..).map_err(db_err)? {
            let (seq, value) = entry.map_err(db_err)?;
            out.push((seq.value(), decode(table.name(), value.value())?));
        }
        Ok(out)
    }

    /// How many documents a sequenced table holds.
    pub fn count(&self, table: SequencedTable) -> Result<u64, StoreError> {
        self.tx.open_table(table).map_err(db_err)?.len().map_err(db_err)
    }

    /// Documents of a sequenced table, newest first, that `keep` accepts, at most `limit`.
    pub fn newest_matching<T: DeserializeOwned>(
        &self,
        table: SequencedTable,
        limit: usize,
        mut keep: impl FnMut(u64, &T) -> bool,
    ) -> Result<Vec<(u64, T)>, StoreError> {
        let t = self.tx.open_table(table).map_err(db_err)?;
        let mut out = Vec::new();
        for entry in t.iter().map_err(db_err)?.rev() {
            if out.len() >= limit {
                break;
            }
            let (seq, value) = entry.map_err(db_err)?;
            let doc: T = decode(table.name(), value.value())?;
            if keep(seq.value(), &doc) {
                out.push((seq.value(), doc));
            }
        }
        Ok(out)
    }

    /// Documents of a sequenced table, newest first, up to the first one `take` refuses (a
    /// table in time order read back to a point in time without reading past it).
    pub fn newest_while<T: DeserializeOwned>(
        &self,
        table: SequencedTable,
        mut take: impl FnMut(&T) -> bool,
    ) -> Result<Vec<(u64, T)>, StoreError> {
        let t = self.tx.open_table(table).map_err(db_err)?;
        let mut out = Vec::new();
        for entry in t.iter().map_err(db_err)?.rev() {
            let (seq, value) = entry.map_err(db_err)?;
            let doc: T = decode(table.name(), value.value())?;
            if !take(&doc) {
                break;
            }
            out.push((seq.value(), doc));
        }
        Ok(out)
    }

    /// Documents of a keyed table whose key starts with `prefix`, in descending key order,
    /// that `keep` accepts, at most `limit`.
    pub fn with_prefix_desc<T: DeserializeOwned>(
        &self,
        table: KeyedTable,
        prefix: &str,
        limit: usize,
        mut keep: impl FnMut(&str, &T) -> bool,
    ) -> Result<Vec<(String, T)>, StoreError> {
        let t = self.tx.open_table(table).map_err(db_err)?;
        let end = prefix_end(prefix);
        let mut out = Vec::new();
        for entry in t.range::<&str>(prefix..end.as_str()).map_err(db_err)?.rev() {
            if out.len() >= limit {
                break;
            }
            let (key, value) = entry.map_err(db_err)?;
            let doc: T = decode(table.name(), value.value())?;
            if keep(key.value(), &doc) {
                out.push((key.value().to_string(), doc));
            }
        }
        Ok(out)
    }

    pub fn counter(&self, name: &str) -> Result<i64, StoreError> {
        let t = self.tx.open_table(tables::COUNTERS).map_err(db_err)?;
        Ok(t.get(name).map_err(db_err)?.map_or(0, |v| v.value()))
    }
}

/// Write access inside [`Store::write`].
pub struct Writer<'tx> {
    tx: &'tx WriteTransaction,
    /// Names of the tables this transaction wrote to, announced after the commit.
    touched: RefCell<BTreeSet<String>>,
}

impl Writer<'_> {
    fn touch(&self, table: &str) {
        if !self.touched.borrow().contains(table) {
            self.touched.borrow_mut().insert(table.to_string());
        }
    }

    pub fn get<T: DeserializeOwned>(
        &self,
        table: KeyedTable,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        get_document(&self.tx.open_table(table).map_err(db_err)?, table, key)
    }

    /// The document at `seq` of a sequenced table.
    pub fn get_seq<T: DeserializeOwned>(
        &self,
        table: SequencedTable,
        seq: u64,
    ) -> Result<Option<T>, StoreError> {
        get_sequenced(&self.tx.open_table(table).map_err(db_err)?, table, seq)
    }

    pub fn counter(&self, name: &str) -> Result<i64, StoreError> {
        let t = self.tx.open_table(tables::COUNTERS).map_err(db_err)?;
        Ok(t.get(name).map_err(db_err)?.map_or(0, |v| v.value()))
    }

    /// Every document of a keyed table, in key order.
    pub fn all<T: DeserializeOwned>(
        &self,
        table: KeyedTable,
    ) -> Result<Vec<(String, T)>, StoreError> {
        let t = self.tx.open_table(table).map_err(db_err)?;
        all_documents(&t, table)
    }

    /// The documents of a keyed table whose key is in `from..to`, in key order.
    pub fn range<T: DeserializeOwned>(
        &self,
        table: KeyedTable,
        from: &str,
        to: &str,
    ) -> Result<Vec<(String, T)>, StoreError> {
        range_documents(&self.tx.open_table(table).map_err(db_err)?, table, from, Some(to))
    }

    pub fn put(
        &self,
        table: KeyedTable,
        key: &str,
        value: &impl Serialize,
    ) -> Result<(), StoreError> {
        let bytes = encode(value)?;
        let mut t = self.tx.open_table(table).map_err(db_err)?;
        t.insert(key, bytes.as_slice()).map_err(db_err)?;
        self.touch(table.name());
        Ok(())
    }

    /// Removes a document; true when it existed.
    pub fn remove(&self, table: KeyedTable, key: &str) -> Result<bool, StoreError> {
        let mut t = self.tx.open_table(table).map_err(db_err)?;
        let existed = t.remove(key).map_err(db_err)?.is_some();
        if existed {
            self.touch(table.name());
        }
        Ok(existed)
    }

    /// Removes every document whose key is in `from..to`; returns how many.
    pub fn remove_range(
        &self,
        table: KeyedTable,
        from: &str,
        to: &str,
    ) -> Result<usize, StoreError> {
        let mut t = self.tx.open_table(table).map_err(db_err)?;
        let keys: Vec<String> = t
            .range::<&str>(from..to)
            .map_err(db_err)?
            .map(|e| e.map(|(k, _)| k.value().to_string()).map_err(db_err))
            .collect::<Result<_, _>>()?;
        for key in &keys {
            t.remove(key.as_str()).map_err(db_err)?;
        }
        if !keys.is_empty() {
            self.touch(table.name());
        }
        Ok(keys.len())
    }

    /// Appends a document and returns its sequence number.
    pub fn append(&self, table: SequencedTable, value: &impl Serialize) -> Result<u64, StoreError> {
        let bytes = encode(value)?;
        let mut t = self.tx.open_table(table).map_err(db_err)?;
        let next = t.last().map_err(db_err)?.map_or(1, |(seq, _)| seq.value() + 1);
        t.insert(next, bytes.as_slice()).map_err(db_err)?;
        self.touch(table.name());
        Ok(next)
    }

    /// Replaces the document at `seq` of a sequenced table (e.g. a journal entry's outcome).
    pub fn replace(
        &self,
        table: SequencedTable,
        seq: u64,
        value: &impl Serialize,
    ) -> Result<(), StoreError> {
        let bytes = encode(value)?;
        let mut t = self.tx.open_table(table).map_err(db_err)?;
        t.insert(seq, bytes.as_slice()).map_err(db_err)?;
        self.touch(table.name());
        Ok(())
    }

    pub fn set_counter(&self, name: &str, value: i64) -> Result<(), StoreError> {
        let mut t = self.tx.open_table(tables::COUNTERS).map_err(db_err)?;
        t.insert(name, value).map_err(db_err)?;
        self.touch(tables::COUNTERS.name());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            store
                .write(|w| {
                    w.put(tables::OPEN_TRADES, "BTCUSDT", &serde_json::json!({"size": 0.5}))?;
                    w.append(tables::CLOSED_TRADES, &serde_json::json!({"pnl": 1}))?;
                    w.append(tables::CLOSED_TRADES, &serde_json::json!({"pnl": 2}))?;
                    w.set_counter("trades_today", 2)
                })
                .unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        let trade: serde_json::Value =
            store.read(|r| r.get(tables::OPEN_TRADES, "BTCUSDT")).unwrap().unwrap();
        assert_eq!(trade["size"], 0.5);
        let history: Vec<(u64, serde_json::Value)> =
            store.read(|r| r.newest(tables::CLOSED_TRADES, 0, 10)).unwrap();
        assert_eq!(history.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(), vec![2, 1]);
        assert_eq!(store.read(|r| r.counter("trades_today")).unwrap(), 2);
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let result: Result<(), StoreError> = store.write(|w| {
            w.put(tables::WATCH_STATE, "ETHUSDT", &1)?;
            Err(StoreError::Database("simulated".into()))
        });
        assert!(result.is_err());
        let state: Option<i32> = store.read(|r| r.get(tables::WATCH_STATE, "ETHUSDT")).unwrap();
        assert_eq!(state, None);
    }

    #[test]
    fn a_schema_1_database_is_migrated_and_takes_keyed_market_snapshots() {
        let dir = tempfile::tempdir().unwrap();
        {
            // What schema 1 wrote: its version, an open trade, and market snapshots declared
            // as a sequenced table.
            let db = Database::create(dir.path().join(DB_FILE)).unwrap();
            let tx = db.begin_write().unwrap();
            tx.open_table(tables::META).unwrap().insert(SCHEMA_KEY, 1).unwrap();
            tx.open_table(tables::OPEN_TRADES)
                .unwrap()
                .insert("BTCUSDT", br#"{"size":0.5}"#.as_slice())
                .unwrap();
            let v1: redb::TableDefinition<u64, &[u8]> =
                redb::TableDefinition::new("market_snapshots");
            tx.open_table(v1).unwrap();
            tx.commit().unwrap();
        }

        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(SCHEMA_VERSION, 3);
        let row = serde_json::json!({"symbol": "BTCUSDT", "computed_at": 1_772_438_400});
        store
            .write(|w| w.put(tables::MARKET_SNAPSHOTS, "BTCUSDT/001772438400/4h/1d", &row))
            .unwrap();
        let rows: Vec<(String, serde_json::Value)> = store
            .read(|r| r.with_prefix_desc(tables::MARKET_SNAPSHOTS, "BTCUSDT/", 10, |_, _| true))
            .unwrap();
        assert_eq!(rows, vec![("BTCUSDT/001772438400/4h/1d".to_string(), row)]);
        let trade: serde_json::Value =
            store.read(|r| r.get(tables::OPEN_TRADES, "BTCUSDT")).unwrap().unwrap();
        assert_eq!(trade["size"], 0.5, "the migration keeps the other tables");
        drop(store);
        // Migrated once: a second open finds schema 2 and the snapshot still there.
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        let kept: Option<serde_json::Value> =
            store.read(|r| r.get(tables::MARKET_SNAPSHOTS, "BTCUSDT/001772438400/4h/1d")).unwrap();
        assert_eq!(kept.map(|r| r["computed_at"].clone()), Some(1_772_438_400.into()));
    }

    #[test]
    fn a_schema_2_pause_moves_to_the_entry_pause_table() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = Database::create(dir.path().join(DB_FILE)).unwrap();
            let tx = db.begin_write().unwrap();
            tx.open_table(tables::META).unwrap().insert(SCHEMA_KEY, 2).unwrap();
            let doc = br#"{"high_water_mark":"10500","pause":{"since":"t4","reason":"drawdown_paused: x"}}"#;
            tx.open_table(tables::PROTECTION).unwrap().insert("drawdown", doc.as_slice()).unwrap();
            tx.commit().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        let pause: Option<serde_json::Value> =
            store.read(|r| r.get(tables::ENTRY_PAUSE, "drawdown")).unwrap();
        assert_eq!(pause, Some(serde_json::json!({"since": "t4", "reason": "drawdown_paused: x"})));
        let drawdown: serde_json::Value =
            store.read(|r| r.get(tables::PROTECTION, "drawdown")).unwrap().unwrap();
        assert_eq!(drawdown, serde_json::json!({"high_water_mark": "10500"}), "the mark stays");
    }

    #[test]
    fn a_database_from_a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        Store::open(dir.path()).unwrap().set_schema_version(SCHEMA_VERSION + 1).unwrap();
        let err = Store::open(dir.path()).unwrap_err();
        assert!(
            matches!(err, StoreError::NewerSchema { found, .. } if found == SCHEMA_VERSION + 1)
        );
        assert!(err.to_string().contains("newer than"), "{err}");
    }
}
