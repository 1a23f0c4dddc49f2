//! Trade management: the open trades, reconciliation on demand (`GET /api/trades/recover`),
//! restoring a trade record (`POST /api/trades/restore`), the closed-trade history, its
//! statistics and the history sync from the exchange.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiQuery, bounded_number, whole_number};
use crate::execution::stats::{TradeStats, chronological};
use crate::execution::sync::SyncError;
use crate::execution::trade::ClosedTradeView;
use crate::execution::{CloseRow, ClosedTrade, RestoreInput, TradeSource, TradeView};
use crate::state::AppState;

/// The open trades.
#[derive(Debug, Serialize, ToSchema)]
pub struct TradeList {
    pub trades: Vec<TradeView>,
    pub count: usize,
}

/// Every open trade (from the store).
#[utoipa::path(get, path = "/api/trades", operation_id = "list_trades", tag = "trade management",
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
    /// Trades adopted: open OCO lists the store did not know, and coin the account holds for
    /// an entry whose answer was lost or damaged.
    pub recovered: usize,
    pub trades: Vec<TradeView>,
    /// Trades closed because their OCO finished meanwhile, or their coin is no longer held.
    pub closed: Vec<CloseRow>,
    /// Every difference settled, one sentence each.
    pub actions: Vec<String>,
}

/// Reconciles the store with the exchange now (the same run as at start): settles orders
/// with an unknown outcome by client order id, protects filled entries without their
/// protection (an OCO, or exchange B's take-profit), closes trades whose protection finished
/// or whose coin the account no longer holds, adopts open OCO lists of untracked symbols, and
/// adopts and protects coin the account holds for an entry whose answer was lost or damaged
/// (`[protection] adopt_holdings`).
#[utoipa::path(get, path = "/api/trades/recover",
    operation_id = "recover_trades", tag = "trade management",
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
#[utoipa::path(post, path = "/api/trades/restore",
    operation_id = "restore_trade", tag = "trade management",
    request_body = RestoreInput,
    responses(
        (status = 200, description = "Stored", body = RestoreAnswer),
        (status = 400, description = "Invalid JSON", body = ErrorBody),
        (status = 409, description = "A trade for the symbol is already open", body = ErrorBody),
        (status = 415, description = "Content-Type is not application/json", body = ErrorBody),
        (status = 422, description = "A field is missing or invalid (named in the detail), the \
            prices are not ordered around the entry, the symbol is not listed or `sl_oid` is not \
            an order of it", body = ErrorBody),
        (status = 502, description = "The exchange could not be asked", body = ErrorBody),
        (status = 503, description = "No license, or no exchange client", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([422]))))]
async fn restore(
    State(state): State<AppState>,
    ApiJson(input): ApiJson<RestoreInput>,
) -> Result<Json<RestoreAnswer>, ApiError> {
    let trade = state.execution.restore(input).await?;
    Ok(Json(RestoreAnswer { ok: true, trade: trade.view() }))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(recover))
        .routes(routes!(restore))
        .routes(routes!(history))
        .routes(routes!(stats))
        .routes(routes!(sync))
}

/// A closed-trade row: the spec's known columns (symbol, direction, pnl, closed_at) and the
/// rest of the record.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HistoryRow {
    #[serde(flatten)]
    pub row: ClosedTradeView,
    /// Where the trade came from: `signal`, `trade`, `manual`, `restored`, or `recovered`
    /// (adopted from an open OCO, or — with bot `synced` — copied from the exchange's fills by
    /// `POST /api/trades/sync`).
    pub source: TradeSource,
    /// The exchange it was made on.
    pub exchange: crate::config::ExchangeName,
}

impl HistoryRow {
    pub fn of(closed: &ClosedTrade) -> Self {
        Self { row: closed.view(), source: closed.trade.source, exchange: closed.trade.exchange }
    }
}

/// Query of `GET /api/trades/history`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// Rows per page, 1-200 (default 50).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
    /// Rows to skip, newest first (default 0; at most 2^63 - 1). Past the end the page is
    /// empty.
    #[param(value_type = Option<u64>, minimum = 0)]
    pub offset: Option<String>,
    /// Only the trades of this strategy (`bot`; `synced` for trades copied from the exchange).
    #[param(max_length = 64, pattern = "^[a-z][a-z0-9_]{0,63}$")]
    pub bot: Option<String>,
    /// Only the trades of this symbol.
    pub symbol: Option<crate::exchange::Symbol>,
    /// Only trades closed on or after this day, `YYYY-MM-DD` in `[market] timezone`.
    #[param(value_type = Option<String>, format = Date)]
    pub from: Option<String>,
    /// Only trades closed on or before this day, `YYYY-MM-DD` in `[market] timezone`.
    #[param(value_type = Option<String>, format = Date)]
    pub to: Option<String>,
}

/// A day of a history filter, or 422 naming the field.
fn day(name: &str, text: Option<&str>) -> Result<Option<chrono::NaiveDate>, ApiError> {
    text.map(|t| {
        chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d").map_err(|_| {
            ApiError::unprocessable(
                "invalid_query",
                format!("`{name}` must be a day as YYYY-MM-DD, got {t:?}"),
            )
        })
    })
    .transpose()
}

/// A page of the closed-trade history.
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryPage {
    /// Newest first (by closed_at).
    pub trades: Vec<HistoryRow>,
    /// Rows in this page.
    pub count: usize,
    /// Rows of the whole history that pass the filters.
    pub total: usize,
    pub limit: u64,
    pub offset: u64,
}

/// Closed trades, newest first (by the time they closed), a page at a time, optionally of one
/// strategy, one symbol and a range of days.
#[utoipa::path(get, path = "/api/trades/history",
    operation_id = "trade_history", tag = "trade management", params(HistoryQuery),
    responses(
        (status = 200, description = "One page of closed trades", body = HistoryPage),
        (status = 422, description = "`invalid_query`: limit is not 1-200, offset is below 0, \
            from/to is not a YYYY-MM-DD day, or bot is not a strategy name (the detail names \
            it)", body = ErrorBody),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn history(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> Result<Json<HistoryPage>, ApiError> {
    let limit = bounded_number("limit", q.limit.as_deref(), 50, 1..=200)?;
    let offset = whole_number("offset", q.offset.as_deref(), 0)?;
    let (from, to) = (day("from", q.from.as_deref())?, day("to", q.to.as_deref())?);
    if let Some(bot) = &q.bot
        && !crate::config::is_strategy_name(bot)
    {
        return Err(ApiError::unprocessable(
            "invalid_query",
            format!("`bot` must be a strategy name (a-z first, then a-z, 0-9, _), got {bot:?}"),
        ));
    }
    let tz = state.config.market.tz();
    let closed_on = |row: &ClosedTrade| {
        chrono::DateTime::parse_from_rfc3339(&row.closed_at)
            .ok()
            .map(|t| t.with_timezone(&tz).date_naive())
    };
    let mut rows = chronological(state.execution.book())?;
    rows.retain(|row| {
        let on = closed_on(row);
        q.bot.as_ref().is_none_or(|bot| *bot == row.trade.bot)
            && q.symbol.as_ref().is_none_or(|s| s.as_str() == row.trade.symbol)
            && from.is_none_or(|from| on.is_some_and(|on| on >= from))
            && to.is_none_or(|to| on.is_some_and(|on| on <= to))
    });
    let total = rows.len();
    let trades: Vec<HistoryRow> = rows
        .iter()
        .rev()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(limit as usize)
        .map(HistoryRow::of)
        .collect();
    Ok(Json(HistoryPage { count: trades.len(), trades, total, limit, offset }))
}

/// Statistics of the closed-trade history: counts, win rate, pnl, profit factor, maximum
/// drawdown, overall and per strategy.
#[utoipa::path(get, path = "/api/trades/stats",
    operation_id = "trade_stats", tag = "trade management",
    responses(
        (status = 200, description = "The statistics (amounts in `currency`)", body = TradeStats),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn stats(State(state): State<AppState>) -> Result<Json<TradeStats>, ApiError> {
    let rows = chronological(state.execution.book())?;
    let currency = crate::exchange::account_currency(&state.config);
    Ok(Json(TradeStats::of(&rows, currency, state.config.market.tz())))
}

/// The answer of sync.
#[derive(Debug, Serialize, ToSchema)]
pub struct SyncAnswer {
    /// False when a symbol could not be read (see `errors`; the others were synced).
    pub ok: bool,
    /// Rows added to the history by this run (0 when there was nothing new).
    pub added: usize,
    /// The rows added, in the order they closed.
    pub trades: Vec<HistoryRow>,
    /// The symbols whose fills were read.
    pub symbols: Vec<String>,
    /// Symbols the exchange did not answer for.
    pub errors: Vec<SyncError>,
}

/// Copies round trips made on the exchange outside the service (by hand) from the exchange's
/// fills into the closed-trade history: buys and sells of the symbols the service knows,
/// except the orders the service made or manages, paired per sell order. Running it again adds
/// nothing twice. Sends no order.
#[utoipa::path(post, path = "/api/trades/sync",
    operation_id = "sync_trades", tag = "trade management",
    responses(
        (status = 200, description = "What was added", body = SyncAnswer),
        (status = 500, description = "The store could not be written", body = ErrorBody),
        (status = 503, description = "`exchange_unavailable`: no client for the active exchange", body = ErrorBody),
    ))]
async fn sync(State(state): State<AppState>) -> Result<Json<SyncAnswer>, ApiError> {
    let report = state.execution.sync_history().await?;
    Ok(Json(SyncAnswer {
        ok: report.errors.is_empty(),
        added: report.added.len(),
        trades: report.added.iter().map(HistoryRow::of).collect(),
        symbols: report.symbols,
        errors: report.errors,
    }))
}
