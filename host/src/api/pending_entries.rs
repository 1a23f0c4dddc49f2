//! Manual trades with a LIMIT entry and a time to live: `POST /api/trade/manual`, and the
//! pending entries it creates (`GET /api/pending-entries`, `/check`, `/recover`, and
//! `POST /api/pending-entries/cancel`). All need a license.

use axum::Json;
use axum::extract::State;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::ApiQuery;
use crate::activity::AgentName;
use crate::auth::Caller;
use crate::exchange::Symbol;
use crate::execution::manual::{
    CheckReport, ManualRequest, PendingEntryView, RecoverEntriesReport,
};
use crate::execution::{CancelledEntry, Direction, ExecutionError, run_bounded};
use crate::money::Number;
use crate::state::AppState;

/// Query of `POST /api/trade/manual`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ManualQuery {
    /// Exchange symbol, e.g. ETHUSDT.
    pub symbol: Symbol,
    /// buy: LIMIT buy, stop below, target above. sell: LIMIT sell of held coin, mirrored.
    pub direction: Direction,
    /// Limit price of the entry; must be a multiple of the symbol's tick size.
    #[param(value_type = f64, exclusive_minimum = 0)]
    pub entry_px: Number,
    /// Stop-loss distance from the entry, percent.
    #[param(value_type = f64, exclusive_minimum = 0, maximum = 99)]
    pub sl_pct: Number,
    /// Reward/risk as `1:N` (tp_pct = sl_pct × N, 0 < N <= 100); when given, tp_pct is
    /// ignored.
    #[param(pattern = r"^1:[0-9]{1,3}(\.[0-9]{1,4})?$", example = "1:2.5")]
    pub rr: Option<String>,
    /// Take-profit distance from the entry, percent; required when rr is absent.
    #[param(value_type = Option<f64>, exclusive_minimum = 0, maximum = 1000)]
    pub tp_pct: Option<Number>,
    /// Hours until an unfilled entry is cancelled (default 24, at most 720).
    #[param(exclusive_minimum = 0, maximum = 720)]
    pub ttl_hours: Option<f64>,
    /// Agent card that reflects the action (default coo).
    pub agent: Option<AgentName>,
}

/// The answer of `POST /api/trade/manual`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ManualAnswer {
    pub ok: bool,
    /// The entry order's status at placement: NEW (waiting), or FILLED when the limit was
    /// marketable (then the OCO is already placed and the trade open).
    pub status: String,
    #[serde(flatten)]
    pub entry: PendingEntryView,
}

fn invalid(field: &str, reason: impl std::fmt::Display) -> ApiError {
    ApiError::unprocessable("invalid_query", format!("`{field}` {reason}"))
}

/// A price, percent or ratio: > 0 and <= `max`, kept to 8 decimals.
fn bounded(field: &str, value: Number, max: Decimal) -> Result<Decimal, ApiError> {
    value
        .decimal_if(|d| d > Decimal::ZERO && d <= max)
        .map(|d| d.round_dp(8).normalize())
        .ok_or_else(|| invalid(field, format!("must be > 0 and <= {max}, got {value}")))
}

/// tp_pct from `rr` (`1:N`, which wins when both are given) or `tp_pct`.
fn take_profit_pct(q: &ManualQuery, sl_pct: Decimal) -> Result<Decimal, ApiError> {
    match (&q.rr, q.tp_pct) {
        (None, None) => Err(invalid("tp_pct", "is required when `rr` is absent")),
        (None, Some(tp)) => bounded("tp_pct", tp, Decimal::ONE_THOUSAND),
        (Some(rr), _) => {
            let n = rr
                .strip_prefix("1:")
                .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'))
                .and_then(|n| n.parse::<Number>().ok())
                .ok_or_else(|| invalid("rr", format!("{rr:?} must look like 1:N, e.g. 1:2.5")))?;
            let n = bounded("rr", n, Decimal::ONE_HUNDRED)?;
            Ok(sl_pct * n)
        }
    }
}

/// Places a LIMIT GTC entry (client order id `MT_...`) at `entry_px`, sized like every trade,
/// and stores it as a pending entry until a check finds it filled (its protection is placed
/// only then) or its TTL elapsed (it is cancelled).
#[utoipa::path(post, path = "/api/trade/manual",
    operation_id = "manual_entry", tag = "bot actions", params(ManualQuery),
    responses(
        (status = 200, description = "The entry is on the book (or filled at once)", body = ManualAnswer),
        (status = 409, description = "A trade or a pending entry for the symbol exists, the \
            daily trade / consecutive-loss limit is reached, or new entries are paused by the \
            drawdown limit (`drawdown_paused`) or the boss (`entries_paused`)", body = ErrorBody),
        (status = 422, description = "A parameter is missing or invalid (rr not 1:N, neither \
            rr nor tp_pct, entry price off the tick, ...), the symbol is unknown, or the order \
            cannot satisfy the filters (min notional, held coin for a sell)", body = ErrorBody),
        (status = 502, description = "The exchange refused, or the outcome is unknown", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
        (status = 504, description = "Ran longer than 300 s (it goes on)", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([422]))))]
async fn manual(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ManualQuery>,
) -> Result<Json<ManualAnswer>, ApiError> {
    let entry_px = bounded("entry_px", q.entry_px, Decimal::from(1_000_000_000_000_i64))?;
    let sl_pct = bounded("sl_pct", q.sl_pct, Decimal::from(99))?;
    let tp_pct = take_profit_pct(&q, sl_pct)?;
    let ttl_hours = q.ttl_hours.unwrap_or(24.0);
    if !(ttl_hours > 0.0 && ttl_hours <= 720.0) {
        return Err(invalid("ttl_hours", format!("must be > 0 and <= 720, got {ttl_hours}")));
    }
    let agent = caller.agent_or(q.agent, AgentName::Coo).as_str().to_string();
    let request = ManualRequest {
        symbol: q.symbol.into_string(),
        direction: q.direction,
        entry_px,
        sl_pct,
        tp_pct,
        ttl_hours,
        agent,
    };
    let execution = state.execution.clone();
    let placed = run_bounded(async move { execution.place_manual(request).await }).await;
    let (entry, status) = placed.map_err(|err| match err {
        // Every input of this route is a query parameter (the tick check names `entry_px`).
        ExecutionError::Invalid(detail) => ApiError::unprocessable("invalid_query", detail),
        other => ApiError::from(other),
    })?;
    Ok(Json(ManualAnswer {
        ok: true,
        status: format!("{status:?}").to_uppercase(),
        entry: entry.view(),
    }))
}

/// The pending entries.
#[derive(Debug, Serialize, ToSchema)]
pub struct PendingList {
    pub pending: Vec<PendingEntryView>,
    pub count: usize,
}

/// Every manual LIMIT entry waiting for its fill.
#[utoipa::path(get, path = "/api/pending-entries",
    operation_id = "list_pending_entries", tag = "bot actions",
    responses(
        (status = 200, description = "Pending entries", body = PendingList),
        (status = 503, description = "No license", body = ErrorBody),
    ))]
async fn list(State(state): State<AppState>) -> Result<Json<PendingList>, ApiError> {
    let pending: Vec<PendingEntryView> =
        state.execution.pending_entries()?.iter().map(|e| e.view()).collect();
    Ok(Json(PendingList { count: pending.len(), pending }))
}

/// Query of the check.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CheckQuery {
    /// Agent card that reflects the action (default finance).
    pub agent: Option<AgentName>,
}

/// Polls every pending entry: FILLED → its protection is placed now and the trade recorded;
/// TTL elapsed → the entry is cancelled (a part that filled is kept and protected) and the
/// boss alerted; NEW or PARTIALLY_FILLED → left for the next poll.
#[utoipa::path(get, path = "/api/pending-entries/check",
    operation_id = "check_pending_entries", tag = "bot actions", params(CheckQuery),
    responses(
        (status = 200, description = "What the check did", body = CheckReport),
        (status = 422, description = "Invalid agent", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
        (status = 504, description = "Ran longer than 300 s (it goes on)", body = ErrorBody),
    ))]
async fn check(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<CheckQuery>,
) -> Result<Json<CheckReport>, ApiError> {
    let agent = caller.agent_or(q.agent, AgentName::Finance).as_str();
    let execution = state.execution.clone();
    let report = run_bounded(async move { execution.check_pending().await }).await?;
    let summary = format!(
        "pending entries: {} checked, {} filled, {} expired",
        report.checked,
        report.filled.len(),
        report.expired.len()
    );
    state.dashboard.record(agent, &summary, if report.errors.is_empty() { "ok" } else { "error" });
    Ok(Json(report))
}

/// Restores pending entries from open LIMIT orders whose client order id starts with `MT_`
/// (their stop and target come from this install's order journal; others are skipped).
#[utoipa::path(get, path = "/api/pending-entries/recover",
    operation_id = "recover_pending_entries", tag = "bot actions",
    responses(
        (status = 200, description = "What was restored", body = RecoverEntriesReport),
        (status = 502, description = "The exchange did not answer", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
    ))]
async fn recover(State(state): State<AppState>) -> Result<Json<RecoverEntriesReport>, ApiError> {
    Ok(Json(state.execution.recover_pending().await?))
}

/// Query of the cancel.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CancelQuery {
    /// The entry's symbol (ETHUSDT), or its base asset (ETH) with the configured quote asset.
    pub symbol: Symbol,
    /// Agent card that reflects the action (default coo).
    pub agent: Option<AgentName>,
}

/// Cancels the pending LIMIT entry of a symbol at the exchange and tells the boss. If it had
/// filled before the cancel arrived, the fill becomes an open trade protected by its OCO, as a
/// check would make it (`filled`, or `partially_filled` with the rest cancelled).
#[utoipa::path(post, path = "/api/pending-entries/cancel",
    operation_id = "cancel_pending_entries", tag = "bot actions", params(CancelQuery),
    responses(
        (status = 200, description = "What the entry became", body = CancelledEntry),
        (status = 404, description = "No pending entry for the symbol (`no_pending_entry`)", body = ErrorBody),
        (status = 422, description = "Invalid symbol or agent, or the exchange still lists the \
            order as open after its cancel (`order_refused`; the entry stays pending)", body = ErrorBody),
        (status = 502, description = "The exchange did not cancel it (`exchange_error`); the entry \
            stays pending", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
        (status = 504, description = "Ran longer than 300 s (it goes on)", body = ErrorBody),
    ))]
async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<CancelQuery>,
) -> Result<Json<CancelledEntry>, ApiError> {
    let agent = caller.agent_or(q.agent, AgentName::Coo).as_str();
    let symbol = q.symbol.into_string();
    let execution = state.execution.clone();
    let given = symbol.clone();
    let cancelled =
        run_bounded(async move { execution.cancel_pending(&given).await }).await?.ok_or_else(
            || ApiError::not_found("no_pending_entry", format!("no pending entry for {symbol}")),
        )?;
    let summary = format!("pending entry {}: {}", cancelled.symbol, cancelled.status.as_str());
    state.dashboard.record(agent, &summary, "ok");
    Ok(Json(cancelled))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(manual))
        .routes(routes!(list))
        .routes(routes!(check))
        .routes(routes!(recover))
        .routes(routes!(cancel))
}
