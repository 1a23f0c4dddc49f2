//! Prometheus metrics for `GET /metrics`, in the Prometheus text format (0.0.4) that every
//! Prometheus and `promtool check metrics` read.
//!
//! Each service owns its recorder and never installs it globally, so two services in one
//! process (the end-to-end tests) keep their own counts. Counters and histograms are
//! recorded where things happen (one call per place); gauges of state the store already
//! keeps are read at scrape time instead of being mirrored, so they cannot drift.

mod http;
mod orders;
mod snapshot;

use std::sync::{Arc, Weak};
use std::time::Duration;

use metrics::{Key, Label, Metadata, Recorder};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusRecorder};

pub use http::record_http;

use crate::state::AppState;
use crate::store::StoreError;

/// The content type of the exposition.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How often recorded latencies are folded into their buckets between scrapes, so an
/// unscraped service does not keep every sample.
const UPKEEP: Duration = Duration::from_secs(5);

const METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

/// The service's metrics. Cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    recorder: Arc<PrometheusRecorder>,
}

impl Default for Metrics {
    fn default() -> Self {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(http::DURATION.into()), &http::BUCKETS)
            .expect("the buckets are not empty")
            .build_recorder();
        http::describe(&recorder);
        orders::describe(&recorder);
        snapshot::describe(&recorder);
        Self { recorder: Arc::new(recorder) }
    }
}

impl Metrics {
    /// The exposition: reads the scrape-time gauges from `state`, then renders everything.
    pub fn render(&self, state: &AppState) -> Result<String, StoreError> {
        snapshot::read(self, state)?;
        Ok(self.recorder.handle().render())
    }

    /// Folds recorded latencies into their buckets every few seconds until the service's
    /// metrics are dropped.
    pub fn spawn_upkeep(&self) {
        let recorder: Weak<PrometheusRecorder> = Arc::downgrade(&self.recorder);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(UPKEEP);
            loop {
                every.tick().await;
                let Some(recorder) = recorder.upgrade() else { return };
                recorder.handle().run_upkeep();
            }
        });
    }

    /// Counts one order sent by [`crate::execution::orders::Orders`]: `Ok` when the
    /// exchange took it, else the journal's outcome of the failed send.
    pub fn order(
        &self,
        exchange: &'static str,
        kind: crate::execution::journal::OrderKind,
        outcome: Result<(), &crate::execution::journal::Outcome>,
    ) {
        orders::record(self, exchange, kind, outcome);
    }

    fn counter(&self, name: &'static str, labels: Vec<Label>) -> metrics::Counter {
        self.recorder.register_counter(&Key::from_parts(name, labels), &METADATA)
    }

    fn gauge(&self, name: &'static str, labels: Vec<Label>) -> metrics::Gauge {
        self.recorder.register_gauge(&Key::from_parts(name, labels), &METADATA)
    }

    fn histogram(&self, name: &'static str, labels: Vec<Label>) -> metrics::Histogram {
        self.recorder.register_histogram(&Key::from_parts(name, labels), &METADATA)
    }
}
