//! Plugin calls per plugin: how long each took, and how the failed ones failed. A trap, the
//! deadline, the memory cap and a stack overflow are the sandbox stopping the plugin; each is
//! its own `error` value, so an operator sees a plugin that keeps trapping apart from one
//! whose market data was missing.

use std::time::Duration;

use metrics::{Label, Recorder, Unit};

use super::{MetricLabel, Metrics};

pub(super) const DURATION: &str = "spotbot_plugin_scan_duration_seconds";
const ERRORS: &str = "spotbot_plugin_scan_errors_total";

pub(super) fn describe(recorder: &impl Recorder) {
    recorder.describe_histogram(
        DURATION.into(),
        Some(Unit::Seconds),
        "Wall time of the plugin calls that reached the plugin (scans and previews), by plugin"
            .into(),
    );
    recorder.describe_counter(
        ERRORS.into(),
        None,
        "Plugin calls that failed, by plugin and error code (plugin_trapped, \
         plugin_deadline_exceeded, plugin_memory_exceeded, plugin_stack_overflow, plugin_error, \
         ...)"
            .into(),
    );
}

pub(super) fn record(
    metrics: &Metrics,
    plugin: &str,
    duration: Duration,
    outcome: Result<(), &dyn MetricLabel>,
) {
    let plugin = Label::new("plugin", plugin.to_string());
    if let Err(error) = outcome {
        let code = Label::from_static_parts("error", error.metric_label());
        metrics.counter(ERRORS, vec![plugin.clone(), code]).increment(1);
    }
    metrics.histogram(DURATION, vec![plugin]).record(duration.as_secs_f64());
}
