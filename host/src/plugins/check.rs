//! `spotbot check-config`'s look at the plugins folder: every file loaded as the service
//! would, nothing served.

use std::path::PathBuf;

use super::Limits;
use super::canary::CanaryInputs;
use super::registry::{self, PluginInfo, Registry};
use super::runtime::Runtime;
use crate::config::Config;

/// Loads every `.wasm` of `[plugins] dir` the way the service does (manifest, the
/// `[strategy.<name>]` section against the plugin's defaults, the plugin's own judgement of
/// its effective config) without serving anything: `spotbot check-config`. Sections naming no
/// loaded plugin are returned as the second list.
pub fn check_folder(config: &Config) -> anyhow::Result<(Vec<PluginInfo>, Vec<String>)> {
    let runtime = Runtime::new(Limits::from_config(&config.plugins), None)?;
    let dir = PathBuf::from(&config.plugins.dir);
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| registry::is_plugin_file(p))
            .collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => anyhow::bail!("cannot read the plugins folder {}: {err}", dir.display()),
    };
    paths.sort();
    let mut registry = Registry::default();
    // No store is opened here: the canary runs on empty state.
    let no_state = |_: &str| Vec::new();
    let inputs =
        CanaryInputs { reference_symbol: &config.market.reference_symbol, state: &no_state };
    for path in &paths {
        let now = chrono::Utc::now();
        registry = registry::load_file(&runtime, &registry, path, &config.strategy, &inputs, now).0;
    }
    let orphans = config
        .strategy
        .sections
        .keys()
        .filter(|name| registry.plugin(name).is_none())
        .cloned()
        .collect();
    Ok((registry.infos(), orphans))
}
