//! Dashboard routes: agents report their status; the page (`GET /api/dashboard`, and
//! `GET /dashboard` of the earlier route set) follows the live view's events and reads the
//! state and the read-only panels (polling them when the event stream is down).

use std::convert::Infallible;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Html;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, ApiQuery, bounded_number};
use crate::activity::{AgentName, AgentStatus, DashboardSnapshot};
use crate::dashboard::chart::{ChartError, TradeChart};
use crate::dashboard::live::{MAX_STREAMS, Sources, TooManyStreams};
use crate::dashboard::panels::{Footer, PnlCurve, TradePanels};
use crate::state::AppState;

/// Body of `POST /api/agent/{name}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentReport {
    pub status: AgentStatus,
    /// What the agent is doing, free text (at most 500 characters).
    #[serde(default)]
    #[schema(max_length = 500)]
    pub action: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Ok {
    pub ok: bool,
}

const MAX_ACTION_CHARS: usize = 500;

/// An agent reports its own status.
#[utoipa::path(post, path = "/api/agent/{name}", tag = "dashboard",
    params(("name" = AgentName, Path, description = "coo, finance, scout, bot-ops (current); tech, ops (earlier)")),
    request_body = AgentReport,
    responses(
        (status = 200, description = "Card updated and event logged", body = Ok),
        (status = 422, description = "`invalid_agent`: unknown agent name", body = ErrorBody),
    ))]
async fn report_agent(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
    ApiJson(report): ApiJson<AgentReport>,
) -> Result<Json<Ok>, ApiError> {
    let agent: AgentName =
        name.parse().map_err(|reason: String| ApiError::unprocessable("invalid_agent", reason))?;
    if report.action.chars().count() > MAX_ACTION_CHARS {
        return Err(ApiError::unprocessable(
            "invalid_body",
            format!("action: at most {MAX_ACTION_CHARS} characters"),
        ));
    }
    state.dashboard.set_agent(agent, report.status, &report.action);
    Ok(Json(Ok { ok: true }))
}

/// Agent cards, the activity log (newest first, at most 100) and the time.
#[utoipa::path(get, path = "/api/state", tag = "dashboard",
    responses((status = 200, description = "Dashboard state", body = DashboardSnapshot)))]
async fn dashboard_state(State(state): State<AppState>) -> Json<DashboardSnapshot> {
    Json(state.dashboard.snapshot())
}

/// The dashboard page: agents, open trades with charts, pending signals and entries, recent
/// orders, the PnL curve, the activity log and the daily footer. One self-contained page
/// (its chart library is embedded), so it works without internet access.
#[utoipa::path(get, path = "/api/dashboard", tag = "dashboard",
    responses((status = 200, description = "HTML page", content_type = "text/html", body = String)))]
async fn dashboard_page() -> Html<&'static str> {
    Html(crate::dashboard::page::html())
}

/// The earlier route set's path of the dashboard page.
#[utoipa::path(get, path = "/dashboard", tag = "earlier route set",
    responses((status = 200, description = "HTML page", content_type = "text/html", body = String)))]
#[deprecated = "use GET /api/dashboard"]
async fn dashboard_page_earlier() -> Html<&'static str> {
    Html(crate::dashboard::page::html())
}

/// The dashboard's live view, as server-sent events (`text/event-stream`); the page follows
/// it and re-reads a panel when told it changed. Events, each with a JSON `data` line:
/// `path` (first, and whenever a stream link changes: `{"fills": "stream"|"polled", "prices":
/// "stream"|"polled", "streams": {account, prices, reconnects} or null}`), `changed`
/// (`{"panels": [...]}`, names of panels to re-read: trades, summary, orders, entries,
/// signals, footer, pnl, activity, license) and `prices` (`{"trades": [{symbol, price, time,
/// unrealised_pnl, unrealised_pct}]}`, the open trades at their last streamed prices). At most
/// one `changed` and one `prices` per 250 ms; a comment every 15 s keeps proxies from closing
/// the stream. The stream ends when the service stops; browsers reconnect after 3 s. At most
/// 32 streams are open at once (503 `too_many_streams` past them).
#[utoipa::path(get, path = "/api/dashboard/events", tag = "dashboard",
    responses((status = 200, description = "An endless stream of server-sent events; the \
        schema describes one event (OpenAPI 3.1 tools read a `text/event-stream` schema per \
        event, OpenAPI 3.2 calls it `itemSchema`)",
        content_type = "text/event-stream", body = String),
        (status = 503, description = "`too_many_streams`: 32 event streams are open; close \
            one (another tab) or retry later", body = ErrorBody)))]
async fn live_events(
    State(state): State<AppState>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let stream = state
        .live
        .stream(Sources {
            store: &state.store,
            execution: &state.execution,
            activity: &state.dashboard,
            feed: state.feed.as_ref(),
        })
        .map_err(|TooManyStreams| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "too_many_streams",
                format!(
                    "{MAX_STREAMS} dashboard event streams are open at once; close one (another \
                     tab) or retry later."
                ),
            )
        })?;
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// The per-event schema of `GET /api/dashboard/events`: `event` one of the stream's names,
/// `data` the JSON text of its payload, `retry` the reconnection delay when sent. Written
/// into the document after utoipa (which has no attribute for a per-event schema).
pub(super) fn document_live_events(document: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let Some(item) = document.paths.paths.get_mut("/api/dashboard/events") else { return };
    let Some(operation) = item.get.as_mut() else { return };
    let Some(utoipa::openapi::RefOr::T(ok)) = operation.responses.responses.get_mut("200") else {
        return;
    };
    let Some(utoipa::openapi::RefOr::T(content)) = ok.content.get_mut("text/event-stream") else {
        return;
    };
    let names = crate::dashboard::live::EVENTS.map(serde_json::Value::from);
    let event = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(names))
        .description(Some("`path`, `changed` or `prices` (docs/dashboard.md)"));
    let data = ObjectBuilder::new()
        .schema_type(Type::String)
        .content_media_type("application/json")
        .description(Some("The event's payload as JSON text"));
    let id = ObjectBuilder::new().schema_type(Type::String);
    let retry = ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0));
    let schema = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("event", event)
        .property("data", data)
        .property("id", id)
        .property("retry", retry)
        .required("data");
    content.schema = Some(utoipa::openapi::RefOr::T(schema.into()));
}

/// The daily footer: orders and entries today against the limit, wins and losses, the
/// consecutive-loss count, the trading cap and whether entries are blocked now.
#[utoipa::path(get, path = "/api/dashboard/footer", tag = "dashboard",
    responses(
        (status = 200, description = "The footer", body = Footer),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn footer(State(state): State<AppState>) -> Result<Json<Footer>, ApiError> {
    Ok(Json(Footer::read(&state.execution, &state.config)?))
}

/// The open trades with the last price, the unrealised pnl, the trailing state and its stop
/// history, and the last 24 hours of 15-minute closes for a chart. A price the exchange
/// cannot give now leaves `price` null and `candles` empty.
#[utoipa::path(get, path = "/api/dashboard/trades", tag = "dashboard",
    responses(
        (status = 200, description = "Open trades with their panels", body = TradePanels),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn trade_panels(State(state): State<AppState>) -> Result<Json<TradePanels>, ApiError> {
    let candles = state.market.as_ref().map(|m| m.candles());
    Ok(Json(TradePanels::read(&state.execution, candles).await?))
}

/// The cumulative net pnl of the closed trades, in the order they closed.
#[utoipa::path(get, path = "/api/dashboard/pnl", tag = "dashboard",
    responses(
        (status = 200, description = "The PnL curve", body = PnlCurve),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn pnl_curve(State(state): State<AppState>) -> Result<Json<PnlCurve>, ApiError> {
    Ok(Json(PnlCurve::read(&state.execution, &state.config)?))
}

/// The last millisecond of the year 9999.
const LAST_MS: u64 = 253_402_300_799_999;

/// Query of `GET /api/dashboard/chart`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChartQuery {
    pub symbol: crate::exchange::Symbol,
    /// The trade's opening, epoch ms.
    #[param(value_type = u64, minimum = 0, maximum = 253402300799999_u64)]
    pub from: String,
    /// The trade's closing, epoch ms (given before `from`, the two are swapped).
    #[param(value_type = u64, minimum = 0, maximum = 253402300799999_u64)]
    pub to: String,
}

impl From<ChartError> for ApiError {
    fn from(err: ChartError) -> Self {
        let detail = err.to_string();
        match err {
            ChartError::Exchange(crate::exchange::ExchangeError::InvalidSymbol { .. }) => {
                ApiError::not_found("symbol_not_found", detail)
            }
            // The rate-limit layer answers 429 instead when a read was refused by the budget.
            ChartError::Exchange(_) => {
                ApiError::new(axum::http::StatusCode::BAD_GATEWAY, "exchange_error", detail)
            }
            ChartError::Store(_) => ApiError::internal(detail),
        }
    }
}

/// A closed trade's chart: the candles from before its entry to after its exit (15-minute
/// candles for a trade of up to two days, coarser for longer ones, 300 at most) and every stop
/// its protection had, for the history table of the dashboard.
#[utoipa::path(get, path = "/api/dashboard/chart", tag = "dashboard", params(ChartQuery),
    responses(
        (status = 200, description = "The chart", body = TradeChart),
        (status = 404, description = "`symbol_not_found`: the active exchange does not list \
            the symbol", body = ErrorBody),
        (status = 422, description = "`invalid_query`: from/to are not epoch ms up to the year \
            9999", body = ErrorBody),
        (status = 502, description = "The exchange did not answer", body = ErrorBody),
        (status = 503, description = "No exchange client", body = ErrorBody),
    ))]
async fn chart(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ChartQuery>,
) -> Result<Json<TradeChart>, ApiError> {
    // Up to 9999-12-31T23:59:59.999Z: every time a trade can have.
    let from = bounded_number("from", Some(&q.from), 0, 0..=LAST_MS)?;
    let to = bounded_number("to", Some(&q.to), 0, 0..=LAST_MS)?;
    // The window between the two times, whichever is given first.
    let (from, to) = (from.min(to), from.max(to));
    let Some(market) = state.market.as_ref() else {
        return Err(ApiError::service_unavailable(
            "exchange_unavailable",
            "no exchange client for the active exchange",
        ));
    };
    let (from, to) =
        (i64::try_from(from).unwrap_or(i64::MAX), i64::try_from(to).unwrap_or(i64::MAX));
    let chart = crate::dashboard::chart::window(
        market.exchange().as_ref(),
        &state.execution,
        q.symbol.as_str(),
        from,
        to,
    );
    Ok(Json(chart.await?))
}

#[allow(deprecated)]
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(report_agent))
        .routes(routes!(dashboard_state))
        .routes(routes!(dashboard_page))
        .routes(routes!(dashboard_page_earlier))
        .routes(routes!(live_events))
        .routes(routes!(footer))
        .routes(routes!(trade_panels))
        .routes(routes!(pnl_curve))
        .routes(routes!(chart))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_live_view_is_documented_per_event_with_the_names_it_sends() {
        let document = serde_json::to_value(super::super::document()).unwrap();
        let ok = &document["paths"]["/api/dashboard/events"]["get"]["responses"]["200"];
        let event = &ok["content"]["text/event-stream"]["schema"];
        assert_eq!(event["type"], "object", "{event}");
        assert_eq!(event["required"], serde_json::json!(["data"]));
        assert_eq!(
            event["properties"]["event"]["enum"],
            serde_json::json!(crate::dashboard::live::EVENTS)
        );
        assert_eq!(event["properties"]["data"]["contentMediaType"], "application/json");
    }
}
