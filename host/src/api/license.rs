//! License routes (`/api/license/*`, never need a license) and the license layer that answers
//! 503 on routes the [`routes`](crate::license::routes) table marks as licensed.

use axum::Json;
use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::ApiError;
use super::extract::ApiJson;
use crate::license::routes::{needs_license, rule_for};
use crate::license::{HOW_TO_GET_A_KEY, LicenseError, LicenseStatus};
use crate::state::AppState;

/// `POST /api/license/register` body.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RegisterBody {
    /// Contact address of the license holder.
    #[schema(format = Email, max_length = 254)]
    pub email: String,
    /// Name of the person or organisation: 1 to 100 characters once surrounding whitespace is
    /// trimmed, no control characters.
    // The pattern is exactly what `validate_name` accepts: optional surrounding whitespace
    // (Unicode White_Space, what it trims), then 1 to 100 characters without control
    // characters that neither start nor end with whitespace.
    #[schema(
        min_length = 1,
        example = "Ann Lee",
        pattern = r"^[\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000](?:[^\x00-\x1f\x7f-\x9f]{0,98}[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000])?[\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$"
    )]
    pub name: String,
}

/// `POST /api/license/register` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegisterAnswer {
    /// True when the new key is registered and active on this install.
    pub ok: bool,
    /// The new key, `SPOT-XXXX-XXXX-XXXX-XXXX`. Shown only here: keep it.
    pub license_key: String,
    pub plan: String,
    pub message: String,
}

/// `POST /api/license/activate` body.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ActivateBody {
    /// An existing key, `SPOT-XXXX-XXXX-XXXX-XXXX`.
    #[schema(pattern = "^SPOT(-[2-9A-HJ-NP-Z]{4}){4}$", example = "SPOT-7K2M-9QXR-4HTW-B8NC")]
    pub license_key: String,
}

/// `POST /api/license/activate` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActivateAnswer {
    pub ok: bool,
    pub plan: String,
    pub message: String,
}

impl From<LicenseError> for ApiError {
    fn from(err: LicenseError) -> Self {
        let detail = err.to_string();
        match err {
            LicenseError::Invalid(field) => ApiError::unprocessable(
                match field.field {
                    "email" => "invalid_email",
                    "name" => "invalid_name",
                    "license_key" => "invalid_license_key",
                    _ => "invalid_body",
                },
                detail,
            ),
            LicenseError::NotConfigured(_) => {
                ApiError::service_unavailable("license_not_configured", detail)
            }
            LicenseError::Unreachable(_) => {
                ApiError::new(StatusCode::BAD_GATEWAY, "license_server_unreachable", detail)
            }
            LicenseError::BadAnswer(_) => {
                ApiError::new(StatusCode::BAD_GATEWAY, "license_server_error", detail)
            }
            LicenseError::UnknownKey => ApiError::not_found("license_not_found", detail),
            LicenseError::Revoked => ApiError::conflict("license_revoked", detail),
            LicenseError::Refused(_) => ApiError::conflict("license_refused", detail),
            LicenseError::EmailRegistered(_) => ApiError::conflict("email_registered", detail),
            LicenseError::RateLimited(_) => {
                ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", detail)
            }
            LicenseError::Store(_) => ApiError::internal(detail),
        }
    }
}

/// License state of this install.
#[utoipa::path(get, path = "/api/license/status", operation_id = "license_status", tag = "license",
    responses((status = 200, description = "The license state", body = LicenseStatus)))]
pub(super) async fn status(State(state): State<AppState>) -> Json<LicenseStatus> {
    Json(state.license.status())
}

/// Register a free license with the license server and activate it on this install.
#[utoipa::path(post, path = "/api/license/register",
    operation_id = "license_register", tag = "license", request_body = RegisterBody,
    responses(
        (status = 200, description = "Registered; `ok` says whether the activation succeeded too", body = RegisterAnswer),
        (status = 409, description = "The e-mail address already has a license", body = super::error::ErrorBody),
        (status = 422, description = "Email or name invalid; the detail names the field", body = super::error::ErrorBody),
        (status = 429, description = "Too many registrations from this address", body = super::error::ErrorBody),
        (status = 502, description = "The license server cannot be reached", body = super::error::ErrorBody),
        (status = 503, description = "No license server or public key is configured", body = super::error::ErrorBody),
    ))]
pub(super) async fn register(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<RegisterBody>,
) -> Result<Json<RegisterAnswer>, ApiError> {
    let registered = state.license.register(&body.email, &body.name).await?;
    let (ok, message) = match registered.activation {
        Ok(_) => (true, "License registered and activated on this install. Keep the key.".into()),
        Err(err) => (
            false,
            format!(
                "License registered, but the activation failed ({err}); activate the key \
                 with POST /api/license/activate."
            ),
        ),
    };
    Ok(Json(RegisterAnswer {
        ok,
        license_key: registered.license_key,
        plan: registered.plan,
        message,
    }))
}

/// Activate an existing key on this install (moves the key's binding to this machine).
#[utoipa::path(post, path = "/api/license/activate",
    operation_id = "license_activate", tag = "license", request_body = ActivateBody,
    responses(
        (status = 200, description = "Active on this install", body = ActivateAnswer),
        (status = 404, description = "No license with this key", body = super::error::ErrorBody),
        (status = 409, description = "The license was revoked", body = super::error::ErrorBody),
        (status = 422, description = "The key is malformed", body = super::error::ErrorBody),
        (status = 502, description = "The license server cannot be reached", body = super::error::ErrorBody),
        (status = 503, description = "No license server or public key is configured", body = super::error::ErrorBody),
    ))]
pub(super) async fn activate(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ActivateBody>,
) -> Result<Json<ActivateAnswer>, ApiError> {
    let activated = state.license.activate(&body.license_key).await?;
    Ok(Json(ActivateAnswer {
        ok: true,
        plan: activated.plan,
        message: "License active on this install.".into(),
    }))
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(status)).routes(routes!(register)).routes(routes!(activate))
}

/// The license layer: a matched route that the table marks as licensed answers 503
/// `license_required` while the license is not active. Unmatched requests pass through to the
/// 404 fallback.
pub async fn require_license(
    State(state): State<AppState>,
    matched: Option<MatchedPath>,
    request: Request,
    next: Next,
) -> Response {
    let Some(path) = matched.filter(|path| needs_license(request.method(), path.as_str())) else {
        return next.run(request).await;
    };
    if !state.license.is_active() {
        let detail = state
            .license
            .status()
            .message
            .unwrap_or_else(|| format!("An active license is required. {HOW_TO_GET_A_KEY}"));
        let unlisted = if rule_for(request.method(), path.as_str()).is_none() {
            " (This route is not in the license table, host/src/license/routes.rs, so it needs \
             a license by default.)"
        } else {
            ""
        };
        return ApiError::service_unavailable(
            "license_required",
            format!("This route needs an active license.{unlisted} {detail}"),
        )
        .into_response();
    }
    next.run(request).await
}
