//! Hot reload: watches the plugins folder and hands every settled change of a `.wasm` file to
//! the registry. Events are debounced (`plugins.reload_debounce_ms`) so a file is read only
//! after its writer went quiet; deploy with write-to-temp + rename for atomic replacement.
//! A broken file never stops the watcher.

use std::path::PathBuf;
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use super::WeakPlugins;
use super::registry::is_plugin_file;

/// Keeps the watcher alive; dropping it stops watching.
pub struct PluginWatcher {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
}

pub(crate) fn watch(
    plugins: WeakPlugins,
    dir: PathBuf,
    debounce: Duration,
) -> anyhow::Result<PluginWatcher> {
    let handler = move |result: DebounceEventResult| match result {
        Ok(events) => {
            let mut paths: Vec<PathBuf> = events
                .iter()
                .flat_map(|e| e.event.paths.iter().cloned())
                .filter(|p| is_plugin_file(p))
                .collect();
            paths.sort();
            paths.dedup();
            if !paths.is_empty() {
                plugins.sync_paths(&paths);
            }
        }
        Err(errors) => {
            for err in errors {
                tracing::warn!(%err, "plugin folder watch error");
            }
            // Events may have been lost: re-read the whole folder.
            plugins.sync_dir();
        }
    };
    let mut debouncer = new_debouncer(debounce, None, handler)?;
    debouncer.watch(&dir, RecursiveMode::NonRecursive)?;
    Ok(PluginWatcher { _debouncer: debouncer })
}
