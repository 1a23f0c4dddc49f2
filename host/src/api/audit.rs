//! The audit log over HTTP: the layer that writes one row per request to a route that needs
//! the `execute` or `admin` scope (money and operator actions, also when a tool call of
//! `/mcp` reaches it), and `GET /api/audit` that reads the rows. Nothing here changes or
//! deletes a row.

use axum::Json;
use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiQuery, bounded_number, whole_number};
use crate::audit::{Acting, AuditRow, Done};
use crate::auth::{Caller, Needs, Scope};
use crate::state::AppState;

/// Largest answer read back for its outcome (a close-all of many positions is the longest).
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// The layer: runs an action as its [`Acting`] request and appends its row.
pub async fn record(
    State(state): State<AppState>,
    matched: Option<MatchedPath>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method().clone();
    let Some(route) = matched.map(|m| m.as_str().to_string()) else {
        return next.run(request).await;
    };
    if !matches!(crate::auth::needs(&method, &route), Needs::Scope(s) if s >= Scope::Execute) {
        return next.run(request).await;
    }
    let caller = request.extensions().get::<Caller>().cloned().unwrap_or_else(Caller::open);
    let agent = caller.agent.map_or("open access", |a| a.as_str()).to_string();
    let acting = Acting::new(agent, caller.token_id.clone());
    let target = request.uri().path_and_query().map_or("", |p| p.as_str()).to_string();
    let symbol = symbol_of(request.uri());
    let mark = state.audit.journal_mark();
    let response = acting.clone().scope(next.run(request)).await;

    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_ANSWER_BYTES).await.unwrap_or_default();
    let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let status = parts.status.as_u16();
    let outcome = match answer.get("error").and_then(Value::as_str) {
        Some(code) => code.to_string(),
        None if !parts.status.is_success() => format!("http_{status}"),
        None if answer.get("ok") == Some(&Value::Bool(false)) => "refused".into(),
        None => "ok".into(),
    };
    let detail = ["detail", "reason"]
        .iter()
        .find_map(|k| answer.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    let done = Done {
        at: state.clock.now().to_rfc3339(),
        route: format!("{method} {route}"),
        target,
        symbol,
        approval: answer.get("approved_by").and_then(Value::as_str).map(str::to_string),
        status,
        outcome,
        detail,
    };
    state.audit.write(&acting, mark, done);
    Response::from_parts(parts, Body::from(bytes))
}

/// The symbol an action names: `?symbol=` or the path's symbol segment.
fn symbol_of(uri: &axum::http::Uri) -> Option<String> {
    let from_query = uri.query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "symbol")
            .map(|(_, v)| v.into_owned())
    });
    from_query.or_else(|| {
        let mut segments = uri.path().split('/');
        segments.find(|s| *s == "signal").and(segments.next()).map(str::to_string)
    })
}

/// Query of `GET /api/audit`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Rows per page, 1-500 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    pub limit: Option<String>,
    /// Rows to skip, newest first (default 0; at most 2^63 - 1). Past the end the page is
    /// empty.
    #[param(value_type = Option<u64>, minimum = 0)]
    pub offset: Option<String>,
}

/// A page of the audit log.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditPage {
    /// Newest first.
    pub rows: Vec<AuditRow>,
    /// Rows in this page.
    pub count: usize,
    /// Rows in the whole log.
    pub total: u64,
    pub limit: u64,
    pub offset: u64,
}

/// The audit log of money and operator actions, newest first: who (the token's agent), the
/// route and symbol, the boss's approval it executed, the outcome, and the orders it sent with
/// their exchange ids, quantities and prices. Append-only: no route changes a row.
#[utoipa::path(get, path = "/api/audit", operation_id = "audit_log", tag = "audit",
    params(AuditQuery),
    responses(
        (status = 200, description = "One page of the log", body = AuditPage),
        (status = 422, description = "`invalid_query`: limit is not 1-500 or offset is below 0 \
            (the detail names it)", body = ErrorBody),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn audit_log(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> Result<Json<AuditPage>, ApiError> {
    let limit = bounded_number("limit", q.limit.as_deref(), 50, 1..=500)?;
    let offset = whole_number("offset", q.offset.as_deref(), 0)?;
    let skip = usize::try_from(offset).unwrap_or(usize::MAX);
    let (rows, total) = state.audit.page(skip, limit as usize)?;
    Ok(Json(AuditPage { count: rows.len(), rows, total, limit, offset }))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(audit_log))
}
