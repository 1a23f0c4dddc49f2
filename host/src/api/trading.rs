//! Bot actions that place or cancel orders: `POST /api/trade`, `POST /api/close`,
//! `POST /api/closeall`, `POST /api/reset-daily` (all need a license), and the mapping of
//! execution errors onto the API's error body.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::ApiQuery;
use super::signals::approver_of;
use crate::activity::AgentName;
use crate::auth::Caller;
use crate::config::is_strategy_name;
use crate::exchange::Symbol;
use crate::execution::client_id::fresh_cause;
use crate::execution::{
    CloseAllReport, CloseAllStatus, CloseRow, ClosedTrade, Direction, EntryPlan, ExecutionError,
    TradeSource, TradeView, run_bounded,
};
use crate::money::Number;
use crate::protection::TrailingReport;
use crate::signals::TradeResult;
use crate::signals::scoring::{MIN_CONFIDENCE, MIN_EV, ev_passes};
use crate::state::AppState;

impl From<ExecutionError> for ApiError {
    fn from(err: ExecutionError) -> Self {
        let detail = err.to_string();
        match err {
            ExecutionError::NoExchange(_) => {
                ApiError::service_unavailable("exchange_unavailable", detail)
            }
            ExecutionError::Invalid(_) => ApiError::unprocessable("invalid_field", detail),
            ExecutionError::EntryBlocked(block) => ApiError::conflict(block.code(), detail),
            ExecutionError::TradeExists(_) => ApiError::conflict("trade_exists", detail),
            ExecutionError::NoPosition(_) => ApiError::not_found("no_position", detail),
            ExecutionError::UnknownSymbol { .. } => {
                ApiError::unprocessable("unknown_symbol", detail)
            }
            ExecutionError::Refused(_) => ApiError::unprocessable("order_refused", detail),
            ExecutionError::Exchange(_) => {
                ApiError::new(StatusCode::BAD_GATEWAY, "exchange_error", detail)
            }
            ExecutionError::OutcomeUnknown { .. } => {
                ApiError::new(StatusCode::BAD_GATEWAY, "order_outcome_unknown", detail)
            }
            ExecutionError::Timeout => {
                ApiError::new(StatusCode::GATEWAY_TIMEOUT, "execution_timeout", detail)
            }
            ExecutionError::Store(_) => ApiError::internal(detail),
        }
    }
}

/// Query of `POST /api/trade`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TradeQuery {
    /// Exchange symbol, e.g. BTCUSDT.
    pub symbol: Symbol,
    /// buy opens a bracketed position; sell closes the open one (spot has no shorting).
    pub direction: Direction,
    /// Strategy name.
    #[param(pattern = "^[a-z][a-z0-9_]{0,63}$")]
    pub bot: String,
    /// Stop-loss distance, percent of the entry.
    #[param(value_type = f64, minimum = 0.0001, maximum = 99)]
    pub sl: Number,
    /// Take-profit distance, percent of the entry.
    #[param(value_type = f64, minimum = 0.0001, maximum = 1000)]
    pub tp: Number,
    /// Expected value; must be > 25 (else 422 `ev_gate`).
    #[param(exclusive_minimum = 25)]
    pub ev: f64,
    /// Confidence; must be >= 8 (else 422 `confidence_gate`).
    #[param(minimum = 8)]
    pub confidence: i64,
    /// Agent card that reflects the action (legacy default ops).
    pub agent: Option<AgentName>,
}

/// The answer of `POST /api/trade`: the opened trade (buy) or the closed position (sell).
#[derive(Debug, Serialize, ToSchema)]
pub struct TradeAnswer {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trade: Option<TradeView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed: Option<CloseRow>,
}

fn invalid(field: &str, reason: String) -> ApiError {
    ApiError::unprocessable("invalid_query", format!("`{field}` {reason}"))
}

/// A stop or target distance: 0.0001 to `max` percent, kept to 6 decimals.
fn percent(field: &str, value: Number, max: Decimal) -> Result<Decimal, ApiError> {
    value
        .decimal_if(|d| d >= Decimal::new(1, 4) && d <= max)
        .map(|d| d.round_dp(6))
        .ok_or_else(|| invalid(field, format!("must be 0.0001 to {max} percent, got {value}")))
}

/// Executes a trade now: buy places the bracket order (a market entry, then its protection:
/// exchange A's OCO, or exchange B's resting take-profit with the stop the service watches),
/// sell closes the open position. The ev and confidence gates apply to the values given. A
/// pending signal of the symbol and direction is consumed by the trade: its confirm then
/// places nothing.
#[utoipa::path(post, path = "/api/trade", tag = "bot actions", params(TradeQuery),
    responses(
        (status = 200, description = "Placed (buy) or closed (sell)", body = TradeAnswer),
        (status = 403, description = "`approval_required`: in `[signals] approval = \"boss\"` \
            mode an agent's trade needs a pending signal of the symbol and direction that the \
            boss approved, with the same sl and tp; nothing is placed", body = ErrorBody),
        (status = 404, description = "sell without an open position", body = ErrorBody),
        (status = 409, description = "`trade_exists`: a trade for the symbol is open; \
            `daily_limit_reached`: the daily trade / consecutive-loss limit is reached; \
            `drawdown_paused`: new entries are paused by the drawdown limit; `entries_paused`: \
            the boss paused them", body = ErrorBody),
        (status = 422, description = "a parameter is missing or invalid, ev <= 25, \
            confidence < 8, unknown symbol, or the order cannot satisfy the filters", body = ErrorBody),
        (status = 502, description = "the exchange refused, or the outcome is unknown and is \
            being settled by lookup", body = ErrorBody),
        (status = 503, description = "no license, or no exchange client", body = ErrorBody),
        (status = 504, description = "the execution ran longer than 300 s (it goes on)", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([422]))))]
async fn trade(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<TradeQuery>,
) -> Result<Json<TradeAnswer>, ApiError> {
    Ok(Json(match place_trade(&state, &caller, q, "POST /api/trade").await? {
        Traded::Opened(trade) => TradeAnswer { ok: true, trade: Some(trade), closed: None },
        Traded::Closed(closed) => {
            TradeAnswer { ok: true, trade: None, closed: Some(CloseRow::closed(&closed)) }
        }
    }))
}

/// What a trade placed now did.
pub(super) enum Traded {
    /// buy: the bracketed trade.
    Opened(TradeView),
    /// sell: the closed position.
    Closed(ClosedTrade),
}

impl Traded {
    fn result(&self) -> TradeResult {
        let (opened, closed) = match self {
            Traded::Opened(trade) => (Some(trade.clone()), None),
            Traded::Closed(closed) => (None, Some(CloseRow::closed(closed))),
        };
        TradeResult { ok: true, opened, closed, error: None }
    }
}

/// The one implementation of `POST /api/trade` and the earlier `POST /trade` (`route` names
/// the caller): checks the query and the ev / confidence gates, executes (buy: the bracket
/// order; sell: closes the position), and records it on the agent's card (legacy default
/// ops). A live pending signal of the same symbol and direction is taken by the trade
/// ([`Signals::claim_for_trade`](crate::signals::Signals::claim_for_trade)), so the earlier
/// flow's confirm afterwards only consumes it and never places a second entry.
pub(super) async fn place_trade(
    state: &AppState,
    caller: &Caller,
    q: TradeQuery,
    route: &'static str,
) -> Result<Traded, ApiError> {
    if !is_strategy_name(&q.bot) {
        return Err(invalid("bot", "must match [a-z][a-z0-9_]{0,63}".into()));
    }
    let sl = percent("sl", q.sl, Decimal::from(99))?;
    let tp = percent("tp", q.tp, Decimal::ONE_THOUSAND)?;
    if !ev_passes(q.ev) {
        return Err(ApiError::unprocessable(
            "ev_gate",
            format!("`ev` {} must be > {MIN_EV}", q.ev),
        ));
    }
    if q.confidence < i64::from(MIN_CONFIDENCE) {
        return Err(ApiError::unprocessable(
            "confidence_gate",
            format!("`confidence` {} must be >= {MIN_CONFIDENCE}", q.confidence),
        ));
    }
    let agent = caller.agent_or(q.agent, AgentName::Ops).as_str();
    let execution = state.execution.clone();
    let signals = state.signals.clone();
    let symbol = q.symbol.clone();
    // Taken before the job and moved into it: a caller that gives up cannot leave the
    // signal held (a dropped claim gives the signal back), and the claim is settled by the
    // execution it guards. In `boss` approval mode an agent's trade needs the boss's YES.
    let claim = signals
        .claim_for_trade(q.symbol.as_str(), q.direction, route, approver_of(caller), (sl, tp))
        .map_err(ApiError::from)?;
    let job = async move {
        let traded = match q.direction {
            Direction::Buy => {
                let plan = EntryPlan::new(
                    q.symbol.as_str(),
                    &q.bot,
                    sl,
                    tp,
                    TradeSource::Trade,
                    &fresh_cause(execution.now_ms()),
                    format!("{route} {} {}", q.symbol, q.bot),
                );
                execution.open_trade(&plan).await.map(|trade| Traded::Opened(trade.view()))
            }
            Direction::Sell => execution
                .close(q.symbol.as_str(), &format!("{route} sell"))
                .await
                .map(Traded::Closed),
        };
        if let Some(claim) = claim {
            claim.settle(traded.as_ref().map(Traded::result));
        }
        traded
    };
    let result = run_bounded::<_, ExecutionError>(job).await.map_err(ApiError::from);
    let status = if result.is_ok() { "ok" } else { "error" };
    state.dashboard.record(agent, &format!("trade {symbol}"), status);
    result
}

/// Query of `POST /api/close`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CloseQuery {
    /// Base asset (BTC) or exchange symbol (BTCUSDT) of the position.
    pub symbol: Symbol,
    /// Agent card that reflects the action (legacy default ops).
    pub agent: Option<AgentName>,
}

/// The answer of `POST /api/close`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CloseAnswer {
    pub ok: bool,
    #[serde(flatten)]
    pub position: CloseRow,
}

/// Closes one position: cancels its protection (the OCO, or exchange B's take-profit), waits
/// until the coin is free, sells the free quantity at market (never -2010; on exchange B an IOC
/// at the mid − 5 %). A take-profit or stop that already filled closes the trade at that
/// price instead.
#[utoipa::path(post, path = "/api/close", tag = "bot actions", params(CloseQuery),
    responses(
        (status = 200, description = "Closed", body = CloseAnswer),
        (status = 404, description = "No open position for the symbol", body = ErrorBody),
        (status = 422, description = "Invalid symbol or agent, or nothing to sell", body = ErrorBody),
        (status = 502, description = "The exchange refused (the position is protected again)", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
        (status = 504, description = "Ran longer than 300 s", body = ErrorBody),
    ))]
async fn close(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<CloseQuery>,
) -> Result<Json<CloseAnswer>, ApiError> {
    let symbol = state.execution.position_symbol(q.symbol.as_str())?;
    let agent = caller.agent_or(q.agent, AgentName::Ops).as_str();
    let execution = state.execution.clone();
    let target = symbol.clone();
    let result =
        run_bounded(async move { execution.close(&target, "POST /api/close").await }).await;
    state.dashboard.record(
        agent,
        &format!("close {symbol}"),
        if result.is_ok() { "ok" } else { "error" },
    );
    let closed = result?;
    Ok(Json(CloseAnswer { ok: true, position: CloseRow::closed(&closed) }))
}

/// Query of `POST /api/closeall`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AgentQuery {
    /// Agent card that reflects the action (legacy default ops).
    pub agent: Option<AgentName>,
}

/// Cancels every pending LIMIT entry first (one that had filled becomes a position and is
/// closed too), then closes every open position the same way as close; failures are reported
/// per entry and per position.
#[utoipa::path(post, path = "/api/closeall", tag = "bot actions", params(AgentQuery),
    responses(
        (status = 200, description = "One row per position, one per pending entry", body = CloseAllReport),
        (status = 422, description = "Invalid agent", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
        (status = 504, description = "Ran longer than 300 s", body = ErrorBody),
    ))]
async fn close_all(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<AgentQuery>,
) -> Result<Json<CloseAllReport>, ApiError> {
    let agent = caller.agent_or(q.agent, AgentName::Ops).as_str();
    let execution = state.execution.clone();
    let report =
        run_bounded(async move { execution.close_all("POST /api/closeall").await }).await?;
    let status = match report.status {
        CloseAllStatus::Ok => "ok",
        CloseAllStatus::Error => "error",
    };
    state.dashboard.record(agent, &format!("closeall: {} positions", report.count), status);
    Ok(Json(report))
}

/// Query of `GET /api/trailing`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TrailingQuery {
    /// Agent card that reflects the run (default finance; the spec's default `script` is not
    /// a dashboard agent).
    pub agent: Option<AgentName>,
}

/// Runs the trailing stop now (the scheduler runs it every minute): a trade whose profit
/// reached `trailing_trigger_pct` gets its stop moved to `trailing_distance_pct` behind the
/// price by replacing its OCO (same take-profit; a stop the service watches moves without an
/// order); stops only ever tighten. Gapped stops are exited or reported first. A call while a
/// run is going waits for it.
#[utoipa::path(get, path = "/api/trailing", tag = "bot actions", params(TrailingQuery),
    responses(
        (status = 200, description = "Stops moved, gaps found, stops that could not move", body = TrailingReport),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
        (status = 504, description = "Ran longer than 300 s (it goes on)", body = ErrorBody),
    ))]
async fn trailing(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<TrailingQuery>,
) -> Result<Json<TrailingReport>, ApiError> {
    Ok(Json(run_trailing(&state, caller.agent_or(q.agent, AgentName::Finance)).await?))
}

/// One trailing run recorded on `agent`'s card: `GET /api/trailing` and the earlier
/// `GET /trailing` (which differ only in the default agent).
pub(super) async fn run_trailing(
    state: &AppState,
    agent: AgentName,
) -> Result<TrailingReport, ApiError> {
    let protection = state.protection.clone();
    let report = run_bounded(async move { protection.trailing_run().await }).await?;
    let summary =
        format!("trailing: {} stops moved, {} gaps", report.updated.len(), report.gaps.len());
    let status = if report.errors.is_empty() { "ok" } else { "error" };
    state.dashboard.record(agent.as_str(), &summary, status);
    Ok(report)
}

/// The answer of reset-daily.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResetAnswer {
    pub ok: bool,
    pub trades_today_before: i64,
    pub trades_today_after: i64,
}

/// Zeroes today's trade counter (the consecutive-loss counter is kept).
#[utoipa::path(post, path = "/api/reset-daily", tag = "bot actions",
    responses(
        (status = 200, description = "Counter reset", body = ResetAnswer),
        (status = 503, description = "No license", body = ErrorBody),
    ))]
async fn reset_daily(State(state): State<AppState>) -> Result<Json<ResetAnswer>, ApiError> {
    let (before, after) = state.execution.reset_daily()?;
    state.dashboard.record(
        "bot-ops",
        &format!("reset-daily: trades_today {before} -> {after}"),
        "ok",
    );
    Ok(Json(ResetAnswer { ok: true, trades_today_before: before, trades_today_after: after }))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(trade))
        .routes(routes!(close))
        .routes(routes!(close_all))
        .routes(routes!(reset_daily))
        .routes(routes!(trailing))
}
