//! `GET /api/health`: liveness, license summary and build commit; never needs a license.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    pub ok: bool,
    /// `active` or `required`.
    pub license_status: String,
    pub plan: String,
    /// Short source revision from GIT_COMMIT, or `dev`.
    pub commit: String,
}

/// Service health.
#[utoipa::path(get, path = "/api/health", tag = "health",
    responses((status = 200, description = "The service answers", body = Health)))]
pub(super) async fn health(State(state): State<AppState>) -> Json<Health> {
    let plan = state.license.active_plan();
    Json(Health {
        ok: true,
        license_status: if plan.is_some() { "active" } else { "required" }.into(),
        plan: plan.unwrap_or_else(|| "none".into()),
        commit: state.config.secrets.git_commit.clone(),
    })
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(health))
}
