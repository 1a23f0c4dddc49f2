//! Request extractors whose rejections use the API's error body.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// A JSON body; invalid JSON answers 400, wrong fields 422, too large 413.
#[derive(Debug, FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub struct ApiJson<T>(pub T);

/// Query parameters; a missing or mistyped parameter answers 422 naming it.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct ApiQuery<T>(pub T);

/// Path parameters.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct ApiPath<T>(pub T);

/// A JSON body that may be left out: an empty body means `T::default()`. Content-Type is not
/// required, so `curl -XPOST url` works; invalid JSON answers 400, wrong fields 422, too
/// large 413, like [`ApiJson`].
#[derive(Debug)]
pub struct OptionalJson<T>(pub T);

impl<T, S> FromRequest<S> for OptionalJson<T>
where
    T: DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let body = Bytes::from_request(request, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::payload_too_large()
            } else {
                ApiError::bad_request("invalid_body", rejection.body_text())
            }
        })?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self(T::default()));
        }
        serde_json::from_slice(&body).map(Self).map_err(|err| {
            if err.is_syntax() || err.is_eof() {
                ApiError::invalid_json(&err.to_string())
            } else {
                ApiError::invalid_body(&err.to_string())
            }
        })
    }
}
