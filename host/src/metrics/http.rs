//! HTTP requests by route template and status, and their latency. The label is axum's
//! matched route pattern, never the raw path: raw paths carry symbols and ids, which would
//! make one series per request.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use metrics::{Label, Recorder, Unit};

use crate::state::AppState;

const REQUESTS: &str = "spotbot_http_requests_total";
pub(super) const DURATION: &str = "spotbot_http_request_duration_seconds";

/// Latency buckets in seconds: 1 ms to 10 s, where the API's answers fall (a confirm that
/// waits for the exchange takes a second or more).
pub(super) const BUCKETS: [f64; 12] =
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

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
pub async fn record_http(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = Label::new("method", request.method().as_str().to_string());
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
    let metrics = &state.metrics;
    metrics.counter(REQUESTS, vec![method.clone(), route.clone(), status]).increment(1);
    metrics.histogram(DURATION, vec![method, route]).record(started.elapsed().as_secs_f64());
    response
}
