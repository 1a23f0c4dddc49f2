//! Pump Momentum routes (no license needed: the scanner only observes and never trades): the
//! alert scan, the stored alerts, and their outcome evaluation.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiPath, ApiQuery, Symbol, bounded_number, whole_number};
use super::strategies::ScanQuery;
use crate::activity::AgentName;
use crate::auth::Caller;
use crate::plugins::model::{ConfidenceLevel, Stage};
use crate::scans::{AlertFilter, OutcomeReport, PumpAlert, PumpScan};
use crate::state::AppState;

/// Scans the Pump Momentum universe (symbols with 24 h quote volume >= min_quote_volume_usd
/// when use_universe, else watchlist_override or the watchlist), stores every alert and sends
/// it to the boss. Never places a trade. GET and POST do the same (no body).
#[utoipa::path(method(get, post), path = "/api/pump-momentum/scan",
    operation_id = "pump_scan", tag = "pump momentum",
    params(ScanQuery),
    responses(
        (status = 200, description = "The alerts this scan raised", body = PumpScan),
        (status = 404, description = "`plugin_not_found`: the pump_momentum plugin is not \
            loaded", body = ErrorBody),
        (status = 409, description = "`plugin_disabled`: [strategy.pump_momentum] enabled = \
            false", body = ErrorBody),
        (status = 422, description = "The plugin failed (`plugin_error`, `plugin_trapped`, \
            ...)", body = ErrorBody),
        (status = 503, description = "`market_data_unavailable`: the universe or the candles \
            cannot be fetched", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([404, 409, 422, 503]))))]
async fn scan(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ScanQuery>,
) -> Result<Json<PumpScan>, ApiError> {
    let agent = caller.agent_or(query.agent, AgentName::Scout).as_str();
    match state.scans.pump_scan(agent).await {
        Ok(answer) => Ok(Json(answer)),
        Err(err) => {
            state.dashboard.record(agent, &format!("pump scan failed: {err}"), "error");
            Err(err.into())
        }
    }
}

/// Filters of the alert list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AlertsQuery {
    /// Only this symbol.
    pub symbol: Option<Symbol>,
    /// pump_watch or pump_signal.
    pub stage: Option<Stage>,
    /// low, medium or high.
    pub confidence: Option<ConfidenceLevel>,
    /// Only alerts raised at or after this time, epoch milliseconds.
    #[param(value_type = Option<u64>, minimum = 0)]
    pub since: Option<String>,
    /// Rows, 1-200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
}

/// Filters of one symbol's alerts.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SymbolAlertsQuery {
    pub stage: Option<Stage>,
    pub confidence: Option<ConfidenceLevel>,
    /// Only alerts raised at or after this time, epoch milliseconds.
    #[param(value_type = Option<u64>, minimum = 0)]
    pub since: Option<String>,
    /// Rows, 1-200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
}

/// Stored alerts, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct AlertList {
    pub ok: bool,
    pub count: usize,
    pub signals: Vec<PumpAlert>,
}

/// The stored alerts that pass the filters of either list route.
fn listing(
    state: &AppState,
    symbol: Option<String>,
    stage: Option<Stage>,
    confidence: Option<ConfidenceLevel>,
    since: Option<&str>,
    limit: Option<&str>,
) -> Result<Json<AlertList>, ApiError> {
    let since_ms = match since {
        Some(text) => Some(whole_number("since", Some(text), 0)? as i64),
        None => None,
    };
    let limit = bounded_number("limit", limit, 50, 1..=200)? as usize;
    let filter = AlertFilter { symbol, stage, confidence, since_ms, limit };
    let rows = state.scans.pump_alerts(&filter)?;
    Ok(Json(AlertList { ok: true, count: rows.len(), signals: rows }))
}

/// Stored Pump Momentum alerts, newest first, with optional filters.
#[utoipa::path(get, path = "/api/pump-momentum/signals",
    operation_id = "pump_signals", tag = "pump momentum",
    params(AlertsQuery),
    responses(
        (status = 200, description = "The alerts", body = AlertList),
        (status = 422, description = "`invalid_query`: limit is not 1-200, since is not a \
            whole number >= 0, or stage/confidence/symbol is not a known value", body = ErrorBody),
    ))]
async fn signals(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<AlertsQuery>,
) -> Result<Json<AlertList>, ApiError> {
    let symbol = q.symbol.map(Symbol::into_string);
    listing(&state, symbol, q.stage, q.confidence, q.since.as_deref(), q.limit.as_deref())
}

/// The stored alerts of one symbol, newest first.
#[utoipa::path(get, path = "/api/pump-momentum/signals/{symbol}",
    operation_id = "pump_symbol_signals", tag = "pump momentum",
    params(("symbol" = String, Path, description = "Exchange pair symbol", example = "SOLUSDT",
        pattern = "^[A-Z0-9]{2,20}$"), SymbolAlertsQuery),
    responses(
        (status = 200, description = "The symbol's alerts (empty when it has none)",
            body = AlertList),
        (status = 422, description = "`invalid_path` or `invalid_query`", body = ErrorBody),
    ))]
async fn symbol_signals(
    State(state): State<AppState>,
    ApiPath(symbol): ApiPath<Symbol>,
    ApiQuery(q): ApiQuery<SymbolAlertsQuery>,
) -> Result<Json<AlertList>, ApiError> {
    let symbol = Some(symbol.into_string());
    listing(&state, symbol, q.stage, q.confidence, q.since.as_deref(), q.limit.as_deref())
}

/// Fills the outcome fields (price 1 h / 4 h / 24 h after, MFE/MAE, reach and reversal flags)
/// of stored alerts at least an hour old whose 24 h window is not complete yet. The
/// `pump_outcomes` job runs this every hour; `spotbot pump-outcomes` calls it.
#[utoipa::path(post, path = "/api/pump-momentum/outcomes",
    operation_id = "pump_outcomes", tag = "pump momentum",
    responses(
        (status = 200, description = "What the run updated", body = OutcomeReport),
        (status = 503, description = "`market_data_unavailable`: no exchange client for \
            candles", body = ErrorBody),
    ))]
async fn outcomes(State(state): State<AppState>) -> Result<Json<OutcomeReport>, ApiError> {
    Ok(Json(state.scans.pump_outcomes().await?))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(scan))
        .routes(routes!(signals))
        .routes(routes!(symbol_signals))
        .routes(routes!(outcomes))
}
