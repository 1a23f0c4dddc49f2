//! The plugins folder as the host sees it: per `.wasm` file, the plugin it serves (if any)
//! and the last load error. Replaced as a whole through an `ArcSwap`, so a scan that already
//! took its `Arc<LoadedPlugin>` finishes on that version whatever happens to the file.
//!
//! A file is loaded in steps: compile, `describe()`, manifest checks, the config section
//! against the plugin's keys, the name not served by another file, then the canary scan on
//! synthetic data ([`super::canary`]); only a version that passes them all is published.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::bias::BiasVerdict;
use super::canary::{self, CanaryInputs, CanaryReport, Verdict};
use super::errors::CallFailure;
use super::model::{Manifest, PluginKind};
use super::runtime::{Compiled, Runtime};
use super::stats::{LastScan, ScanCounts, ScanStats, StatsView};
use super::{LoadError, describe_failure};
use crate::config::StrategySections;

/// A plugin that passed every load check and serves scans.
pub struct LoadedPlugin {
    pub manifest: Manifest,
    pub file: String,
    pub sha256: String,
    pub loaded_at: DateTime<Utc>,
    /// Whether the compiled artifact came from the on-disk cache.
    pub from_cache: bool,
    /// How its canary scan went.
    pub canary: CanaryReport,
    /// Its scans since it was loaded.
    pub stats: ScanStats,
    /// Its bias check (`super::bias`): pending until the background check ran.
    pub(crate) bias: std::sync::Mutex<BiasVerdict>,
    /// Its own share of the call slots ([`super::Limits::calls_per_plugin`]), taken before a
    /// slot of the shared pool: its waiting scans queue here, not in front of other plugins.
    pub(crate) calls: tokio::sync::Semaphore,
    pub(crate) compiled: Compiled,
}

/// One `.wasm` file of the folder.
#[derive(Clone)]
pub(crate) struct FileEntry {
    /// The plugin this file serves; kept when a newer content of the file is refused.
    pub serving: Option<Arc<LoadedPlugin>>,
    /// SHA-256 of the content last tried.
    pub tried_sha256: String,
    pub last_error: Option<String>,
    pub error_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Default)]
pub(crate) struct Registry {
    pub files: BTreeMap<String, FileEntry>,
}

/// `loaded`: serving the file as it is now. `stale`: the file changed to something that was
/// refused; the previous version keeps serving. `failed`: nothing from this file serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PluginStatus {
    Loaded,
    Stale,
    Failed,
}

/// One row of `GET /api/strategies`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PluginInfo {
    /// Plugin name from its manifest; null when the file never loaded.
    pub name: Option<String>,
    pub version: Option<String>,
    pub kind: Option<PluginKind>,
    pub description: Option<String>,
    /// File name inside the plugins folder.
    pub file: String,
    /// SHA-256 of the serving version (of the refused content when nothing serves).
    pub sha256: String,
    /// When the serving version was loaded (RFC 3339).
    #[schema(value_type = Option<String>, format = DateTime)]
    pub loaded_at: Option<DateTime<Utc>>,
    pub status: PluginStatus,
    /// The canary scan of the serving version on synthetic data; null when nothing serves.
    pub canary: Option<CanaryReport>,
    /// The serving version's most recent scan; null before its first.
    pub last_scan: Option<LastScan>,
    /// Scans of the serving version since it was loaded (zero when nothing serves).
    pub scans: ScanCounts,
    /// The most recent error of this file: a refused load, a failed canary of the serving
    /// version, or a failed scan of it, whichever came last. A newly loaded version starts
    /// clean.
    pub last_error: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_error_at: Option<DateTime<Utc>>,
    /// Where `last_error` comes from.
    pub last_error_source: Option<ErrorSource>,
    /// The serving version's bias check (look-ahead and recursive dependence, run in the
    /// background after it loads); null when nothing serves.
    pub bias_check: Option<BiasVerdict>,
}

/// `load`: a content of the file was refused. `canary`: the serving version (a first load)
/// failed its canary scan. `scan`: a scan of the serving version failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorSource {
    Load,
    Canary,
    Scan,
}

impl LoadedPlugin {
    /// Where its bias check stands.
    pub fn bias_verdict(&self) -> BiasVerdict {
        self.bias.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Registry {
    pub fn plugin(&self, name: &str) -> Option<Arc<LoadedPlugin>> {
        self.files
            .values()
            .filter_map(|f| f.serving.as_ref())
            .find(|p| p.manifest.name == name)
            .cloned()
    }

    pub fn infos(&self) -> Vec<PluginInfo> {
        self.files
            .iter()
            .map(|(file, e)| {
                let p = e.serving.as_deref();
                let status = match (p, &e.last_error) {
                    (Some(_), None) => PluginStatus::Loaded,
                    (Some(_), Some(_)) => PluginStatus::Stale,
                    (None, _) => PluginStatus::Failed,
                };
                let stats = p.map(|p| p.stats.view()).unwrap_or_default();
                let (last_error, last_error_at, last_error_source) =
                    match newest_error(e, p, &stats) {
                        Some((message, at, source)) => (Some(message), Some(at), Some(source)),
                        None => (None, None, None),
                    };
                PluginInfo {
                    name: p.map(|p| p.manifest.name.clone()),
                    version: p.map(|p| p.manifest.version.clone()),
                    kind: p.map(|p| p.manifest.kind),
                    description: p.map(|p| p.manifest.description.clone()),
                    file: file.clone(),
                    sha256: p.map_or_else(|| e.tried_sha256.clone(), |p| p.sha256.clone()),
                    loaded_at: p.map(|p| p.loaded_at),
                    status,
                    canary: p.map(|p| p.canary.clone()),
                    last_scan: stats.last_scan,
                    scans: stats.counts,
                    last_error,
                    last_error_at,
                    last_error_source,
                    bias_check: p.map(LoadedPlugin::bias_verdict),
                }
            })
            .collect()
    }
}

/// The newest of a file's refused load, its serving version's failed canary (a first load)
/// and that version's last failed scan; at the same instant a load error wins.
fn newest_error(
    entry: &FileEntry,
    serving: Option<&LoadedPlugin>,
    stats: &StatsView,
) -> Option<(String, DateTime<Utc>, ErrorSource)> {
    let load =
        entry.last_error.clone().zip(entry.error_at).map(|(m, at)| (m, at, ErrorSource::Load));
    let canary = serving
        .map(|p| &p.canary)
        .filter(|c| c.failed())
        .and_then(|c| c.detail.clone().map(|m| (m, c.at, ErrorSource::Canary)));
    let scan = stats.last_error.clone().map(|f| (f.message, f.at, ErrorSource::Scan));
    [load, canary, scan].into_iter().flatten().reduce(|a, b| if b.1 > a.1 { b } else { a })
}

/// What loading one file decided.
pub(crate) enum LoadOutcome {
    Unchanged,
    Loaded(Arc<LoadedPlugin>),
    Refused(LoadError),
}

/// Loads `path` against the current registry and returns the registry to publish.
pub(crate) fn load_file(
    runtime: &Runtime,
    current: &Registry,
    path: &Path,
    sections: &StrategySections,
    inputs: &CanaryInputs<'_>,
    now: DateTime<Utc>,
) -> (Registry, LoadOutcome) {
    let file = file_name(path);
    let mut next = current.clone();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            next.files.remove(&file);
            return (next, LoadOutcome::Unchanged);
        }
        Err(e) => {
            let err = LoadError::Io(e.to_string());
            record_error(&mut next, &file, String::new(), &err, now);
            return (next, LoadOutcome::Refused(err));
        }
    };
    let sha256 = hex::encode(Sha256::digest(&bytes));
    if let Some(entry) = current.files.get(&file)
        && entry.tried_sha256 == sha256
    {
        return (next, LoadOutcome::Unchanged);
    }
    match load_bytes(runtime, current, &file, &bytes, &sha256, sections, inputs, now) {
        Ok(plugin) => {
            let plugin = Arc::new(plugin);
            next.files.insert(
                file,
                FileEntry {
                    serving: Some(plugin.clone()),
                    tried_sha256: sha256,
                    last_error: None,
                    error_at: None,
                },
            );
            (next, LoadOutcome::Loaded(plugin))
        }
        Err(err) => {
            record_error(&mut next, &file, sha256, &err, now);
            (next, LoadOutcome::Refused(err))
        }
    }
}

fn record_error(
    next: &mut Registry,
    file: &str,
    sha256: String,
    err: &LoadError,
    now: DateTime<Utc>,
) {
    let entry = next.files.entry(file.to_string()).or_insert(FileEntry {
        serving: None,
        tried_sha256: String::new(),
        last_error: None,
        error_at: None,
    });
    entry.tried_sha256 = sha256;
    entry.last_error = Some(err.to_string());
    entry.error_at = Some(now);
}

#[allow(clippy::too_many_arguments)]
fn load_bytes(
    runtime: &Runtime,
    current: &Registry,
    file: &str,
    bytes: &[u8],
    sha256: &str,
    sections: &StrategySections,
    inputs: &CanaryInputs<'_>,
    now: DateTime<Utc>,
) -> Result<LoadedPlugin, LoadError> {
    let (compiled, from_cache) = runtime.compile(bytes)?;
    let manifest = runtime.describe(&compiled).map_err(|f: CallFailure| {
        LoadError::DescribeFailed(describe_failure(&f, runtime.limits()))
    })?;
    super::validate::manifest(&manifest).map_err(LoadError::InvalidManifest)?;
    let section = sections.section_json(&manifest.name);
    super::validate::section(&manifest.name, &manifest.default_config, section.as_ref())
        .map_err(LoadError::ConfigSection)?;
    let other = current.files.iter().find(|(f, e)| {
        f.as_str() != file && e.serving.as_ref().is_some_and(|p| p.manifest.name == manifest.name)
    });
    if let Some((other_file, _)) = other {
        return Err(LoadError::DuplicateName {
            name: manifest.name,
            served_by: other_file.clone(),
        });
    }
    // The plugin judges its effective config and shows it survives a scan before it serves.
    let config = super::validate::effective_config(&manifest.default_config, section);
    let replacing = current.files.get(file).is_some_and(|e| e.serving.is_some());
    let canary = match canary::run(runtime, &compiled, &manifest, &config, inputs, replacing, now) {
        Verdict::Serve(report) => report,
        Verdict::Refuse(err) => return Err(err),
    };
    let bias = std::sync::Mutex::new(super::bias::initial(manifest.kind));
    Ok(LoadedPlugin {
        manifest,
        file: file.to_string(),
        sha256: sha256.to_string(),
        loaded_at: now,
        from_cache,
        canary,
        stats: ScanStats::default(),
        bias,
        calls: tokio::sync::Semaphore::new(runtime.limits().calls_per_plugin()),
        compiled,
    })
}

pub(crate) fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Whether the watcher should care about `path`.
pub(crate) fn is_plugin_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "wasm") && !file_name(path).starts_with('.')
}
