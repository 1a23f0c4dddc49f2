//! Trade management: the open trades, reconciliation on demand (`GET /api/trades/recover`)
//! and restoring a trade record (`POST /api/trades/restore`).

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::extract::ApiJson;
use crate::execution::{CloseRow, RestoreInput, TradeView};

/// The open trades.
#[derive(Debug, Serialize, ToSchema)]
pub struct TradeList {
    pub trades: Vec<TradeView>,
    pub count: usize,
}

/// Every open trade (from the store).
#[utoipa::path(get, path = "/api/trades", tag = "trade management",
    responses(
        (status = 200, description = "Open trades", body = TradeList),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn list(State(state): State<AppState>) -> Result<Json<TradeList>, ApiError> {
    let trades: Vec<TradeView> =
        state.execution.book().open_trades()?.iter().map(|t| t.view()).collect();
    Ok(Json(TradeList { count: trades.len(), trades }))
}

/// The answer of recover.
#[derive(Debug, Serialize, ToSchema)]
pub struct RecoverAnswer {
    pub ok: bool,
    /// Open OCO lists adopted as trades.
    pub recovered: usize,
    pub trades: Vec<TradeView>,
    /// Trades closed because their OCO finished meanwhile.
    pub closed: Vec<CloseRow>,
    /// Every difference settled, one sentence each.
    pub actions: Vec<String>,
}

/// Reconciles the store with the exchange now (the same run as at start): settles orders
/// with an unknown outcome by client order id, protects filled entries without an OCO,
/// closes trades whose OCO finished, and adopts open OCO lists of untracked symbols.
#[utoipa::path(get, path = "/api/trades/recover", tag = "trade management",
    responses(
        (status = 200, description = "What was settled", body = RecoverAnswer),
        (status = 502, description = "The exchange did not answer", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
    ))]
async fn recover(State(state): State<AppState>) -> Result<Json<RecoverAnswer>, ApiError> {
    let report = state.execution.reconcile().await?;
    Ok(Json(RecoverAnswer {
        ok: true,
        recovered: report.recovered.len(),
        trades: report.recovered,
        closed: report.closed,
        actions: report.actions,
    }))
}

/// The answer of restore.
#[derive(Debug, Serialize, ToSchema)]
pub struct RestoreAnswer {
    pub ok: bool,
    pub trade: TradeView,
}

/// Puts one trade record into the book. With `sl_oid` it is tied to that stop's OCO list on
/// the exchange; without, it is unprotected until reconciliation places its OCO.
#[utoipa::path(post, path = "/api/trades/restore", tag = "trade management",
    request_body = RestoreInput,
    responses(
        (status = 200, description = "Stored", body = RestoreAnswer),
        (status = 400, description = "Invalid JSON", body = ErrorBody),
        (status = 409, description = "A trade for the symbol is already open", body = ErrorBody),
        (status = 415, description = "Content-Type is not application/json", body = ErrorBody),
        (status = 422, description = "A field is missing or invalid (named in the detail)", body = ErrorBody),
        (status = 502, description = "The exchange could not be asked", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
    ))]
async fn restore(
    State(state): State<AppState>,
    ApiJson(input): ApiJson<RestoreInput>,
) -> Result<Json<RestoreAnswer>, ApiError> {
    let trade = state.execution.restore(input).await?;
    Ok(Json(RestoreAnswer { ok: true, trade: trade.view() }))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list)).routes(routes!(recover)).routes(routes!(restore))
}
