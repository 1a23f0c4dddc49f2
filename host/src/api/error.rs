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

/// An error answer that the shared machinery (extractors, layers) gives on many routes.
struct CommonError {
    status: u16,
    code: &'static str,
    when: &'static str,
}

const INVALID_JSON: CommonError =
    CommonError { status: 400, code: "invalid_json", when: "the body is not valid JSON" };
const PAYLOAD_TOO_LARGE: CommonError = CommonError {
    status: 413,
    code: "payload_too_large",
    when: "the body is larger than server.max_body_bytes",
};
const UNSUPPORTED_MEDIA_TYPE: CommonError = CommonError {
    status: 415,
    code: "unsupported_media_type",
    when: "the body is sent without `Content-Type: application/json`",
};
const INVALID_BODY: CommonError = CommonError {
    status: 422,
    code: "invalid_body",
    when: "a body field is missing, unknown, or has the wrong type or value; the detail names it",
};
const INVALID_QUERY: CommonError = CommonError {
    status: 422,
    code: "invalid_query",
    when: "a query parameter has the wrong type or value; the detail names it",
};
const INVALID_PATH: CommonError = CommonError {
    status: 422,
    code: "invalid_path",
    when: "a path parameter has the wrong type or value",
};
const RATE_LIMITED: CommonError = CommonError {
    status: 429,
    code: "rate_limited",
    when: "the exchange's request weight for agent reads is spent for this minute; retry after \
           the `Retry-After` header's seconds (orders and stops keep their own reserve)",
};
const UNAUTHORIZED: CommonError = CommonError {
    status: 401,
    code: "unauthorized",
    when: "no valid bearer token while the API requires tokens (also `invalid_token`, \
           `token_revoked`); the answer carries `WWW-Authenticate: Bearer`",
};
const FORBIDDEN: CommonError = CommonError {
    status: 403,
    code: "insufficient_scope",
    when: "the token's scope is below the route's (also `agent_mismatch`: `agent` names \
           another agent than the token's)",
};
const HOST_NOT_ALLOWED: CommonError = CommonError {
    status: 403,
    code: "host_not_allowed",
    when: "the `Host` header is not in [api] allowed_hosts (also `cross_site_refused`: a \
           browser page of another origin asked for a change)",
};
const NOT_JSON: CommonError = CommonError {
    status: 415,
    code: "unsupported_media_type",
    when: "a POST without `Content-Type: application/json` (required also without a body)",
};
const BAD_TOKENS: CommonError = CommonError {
    status: 429,
    code: "too_many_bad_tokens",
    when: "too many bad tokens from this address; retry after the `Retry-After` header's \
           seconds",
};
const AUTH_UNAVAILABLE: CommonError = CommonError {
    status: 503,
    code: "auth_unavailable",
    when: "the tokens file cannot be read, so no request is let in",
};
const LICENSE_REQUIRED: CommonError = CommonError {
    status: 503,
    code: "license_required",
    when: "no active license (the route is licensed in the license table)",
};

/// The operation extension naming the statuses a request that matches the document can still
/// get, because the answer depends on state the document cannot describe (the exchange's
/// listing, stored signals). Each must also be documented in the operation's responses. The
/// contract check (`cargo xtask contract`) accepts these statuses for schema-valid requests
/// of that operation only.
pub const VALID_INPUT_STATUSES: &str = "x-valid-input-statuses";

/// Documents, in one place, the error answers every route gets from the shared extractors and
/// layers, so a route's annotation lists only its own outcomes: a JSON body (`ApiJson`,
/// `OptionalJson`) can answer 400, 413 and 422, a required one also 415; query and path
/// parameters can answer 422; a route the license table marks as licensed answers 503
/// `license_required` without a license; a route that documents a 5xx of its own (it can fail
/// at the exchange) answers 429 `rate_limited` with `Retry-After` while agent reads have spent
/// their share of the request weight (`api::rate_limit`). A status the route already
/// documents keeps its description, with the common case appended.
pub fn document_common_errors(document: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::path::ParameterIn;
    use utoipa::openapi::{RefOr, Required};

    for_each_operation(document, |method, path, operation| {
        // A route that can fail at the exchange (it documents a 5xx of its own) answers 429
        // instead while agent reads have spent their weight (`api::rate_limit`).
        let reads_exchange = operation.responses.responses.keys().any(|k| k.starts_with('5'));
        let mut common = vec![&HOST_NOT_ALLOWED];
        if method == axum::http::Method::POST {
            common.push(&NOT_JSON);
        }
        if crate::auth::needs(&method, path) != crate::auth::Needs::Public {
            common.extend([&UNAUTHORIZED, &FORBIDDEN, &BAD_TOKENS, &AUTH_UNAVAILABLE]);
        }
        if let Some(RefOr::T(body)) = &operation.request_body {
            common.extend([&INVALID_JSON, &PAYLOAD_TOO_LARGE]);
            if matches!(body.required, Some(Required::True)) && method != axum::http::Method::POST {
                common.push(&UNSUPPORTED_MEDIA_TYPE);
            }
            common.push(&INVALID_BODY);
        }
        let parameters = operation.parameters.iter().flatten();
        let located = |place: ParameterIn| {
            parameters.clone().any(|p| matches!(p, RefOr::T(p) if p.parameter_in == place))
        };
        if located(ParameterIn::Query) {
            common.push(&INVALID_QUERY);
        }
        if located(ParameterIn::Path) {
            common.push(&INVALID_PATH);
        }
        if crate::license::routes::needs_license(&method, path) {
            common.push(&LICENSE_REQUIRED);
        }
        if reads_exchange {
            common.push(&RATE_LIMITED);
        }
        for error in common {
            add_response(&mut operation.responses.responses, error);
        }
    });
}

/// Calls `visit` with the method, the path and each operation of `document`.
pub fn for_each_operation(
    document: &mut utoipa::openapi::OpenApi,
    mut visit: impl FnMut(axum::http::Method, &str, &mut utoipa::openapi::path::Operation),
) {
    for (path, item) in document.paths.paths.iter_mut() {
        let operations = [
            (axum::http::Method::GET, &mut item.get),
            (axum::http::Method::PUT, &mut item.put),
            (axum::http::Method::POST, &mut item.post),
            (axum::http::Method::DELETE, &mut item.delete),
            (axum::http::Method::PATCH, &mut item.patch),
        ];
        for (method, operation) in operations {
            if let Some(operation) = operation.as_mut() {
                visit(method, path, operation);
            }
        }
    }
}

fn add_response(
    responses: &mut std::collections::BTreeMap<
        String,
        utoipa::openapi::RefOr<utoipa::openapi::Response>,
    >,
    error: &CommonError,
) {
    use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};

    let sentence = format!("`{}`: {}.", error.code, error.when);
    match responses.get_mut(&error.status.to_string()) {
        Some(RefOr::T(response)) => {
            if !response.description.contains(&format!("`{}`", error.code)) {
                let own = response.description.trim_end().trim_end_matches('.');
                response.description = format!("{own}; or {sentence}");
            }
        }
        Some(RefOr::Ref(_)) => {}
        None => {
            let content = ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody")));
            let mut response = ResponseBuilder::new()
                .description(sentence)
                .content("application/json", content.build());
            if error.status == 401 {
                let scheme = utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String);
                let mut header = utoipa::openapi::header::Header::new(scheme);
                header.description = Some("`Bearer`".into());
                response = response.header("WWW-Authenticate", header);
            }
            if error.status == 429 {
                let seconds = utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::Integer)
                    .minimum(Some(1));
                let mut header = utoipa::openapi::header::Header::new(seconds);
                header.description = Some("Seconds to wait before the next read.".into());
                response = response.header("Retry-After", header);
            }
            let response = response.build();
            responses.insert(error.status.to_string(), RefOr::T(response));
        }
    }
}
