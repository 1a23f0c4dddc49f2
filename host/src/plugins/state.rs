//! A plugin's persisted state: key/value pairs in the store's `plugin_state` table, one row
//! per plugin name. A scan reads it into its request and applies the plugin's updates after
//! a successful call; the API shows and resets it. A plugin name keeps its state across
//! versions, reloads and restarts (it is the plugin's memory, not the version's).

use std::collections::BTreeMap;

use super::PluginError;
use super::model::{StateEntry, StateUpdate};
use crate::store::{Store, tables};

/// The state of plugin `name`; `None` when none is stored.
pub fn stored(store: &Store, name: &str) -> Result<Option<BTreeMap<String, String>>, PluginError> {
    store
        .read(|r| r.get::<BTreeMap<String, String>>(tables::PLUGIN_STATE, name))
        .map_err(|e| PluginError::Internal(e.to_string()))
}

/// A stored state as the request's list of entries, sorted by key.
pub fn entries(state: BTreeMap<String, String>) -> Vec<StateEntry> {
    state.into_iter().map(|(key, value)| StateEntry { key, value }).collect()
}

/// Applies `updates` in order and stores the result, unless it would exceed `cap` bytes
/// (keys + values): then nothing changes.
pub fn apply(
    store: &Store,
    name: &str,
    updates: &[StateUpdate],
    cap: usize,
) -> Result<(), PluginError> {
    let mut too_large = None;
    store
        .write(|w| {
            let mut state: BTreeMap<String, String> =
                w.get(tables::PLUGIN_STATE, name)?.unwrap_or_default();
            for u in updates {
                match u {
                    StateUpdate::Set(entry) => {
                        state.insert(entry.key.clone(), entry.value.clone());
                    }
                    StateUpdate::Remove(key) => {
                        state.remove(key);
                    }
                    StateUpdate::Clear => state.clear(),
                }
            }
            let size = size(&state);
            if size > cap {
                too_large = Some(size);
                return Ok(());
            }
            w.put(tables::PLUGIN_STATE, name, &state)
        })
        .map_err(|e| PluginError::Internal(e.to_string()))?;
    match too_large {
        Some(size) => Err(PluginError::StateTooLarge { size, cap }),
        None => Ok(()),
    }
}

/// Deletes the state of plugin `name` in one transaction; returns how many keys it had, or
/// `None` when none was stored.
pub fn reset(store: &Store, name: &str) -> Result<Option<usize>, PluginError> {
    store
        .write(|w| {
            let keys = w
                .get::<BTreeMap<String, String>>(tables::PLUGIN_STATE, name)?
                .map(|state| state.len());
            if keys.is_some() {
                w.remove(tables::PLUGIN_STATE, name)?;
            }
            Ok(keys)
        })
        .map_err(|e| PluginError::Internal(e.to_string()))
}

/// The bytes a state counts against `plugins.max_state_kib`: keys plus values.
pub fn size(state: &BTreeMap<String, String>) -> usize {
    state.iter().map(|(k, v)| k.len() + v.len()).sum()
}
