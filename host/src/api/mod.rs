//! The HTTP API: one file per route group of the spec, the error body, the OpenAPI document.
//!
//! Handlers are thin: parse, call the area, map the result. They never reach into another
//! area's tables. Every route is registered through [`OpenApiRouter`], so the document at
//! `GET /api/openapi.json` lists exactly the routes that exist.

mod audit;
pub mod auth;
mod dashboard;
mod earlier;
pub mod error;
pub mod extract;
mod health;
pub mod license;
mod market;
mod metrics;
mod news;
mod orders;
mod pending_entries;
mod protection;
mod pump;
mod rate_limit;
mod scans;
mod scheduler;
mod signals;
mod status;
mod strategies;
mod trades;
mod trading;
mod whoami;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::response::IntoResponse;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;
use error::ApiError;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "spotbot API",
        description = "Spot-trading service driven by AI agents. Every error answers \
                       `{\"ok\": false, \"error\": \"<code>\", \"detail\": \"<sentence>\"}`."
    ),
    // Schemas referenced only from parameters: utoipa registers body and response schemas
    // of a route, not those of its parameters.
    components(schemas(error::ErrorBody, crate::activity::AgentName, extract::Symbol))
)]
struct ApiDoc;

/// The routes with their handlers and the OpenAPI document that lists exactly them, before
/// state and layers.
fn routes() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let (router, mut document) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(health::routes())
        .merge(whoami::routes())
        .merge(audit::routes())
        .merge(dashboard::routes())
        .merge(license::routes())
        .merge(strategies::routes())
        .merge(signals::routes())
        .merge(trading::routes())
        .merge(trades::routes())
        .merge(status::routes())
        .merge(orders::routes())
        .merge(pending_entries::routes())
        .merge(protection::routes())
        .merge(scheduler::routes())
        .merge(market::routes())
        .merge(scans::routes())
        .merge(pump::routes())
        .merge(earlier::routes())
        .merge(news::routes())
        .merge(metrics::routes())
        .split_for_parts();
    error::document_common_errors(&mut document);
    auth::document_security(&mut document);
    dashboard::document_live_events(&mut document);
    (router, document)
}

/// The document `GET /api/openapi.json` answers, for the MCP tools' tests.
#[cfg(test)]
pub(crate) fn document() -> utoipa::openapi::OpenApi {
    routes().1
}

/// The router with every route, the error fallbacks and the request layers, plus `/mcp` when
/// `[mcp] enabled`. MCP tool calls are dispatched into the same router without `/mcp` (built
/// from the same routes and layers), so every layer applies to them as to HTTP, and the router
/// does not hold itself (which would keep the state, and the store, alive after a stop).
///
/// The document is kept only as its JSON text: utoipa's structure of it takes about 6 MB of
/// heap per copy (every operation carries the common error responses), the text a tenth of
/// that, and `GET /api/openapi.json` answers the text without building anything.
pub fn router(state: AppState) -> Router {
    let (routes, document) = routes();
    let document = serde_json::to_value(&document).expect("utoipa's document is JSON");
    let text = axum::body::Bytes::from(document.to_string());
    let api = layered(routes.clone(), text.clone(), &state);
    if !state.config.mcp.enabled {
        return api;
    }
    let max_body = state.config.server.max_body_bytes;
    let hosts = &state.config.api.allowed_hosts;
    match crate::mcp::service(&document, api.clone(), hosts, max_body) {
        Ok(mcp) => layered(routes.route_service(crate::mcp::PATH, mcp), text, &state),
        Err(err) => {
            tracing::error!(%err, "no MCP tools from the API document; /mcp is off");
            api
        }
    }
}

/// `routes` with the document route (answering `document`, the document's JSON text), the
/// error fallbacks and the request layers.
fn layered(routes: Router<AppState>, document: axum::body::Bytes, state: &AppState) -> Router {
    let max_body = state.config.server.max_body_bytes;
    routes
        .route(
            "/api/openapi.json",
            axum::routing::get(move || {
                let document = document.clone();
                async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], document) }
            }),
        )
        .fallback(|| async {
            ApiError::not_found("route_not_found", "No route matches this path.")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "This path does not accept that HTTP method.",
            )
        })
        // One `layer` call for the whole stack: axum boxes every route once per call (a
        // `Route`, its future and a response mapping per request), so five calls cost five
        // boxings per request where one does (docs/benchmarks.md, API throughput). The first
        // layer is the outermost.
        .layer(
            tower::ServiceBuilder::new()
                // Outside the license and budget layers and the panic catcher, so their
                // refusals and a handler's panic (500) are counted and logged too. It is also
                // the request log (one debug line per request, a warning per server error): a
                // tracing span per request, even one filtered out, cost about a tenth of the
                // API's throughput.
                .layer(axum::middleware::from_fn_with_state(
                    state.metrics.clone(),
                    crate::metrics::record_http,
                ))
                .layer(CatchPanicLayer::custom(|_panic: Box<dyn std::any::Any + Send>| {
                    ApiError::internal("The service hit an unexpected error; it was logged.")
                        .into_response()
                }))
                .layer(DefaultBodyLimit::max(max_body))
                // After routing (the matched route says which scope it needs) and before the
                // license: a caller without a token learns that first.
                .layer(axum::middleware::from_fn_with_state(state.clone(), auth::admit))
                // Inside auth (it reads the admitted caller), outside the license: a money
                // action the license refused is in the log too.
                .layer(axum::middleware::from_fn_with_state(state.clone(), audit::record))
                // Runs after routing, so it sees the matched route pattern (license::routes).
                .layer(axum::middleware::from_fn_with_state(
                    state.clone(),
                    license::require_license,
                ))
                .layer(axum::middleware::from_fn_with_state(
                    state.clone(),
                    rate_limit::answer_spent_reads,
                )),
        )
        .with_state(state.clone())
}
