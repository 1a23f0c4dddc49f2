//! The signal flow: create (`POST /api/signal`), list, the text list for forwarding, one
//! signal, confirm, reject and cleanup.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, ApiQuery};
use crate::auth::{Caller, Scope};
use crate::exchange::Symbol;
use crate::signals::{
    Approver, CleanupAnswer, ConfirmAnswer, CreateAnswer, Origin, SignalError, SignalInput,
    SignalStatus, SignalView,
};
use crate::state::AppState;

impl From<SignalError> for ApiError {
    fn from(err: SignalError) -> Self {
        let detail = err.to_string();
        match err {
            SignalError::Invalid { .. } => ApiError::unprocessable("invalid_body", detail),
            SignalError::NotFound(_) => ApiError::not_found("signal_not_found", detail),
            SignalError::NotPending { .. } => ApiError::conflict("signal_not_pending", detail),
            SignalError::Expired { .. } => {
                ApiError::new(StatusCode::GONE, "signal_expired", detail)
            }
            SignalError::Executing(_) => ApiError::conflict("signal_executing", detail),
            SignalError::Changed { .. } => ApiError::conflict("signal_changed", detail),
            SignalError::BelowGates(_) => ApiError::unprocessable("signal_below_gates", detail),
            SignalError::ApprovalRequired(_) => {
                ApiError::new(StatusCode::FORBIDDEN, "approval_required", detail)
            }
            SignalError::AgentSignalsOff => {
                ApiError::new(StatusCode::FORBIDDEN, "agent_signals_off", detail)
            }
            SignalError::Execution(e) => e.into(),
        }
    }
}

/// The path of one signal.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SymbolPath {
    /// Exchange symbol, e.g. BTCUSDT.
    pub symbol: Symbol,
}

/// Which signal a confirm or reject is meant for.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SignalIdQuery {
    /// The id of the signal the caller saw (`GET /api/signal/list`): when the symbol's pending
    /// signal is another one now (replaced by a newer signal), nothing happens and the answer
    /// is 403 `approval_required` (confirm) or 409 `signal_changed` (reject). Without it, the
    /// symbol's current signal.
    #[param(min_length = 1, max_length = 32, pattern = "^[0-9a-z]+$")]
    pub signal_id: Option<String>,
}

/// Creates a pending signal (unless a skip rule applies) and sends the approval request to
/// the boss. ev and confidence are computed by the service (docs/signals.md).
#[utoipa::path(post, path = "/api/signal",
    operation_id = "create_signal", tag = "signal flow", request_body = SignalInput,
    responses(
        (status = 200, description = "Created (pending, messenger_failed) or skipped \
            (duplicate_skipped, daily_limit_skipped, drawdown_paused_skipped and \
            entries_paused_skipped with a `reason`, \
            trade_exists_skipped, no_position_sell_skipped); a skipped signal is not put to \
            the boss", body = CreateAnswer),
        (status = 403, description = "`agent_signals_off`: the service accepts only \
            plugin-made signals (`[signals] agent_signals = false`)", body = ErrorBody),
        (status = 400, description = "Invalid JSON", body = ErrorBody),
        (status = 415, description = "Content-Type is not application/json", body = ErrorBody),
        (status = 422, description = "A field is missing or invalid (`invalid_body`; a buy \
            needs `sl_pct` and `tp_pct`), the \
            symbol is not listed on the exchange (`unknown_symbol`), or the signal's ev or \
            confidence fails the confirm gates, so the boss is not asked (`signal_below_gates`)", body = ErrorBody),
        (status = 502, description = "The exchange could not be asked for the symbol", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([422]))))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    input: Result<ApiJson<SignalInput>, ApiError>,
) -> Result<Json<CreateAnswer>, ApiError> {
    let ApiJson(input) = input.map_err(explain_computed_fields)?;
    let origin = Origin::agent(caller.agent.map_or("open access", |a| a.as_str()));
    Ok(Json(state.signals.create(input, None, origin).await?))
}

/// Whose YES a caller gives: a caller with the `admin` scope is the boss (the operator's own
/// token, the dashboard; on an open service everyone is); any other is an agent relaying it.
pub(super) fn approver_of(caller: &Caller) -> Approver {
    if caller.scope == Scope::Admin { Approver::Boss } else { Approver::Agent }
}

/// A body that sends `ev` or `confidence` learns why they are refused, not only that they
/// are unknown: the service computes both, so a caller cannot talk its way past the gates.
fn explain_computed_fields(mut err: ApiError) -> ApiError {
    let computed = ["ev", "confidence"].iter().any(|f| err.detail.contains(&format!("`{f}`")));
    if err.code == "invalid_body" && err.detail.contains("unknown field") && computed {
        err.detail.push_str(
            ". The service computes ev and confidence from the checklist and sl_pct/tp_pct \
             (docs/signals.md): leave them out.",
        );
    }
    err
}

/// Every signal in memory.
#[derive(Debug, Serialize, ToSchema)]
pub struct SignalList {
    pub signals: Vec<SignalView>,
}

/// Every in-memory signal, any status.
#[utoipa::path(get, path = "/api/signal/list", operation_id = "list_signals", tag = "signal flow",
    responses((status = 200, description = "All signals", body = SignalList)))]
async fn list(State(state): State<AppState>) -> Json<SignalList> {
    Json(SignalList { signals: state.signals.list() })
}

/// Pending signals as plain text, one per line with its age in minutes and the reply forms
/// `1-YES <SYMBOL>` and `0-NO <SYMBOL>`, for an agent to forward to the boss.
#[utoipa::path(get, path = "/api/signal/pending",
    operation_id = "pending_signals", tag = "signal flow",
    responses((status = 200, description = "One line per pending signal", content_type = "text/plain", body = String)))]
async fn pending(
    State(state): State<AppState>,
) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    (
        [(axum::http::header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        state.signals.pending_text(),
    )
}

/// One pending signal's full detail.
#[utoipa::path(get, path = "/api/signal/{symbol}",
    operation_id = "get_signal", tag = "signal flow", params(SymbolPath),
    responses(
        (status = 200, description = "The signal", body = SignalView),
        (status = 404, description = "No signal for the symbol", body = ErrorBody),
        (status = 409, description = "The signal is skipped or expired", body = ErrorBody),
        (status = 410, description = "The signal is older than 5 minutes", body = ErrorBody),
    ))]
async fn get_one(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<SymbolPath>,
) -> Result<Json<SignalView>, ApiError> {
    Ok(Json(state.signals.get(path.symbol.as_str())?))
}

/// Confirms a pending signal (boss said YES): the server checks the boss's approval (in
/// `[signals] approval = "boss"` mode an agent's confirm needs the boss's own YES on this
/// signal; a caller with the `admin` scope gives it), the stored ev (> 25) and confidence
/// (>= 8), then executes it — buy places the bracket order, sell closes the position. Gates or
/// limits unmet: `ok: false`, nothing placed, the signal stays pending. A repeated confirm
/// answers from the first one and places nothing.
#[utoipa::path(post, path = "/api/signal/{symbol}/confirm",
    operation_id = "confirm_signal", tag = "signal flow", params(SymbolPath, SignalIdQuery),
    responses(
        (status = 200, description = "Executed, or refused with ok=false (gates, limits, order refused)", body = ConfirmAnswer),
        (status = 403, description = "`approval_required`: the boss has not approved this \
            signal as it is (`[signals] approval = \"boss\"`); nothing is placed", body = ErrorBody),
        (status = 404, description = "No signal for the symbol", body = ErrorBody),
        (status = 409, description = "The signal is skipped or expired", body = ErrorBody),
        (status = 410, description = "The signal is older than 5 minutes; nothing is placed", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
        (status = 504, description = "The execution ran longer than 300 s (it goes on)", body = ErrorBody),
    ))]
async fn confirm(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(path): ApiPath<SymbolPath>,
    ApiQuery(query): ApiQuery<SignalIdQuery>,
) -> Result<Json<ConfirmAnswer>, ApiError> {
    let symbol = path.symbol.as_str();
    let by = caller.label();
    let id = query.signal_id.as_deref();
    Ok(Json(state.signals.confirm(symbol, approver_of(&caller), &by, id).await?))
}

/// The answer of reject.
#[derive(Debug, Serialize, ToSchema)]
pub struct RejectAnswer {
    pub ok: bool,
    pub symbol: String,
    pub status: SignalStatus,
}

/// Rejects a pending signal (boss said NO); it stays in memory as skipped until cleanup.
#[utoipa::path(post, path = "/api/signal/{symbol}/reject",
    operation_id = "reject_signal", tag = "signal flow", params(SymbolPath, SignalIdQuery),
    responses(
        (status = 200, description = "Skipped", body = RejectAnswer),
        (status = 404, description = "No signal for the symbol", body = ErrorBody),
        (status = 409, description = "Not pending, being executed, or (`signal_changed`) not \
            the signal `signal_id` names", body = ErrorBody),
    ))]
async fn reject(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<SymbolPath>,
    ApiQuery(query): ApiQuery<SignalIdQuery>,
) -> Result<Json<RejectAnswer>, ApiError> {
    let status = state.signals.reject(path.symbol.as_str(), query.signal_id.as_deref())?;
    Ok(Json(RejectAnswer { ok: true, symbol: path.symbol.into_string(), status }))
}

/// Query of cleanup.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CleanupQuery {
    /// Pending signals older than this many minutes expire (default 5).
    #[param(minimum = 0, maximum = 10080)]
    pub max_age_minutes: Option<u32>,
}

/// Expires pending signals older than max_age_minutes and deletes skipped or expired ones
/// older than 30 minutes.
#[utoipa::path(post, path = "/api/signal/cleanup",
    operation_id = "cleanup_signals", tag = "signal flow", params(CleanupQuery),
    responses(
        (status = 200, description = "What expired and what was deleted", body = CleanupAnswer),
        (status = 422, description = "max_age_minutes is not a whole number 0..=10080", body = ErrorBody),
    ))]
async fn cleanup(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<CleanupQuery>,
) -> Result<Json<CleanupAnswer>, ApiError> {
    let minutes = q.max_age_minutes.unwrap_or(5);
    if minutes > 10_080 {
        return Err(ApiError::unprocessable(
            "invalid_query",
            "`max_age_minutes` must be at most 10080 (one week)",
        ));
    }
    Ok(Json(state.signals.cleanup(minutes)))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(list))
        .routes(routes!(pending))
        .routes(routes!(get_one))
        .routes(routes!(confirm))
        .routes(routes!(reject))
        .routes(routes!(cleanup))
}
