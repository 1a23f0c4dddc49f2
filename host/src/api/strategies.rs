//! Strategy plugins: `GET /api/strategies` lists the plugins folder with each file's status;
//! `POST /api/strategies/{name}/scan` runs one plugin and returns its raw results (no signals
//! are created, nothing is traded).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::extract::{ApiPath, ApiQuery, OptionalJson, Symbol};
use crate::dashboard::AgentName;
use crate::plugins::{PluginError, PluginInfo, ScanOutcome};

#[derive(Debug, Serialize, ToSchema)]
pub struct StrategiesList {
    pub ok: bool,
    /// Folder the plugins are loaded from.
    pub dir: String,
    /// One row per `.wasm` file, by file name.
    pub plugins: Vec<PluginInfo>,
}

/// Optional body of a scan.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScanBody {
    /// Symbols to scan, each listed on the active exchange; default (left out or `null`): the
    /// watchlist.
    #[schema(min_items = 1)]
    pub symbols: Option<Vec<Symbol>>,
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
}

impl From<PluginError> for ApiError {
    fn from(err: PluginError) -> Self {
        let status = match &err {
            PluginError::NotFound(_) => StatusCode::NOT_FOUND,
            PluginError::Disabled(_) => StatusCode::CONFLICT,
            PluginError::UnknownSymbol(_) => StatusCode::UNPROCESSABLE_ENTITY,
            PluginError::MarketData(_) => StatusCode::SERVICE_UNAVAILABLE,
            PluginError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            // The plugin misbehaved: the service itself is fine.
            _ => StatusCode::UNPROCESSABLE_ENTITY,
        };
        ApiError::new(status, err.code(), err.to_string())
    }
}

/// The plugins folder: every `.wasm` file with its plugin, version, hash and load status.
#[utoipa::path(get, path = "/api/strategies", tag = "strategies",
    responses((status = 200, description = "Every plugin file", body = StrategiesList)))]
async fn list(State(state): State<AppState>) -> Json<StrategiesList> {
    Json(StrategiesList {
        ok: true,
        dir: state.plugins.dir().display().to_string(),
        plugins: state.plugins.list(),
    })
}

/// Runs one plugin over `symbols` (default: the watchlist) and returns its raw results and
/// alerts. Persists the plugin's own state; creates no signal and places no order.
#[utoipa::path(post, path = "/api/strategies/{name}/scan", tag = "strategies",
    params(("name" = String, Path, description = "Plugin name from its manifest",
        example = "template"), ScanQuery),
    request_body(content = Option<ScanBody>, description = "Optional symbols; an empty body \
        or `null` scans the watchlist"),
    responses(
        (status = 200, description = "The plugin's results", body = ScanAnswer),
        (status = 404, description = "`plugin_not_found`: no plugin of that name is loaded",
            body = ErrorBody),
        (status = 409, description = "`plugin_disabled`: the plugin's section sets enabled = \
            false", body = ErrorBody),
        (status = 422, description = "`unknown_symbol`: a symbol is not listed on the active \
            exchange (the detail names it); or the plugin failed (`plugin_deadline_exceeded`, \
            `plugin_memory_exceeded`, `plugin_stack_overflow`, `plugin_trapped`, \
            `plugin_result_too_large`, `plugin_state_too_large`, `plugin_invalid_response`, \
            `plugin_error`)", body = ErrorBody),
        (status = 503, description = "`market_data_unavailable`: the exchange's listing or \
            market data cannot be fetched", body = ErrorBody),
    ),
    extensions(("x-valid-input-statuses" = json!([422]))))]
async fn scan(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
    ApiQuery(query): ApiQuery<ScanQuery>,
    OptionalJson(body): OptionalJson<ScanBody>,
) -> Result<Json<ScanAnswer>, ApiError> {
    if body.symbols.as_ref().is_some_and(Vec::is_empty) {
        return Err(ApiError::unprocessable("invalid_body", "`symbols` must not be empty."));
    }
    let symbols = body.symbols.map(|list| list.into_iter().map(Symbol::into_string).collect());
    let agent = query.agent.unwrap_or(AgentName::Scout).as_str();
    match state.plugins.scan(&name, symbols).await {
        Ok(outcome) => {
            let action = format!("plugin scan {name}: {} results", outcome.results.len());
            state.dashboard.record(agent, &action, "ok");
            Ok(Json(ScanAnswer { ok: true, outcome }))
        }
        Err(err) => {
            state.dashboard.record(agent, &format!("plugin scan {name}: {}", err.code()), "error");
            Err(err.into())
        }
    }
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list)).routes(routes!(scan))
}
