//! The earlier strategy routes: `GET /scan` and `GET /custom_check` (read-only checks: they
//! run the named strategy plugin, create no signal and never trade) and
//! `POST /api/scan-and-signal` (the current scan-and-signal for the named strategy, in the
//! earlier shape; needs a license).

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::super::error::{ApiError, ErrorBody};
use super::super::extract::{ApiQuery, Symbol};
use super::super::status::is_testnet;
use super::strategy_bot;
use crate::activity::AgentName;
use crate::auth::Caller;
use crate::execution::Direction;
use crate::plugins::model::{Check, Direction as StrategyDirection};
use crate::scans::{ScanError, Scored, Skipped};
use crate::signals::CreateStatus;
use crate::state::AppState;

/// Query of `GET /scan`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScanQuery {
    /// A loaded strategy plugin (the spec names ta_trend and ta_mean_revert).
    #[param(pattern = "^[a-z][a-z0-9_]{0,63}$", example = "ta_trend")]
    pub bot: String,
    /// Agent card that reflects the scan (default tech).
    pub agent: Option<AgentName>,
}

/// `ok`: the scan ran (a failed scan answers an error status instead).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScanStatus {
    Ok,
}

/// One strategy result as `GET /scan` lists it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ScanRow {
    pub symbol: String,
    // The strategy's direction for the symbol: buy, sell or skip (`StrategyDirection`). No doc
    // comment: utoipa would wrap the reference in an object schema to carry it.
    pub direction: StrategyDirection,
    /// The service's score of the result: the expected value its signal would be gated with
    /// (ev in percent of the amount risked, docs/signals.md; a plugin's own ev can only lower
    /// it). Candidates are sorted by it, highest first.
    pub score: f64,
    /// The confidence (0-10) its signal would be gated with.
    pub confidence: u32,
    /// The strategy's reason (a skip's failing gate).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub reason: Option<String>,
}

impl ScanRow {
    fn of(scored: &Scored) -> Self {
        ScanRow {
            symbol: scored.result.symbol.clone(),
            direction: scored.result.direction,
            score: scored.ev,
            confidence: scored.confidence,
            reason: scored.result.reason.clone(),
        }
    }
}

/// The answer of `GET /scan`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EarlierScan {
    pub status: ScanStatus,
    /// The active exchange.
    pub exchange: String,
    /// True unless `[exchange] mode` is `mainnet` (paper mode counts as testnet).
    pub testnet: bool,
    pub bot: String,
    /// Symbols scanned: the strategy's universe, `watchlist_override` or the watchlist.
    pub scanned: usize,
    /// The buy and sell results, highest score first.
    pub candidates: Vec<ScanRow>,
    /// Every result, in the strategy's order.
    pub all: Vec<ScanRow>,
    /// Entries today (in `[market] timezone`).
    pub trades_today: i64,
    /// Entries still allowed today under the strategy's `max_trades_per_day`; 0 while new
    /// entries are blocked (daily or consecutive-loss limit, drawdown pause).
    pub remaining: i64,
}

/// A scan's failure, also recorded on the agent's card.
fn failed(state: &AppState, agent: &str, what: &str, err: ScanError) -> ApiError {
    state.dashboard.record(agent, &format!("{what} failed: {err}"), "error");
    err.into()
}

/// Runs the strategy `bot` over its symbols and lists the results with the service's scores.
/// A read-only check: no signal is created, nothing is traded (the plugin's own state updates
/// persist as in any scan). Runs whatever the daily limit says; `remaining` tells.
#[utoipa::path(get, path = "/scan", tag = "earlier route set", operation_id = "earlier_scan",
    params(ScanQuery),
    responses(
        (status = 200, description = "The scored results", body = EarlierScan),
        (status = 404, description = "`plugin_not_found`: `bot` names no loaded strategy \
            plugin", body = ErrorBody),
        (status = 409, description = "`plugin_disabled`: the strategy's section sets enabled = \
            false", body = ErrorBody),
        (status = 422, description = "`invalid_query` naming the parameter; or the plugin \
            failed (`plugin_error`, `plugin_trapped`, `plugin_deadline_exceeded`, ...)",
            body = ErrorBody),
        (status = 503, description = "`market_data_unavailable`: the exchange's market data \
            or the scan universe cannot be fetched", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([409]))))]
async fn scan(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ScanQuery>,
) -> Result<Json<EarlierScan>, ApiError> {
    strategy_bot(&state, &q.bot)?;
    let agent = caller.agent_or(q.agent, AgentName::Tech).as_str();
    let what = format!("scan {}", q.bot);
    let scan = state
        .scans
        .scan_strategy(&q.bot, None)
        .await
        .map_err(|err| failed(&state, agent, &what, err))?;
    let budget = state.scans.day_budget(&q.bot)?;
    let all: Vec<ScanRow> = scan.results.iter().map(ScanRow::of).collect();
    let mut candidates: Vec<ScanRow> =
        all.iter().filter(|r| r.direction != StrategyDirection::Skip).cloned().collect();
    // Stable: equal scores keep the strategy's order.
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
    state.dashboard.record(
        agent,
        &format!("{what}: {} candidates of {} symbols", candidates.len(), scan.scanned),
        "ok",
    );
    Ok(Json(EarlierScan {
        status: ScanStatus::Ok,
        exchange: state.execution.exchange_name().to_string(),
        testnet: is_testnet(&state.config),
        bot: q.bot,
        scanned: scan.scanned,
        candidates,
        all,
        trades_today: budget.trades_today,
        remaining: budget.remaining,
    }))
}

/// Query of `GET /custom_check`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CustomCheckQuery {
    /// Exchange symbol, e.g. BTCUSDT; must be listed on the active exchange.
    pub symbol: Symbol,
    /// The direction to check.
    pub direction: Direction,
    /// A loaded strategy plugin (the spec names ta_trend and ta_mean_revert).
    #[param(pattern = "^[a-z][a-z0-9_]{0,63}$", example = "ta_trend")]
    pub bot: String,
    /// Agent card that reflects the check (default tech).
    pub agent: Option<AgentName>,
}

/// The answer of `GET /custom_check`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CustomCheck {
    pub symbol: String,
    /// The direction asked about.
    pub direction: Direction,
    pub bot: String,
    /// Whether the strategy signals the asked direction for the symbol now.
    pub signal: bool,
    // The strategy's own direction for the symbol: buy, sell or skip (also when it gave no
    // result); no doc comment, as at `ScanRow::direction`.
    pub strategy_direction: StrategyDirection,
    /// Checklist items passed.
    pub passed: u32,
    /// Checklist items.
    pub total: u32,
    /// The strategy's checklist for the symbol (empty without a result).
    pub checklist: Vec<Check>,
    /// The expected value a signal of this result would be gated with (ev > 25 passes); null
    /// without a result.
    #[schema(required = true)]
    pub ev: Option<f64>,
    /// The confidence (0-10) a signal of it would be gated with (>= 8 passes); null without a
    /// result.
    #[schema(required = true)]
    pub confidence: Option<u32>,
    /// The strategy's reason (a skip's failing gate), or why there is no result.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub reason: Option<String>,
}

/// Runs the strategy `bot` on one symbol and answers whether it signals the asked direction,
/// with its checklist and the scores a signal would be gated with. A read-only check: no
/// signal is created, nothing is traded.
#[utoipa::path(get, path = "/custom_check", tag = "earlier route set",
    operation_id = "earlier_custom_check", params(CustomCheckQuery),
    responses(
        (status = 200, description = "The strategy's verdict for the symbol", body = CustomCheck),
        (status = 404, description = "`plugin_not_found`: `bot` names no loaded strategy \
            plugin", body = ErrorBody),
        (status = 409, description = "`plugin_disabled`: the strategy's section sets enabled = \
            false", body = ErrorBody),
        (status = 422, description = "`invalid_query` naming the parameter; `unknown_symbol`: \
            the symbol is not listed on the active exchange; or the plugin failed \
            (`plugin_error`, `plugin_trapped`, ...)", body = ErrorBody),
        (status = 503, description = "`market_data_unavailable`: the exchange's market data \
            cannot be fetched", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([409, 422]))))]
async fn custom_check(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<CustomCheckQuery>,
) -> Result<Json<CustomCheck>, ApiError> {
    strategy_bot(&state, &q.bot)?;
    let agent = caller.agent_or(q.agent, AgentName::Tech).as_str();
    let symbol = q.symbol.into_string();
    let what = format!("custom_check {} {symbol}", q.bot);
    let scan = state
        .scans
        .scan_strategy(&q.bot, Some(vec![symbol.clone()]))
        .await
        .map_err(|err| failed(&state, agent, &what, err))?;
    let found = scan.results.into_iter().find(|s| s.result.symbol == symbol);
    let answer = match found {
        Some(Scored { result, ev, confidence }) => CustomCheck {
            signal: matches!(
                (q.direction, result.direction),
                (Direction::Buy, StrategyDirection::Buy)
                    | (Direction::Sell, StrategyDirection::Sell)
            ),
            strategy_direction: result.direction,
            passed: result.passed,
            total: result.total,
            checklist: result.checklist,
            ev: Some(ev),
            confidence: Some(confidence),
            reason: result.reason,
            symbol,
            direction: q.direction,
            bot: q.bot,
        },
        None => CustomCheck {
            signal: false,
            strategy_direction: StrategyDirection::Skip,
            passed: 0,
            total: 0,
            checklist: Vec::new(),
            ev: None,
            confidence: None,
            reason: Some(format!("{} returned no result for {symbol}", q.bot)),
            symbol,
            direction: q.direction,
            bot: q.bot,
        },
    };
    let verdict = if answer.signal { "signals" } else { "does not signal" };
    state.dashboard.record(
        agent,
        &format!("{what}: {verdict} {}", answer.direction.as_str()),
        "ok",
    );
    Ok(Json(answer))
}

/// Query of `POST /api/scan-and-signal`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScanAndSignalQuery {
    /// A loaded strategy plugin (the spec names ta_trend and ta_mean_revert).
    #[param(pattern = "^[a-z][a-z0-9_]{0,63}$", example = "ta_trend")]
    pub bot: String,
    /// Agent card that reflects the scan (default scout).
    pub agent: Option<AgentName>,
}

/// What the scan of a scan-and-signal covered.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScanSummary {
    pub bot: String,
    /// Symbols scanned (0 when nothing was scanned).
    pub scanned: usize,
    /// Entries today, after this call.
    pub trades_today: i64,
    /// Entries still allowed today (0 while entries are blocked).
    pub remaining: i64,
}

/// The answer of `POST /api/scan-and-signal`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EarlierScanAndSignal {
    pub ok: bool,
    /// Symbols that got a pending signal and whose approval request reached the boss (or,
    /// with `[signals] allow_auto_confirm`, that the service confirmed itself).
    pub signaled: Vec<String>,
    /// Every other scanned symbol and why: the strategy's skip reason, the signal flow's
    /// `duplicate_skipped`, `trade_exists_skipped`, `no_position_sell_skipped`,
    /// `messenger_failed` (the signal was created and can be confirmed, but the approval
    /// request did not go out), `below_gates: ...` (ev or confidence fails the confirm
    /// gates: the boss is not asked), or `invalid_result: ...`.
    pub skipped: Vec<Skipped>,
    pub scan: ScanSummary,
    /// Why nothing was scanned: `daily_limit_reached`, `drawdown_paused` or
    /// `strategy_disabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub reason: Option<String>,
    /// The reason in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub detail: Option<String>,
}

/// Scans with the strategy `bot` and creates a pending signal for each buy or sell result
/// through the signal flow (the boss is asked), in one call: the current scan-and-signal for
/// any strategy. While the daily trade limit or the consecutive-loss limit is reached (or
/// entries are paused, or the strategy is switched off) nothing is scanned: `ok` is true,
/// the lists are empty and `reason` says why.
#[utoipa::path(post, path = "/api/scan-and-signal", tag = "earlier route set",
    operation_id = "earlier_scan_and_signal", params(ScanAndSignalQuery),
    responses(
        (status = 200, description = "Signals created and symbols skipped, or why nothing was \
            scanned", body = EarlierScanAndSignal),
        (status = 404, description = "`plugin_not_found`: `bot` names no loaded strategy \
            plugin", body = ErrorBody),
        (status = 422, description = "`invalid_query` naming the parameter; or the plugin \
            failed (`plugin_error`, `plugin_trapped`, `plugin_deadline_exceeded`, ...)",
            body = ErrorBody),
        (status = 503, description = "`market_data_unavailable`: the exchange's market data \
            cannot be fetched; `exchange_unavailable`", body = ErrorBody),
    ))]
async fn scan_and_signal(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ScanAndSignalQuery>,
) -> Result<Json<EarlierScanAndSignal>, ApiError> {
    strategy_bot(&state, &q.bot)?;
    let agent = caller.agent_or(q.agent, AgentName::Scout).as_str();
    let run = state
        .scans
        .scan_and_signal(&q.bot, None, agent)
        .await
        .map_err(|err| failed(&state, agent, &format!("{} scan", q.bot), err))?;
    let budget = state.scans.day_budget(&q.bot)?;
    let answer = run.answer;
    let mut skipped = Vec::new();
    let mut signaled = Vec::new();
    for s in answer.signaled {
        if s.status == CreateStatus::MessengerFailed {
            skipped.push(Skipped { symbol: s.symbol, reason: s.status.as_str().to_string() });
        } else {
            signaled.push(s.symbol);
        }
    }
    skipped.extend(answer.skipped);
    Ok(Json(EarlierScanAndSignal {
        ok: answer.ok,
        signaled,
        skipped,
        scan: ScanSummary {
            bot: q.bot,
            scanned: run.scanned,
            trades_today: budget.trades_today,
            remaining: budget.remaining,
        },
        reason: answer.reason,
        detail: answer.detail,
    }))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(scan))
        .routes(routes!(custom_check))
        .routes(routes!(scan_and_signal))
}
