//! A keyed table's documents kept decoded between reads, for tables read far more often than
//! a document in them changes (the open trades: every entry, exit and check reads all of them).
//!
//! The decoded documents are served again as long as no committed write touched the table
//! ([`Store::generation`]); after one, the table is read again, but only the documents whose
//! stored bytes changed are decoded: decoding JSON is most of what such a read costs.

use std::sync::{Arc, Mutex};

use redb::{ReadableTable, TableHandle};
use serde::de::DeserializeOwned;

use super::tables::KeyedTable;
use super::{Store, StoreError, db_err, decode};

/// See the module documentation.
pub struct DecodedTable<T> {
    table: KeyedTable,
    last: Mutex<Option<Decoded<T>>>,
}

/// One read's documents: the table's generation before the read, each document's key and
/// stored bytes, and the decoded values in the same (key) order.
struct Decoded<T> {
    generation: u64,
    stored: Vec<(String, Vec<u8>)>,
    values: Arc<Vec<T>>,
}

impl<T> std::fmt::Debug for DecodedTable<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecodedTable").field("table", &self.table.name()).finish()
    }
}

impl<T: DeserializeOwned + Clone> DecodedTable<T> {
    pub fn new(table: KeyedTable) -> Self {
        Self { table, last: Mutex::new(None) }
    }

    /// Every document of the table, in key order, as `store` holds it now.
    pub fn all(&self, store: &Store) -> Result<Arc<Vec<T>>, StoreError> {
        // Loaded before the read: a write committed in between only makes the next call read
        // again.
        let generation = store.generation(self.table);
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(seen) = last.as_ref()
            && seen.generation == generation
        {
            return Ok(seen.values.clone());
        }
        let previous = last.take();
        let (stored, values) = store.read(|r| {
            let open = r.tx.open_table(self.table).map_err(db_err)?;
            let mut stored = Vec::new();
            let mut values = Vec::new();
            // Both in key order: a cursor over the previous read finds a document's old bytes.
            let mut before = 0;
            for entry in open.iter().map_err(db_err)? {
                let (key, bytes) = entry.map_err(db_err)?;
                let (key, bytes) = (key.value(), bytes.value());
                let mut reused = None;
                if let Some(p) = &previous {
                    while before < p.stored.len() && p.stored[before].0.as_str() < key {
                        before += 1;
                    }
                    if p.stored.get(before).is_some_and(|(k, b)| k == key && b == bytes) {
                        reused = Some(p.values[before].clone());
                    }
                }
                let value = match reused {
                    Some(value) => value,
                    None => decode(self.table.name(), bytes)?,
                };
                stored.push((key.to_string(), bytes.to_vec()));
                values.push(value);
            }
            Ok((stored, values))
        })?;
        let values = Arc::new(values);
        *last = Some(Decoded { generation, stored, values: values.clone() });
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde::{Deserialize, Deserializer, Serialize};

    use super::*;
    use crate::store::tables;

    static DECODED: AtomicUsize = AtomicUsize::new(0);

    /// A document that counts how often it is decoded.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    struct Counted(i64);

    impl<'de> Deserialize<'de> for Counted {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            DECODED.fetch_add(1, Ordering::SeqCst);
            i64::deserialize(d).map(Counted)
        }
    }

    #[test]
    fn only_documents_that_changed_are_decoded_again() {
        let store = Store::in_memory().unwrap();
        let table = tables::OPEN_TRADES;
        let put = |key: &str, v: i64| store.write(|w| w.put(table, key, &Counted(v))).unwrap();
        let decoded = DecodedTable::<Counted>::new(table);
        put("A", 1);
        put("B", 2);
        put("C", 3);
        let first = decoded.all(&store).unwrap();
        assert_eq!(*first, vec![Counted(1), Counted(2), Counted(3)]);
        assert_eq!(DECODED.load(Ordering::SeqCst), 3);

        // Nothing written: the same values, nothing decoded.
        assert!(Arc::ptr_eq(&first, &decoded.all(&store).unwrap()));
        assert_eq!(DECODED.load(Ordering::SeqCst), 3);

        // One changed, one removed, one added: only the changed and the new one are decoded.
        put("B", 20);
        store.write(|w| w.remove(table, "A")).unwrap();
        put("D", 4);
        assert_eq!(*decoded.all(&store).unwrap(), vec![Counted(20), Counted(3), Counted(4)]);
        assert_eq!(DECODED.load(Ordering::SeqCst), 5);

        // A write to another table leaves them alone.
        store.write(|w| w.put(tables::PENDING_ENTRIES, "x", &Counted(9))).unwrap();
        assert_eq!(*decoded.all(&store).unwrap(), vec![Counted(20), Counted(3), Counted(4)]);
        assert_eq!(DECODED.load(Ordering::SeqCst), 5);
    }
}
