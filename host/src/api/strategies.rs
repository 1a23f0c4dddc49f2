//! Strategy plugins: `GET /api/strategies` lists the plugins folder with each file's status
//! and scan statistics; `POST /api/strategies/{name}/scan` runs one plugin and returns its raw
//! results and log lines, optionally with a config override (no signals are created, nothing
//! is traded); `GET /api/strategies/{name}/request` returns the exact scan request the host
//! would send now (an author's test fixture); `GET`/`DELETE /api/strategies/{name}/state` show
//! and reset a plugin's persisted state.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiPath, ApiQuery, OptionalJson, Symbol};
use crate::activity::AgentName;
use crate::auth::Caller;
use crate::plugins::{PluginError, PluginInfo, PluginState, ScanOutcome, ScanRequest};
use crate::scans::GateScores;
use crate::state::AppState;

/// Most symbols `GET /api/strategies/{name}/request` takes.
const MAX_REQUEST_SYMBOLS: usize = 50;

#[derive(Debug, Serialize, ToSchema)]
pub struct StrategiesList {
    pub ok: bool,
    /// Folder the plugins are loaded from.
    pub dir: String,
    /// One row per `.wasm` file, by file name.
    pub plugins: Vec<PluginInfo>,
}

/// Optional body of a scan. Read only from a JSON object: serde would also take a struct
/// from an array of its fields (`[null, null]`), which the schema does not allow.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, try_from = "serde_json::Map<String, serde_json::Value>")]
pub struct ScanBody {
    /// Symbols to scan, each listed on the active exchange; default (left out or `null`): the
    /// watchlist.
    #[schema(min_items = 1)]
    pub symbols: Option<Vec<Symbol>>,
    /// Config keys merged over the plugin's effective config for this scan only, checked like
    /// its `[strategy.<name>]` section: every key must be one of the plugin's default config,
    /// with a value of the default's type (422 `invalid_config` names the key). A scan with
    /// an override persists no state update and is not counted in the plugin's statistics.
    #[schema(value_type = Option<Object>, example = json!({"rsi_max": 45.0}))]
    pub config: Option<serde_json::Map<String, serde_json::Value>>,
}

impl TryFrom<serde_json::Map<String, serde_json::Value>> for ScanBody {
    type Error = serde_json::Error;

    fn try_from(object: serde_json::Map<String, serde_json::Value>) -> Result<Self, Self::Error> {
        /// The fields of [`ScanBody`], read from the object.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fields {
            symbols: Option<Vec<Symbol>>,
            config: Option<serde_json::Map<String, serde_json::Value>>,
        }
        let Fields { symbols, config } = serde_json::from_value(object.into())?;
        Ok(ScanBody { symbols, config })
    }
}

/// Query of a scan: which agent card reflects it.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScanQuery {
    /// Agent whose card and log entry reflect the scan (default scout).
    pub agent: Option<AgentName>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ScanAnswer {
    pub ok: bool,
    #[serde(flatten)]
    pub outcome: ScanOutcome,
    /// Per buy or sell result, the ev and confidence the confirm gates would judge (the
    /// service's formula, lowered to the plugin's own scores where those are lower) and
    /// whether they pass.
    pub gates: Vec<GateScores>,
}

/// Query of `GET /api/strategies/{name}/request`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RequestQuery {
    /// Comma-separated symbols (1-50), each listed on the active exchange; default: the
    /// watchlist.
    #[param(pattern = "^[A-Z0-9]{2,20}(,[A-Z0-9]{2,20}){0,49}$", example = "BTCUSDT,ETHUSDT")]
    pub symbols: Option<String>,
}

/// A plugin's persisted state.
#[derive(Debug, Serialize, ToSchema)]
pub struct StateAnswer {
    pub ok: bool,
    #[serde(flatten)]
    pub state: PluginState,
}

/// What a state reset removed.
#[derive(Debug, Serialize, ToSchema)]
pub struct StateReset {
    pub ok: bool,
    pub plugin: String,
    /// Keys the state had.
    pub removed: usize,
}

impl From<PluginError> for ApiError {
    fn from(err: PluginError) -> Self {
        let status = match &err {
            PluginError::NotFound(_) | PluginError::NoState(_) => StatusCode::NOT_FOUND,
            PluginError::Disabled(_) => StatusCode::CONFLICT,
            PluginError::InvalidConfig(_) => StatusCode::UNPROCESSABLE_ENTITY,
            PluginError::UnknownSymbol(_) => StatusCode::UNPROCESSABLE_ENTITY,
            PluginError::MarketData(_) => StatusCode::SERVICE_UNAVAILABLE,
            PluginError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            // The plugin misbehaved: the service itself is fine.
            _ => StatusCode::UNPROCESSABLE_ENTITY,
        };
        ApiError::new(status, err.code(), err.to_string())
    }
}

/// The plugins folder: every `.wasm` file with its plugin, version, hash and load status, the
/// serving version's canary and last scan, and the last error with its time.
#[utoipa::path(get, path = "/api/strategies", operation_id = "list_strategies", tag = "strategies",
    responses((status = 200, description = "Every plugin file", body = StrategiesList)))]
async fn list(State(state): State<AppState>) -> Json<StrategiesList> {
    Json(StrategiesList {
        ok: true,
        dir: state.plugins.dir().display().to_string(),
        plugins: state.plugins.list(),
    })
}

/// Runs one plugin over `symbols` (default: the watchlist) and returns its raw results,
/// alerts and log lines. Persists the plugin's own state unless `config` overrides keys for
/// this scan; creates no signal and places no order.
#[utoipa::path(post, path = "/api/strategies/{name}/scan",
    operation_id = "scan_strategy", tag = "strategies",
    params(("name" = String, Path, description = "Plugin name from its manifest",
        example = "template"), ScanQuery),
    request_body(content = Option<ScanBody>, description = "Optional symbols and config \
        override; an empty body or `null` scans the watchlist with the plugin's config"),
    responses(
        (status = 200, description = "The plugin's results", body = ScanAnswer),
        (status = 404, description = "`plugin_not_found`: no plugin of that name is loaded",
            body = ErrorBody),
        (status = 409, description = "`plugin_disabled`: the plugin's section sets enabled = \
            false", body = ErrorBody),
        (status = 422, description = "`unknown_symbol`: a symbol is not listed on the active \
            exchange (the detail names it); `invalid_config`: a key of the `config` override \
            is not one of the plugin's or has another type than its default (named); or the \
            plugin failed (`plugin_deadline_exceeded`, \
            `plugin_memory_exceeded`, `plugin_stack_overflow`, `plugin_trapped`, \
            `plugin_result_too_large`, `plugin_state_too_large`, `plugin_invalid_response`, \
            `plugin_error`)", body = ErrorBody),
        (status = 503, description = "`market_data_unavailable`: the exchange's listing or \
            market data cannot be fetched", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([422]))))]
async fn scan(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(name): ApiPath<String>,
    ApiQuery(query): ApiQuery<ScanQuery>,
    OptionalJson(body): OptionalJson<ScanBody>,
) -> Result<Json<ScanAnswer>, ApiError> {
    if body.symbols.as_ref().is_some_and(Vec::is_empty) {
        return Err(ApiError::unprocessable("invalid_body", "`symbols` must not be empty."));
    }
    let symbols = body.symbols.map(|list| list.into_iter().map(Symbol::into_string).collect());
    let agent = caller.agent_or(query.agent, AgentName::Scout).as_str();
    match state.plugins.preview(&name, symbols, body.config).await {
        Ok(outcome) => {
            let action = format!("plugin scan {name}: {} results", outcome.results.len());
            state.dashboard.record(agent, &action, "ok");
            let gates = outcome.results.iter().filter_map(GateScores::of).collect();
            Ok(Json(ScanAnswer { ok: true, outcome, gates }))
        }
        Err(err) => {
            state.dashboard.record(agent, &format!("plugin scan {name}: {}", err.code()), "error");
            Err(err.into())
        }
    }
}

/// The exact scan request the host would send plugin `name` now for `symbols` (default: the
/// watchlist): the market data, the effective config (as text), the persisted state and the
/// time. Runs nothing. Save it as a file and load it with `spotbot_sdk::testing::read_request`
/// to test the strategy natively on the host's real input.
#[utoipa::path(get, path = "/api/strategies/{name}/request",
    operation_id = "strategy_request", tag = "strategies",
    params(("name" = String, Path, description = "Plugin name from its manifest",
        example = "template"), RequestQuery),
    responses(
        (status = 200, description = "The scan request, as the plugin would receive it",
            body = ScanRequest),
        (status = 404, description = "`plugin_not_found`: no plugin of that name is loaded",
            body = ErrorBody),
        (status = 422, description = "`unknown_symbol`: a symbol is not listed on the active \
            exchange (the detail names it); `plugin_error`: the config's `timeframes` or \
            `scan_limit_*` do not fit the manifest", body = ErrorBody),
        (status = 503, description = "`market_data_unavailable`: the exchange's listing or \
            market data cannot be fetched", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([422]))))]
async fn request(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
    ApiQuery(query): ApiQuery<RequestQuery>,
) -> Result<Json<ScanRequest>, ApiError> {
    let symbols = query.symbols.as_deref().map(parse_symbols).transpose()?;
    Ok(Json(state.plugins.request(&name, symbols).await?))
}

/// `BTCUSDT,ETHUSDT` as symbols, or 422 `invalid_query` naming the bad one.
fn parse_symbols(text: &str) -> Result<Vec<String>, ApiError> {
    let symbols = text
        .split(',')
        .map(|s| s.parse::<Symbol>().map(Symbol::into_string))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ApiError::unprocessable("invalid_query", format!("`symbols`: {e}")))?;
    if symbols.len() > MAX_REQUEST_SYMBOLS {
        return Err(ApiError::unprocessable(
            "invalid_query",
            format!("`symbols` lists {}, at most {MAX_REQUEST_SYMBOLS}", symbols.len()),
        ));
    }
    Ok(symbols)
}

/// The persisted state of plugin `name` (loaded or not): what its next scan's request
/// carries.
#[utoipa::path(get, path = "/api/strategies/{name}/state",
    operation_id = "strategy_state", tag = "strategies",
    params(("name" = String, Path, description = "Plugin name from its manifest",
        example = "template")),
    responses(
        (status = 200, description = "The state, key by key", body = StateAnswer),
        (status = 404, description = "`state_not_found`: no state is stored for that name \
            (the plugin never returned a state update, or its state was reset)",
            body = ErrorBody),
    ))]
async fn show_state(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<StateAnswer>, ApiError> {
    Ok(Json(StateAnswer { ok: true, state: state.plugins.state_of(&name)? }))
}

/// Deletes the persisted state of plugin `name`: its next scan starts from an empty state.
#[utoipa::path(delete, path = "/api/strategies/{name}/state",
    operation_id = "reset_strategy_state", tag = "strategies",
    params(("name" = String, Path, description = "Plugin name from its manifest",
        example = "template")),
    responses(
        (status = 200, description = "The state is gone", body = StateReset),
        (status = 404, description = "`state_not_found`: no state is stored for that name",
            body = ErrorBody),
    ))]
async fn reset_state(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<StateReset>, ApiError> {
    let removed = state.plugins.reset_state(&name)?;
    Ok(Json(StateReset { ok: true, plugin: name, removed }))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(scan))
        .routes(routes!(request))
        .routes(routes!(show_state, reset_state))
}
