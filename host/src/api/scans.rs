//! `POST /api/mr-combined/scan-and-signal` (license required): MR Combined's results become
//! pending signals through the signal flow.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiQuery, OptionalJson};
use super::strategies::{ScanBody, ScanQuery};
use crate::activity::AgentName;
use crate::auth::Caller;
use crate::scans::{MR_COMBINED, ScanAndSignal, ScanError};
use crate::state::AppState;

impl From<ScanError> for ApiError {
    fn from(err: ScanError) -> Self {
        match err {
            ScanError::Plugin(e) => e.into(),
            ScanError::Signal(e) => e.into(),
            ScanError::Execution(e) => e.into(),
            ScanError::Store(e) => e.into(),
            ScanError::Universe(detail) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "market_data_unavailable",
                format!("The scan universe is unavailable: {detail}"),
            ),
        }
    }
}

/// Scans the watchlist (or the body's symbols, or MR Combined's universe when its
/// `use_universe` is true) with the MR Combined plugin and creates a pending signal for each
/// buy or sell result; the boss is asked to approve each. While the daily trade limit or the
/// consecutive-loss limit is reached (or entries are paused by the drawdown limit, or the
/// strategy is switched off) nothing is scanned: `ok` is true, the lists are empty and
/// `reason` says why.
#[utoipa::path(post, path = "/api/mr-combined/scan-and-signal", tag = "scan and signal",
    params(ScanQuery),
    request_body(content = Option<ScanBody>, description = "Optional symbols; an empty body \
        or `null` scans the watchlist"),
    responses(
        (status = 200, description = "Signals created and symbols skipped, or why nothing was \
            scanned", body = ScanAndSignal),
        (status = 404, description = "`plugin_not_found`: the mr_combined plugin is not \
            loaded", body = ErrorBody),
        (status = 422, description = "`unknown_symbol`: a symbol is not listed on the active \
            exchange; `invalid_body`; or the plugin failed (`plugin_error` with its \
            bad-config reason, `plugin_trapped`, `plugin_deadline_exceeded`, ...)",
            body = ErrorBody),
        (status = 503, description = "`market_data_unavailable`: the exchange's market data \
            cannot be fetched; `exchange_unavailable`", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([404, 422, 503]))))]
async fn scan_and_signal(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ScanQuery>,
    OptionalJson(body): OptionalJson<ScanBody>,
) -> Result<Json<ScanAndSignal>, ApiError> {
    if body.symbols.as_ref().is_some_and(Vec::is_empty) {
        return Err(ApiError::unprocessable("invalid_body", "`symbols` must not be empty."));
    }
    let symbols = body.symbols.map(|list| list.into_iter().map(|s| s.into_string()).collect());
    let agent = caller.agent_or(query.agent, AgentName::Scout).as_str();
    match state.scans.scan_and_signal(MR_COMBINED, symbols, agent).await {
        Ok(run) => Ok(Json(run.answer)),
        Err(err) => {
            state.dashboard.record(agent, &format!("mr_combined scan failed: {err}"), "error");
            Err(err.into())
        }
    }
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(scan_and_signal))
}
