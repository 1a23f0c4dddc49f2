//! The earlier route set (spec, "Earlier route set"): the routes old agents still call, without
//! the `/api` prefix for most, with the earlier answer shapes. Every one is a thin mapping onto
//! the current route's code (same gates, same execution, same license rule) and is marked
//! `deprecated` in the OpenAPI document. `GET /dashboard` lives with the dashboard routes.
//!
//! - here: `GET /health`, `GET /license/status`, `POST /license/register`,
//!   `POST /license/activate` (the current handlers under the old paths);
//! - [`actions`]: `POST /trade`, `GET /trailing`, `GET /status`;
//! - [`scans`]: `GET /scan`, `GET /custom_check`, `POST /api/scan-and-signal`.
//!
//! Decisions the spec leaves open are documented in docs/api.md, "Earlier route set".

mod actions;
mod scans;

use axum::Json;
use axum::extract::State;
use utoipa::openapi::Deprecated;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::ApiJson;
use super::health::Health;
use super::license::{ActivateAnswer, ActivateBody, RegisterAnswer, RegisterBody};
use crate::config::is_strategy_name;
use crate::license::LicenseStatus;
use crate::plugins::model::PluginKind;
use crate::state::AppState;

/// `GET /api/health` under its earlier path.
#[utoipa::path(get, path = "/health", tag = "earlier route set", operation_id = "earlier_health",
    responses((status = 200, description = "The service answers", body = Health)))]
async fn health(state: State<AppState>) -> Json<Health> {
    super::health::health(state).await
}

/// `GET /api/license/status` under its earlier path.
#[utoipa::path(get, path = "/license/status", tag = "earlier route set",
    operation_id = "earlier_license_status",
    responses((status = 200, description = "The license state", body = LicenseStatus)))]
async fn license_status(state: State<AppState>) -> Json<LicenseStatus> {
    super::license::status(state).await
}

/// `POST /api/license/register` under its earlier path: the same `{ok, license_key, plan,
/// message}` answer (the earlier set documents exactly that shape).
#[utoipa::path(post, path = "/license/register", tag = "earlier route set",
    operation_id = "earlier_license_register", request_body = RegisterBody,
    responses(
        (status = 200, description = "Registered; `ok` says whether the activation succeeded too", body = RegisterAnswer),
        (status = 409, description = "The e-mail address already has a license", body = ErrorBody),
        (status = 422, description = "Email or name invalid; the detail names the field", body = ErrorBody),
        (status = 429, description = "Too many registrations from this address", body = ErrorBody),
        (status = 502, description = "The license server cannot be reached", body = ErrorBody),
        (status = 503, description = "No license server or public key is configured", body = ErrorBody),
    ))]
async fn license_register(
    state: State<AppState>,
    body: ApiJson<RegisterBody>,
) -> Result<Json<RegisterAnswer>, ApiError> {
    super::license::register(state, body).await
}

/// `POST /api/license/activate` under its earlier path.
#[utoipa::path(post, path = "/license/activate", tag = "earlier route set",
    operation_id = "earlier_license_activate", request_body = ActivateBody,
    responses(
        (status = 200, description = "Active on this install", body = ActivateAnswer),
        (status = 404, description = "No license with this key", body = ErrorBody),
        (status = 409, description = "The license was revoked", body = ErrorBody),
        (status = 422, description = "The key is malformed", body = ErrorBody),
        (status = 502, description = "The license server cannot be reached", body = ErrorBody),
        (status = 503, description = "No license server or public key is configured", body = ErrorBody),
    ))]
async fn license_activate(
    state: State<AppState>,
    body: ApiJson<ActivateBody>,
) -> Result<Json<ActivateAnswer>, ApiError> {
    super::license::activate(state, body).await
}

/// The `bot` of an earlier route: the name of a loaded strategy plugin (the spec names
/// ta_trend and ta_mean_revert; any loaded strategy is accepted). A scanner plugin has no
/// results to scan or trade, so it counts as not loaded.
fn strategy_bot(state: &AppState, bot: &str) -> Result<(), ApiError> {
    if !is_strategy_name(bot) {
        return Err(ApiError::unprocessable(
            "invalid_query",
            format!("`bot` must match [a-z][a-z0-9_]{{0,63}}, got {bot:?}"),
        ));
    }
    let is_strategy = |name: &str| {
        state.plugins.get(name).is_some_and(|p| p.manifest.kind == PluginKind::Strategy)
    };
    if is_strategy(bot) {
        return Ok(());
    }
    let loaded: Vec<String> = state
        .plugins
        .list()
        .into_iter()
        .filter_map(|p| p.name)
        .filter(|n| is_strategy(n))
        .collect();
    let loaded = if loaded.is_empty() { "none".to_string() } else { loaded.join(", ") };
    Err(ApiError::not_found(
        "plugin_not_found",
        format!("`bot` {bot:?} names no loaded strategy plugin; loaded strategies: {loaded}"),
    ))
}

pub fn routes() -> OpenApiRouter<AppState> {
    let mut router = OpenApiRouter::new()
        .routes(routes!(health))
        .routes(routes!(license_status))
        .routes(routes!(license_register))
        .routes(routes!(license_activate))
        .merge(actions::routes())
        .merge(scans::routes());
    // Marked here, once for the whole set, so no earlier route can miss it.
    for item in router.get_openapi_mut().paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.options,
            &mut item.head,
            &mut item.patch,
            &mut item.trace,
        ];
        for operation in operations.into_iter().flatten() {
            operation.deprecated = Some(Deprecated::True);
        }
    }
    router
}
