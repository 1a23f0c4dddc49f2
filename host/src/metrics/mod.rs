//! Prometheus metrics for `GET /metrics`, in the Prometheus text format (0.0.4) that every
//! Prometheus and `promtool check metrics` read.
//!
//! Each service owns its recorder and never installs it globally, so two services in one
//! process (the end-to-end tests) keep their own counts. Counters and histograms are
//! recorded where things happen (one call per place); gauges of state the store already
//! keeps are read at scrape time instead of being mirrored, so they cannot drift (that read is
//! the route's, `api/metrics/`, which sees the whole service).
//!
//! This module sits below every area that records into it: it names none of their types.
//! An area's values name themselves as label values through [`MetricLabel`].

mod equity;
mod exchange;
mod http;
mod messenger;
mod orders;
mod plugins;
mod scheduler;

use std::sync::{Arc, Weak};
use std::time::Duration;

use metrics::{Key, Label, Metadata, Recorder};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusRecorder};

pub use exchange::ExchangeOutcome;
pub use http::record_http;

/// The content type of the exposition.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How often recorded latencies are folded into their buckets between scrapes, so an
/// unscraped service does not keep every sample.
const UPKEEP: Duration = Duration::from_secs(5);

/// Latency buckets in seconds, 1 ms to 10 s, shared by every duration histogram: HTTP answers
/// (a confirm that waits for the exchange takes a second or more), exchange round trips and
/// plugin scans (bounded by `[plugins] scan_timeout_ms`) all fall in that range.
const LATENCY_BUCKETS: [f64; 12] =
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// Every histogram, so each gets [`LATENCY_BUCKETS`] (a histogram without buckets would be
/// exposed as a summary).
const HISTOGRAMS: [&str; 3] = [http::DURATION, exchange::DURATION, plugins::DURATION];

const METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

/// The service's metrics. Cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    recorder: Arc<PrometheusRecorder>,
    http: Arc<http::HttpSeries>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut builder = PrometheusBuilder::new();
        for name in HISTOGRAMS {
            builder = builder
                .set_buckets_for_metric(Matcher::Full(name.into()), &LATENCY_BUCKETS)
                .expect("the buckets are not empty");
        }
        let recorder = builder.build_recorder();
        http::describe(&recorder);
        orders::describe(&recorder);
        exchange::describe(&recorder);
        plugins::describe(&recorder);
        scheduler::describe(&recorder);
        messenger::describe(&recorder);
        equity::describe(&recorder);
        Self { recorder: Arc::new(recorder), http: Arc::default() }
    }
}

/// An HTTP method as a label value without allocating; methods the service never uses are
/// `other`, so a client cannot make up series.
fn method_name(method: &reqwest::Method) -> &'static str {
    use reqwest::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

/// A value that names itself as one label value of a metric: an order's purpose, how a send
/// or a call failed, how a job ended. Each area implements it for its own types beside them,
/// so the label a dashboard filters on is chosen where the value's meaning is known.
pub trait MetricLabel {
    fn metric_label(&self) -> &'static str;
}

/// One equity measurement (the drawdown watch's), in the quote asset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EquityReading {
    pub equity: f64,
    pub high_water_mark: Option<f64>,
    /// Percent below the high-water mark (15.0 is 15 %).
    pub drawdown_pct: Option<f64>,
    /// The open positions' pnl at their last prices, before exit fees.
    pub unrealised_pnl: f64,
}

impl Metrics {
    /// The exposition of everything recorded so far (the route sets the scrape-time gauges
    /// first).
    pub fn render(&self) -> String {
        self.recorder.handle().render()
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

    /// Counts one order sent by execution: its purpose (`kind`), and `Ok` when the exchange
    /// took it, else the journal's outcome of the failed send.
    pub fn order(
        &self,
        exchange: &'static str,
        kind: impl MetricLabel,
        outcome: Result<(), &dyn MetricLabel>,
    ) {
        orders::record(self, exchange, kind, outcome);
    }

    /// Counts one request of an exchange client (`endpoint` is the REST path template) and,
    /// when it was sent, times its round trip.
    pub fn exchange_request(
        &self,
        exchange: &'static str,
        method: &reqwest::Method,
        endpoint: &'static str,
        outcome: ExchangeOutcome,
        round_trip: Option<Duration>,
    ) {
        exchange::record(self, exchange, method, endpoint, outcome, round_trip);
    }

    /// Times one plugin call that reached the plugin and counts it by outcome.
    pub fn plugin_scan(
        &self,
        plugin: &str,
        duration: Duration,
        outcome: Result<(), &dyn MetricLabel>,
    ) {
        plugins::record(self, plugin, duration, outcome);
    }

    /// Counts one finished run of a scheduled job.
    pub fn job_run(&self, job: &'static str, status: impl MetricLabel) {
        scheduler::record(self, job, status);
    }

    /// Counts one message sent (or not) to the boss.
    pub fn messenger_send(&self, outcome: Result<(), &dyn MetricLabel>) {
        messenger::record(self, outcome);
    }

    /// Sets the equity gauges from a drawdown measurement taken at `at` (the minute job's or
    /// an agent's).
    pub fn equity(&self, reading: EquityReading, at: chrono::DateTime<chrono::Utc>) {
        equity::record(self, reading, at);
    }

    /// Describes a gauge set at scrape time, so the exposition says what it means.
    pub(crate) fn describe_gauge(&self, name: &'static str, help: &'static str) {
        self.recorder.describe_gauge(name.into(), None, help.into());
    }

    /// Describes a counter set at scrape time.
    pub(crate) fn describe_counter(&self, name: &'static str, help: &'static str) {
        self.recorder.describe_counter(name.into(), None, help.into());
    }

    pub(crate) fn counter(&self, name: &'static str, labels: Vec<Label>) -> metrics::Counter {
        self.recorder.register_counter(&Key::from_parts(name, labels), &METADATA)
    }

    pub(crate) fn gauge(&self, name: &'static str, labels: Vec<Label>) -> metrics::Gauge {
        self.recorder.register_gauge(&Key::from_parts(name, labels), &METADATA)
    }

    fn histogram(&self, name: &'static str, labels: Vec<Label>) -> metrics::Histogram {
        self.recorder.register_histogram(&Key::from_parts(name, labels), &METADATA)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use reqwest::{Method, StatusCode};

    use super::*;

    /// A label value as an area would give it.
    struct Named(&'static str);

    impl MetricLabel for Named {
        fn metric_label(&self) -> &'static str {
            self.0
        }
    }

    #[test]
    fn recorded_families_are_described_and_durations_are_histograms() {
        let metrics = Metrics::default();
        let rtt = Some(Duration::from_millis(3));
        metrics.exchange_request(
            "exchange_a",
            &Method::GET,
            "/api/v3/order",
            ExchangeOutcome::Ok,
            rtt,
        );
        metrics.job_run("drawdown_check", Named("error"));
        metrics.messenger_send(Err(&Named("unreachable")));
        metrics.plugin_scan("p", Duration::from_millis(2), Err(&Named("plugin_trapped")));
        let text = metrics.recorder.handle().render();
        for (family, kind) in [
            ("spotbot_exchange_requests_total", "counter"),
            ("spotbot_exchange_request_duration_seconds", "histogram"),
            ("spotbot_scheduler_job_runs_total", "counter"),
            ("spotbot_messenger_messages_total", "counter"),
            ("spotbot_plugin_scan_duration_seconds", "histogram"),
            ("spotbot_plugin_scan_errors_total", "counter"),
        ] {
            assert!(text.contains(&format!("# HELP {family} ")), "{family} undescribed:\n{text}");
            assert!(text.contains(&format!("# TYPE {family} {kind}")), "{family}:\n{text}");
        }
        assert!(text.contains(
            r#"spotbot_scheduler_job_runs_total{job="drawdown_check",status="error"} 1"#
        ));
        assert!(text.contains(r#"spotbot_messenger_messages_total{outcome="unreachable"} 1"#));
        assert!(
            text.contains(
                r#"spotbot_plugin_scan_errors_total{plugin="p",error="plugin_trapped"} 1"#
            )
        );
    }

    #[test]
    fn answers_map_to_exchange_outcomes() {
        for (status, outcome) in [
            (StatusCode::OK, ExchangeOutcome::Ok),
            (StatusCode::BAD_REQUEST, ExchangeOutcome::Rejected),
            (StatusCode::UNAUTHORIZED, ExchangeOutcome::Rejected),
            (StatusCode::TOO_MANY_REQUESTS, ExchangeOutcome::RateLimited),
            (StatusCode::IM_A_TEAPOT, ExchangeOutcome::Banned),
            (StatusCode::SERVICE_UNAVAILABLE, ExchangeOutcome::ServerError),
        ] {
            assert_eq!(ExchangeOutcome::of_status(status), outcome, "{status}");
        }
    }

    #[test]
    fn unknown_http_methods_share_one_label() {
        assert_eq!(method_name(&Method::DELETE), "DELETE");
        assert_eq!(method_name(&Method::from_bytes(b"BREW").unwrap()), "other");
    }
}
