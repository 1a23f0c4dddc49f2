//! The earlier bot actions: `POST /trade`, `GET /trailing`, `GET /status` (all need a
//! license). Each runs the current route's code; only the default agent and, for `/trade`, the
//! answer's shape differ.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::super::error::{ApiError, ErrorBody};
use super::super::extract::ApiQuery;
use super::super::status::{StatusAnswer, status_of};
use super::super::trading::{TradeQuery, Traded, place_trade, run_trailing};
use crate::activity::AgentName;
use crate::auth::Caller;
use crate::execution::{ClosedTrade, Direction, TradeView};
use crate::protection::TrailingReport;
use crate::state::AppState;

/// The earlier answer of a trade: the Trade resource's fields. A sell closes the open position
/// and answers the closed trade in the same shape, with `exit_px` and `pnl` added.
#[derive(Debug, Serialize, ToSchema)]
pub struct EarlierTrade {
    pub symbol: String,
    /// The direction traded: buy opened the bracket, sell closed the position.
    pub direction: Direction,
    pub bot: String,
    /// Coin quantity bought (buy) or sold (sell).
    pub size: f64,
    /// Entry price (average fill) of the trade.
    pub entry_px: f64,
    pub sl_px: f64,
    pub tp_px: f64,
    pub sl_pct: f64,
    pub tp_pct: f64,
    /// buy: `ok` when the leg is on the exchange, `pending` while it is being placed, `failed`
    /// when the position is unprotected. sell: `closed` (the OCO is gone: cancelled by the
    /// close, or one of its legs filled).
    pub sl_placed: String,
    /// As `sl_placed`, for the take-profit leg.
    pub tp_placed: String,
    /// The day the trade was opened, YYYY-MM-DD in `[market] timezone`.
    pub date: String,
    /// Average exit price (sell only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub exit_px: Option<f64>,
    /// Net pnl in the quote asset (sell only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub pnl: Option<f64>,
}

impl EarlierTrade {
    fn opened(t: TradeView) -> Self {
        EarlierTrade {
            symbol: t.symbol,
            direction: Direction::Buy,
            bot: t.bot,
            size: t.size,
            entry_px: t.entry_px,
            sl_px: t.sl_px,
            tp_px: t.tp_px,
            sl_pct: t.sl_pct,
            tp_pct: t.tp_pct,
            sl_placed: t.sl_placed,
            tp_placed: t.tp_placed,
            date: t.date,
            exit_px: None,
            pnl: None,
        }
    }

    fn closed(c: &ClosedTrade) -> Self {
        let (t, v) = (c.trade.view(), c.view());
        EarlierTrade {
            size: v.size,
            direction: Direction::Sell,
            sl_placed: "closed".into(),
            tp_placed: "closed".into(),
            exit_px: Some(v.exit_px),
            pnl: Some(v.pnl),
            ..Self::opened(t)
        }
    }
}

/// The earlier `POST /api/trade`: the same query, gates and execution (buy places the bracket
/// order: a market entry, then its protection; sell closes the position), answered in the
/// earlier shape. A live pending signal of the symbol and direction is consumed by the trade:
/// the confirm the earlier flow calls afterwards places nothing.
#[utoipa::path(post, path = "/trade", tag = "earlier route set", operation_id = "earlier_trade",
    params(TradeQuery),
    responses(
        (status = 200, description = "Placed (buy) or closed (sell)", body = EarlierTrade),
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
) -> Result<Json<EarlierTrade>, ApiError> {
    Ok(Json(match place_trade(&state, &caller, q, "POST /trade").await? {
        Traded::Opened(trade) => EarlierTrade::opened(trade),
        Traded::Closed(closed) => EarlierTrade::closed(&closed),
    }))
}

/// Query of `GET /trailing`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TrailingQuery {
    /// Agent card that reflects the run (default tech).
    pub agent: Option<AgentName>,
}

/// The earlier `GET /api/trailing`: one trailing run. The earlier shape `{updated}` plus the
/// current `gaps` and `errors`.
#[utoipa::path(get, path = "/trailing", tag = "earlier route set",
    operation_id = "earlier_trailing", params(TrailingQuery),
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
    Ok(Json(run_trailing(&state, caller.agent_or(q.agent, AgentName::Tech)).await?))
}

/// Query of `GET /status`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StatusQuery {
    /// Agent card that logs the call (default coo).
    pub agent: Option<AgentName>,
}

/// The earlier `GET /api/status`: the earlier shape `{exchange, testnet, trades_today,
/// consecutive_losses, recent_trades, config}` plus the current `open_trades`. Reads only the
/// store.
#[utoipa::path(get, path = "/status", tag = "earlier route set", operation_id = "earlier_status",
    params(StatusQuery),
    responses(
        (status = 200, description = "The status", body = StatusAnswer),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn status(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<StatusQuery>,
) -> Result<Json<StatusAnswer>, ApiError> {
    Ok(Json(status_of(&state, Some(caller.agent_or(q.agent, AgentName::Coo)))?))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(trade)).routes(routes!(trailing)).routes(routes!(status))
}
