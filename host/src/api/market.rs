//! Market multi-timeframe routes: one symbol's context, a watchlist scan, a symbol's snapshot
//! history and the cache (spec, "Market multi-timeframe"). Reading only: no license needed.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiPath, ApiQuery, Symbol, bounded_number};
use crate::activity::AgentName;
use crate::auth::Caller;
use crate::market::context::MarketContext;
use crate::market::contexts::{CACHE_TTL_SECONDS, CacheRow, SnapshotRow};
use crate::market::{ContextError, Frames, MarketContexts};
use crate::state::AppState;

impl From<ContextError> for ApiError {
    fn from(err: ContextError) -> Self {
        let (status, code) = match &err {
            ContextError::InvalidTimeframe { .. } => {
                (StatusCode::UNPROCESSABLE_ENTITY, "invalid_timeframe")
            }
            ContextError::UnknownSymbol(_) => (StatusCode::NOT_FOUND, "symbol_not_found"),
            ContextError::Fetch { .. } => {
                (StatusCode::INTERNAL_SERVER_ERROR, "market_fetch_failed")
            }
            ContextError::Store(_) => (StatusCode::INTERNAL_SERVER_ERROR, "market_analysis_failed"),
        };
        ApiError::new(status, code, err.to_string())
    }
}

fn contexts(state: &AppState) -> Result<&Arc<MarketContexts>, ApiError> {
    state.market.as_ref().ok_or_else(|| {
        ApiError::service_unavailable(
            "exchange_unavailable",
            "The active exchange has no client, so there is no market data to analyse.",
        )
    })
}

/// A path symbol in the exchange's form; anything else cannot be listed (404).
fn listed_form(symbol: &str) -> Result<(), ApiError> {
    symbol
        .parse::<Symbol>()
        .map(|_| ())
        .map_err(|_| ApiError::from(ContextError::UnknownSymbol(format!("{symbol:?}"))))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ContextQuery {
    /// Medium timeframe: 15m, 30m, 1h, 4h, 1d or 1w (default 4h).
    #[param(example = "4h", pattern = "^(15m|30m|1h|4h|1d|1w)$")]
    pub mtf_tf: Option<String>,
    /// Higher timeframe override (same values); default: the HTF the spec pairs with the MTF
    /// (15m→1h, 30m→4h, 1h→4h, 4h→1d, 1d→1d, 1w→1w).
    #[param(example = "1d", pattern = "^(15m|30m|1h|4h|1d|1w)$")]
    pub htf_tf: Option<String>,
}

/// The multi-timeframe market context of a symbol. Served from the cache when it holds a
/// context younger than the TTL (3600 s) for the same timeframes; otherwise computed from the
/// exchange's candles, cached, and stored as a snapshot.
#[utoipa::path(get, path = "/api/market/{symbol}", operation_id = "market_context", tag = "market",
    params(("symbol" = String, Path, description = "Exchange pair symbol", example = "BTCUSDT"),
        ContextQuery),
    responses(
        (status = 200, description = "The market context", body = MarketContext),
        (status = 404, description = "`symbol_not_found`: the active exchange does not list \
            the symbol", body = ErrorBody),
        (status = 422, description = "`invalid_timeframe`: mtf_tf or htf_tf is not one of 15m, \
            30m, 1h, 4h, 1d, 1w (the detail names it)", body = ErrorBody),
        (status = 500, description = "`market_fetch_failed` or `market_analysis_failed`: the \
            candles could not be fetched or the context not stored (the detail says which)",
            body = ErrorBody),
        (status = 503, description = "`exchange_unavailable`: the active exchange has no \
            client", body = ErrorBody),
    ))]
async fn one(
    State(state): State<AppState>,
    ApiPath(symbol): ApiPath<String>,
    ApiQuery(q): ApiQuery<ContextQuery>,
) -> Result<Json<MarketContext>, ApiError> {
    let frames = Frames::parse(q.mtf_tf.as_deref(), q.htf_tf.as_deref())?;
    listed_form(&symbol)?;
    let served = contexts(&state)?.get(&symbol, frames).await?;
    Ok(Json(served.context))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScanQuery {
    /// Medium timeframe (default 4h); the HTF is the spec's pair for it.
    #[param(example = "4h", pattern = "^(15m|30m|1h|4h|1d|1w)$")]
    pub mtf_tf: Option<String>,
    /// Agent whose log entry reflects the scan (default scout).
    pub agent: Option<AgentName>,
}

/// Counts of `results` by decision.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct DecisionSummary {
    pub trade_long: usize,
    pub trade_short: usize,
    pub standby: usize,
    pub no_trade: usize,
    /// Not in the spec's summary; added so the counts add up to `scanned`.
    pub watch_regime_shift: usize,
}

/// A symbol the scan could not serve.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScanFailure {
    pub symbol: String,
    /// `symbol_not_found`, `market_fetch_failed` or `market_analysis_failed`.
    pub error: String,
    pub detail: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MarketScan {
    /// The active exchange.
    pub exchange: String,
    pub htf_tf: String,
    pub mtf_tf: String,
    /// Contexts returned.
    pub scanned: usize,
    /// How many of them came from the cache.
    pub cached: usize,
    pub ttl_sec: i64,
    pub results: Vec<MarketContext>,
    pub summary: DecisionSummary,
    /// Watchlist symbols that could not be served (empty when all were).
    pub errors: Vec<ScanFailure>,
}

/// Scans the whole watchlist (`[market] watchlist`) and caches each context.
#[utoipa::path(get, path = "/api/market/scan",
    operation_id = "market_scan", tag = "market", params(ScanQuery),
    responses(
        (status = 200, description = "One context per watchlist symbol that could be served",
            body = MarketScan),
        (status = 422, description = "`invalid_timeframe`: mtf_tf is not one of 15m, 30m, 1h, \
            4h, 1d, 1w", body = ErrorBody),
        (status = 503, description = "`exchange_unavailable`: the active exchange has no \
            client", body = ErrorBody),
    ))]
async fn scan(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ScanQuery>,
) -> Result<Json<MarketScan>, ApiError> {
    let frames = Frames::parse(q.mtf_tf.as_deref(), None)?;
    let contexts = contexts(&state)?;
    let report = contexts.scan(&state.config.market.watchlist, frames).await;
    let mut summary = DecisionSummary::default();
    for c in &report.results {
        use crate::plugins::model::PriorityDecision::*;
        *match c.priority_decision {
            TradeLong => &mut summary.trade_long,
            TradeShort => &mut summary.trade_short,
            Standby => &mut summary.standby,
            NoTrade => &mut summary.no_trade,
            WatchRegimeShift => &mut summary.watch_regime_shift,
        } += 1;
    }
    let errors: Vec<ScanFailure> = report
        .errors
        .into_iter()
        .map(|(symbol, err)| {
            let body = ApiError::from(err);
            ScanFailure { symbol, error: body.code.to_string(), detail: body.detail }
        })
        .collect();
    let agent = caller.agent_or(q.agent, AgentName::Scout).as_str();
    let action = format!(
        "market scan {}/{}: {} long, {} short, {} standby, {} no-trade, {} watch",
        frames.mtf,
        frames.htf,
        summary.trade_long,
        summary.trade_short,
        summary.standby,
        summary.no_trade,
        summary.watch_regime_shift
    );
    state.dashboard.record(agent, &action, if errors.is_empty() { "ok" } else { "error" });
    Ok(Json(MarketScan {
        exchange: contexts.exchange_name().to_string(),
        htf_tf: frames.htf.to_string(),
        mtf_tf: frames.mtf.to_string(),
        scanned: report.results.len(),
        cached: report.from_cache,
        ttl_sec: CACHE_TTL_SECONDS,
        results: report.results,
        summary,
        errors,
    }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// Rows, 1-100 (default 10).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// Only snapshots of this HTF.
    #[param(pattern = "^(15m|30m|1h|4h|1d|1w)$")]
    pub htf_tf: Option<String>,
    /// Only snapshots of this MTF.
    #[param(pattern = "^(15m|30m|1h|4h|1d|1w)$")]
    pub mtf_tf: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MarketHistory {
    pub symbol: String,
    pub count: usize,
    /// Newest first.
    pub data: Vec<SnapshotRow>,
}

/// Stored snapshots of a symbol's market context, newest first. A well-formed symbol never
/// analysed has an empty history (a symbol delisted since keeps its history).
#[utoipa::path(get, path = "/api/market/{symbol}/history",
    operation_id = "market_history", tag = "market",
    params(("symbol" = String, Path, description = "Exchange pair symbol", example = "BTCUSDT"),
        HistoryQuery),
    responses(
        (status = 200, description = "The snapshots", body = MarketHistory),
        (status = 404, description = "`symbol_not_found`: the path is not a symbol of the \
            exchange's form (2-20 characters A-Z, 0-9)", body = ErrorBody),
        (status = 422, description = "`invalid_query`: limit is not 1-100; \
            `invalid_timeframe`: htf_tf or mtf_tf is not a market timeframe", body = ErrorBody),
        (status = 500, description = "`market_analysis_failed`: the store could not be read",
            body = ErrorBody),
        (status = 503, description = "`exchange_unavailable`: the active exchange has no \
            client", body = ErrorBody),
    ))]
async fn history(
    State(state): State<AppState>,
    ApiPath(symbol): ApiPath<String>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> Result<Json<MarketHistory>, ApiError> {
    listed_form(&symbol)?;
    let limit = bounded_number("limit", q.limit.as_deref(), 10, 1..=100)?;
    for (field, value) in [("htf_tf", &q.htf_tf), ("mtf_tf", &q.mtf_tf)] {
        if let Some(value) = value {
            Frames::parse(Some(value), None)
                .map_err(|_| ContextError::InvalidTimeframe { field, value: value.clone() })?;
        }
    }
    let data = contexts(&state)?.history(
        &symbol,
        limit as usize,
        q.htf_tf.as_deref(),
        q.mtf_tf.as_deref(),
    )?;
    Ok(Json(MarketHistory { symbol, count: data.len(), data }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AllQuery {
    /// Include stale rows (default true); false lists only contexts younger than the TTL.
    pub stale: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MarketCache {
    pub count: usize,
    pub ttl_sec: i64,
    /// By symbol.
    pub data: Vec<CacheRow>,
}

/// The in-memory context cache: one row per symbol with its age.
#[utoipa::path(get, path = "/api/market/all",
    operation_id = "market_all", tag = "market", params(AllQuery),
    responses(
        (status = 200, description = "The cache rows", body = MarketCache),
        (status = 503, description = "`exchange_unavailable`: the active exchange has no \
            client", body = ErrorBody),
    ))]
async fn all(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<AllQuery>,
) -> Result<Json<MarketCache>, ApiError> {
    let data = contexts(&state)?.cached(q.stale.unwrap_or(true));
    Ok(Json(MarketCache { count: data.len(), ttl_sec: CACHE_TTL_SECONDS, data }))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(scan))
        .routes(routes!(all))
        .routes(routes!(one))
        .routes(routes!(history))
}
