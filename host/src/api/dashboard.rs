//! Dashboard routes: agents report their status; the page polls the state.

use axum::Json;
use axum::extract::State;
use axum::response::Html;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath};
use crate::dashboard::{AgentName, AgentStatus, DashboardSnapshot};

/// Body of `POST /api/agent/{name}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentReport {
    pub status: AgentStatus,
    /// What the agent is doing, free text (at most 500 characters).
    #[serde(default)]
    #[schema(max_length = 500)]
    pub action: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Ok {
    pub ok: bool,
}

const MAX_ACTION_CHARS: usize = 500;

/// An agent reports its own status.
#[utoipa::path(post, path = "/api/agent/{name}", tag = "dashboard",
    params(("name" = AgentName, Path, description = "coo, finance, scout, bot-ops (current); tech, ops (earlier)")),
    request_body = AgentReport,
    responses(
        (status = 200, description = "Card updated and event logged", body = Ok),
        (status = 422, description = "`invalid_agent`: unknown agent name", body = ErrorBody),
    ))]
async fn report_agent(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
    ApiJson(report): ApiJson<AgentReport>,
) -> Result<Json<Ok>, ApiError> {
    let agent: AgentName =
        name.parse().map_err(|reason: String| ApiError::unprocessable("invalid_agent", reason))?;
    if report.action.chars().count() > MAX_ACTION_CHARS {
        return Err(ApiError::unprocessable(
            "invalid_body",
            format!("action: at most {MAX_ACTION_CHARS} characters"),
        ));
    }
    state.dashboard.set_agent(agent, report.status, &report.action);
    Ok(Json(Ok { ok: true }))
}

/// Agent cards, the activity log (newest first, at most 100) and the time.
#[utoipa::path(get, path = "/api/state", tag = "dashboard",
    responses((status = 200, description = "Dashboard state", body = DashboardSnapshot)))]
async fn dashboard_state(State(state): State<AppState>) -> Json<DashboardSnapshot> {
    Json(state.dashboard.snapshot())
}

/// The dashboard page (agent cards and activity log, refreshed every 3 s).
#[utoipa::path(get, path = "/api/dashboard", tag = "dashboard",
    responses((status = 200, description = "HTML page", content_type = "text/html", body = String)))]
async fn dashboard_page() -> Html<&'static str> {
    Html(include_str!("../dashboard/page.html"))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(report_agent))
        .routes(routes!(dashboard_state))
        .routes(routes!(dashboard_page))
}
