//! Requests of the exchanges' REST clients (A and B, labelled by exchange) by endpoint and
//! outcome, and their round-trip time. Recorded once per HTTP attempt in each client's one
//! sending function, so retries count as what they are: more requests. The endpoint label is
//! the REST path template (`/api/v3/order`, `/exchange`): ids, symbols and signatures travel
//! in the query or the body and never reach a label.

use std::time::Duration;

use metrics::{Label, Recorder, Unit};
use reqwest::{Method, StatusCode};

use super::Metrics;

const REQUESTS: &str = "spotbot_exchange_requests_total";
pub(super) const DURATION: &str = "spotbot_exchange_request_duration_seconds";

/// What became of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExchangeOutcome {
    /// A 2xx answer.
    Ok,
    /// The exchange answered with an error of the request (4xx other than 418/429).
    Rejected,
    /// A 5xx answer: the outcome of an order is unknown until looked up.
    ServerError,
    /// A 429 answer, or held back without sending while an earlier 429's Retry-After runs.
    RateLimited,
    /// A 418 answer (the IP is banned), or held back without sending while the ban runs.
    Banned,
    /// No answer within `[exchange] request_timeout_ms`.
    Timeout,
    /// Connection refused or lost, or the answer's body was lost.
    Network,
    /// Refused by the request budget before sending (the read share is spent, the day's
    /// orders are at the ceiling, or the wait for the window is longer than allowed).
    BudgetRefused,
}

impl ExchangeOutcome {
    /// The outcome of an answer with `status`.
    pub fn of_status(status: StatusCode) -> Self {
        match status {
            s if s.is_success() => Self::Ok,
            StatusCode::IM_A_TEAPOT => Self::Banned,
            StatusCode::TOO_MANY_REQUESTS => Self::RateLimited,
            s if s.is_server_error() => Self::ServerError,
            _ => Self::Rejected,
        }
    }

    /// The outcome of a request that got no (complete) answer.
    pub fn of_transport(error: &reqwest::Error) -> Self {
        if error.is_timeout() { Self::Timeout } else { Self::Network }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Rejected => "rejected",
            Self::ServerError => "server_error",
            Self::RateLimited => "rate_limited",
            Self::Banned => "banned",
            Self::Timeout => "timeout",
            Self::Network => "network",
            Self::BudgetRefused => "budget_refused",
        }
    }
}

pub(super) fn describe(recorder: &impl Recorder) {
    recorder.describe_counter(
        REQUESTS.into(),
        None,
        "Requests to the exchange's REST API, by exchange, method, endpoint (path template) and \
         outcome (ok, rejected, server_error, rate_limited, banned, timeout, network, \
         budget_refused)"
            .into(),
    );
    recorder.describe_histogram(
        DURATION.into(),
        Some(Unit::Seconds),
        "Round trip of the requests sent to the exchange's REST API, by exchange, method and \
         endpoint"
            .into(),
    );
}

pub(super) fn record(
    metrics: &Metrics,
    exchange: &'static str,
    method: &Method,
    endpoint: &'static str,
    outcome: ExchangeOutcome,
    round_trip: Option<Duration>,
) {
    let exchange = Label::from_static_parts("exchange", exchange);
    let method = Label::from_static_parts("method", super::method_name(method));
    let endpoint = Label::from_static_parts("endpoint", endpoint);
    if let Some(round_trip) = round_trip {
        let labels = vec![exchange.clone(), method.clone(), endpoint.clone()];
        metrics.histogram(DURATION, labels).record(round_trip.as_secs_f64());
    }
    let outcome = Label::from_static_parts("outcome", outcome.as_str());
    metrics.counter(REQUESTS, vec![exchange, method, endpoint, outcome]).increment(1);
}
