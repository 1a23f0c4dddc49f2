//! `GET /api/orders`: the order journal, newest first — every order the service sent (entries,
//! OCO lists, exits) with what it was for and what the exchange answered. Read-only.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiQuery, Symbol, bounded_number};
use crate::execution::journal::{JournalEntry, OrderKind, Outcome};
use crate::state::AppState;

/// Query of `GET /api/orders`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OrdersQuery {
    /// Orders to return, 1-200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
    /// Only the orders of this symbol.
    pub symbol: Option<Symbol>,
}

/// One order as the journal holds it.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderRow {
    pub client_order_id: String,
    pub kind: OrderKind,
    pub symbol: String,
    /// What caused the order, in words.
    pub cause: String,
    /// The order as sent: side, type, quantity and prices (decimal strings), e.g.
    /// `{"side": "SELL", "type": "OCO", "quantity": "0.01", "take_profit": "…",
    /// "stop_price": "…", "stop_limit_price": "…"}`.
    #[schema(value_type = Object)]
    pub request: serde_json::Value,
    /// `sending`, `placed` (with the exchange's `id` and `status`), `rejected` (with
    /// `error`), `unknown` (with `detail`; settled by a lookup) or `absent`.
    pub outcome: Outcome,
    /// ISO 8601.
    pub created_at: String,
    pub updated_at: String,
}

impl From<JournalEntry> for OrderRow {
    fn from(e: JournalEntry) -> Self {
        OrderRow {
            client_order_id: e.client_order_id,
            kind: e.kind,
            symbol: e.symbol,
            cause: e.cause,
            request: e.request,
            outcome: e.outcome,
            created_at: e.created_at,
            updated_at: e.updated_at,
        }
    }
}

/// The answer of `GET /api/orders`.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderList {
    pub orders: Vec<OrderRow>,
    pub count: usize,
}

/// The most recent orders the service sent, newest first.
#[utoipa::path(get, path = "/api/orders",
    operation_id = "list_orders", tag = "trade management", params(OrdersQuery),
    responses(
        (status = 200, description = "Recent orders", body = OrderList),
        (status = 422, description = "`invalid_query`: limit is not 1-200, or the symbol is \
            malformed", body = ErrorBody),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn list(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<OrdersQuery>,
) -> Result<Json<OrderList>, ApiError> {
    let limit = bounded_number("limit", q.limit.as_deref(), 50, 1..=200)?;
    let symbol = q.symbol.as_ref().map(|s| s.as_str());
    let orders: Vec<OrderRow> = state
        .execution
        .journal()
        .newest(symbol, limit as usize)?
        .into_iter()
        .map(|(_, entry)| entry.into())
        .collect();
    Ok(Json(OrderList { count: orders.len(), orders }))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}
