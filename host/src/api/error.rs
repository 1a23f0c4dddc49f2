//! The one error body of the whole API, `{"ok": false, "error": "<code>", "detail": "..."}`,
//! and the mapping of the framework's own rejections onto it.

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// The body of every error answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    /// Always false.
    pub ok: bool,
    /// Machine-readable code such as `invalid_json` or `license_required`.
    pub error: String,
    /// One human sentence that names the bad field or the reason.
    pub detail: String,
}

/// An error answer: a status, a machine code and one human sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status} {code}: {detail}")]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub detail: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        Self { status, code, detail: detail.into() }
    }

    pub fn bad_request(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, detail)
    }

    pub fn not_found(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, detail)
    }

    pub fn conflict(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, detail)
    }

    pub fn unprocessable(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, code, detail)
    }

    pub fn service_unavailable(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, code, detail)
    }

    /// The body is not JSON at all.
    pub fn invalid_json(reason: &str) -> Self {
        Self::bad_request("invalid_json", format!("The body is not valid JSON: {reason}"))
    }

    /// The body is JSON but a field is missing, unknown or of the wrong type.
    pub fn invalid_body(reason: &str) -> Self {
        Self::unprocessable(
            "invalid_body",
            format!("The body does not match the expected fields: {reason}"),
        )
    }

    pub fn payload_too_large() -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "The request body is larger than the configured limit (server.max_body_bytes).",
        )
    }

    /// An unexpected failure inside the service; the detail is logged and returned as is, so
    /// callers must not put secrets into it.
    pub fn internal(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", detail)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(status = %self.status, code = self.code, detail = %self.detail, "request failed");
        }
        let body = ErrorBody { ok: false, error: self.code.to_string(), detail: self.detail };
        (self.status, Json(body)).into_response()
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(err: crate::store::StoreError) -> Self {
        Self::internal(err.to_string())
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::JsonSyntaxError(err) => Self::invalid_json(&err.body_text()),
            JsonRejection::JsonDataError(err) => {
                Self::invalid_body(&inner_reason(&err.body_text()))
            }
            JsonRejection::MissingJsonContentType(_) => Self::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "Send the body with `Content-Type: application/json`.",
            ),
            JsonRejection::BytesRejection(err) if err.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Self::payload_too_large()
            }
            other => Self::bad_request("invalid_body", other.body_text()),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        Self::unprocessable(
            "invalid_query",
            format!(
                "A query parameter is missing or has the wrong type: {}",
                inner_reason(&rejection.body_text())
            ),
        )
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        Self::unprocessable("invalid_path", inner_reason(&rejection.body_text()))
    }
}

/// axum's rejection texts start with a generic sentence followed by serde's reason, which names
/// the field; keep the reason.
fn inner_reason(text: &str) -> String {
    text.split_once(": ").map_or(text, |(_, reason)| reason).to_string()
}
