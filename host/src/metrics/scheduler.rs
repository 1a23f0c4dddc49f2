//! Runs of the built-in scheduler's jobs by job and how they ended, counted where the
//! scheduler records a run's end (also a run that panicked or was stopped, which ends as an
//! error).

use metrics::{Label, Recorder};

use super::{MetricLabel, Metrics};

const RUNS: &str = "spotbot_scheduler_job_runs_total";

pub(super) fn describe(recorder: &impl Recorder) {
    recorder.describe_counter(
        RUNS.into(),
        None,
        "Finished runs of the scheduled jobs, by job and status (ok, skipped, error)".into(),
    );
}

pub(super) fn record(metrics: &Metrics, job: &'static str, status: impl MetricLabel) {
    let status = status.metric_label();
    let labels =
        vec![Label::from_static_parts("job", job), Label::from_static_parts("status", status)];
    metrics.counter(RUNS, labels).increment(1);
}
