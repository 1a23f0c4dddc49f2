//! The install's machine id: a UUID created on first run and kept in the store.
//!
//! It is what the license server binds a key to. A new data folder means a new machine id,
//! and the key then has to be activated again (which moves the binding here).

use crate::store::tables::MACHINE_ID;
use crate::store::{Store, StoreError};

const KEY: &str = "machine_id";

/// Loads the machine id, creating and persisting it on first run. A stored value that is not
/// a UUID is replaced (the license then needs a new activation).
pub fn load_or_create(store: &Store) -> Result<String, StoreError> {
    store.write(|w| {
        let stored: Option<String> = w.get(MACHINE_ID, KEY)?;
        if let Some(id) = stored.as_deref().and_then(|s| uuid::Uuid::parse_str(s).ok()) {
            return Ok(id.hyphenated().to_string());
        }
        if stored.is_some() {
            tracing::warn!("stored machine id is not a UUID; creating a new one");
        }
        let id = uuid::Uuid::new_v4().hyphenated().to_string();
        w.put(MACHINE_ID, KEY, &id)?;
        tracing::info!(machine_id = %id, "created the machine id");
        Ok(id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_id_is_created_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create(&Store::open(dir.path()).unwrap()).unwrap();
        assert!(uuid::Uuid::parse_str(&first).is_ok());
        let again = load_or_create(&Store::open(dir.path()).unwrap()).unwrap();
        assert_eq!(first, again);
    }
}
