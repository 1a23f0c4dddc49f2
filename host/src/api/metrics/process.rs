//! Gauges of the service's own process, read at scrape time: resident memory and open file
//! descriptors (under the names every Prometheus client library uses, so existing alert rules
//! apply) and the tokio tasks alive. Together they show a leak before it hurts: a service that
//! runs for months must keep all three flat (docs/operations.md, Memory).

use crate::metrics::Metrics;

const RESIDENT: &str = "process_resident_memory_bytes";
const OPEN_FDS: &str = "process_open_fds";
const ALIVE_TASKS: &str = "spotbot_runtime_alive_tasks";

/// Sets the gauges. Values a platform does not offer (no `/proc`) are left out.
pub(super) fn read(metrics: &Metrics) {
    metrics.describe_gauge(RESIDENT, "Resident memory of the service process, bytes");
    metrics.describe_gauge(OPEN_FDS, "Open file descriptors of the service process");
    metrics.describe_gauge(
        ALIVE_TASKS,
        "Tokio tasks alive in the service (request handlers, streams, jobs, watchers)",
    );
    if let Some(kib) = resident_kib() {
        metrics.gauge(RESIDENT, vec![]).set(kib as f64 * 1024.0);
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        metrics.gauge(OPEN_FDS, vec![]).set(fds.count() as f64);
    }
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        metrics.gauge(ALIVE_TASKS, vec![]).set(runtime.metrics().num_alive_tasks() as f64);
    }
}

/// `VmRSS` of `/proc/self/status`, KiB.
fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
