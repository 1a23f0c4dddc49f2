//! Request extractors whose rejections use the API's error body.

use axum::extract::FromRequest;
use axum::extract::FromRequestParts;

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
