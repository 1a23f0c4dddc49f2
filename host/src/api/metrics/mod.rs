//! `GET /metrics`: the Prometheus scrape target; never needs a license, so monitoring keeps
//! working while the license lapses.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use utoipa_axum::{router::OpenApiRouter, routes};

mod process;
mod scrape;

use super::error::ApiError;
use crate::state::AppState;

/// The service's metrics in the Prometheus text format (Prometheus scrapes it).
#[utoipa::path(get, path = "/metrics", tag = "health",
    responses((status = 200, description = "The metrics (see docs/operations.md, Metrics)",
        content_type = "text/plain",
        body = String)))]
pub(super) async fn metrics(State(state): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    scrape::read(&state.metrics, &state)?;
    process::read(&state.metrics);
    let text = state.metrics.render();
    Ok(([(CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(metrics))
}
