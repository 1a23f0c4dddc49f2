//! The API's own `429 rate_limited`: when agent reads have spent their share of the exchange's
//! request weight (see `exchange::budget`), a request that failed because a read was refused
//! answers 429 with `Retry-After` (seconds until the exchange's minute rolls over) instead of
//! the 5xx the failed read would have become. Money paths are never refused by that share, so
//! a trade, a close or a stop move keeps going while reads wait.

use axum::extract::{Request, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use crate::state::AppState;

/// The error code; the OpenAPI document lists it on every operation.
pub const CODE: &str = "rate_limited";

/// Errors that say something the read budget does not explain: never relabelled (an order
/// whose outcome is unknown, an execution still running, no license, no exchange client).
const KEPT: [&str; 4] =
    ["order_outcome_unknown", "execution_timeout", "license_required", "exchange_unavailable"];

fn refused_reads(state: &AppState) -> u64 {
    state.exchange.as_ref().map_or(0, |e| e.refused_reads())
}

/// The layer: a 5xx answer to a request during which reads were refused becomes 429.
pub async fn answer_spent_reads(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let before = refused_reads(&state);
    let response = next.run(request).await;
    if !response.status().is_server_error() || refused_reads(&state) == before {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return ApiError::internal("The answer could not be read back.").into_response();
    };
    let code = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_string));
    if code.as_deref().is_some_and(|c| KEPT.contains(&c)) {
        return Response::from_parts(parts, axum::body::Body::from(bytes));
    }
    let wait = state.exchange.as_ref().and_then(|e| e.reads_blocked_for());
    let seconds = wait.map_or(1, |w| w.as_millis().div_ceil(1000).max(1) as u64);
    let mut answer = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        CODE,
        format!(
            "The exchange's request weight for agent reads is spent for this minute (orders and \
             stops keep their reserve); retry after {seconds} s."
        ),
    )
    .into_response();
    answer.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
    answer
}
