//! The protection area's routes: `GET /api/protection` (the drawdown watch, measured now),
//! `POST /api/protection/resume` (licensed), `POST /api/status/report` (the daily PnL
//! report) and `GET /api/health/check` (the health check). Rules: docs/protection.md.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiQuery, bounded_number};
use crate::activity::AgentName;
use crate::auth::Caller;
use crate::protection::{
    DrawdownStatus, EquitySeries, HealthReport, Paused, ProtectionError, ReportOutcome, Resumed,
};
use crate::state::AppState;

impl From<ProtectionError> for ApiError {
    fn from(err: ProtectionError) -> Self {
        let detail = err.to_string();
        match err {
            ProtectionError::NoExchange(_) => {
                ApiError::service_unavailable("exchange_unavailable", detail)
            }
            ProtectionError::Exchange(_) | ProtectionError::NoPrice(_) => {
                ApiError::new(StatusCode::BAD_GATEWAY, "exchange_error", detail)
            }
            ProtectionError::Store(_) => ApiError::internal(detail),
            ProtectionError::Execution(e) => e.into(),
        }
    }
}

/// Measures equity now and applies it to the high-water mark, exactly like the scheduler's
/// minute run: a fall above `[protection] max_drawdown_pct` pauses new entries and alerts
/// the boss (once per breach). Never needs a license. When the exchange cannot be read the
/// answer is still 200, with `ok: false`, `error` and the stored pause.
#[utoipa::path(get, path = "/api/protection", tag = "protection",
    responses(
        (status = 200, description = "Equity, high-water mark, drawdown and the pause", body = DrawdownStatus),
    ))]
async fn drawdown(State(state): State<AppState>) -> Json<DrawdownStatus> {
    Json(state.protection.drawdown_check().await)
}

/// Query of `GET /api/equity`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EquityQuery {
    /// Days back from now, 1-730 (default 7).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 730)]
    pub days: Option<String>,
    /// Points at most, 10-5000 (default 1000): a longer range keeps the last point of each of
    /// that many equal spans.
    #[param(value_type = Option<u32>, minimum = 10, maximum = 5000)]
    pub points: Option<String>,
}

/// The account's equity over time, from the equity measured every minute (one point a minute
/// for the last 14 days, one an hour before that, kept two years), oldest first.
#[utoipa::path(get, path = "/api/equity", tag = "protection", params(EquityQuery),
    responses(
        (status = 200, description = "The series", body = EquitySeries),
        (status = 422, description = "`invalid_query`: days is not 1-730 or points not 10-5000", body = ErrorBody),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn equity(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<EquityQuery>,
) -> Result<Json<EquitySeries>, ApiError> {
    let days = bounded_number("days", q.days.as_deref(), 7, 1..=730)?;
    let points = bounded_number("points", q.points.as_deref(), 1000, 10..=5000)?;
    Ok(Json(state.protection.equity_series(days, points as usize)?))
}

/// Pauses new entries until `POST /api/protection/resume`: every entry path (confirm, trade,
/// manual entries, scans) is refused with 409 `entries_paused`, and signals are skipped
/// (`entries_paused_skipped`) instead of asking the boss; exits, stops and trailing go on.
/// Pausing while paused changes nothing (`newly_paused: false`).
#[utoipa::path(post, path = "/api/protection/pause",
    operation_id = "pause_entries", tag = "protection", params(ResumeQuery),
    responses(
        (status = 200, description = "Entries are paused", body = Paused),
        (status = 500, description = "The store could not be written", body = ErrorBody),
    ))]
async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ResumeQuery>,
) -> Result<Json<Paused>, ApiError> {
    let agent = caller.agent_or(q.agent, AgentName::Coo);
    Ok(Json(state.protection.pause_entries(agent, &caller.label())?))
}

/// Query of `POST /api/protection/resume` and `POST /api/protection/pause`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResumeQuery {
    /// Agent card that reflects the action (default coo: the boss decides).
    pub agent: Option<AgentName>,
}

/// Clears the drawdown pause and the boss's pause and sets the high-water mark to the equity
/// of now, so entries pause again only after a new fall of the limit from here. Also answers 200 when entries
/// were not paused (`was_paused: false`; the mark is reset all the same).
#[utoipa::path(post, path = "/api/protection/resume",
    operation_id = "resume_entries", tag = "protection", params(ResumeQuery),
    responses(
        (status = 200, description = "Entries allowed; the mark is the current equity", body = Resumed),
        (status = 500, description = "The store could not be written", body = ErrorBody),
        (status = 502, description = "`exchange_error`: equity could not be measured (nothing \
            changed)", body = ErrorBody),
        (status = 503, description = "`exchange_unavailable`: no exchange client (nothing \
            changed)", body = ErrorBody),
    ))]
async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ResumeQuery>,
) -> Result<Json<Resumed>, ApiError> {
    let agent = caller.agent_or(q.agent, AgentName::Coo);
    Ok(Json(state.protection.resume_entries(agent).await?))
}

/// Query of `POST /api/status/report`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportQuery {
    /// Agent card that reflects the action (legacy default ops).
    pub agent: Option<AgentName>,
}

/// Builds today's PnL report (trades closed today in `[market] timezone`, wins and losses,
/// open positions with unrealized pnl, equity and drawdown) and sends it to the boss. Never
/// needs a license. The answer is 200 with the whole report whether or not the messenger
/// took it (`sent`; `error` says why not, e.g. not configured), so a caller can deliver it
/// another way.
#[utoipa::path(post, path = "/api/status/report",
    operation_id = "status_report", tag = "messenger and report", params(ReportQuery),
    responses(
        (status = 200, description = "The report, and whether the boss got it", body = ReportOutcome),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn report(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ReportQuery>,
) -> Result<Json<ReportOutcome>, ApiError> {
    let agent = caller.agent_or(q.agent, AgentName::Ops);
    Ok(Json(state.protection.daily_report_as(agent).await?))
}

/// Query of `GET /api/health/check`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HealthCheckQuery {
    /// Agent card that reflects the check (default tech).
    pub agent: Option<AgentName>,
}

/// Checks the exchange (server time round trip), the clock difference with it, the license,
/// the open trades' stop-losses and the messenger (`getMe`). On an anomaly the boss gets one
/// system alert and the activity log one entry. Never needs a license: a lapsed license is
/// one of the things it reports.
#[utoipa::path(get, path = "/api/health/check", tag = "health", params(HealthCheckQuery),
    responses(
        (status = 200, description = "One finding per check; `ok` false on any anomaly", body = HealthReport),
    ))]
async fn health_check(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<HealthCheckQuery>,
) -> Json<HealthReport> {
    Json(state.protection.health_check_as(caller.agent_or(q.agent, AgentName::Tech)).await)
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(drawdown))
        .routes(routes!(equity))
        .routes(routes!(resume))
        .routes(routes!(pause))
        .routes(routes!(report))
        .routes(routes!(health_check))
}
