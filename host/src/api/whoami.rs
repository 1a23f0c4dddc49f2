//! `GET /api/auth/me`: who the caller is to the service — the token's agent, scope and public
//! id, or open access on a service without tokens. The dashboard shows it and offers its
//! actions only to a caller whose scope allows them.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::auth::Caller;
use crate::auth::Scope;
use crate::state::AppState;

/// The caller as the service sees it.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    /// The token's agent; null on a service without tokens.
    #[schema(example = "boss")]
    pub agent: Option<String>,
    /// What the caller may do (`admin` on a service without tokens).
    pub scope: Scope,
    /// The token's public id (`spotbot token list`); null without tokens.
    pub token_id: Option<String>,
    /// `tokens` when the service needs a token on every route but the public ones, `off`
    /// when it is open (docs/security.md).
    #[schema(example = "tokens")]
    pub auth: &'static str,
}

/// Who the caller is: the agent, scope and id of its token.
#[utoipa::path(get, path = "/api/auth/me", tag = "health",
    responses((status = 200, description = "The caller", body = Me)))]
async fn me(State(state): State<AppState>, caller: Caller) -> Json<Me> {
    Json(Me {
        agent: caller.agent.map(|a| a.as_str().to_string()),
        scope: caller.scope,
        token_id: caller.token_id,
        auth: state.auth.mode_now(),
    })
}

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(me))
}
