//! HTTP requests by route template and status, and their latency. The label is axum's
//! matched route pattern, never the raw path: raw paths carry symbols and ids, which would
//! make one series per request.
//!
//! This runs on every request, so the series' handles are kept by route template once a
//! request has touched them: a request then costs one map lookup under a read lock, where
//! building its labels and looking them up in the recorder's registry cost several
//! allocations (about a sixth of the service's overhead over a bare axum server,
//! docs/benchmarks.md).

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use metrics::{Counter, Histogram, Label, Recorder, Unit};

use super::Metrics;

const REQUESTS: &str = "spotbot_http_requests_total";
pub(super) const DURATION: &str = "spotbot_http_request_duration_seconds";

/// The route label of requests no route matched (404s of probes and typos).
const UNMATCHED: &str = "unmatched";

pub(super) fn describe(recorder: &impl Recorder) {
    recorder.describe_counter(
        REQUESTS.into(),
        None,
        "HTTP requests answered, by method, route template and status".into(),
    );
    recorder.describe_histogram(
        DURATION.into(),
        Some(Unit::Seconds),
        "Time to answer an HTTP request, by method and route template".into(),
    );
}

/// The handles of every HTTP series requests have touched, by route template.
#[derive(Default)]
pub(super) struct HttpSeries {
    routes: RwLock<HashMap<String, RouteSeries>>,
}

/// One route template's series: few methods and statuses each, so lists beat maps.
#[derive(Default)]
struct RouteSeries {
    durations: Vec<(&'static str, Histogram)>,
    counts: Vec<(&'static str, StatusCode, Counter)>,
}

impl RouteSeries {
    /// Records one answer when both of its series exist; false when one must be registered.
    fn record(&self, method: &'static str, status: StatusCode, seconds: f64) -> bool {
        let count = self.counts.iter().find(|(m, s, _)| *m == method && *s == status);
        let duration = self.durations.iter().find(|(m, _)| *m == method);
        let (Some((.., counter)), Some((_, histogram))) = (count, duration) else {
            return false;
        };
        counter.increment(1);
        histogram.record(seconds);
        true
    }
}

impl HttpSeries {
    fn record(
        &self,
        metrics: &Metrics,
        method: &'static str,
        route: &str,
        status: StatusCode,
        seconds: f64,
    ) {
        let routes = self.routes.read().unwrap_or_else(PoisonError::into_inner);
        if routes.get(route).is_some_and(|series| series.record(method, status, seconds)) {
            return;
        }
        drop(routes);
        let mut routes = self.routes.write().unwrap_or_else(PoisonError::into_inner);
        let series = routes.entry(route.to_string()).or_default();
        let method_label = || Label::from_static_parts("method", method);
        let route_label = || Label::new("route", route.to_string());
        if !series.counts.iter().any(|(m, s, _)| *m == method && *s == status) {
            let status_label = Label::new("status", status.as_str().to_string());
            let counter =
                metrics.counter(REQUESTS, vec![method_label(), route_label(), status_label]);
            series.counts.push((method, status, counter));
        }
        if !series.durations.iter().any(|(m, _)| *m == method) {
            let histogram = metrics.histogram(DURATION, vec![method_label(), route_label()]);
            series.durations.push((method, histogram));
        }
        series.record(method, status, seconds);
    }
}

/// Middleware: counts, times and logs every request (a debug line each, a warning for a
/// server error, with method, route, status and latency). Runs after routing (added with
/// `Router::layer`), so the matched route pattern is in the request's extensions.
pub async fn record_http(State(metrics): State<Metrics>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = super::method_name(request.method());
    let route = request.extensions().get::<MatchedPath>().cloned();
    let route = route.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
    let response = next.run(request).await;
    let status = response.status();
    let seconds = started.elapsed().as_secs_f64();
    let code = status.as_u16();
    if status.is_server_error() {
        tracing::warn!(method, route, status = code, seconds, "answered with a server error");
    } else {
        tracing::debug!(method, route, status = code, seconds, "answered");
    }
    metrics.http.record(&metrics, method, route, status, seconds);
    response
}
