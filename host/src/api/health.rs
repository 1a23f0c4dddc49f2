//! `GET /api/health`: liveness, license summary, build commit and whether the API needs
//! tokens; never needs a license or a token.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::exchange::feed::FeedStatus;
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    pub ok: bool,
    /// `active` or `required`.
    pub license_status: String,
    pub plan: String,
    /// Short source revision from GIT_COMMIT, or `dev`.
    pub commit: String,
    /// The exchange's streams: whether order updates and prices arrive live (`live`) or the
    /// polled path covers them (`reconnecting`, `off`); absent when streams are not followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams: Option<FeedStatus>,
    /// `tokens` when the API needs a bearer token now, `off` when it is open
    /// (docs/security.md).
    pub auth: AuthNow,
    /// Set while the API is open on an address beyond loopback (`[api] auth = "off"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// Whether the API needs tokens now.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthNow {
    Tokens,
    Off,
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
        streams: state.feed.as_ref().map(|f| f.status()),
        auth: if state.auth.tokens_now() { AuthNow::Tokens } else { AuthNow::Off },
        warning: state.auth.warning(),
    })
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(health))
}
