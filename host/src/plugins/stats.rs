//! How the serving version of a plugin has been doing: its last scan (time, duration,
//! outcome), how many scans succeeded and failed, and its last scan error with the time.
//! `GET /api/strategies` shows it, so a build that fails on every scan is visible at once.
//!
//! The numbers belong to one loaded version (a new version starts from zero) and live in
//! memory only: they describe this run of the service, not history.

use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::PluginError;

/// The most recent scan of the serving version.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct LastScan {
    /// When the scan finished (RFC 3339, service clock).
    #[schema(value_type = String, format = DateTime)]
    pub at: DateTime<Utc>,
    /// Wall time of the Wasm call, milliseconds.
    pub duration_ms: f64,
    /// `ok`, or the error code of the failed scan (`plugin_trapped`, `plugin_error`, ...).
    pub outcome: String,
    /// Symbols the scan read.
    pub symbols: usize,
}

/// Scans of the serving version since it was loaded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct ScanCounts {
    pub ok: u64,
    pub failed: u64,
}

/// A failed scan's message and time.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanFailure {
    pub message: String,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Default)]
struct Inner {
    last: Option<LastScan>,
    counts: ScanCounts,
    last_error: Option<ScanFailure>,
}

/// The statistics of one loaded version; shared by every scan of it.
#[derive(Debug, Default)]
pub struct ScanStats {
    inner: Mutex<Inner>,
}

/// What the API shows of [`ScanStats`].
#[derive(Debug, Clone, Default)]
pub struct StatsView {
    pub last_scan: Option<LastScan>,
    pub counts: ScanCounts,
    pub last_error: Option<ScanFailure>,
}

impl ScanStats {
    /// Records one scan that reached the plugin: `Ok` or the error it failed with.
    pub fn record(
        &self,
        at: DateTime<Utc>,
        duration_ms: f64,
        symbols: usize,
        outcome: Result<(), &PluginError>,
    ) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let code = match outcome {
            Ok(()) => {
                inner.counts.ok += 1;
                "ok"
            }
            Err(err) => {
                inner.counts.failed += 1;
                inner.last_error = Some(ScanFailure { message: err.to_string(), at });
                err.code()
            }
        };
        inner.last = Some(LastScan { at, duration_ms, outcome: code.to_string(), symbols });
    }

    pub fn view(&self) -> StatsView {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        StatsView {
            last_scan: inner.last.clone(),
            counts: inner.counts,
            last_error: inner.last_error.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_scan_and_the_last_error_are_kept_apart() {
        let stats = ScanStats::default();
        assert!(stats.view().last_scan.is_none());
        let t0 = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let t1 = DateTime::from_timestamp(1_700_000_060, 0).unwrap();
        stats.record(t0, 3.5, 2, Err(&PluginError::Trapped("boom".into())));
        stats.record(t1, 1.25, 5, Ok(()));
        let view = stats.view();
        let last = view.last_scan.unwrap();
        assert_eq!((last.at, last.outcome.as_str(), last.symbols), (t1, "ok", 5));
        assert_eq!(view.counts, ScanCounts { ok: 1, failed: 1 });
        let error = view.last_error.unwrap();
        assert_eq!(error.at, t0);
        assert!(error.message.contains("boom"), "{error:?}");
    }
}
