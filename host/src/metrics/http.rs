//! HTTP requests by route template and status, and their latency. The label is axum's
//! matched route pattern, never the raw path: raw paths carry symbols and ids, which would
//! make one series per request.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use metrics::{Label, Recorder, Unit};

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

/// Middleware: counts and times every request. Runs after routing (added with
/// `Router::layer`), so the matched route pattern is in the request's extensions.
pub async fn record_http(State(metrics): State<Metrics>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = Label::from_static_parts("method", super::method_name(request.method()));
    let route = Label::new(
        "route",
        request
            .extensions()
            .get::<MatchedPath>()
            .map_or(UNMATCHED, MatchedPath::as_str)
            .to_string(),
    );
    let response = next.run(request).await;
    let status = Label::new("status", response.status().as_str().to_string());
    metrics.counter(REQUESTS, vec![method.clone(), route.clone(), status]).increment(1);
    metrics.histogram(DURATION, vec![method, route]).record(started.elapsed().as_secs_f64());
    response
}
