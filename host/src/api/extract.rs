//! Request extractors whose rejections use the API's error body.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use super::error::ApiError;
pub use crate::exchange::Symbol;

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

/// A JSON body that may be left out: an empty body or `null` means `T::default()` (document
/// it as `request_body(content = Option<T>)`). Content-Type is not required, so
/// `curl -XPOST url` works; invalid JSON answers 400, wrong fields 422, too large 413, like
/// [`ApiJson`].
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
        let parsed = serde_json::from_slice::<Option<T>>(&body);
        parsed.map(|body| Self(body.unwrap_or_default())).map_err(|err| {
            if err.is_syntax() || err.is_eof() {
                ApiError::invalid_json(&err.to_string())
            } else {
                ApiError::invalid_body(&err.to_string())
            }
        })
    }
}

/// A whole number from the query (0 to i64::MAX, the document's `int64`), or 422
/// `invalid_query` naming `name`.
pub fn whole_number(name: &str, text: Option<&str>, default: u64) -> Result<u64, ApiError> {
    let Some(text) = text else {
        return Ok(default);
    };
    match text.parse::<i64>() {
        Ok(n) => u64::try_from(n).map_err(|_| {
            ApiError::unprocessable(
                "invalid_query",
                format!("`{name}` must be at least 0, got {n}"),
            )
        }),
        Err(_) => Err(ApiError::unprocessable(
            "invalid_query",
            format!("`{name}` must be a whole number from 0 to {}, got {text:?}", i64::MAX),
        )),
    }
}

/// A whole number from the query within `range` (default `default`), or 422 `invalid_query`
/// naming `name` (limits of list routes).
pub fn bounded_number(
    name: &str,
    text: Option<&str>,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, ApiError> {
    let n = whole_number(name, text, default)?;
    if range.contains(&n) {
        Ok(n)
    } else {
        Err(ApiError::unprocessable(
            "invalid_query",
            format!("`{name}` must be {}-{}, got {n}", range.start(), range.end()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::Symbol;

    #[test]
    fn the_pattern_says_what_parsing_accepts() {
        assert_eq!(
            Symbol::PATTERN,
            format!("^[A-Z0-9]{{{},{}}}$", Symbol::MIN_LEN, Symbol::MAX_LEN)
        );
    }

    #[test]
    fn symbols_are_2_to_20_uppercase_letters_and_digits() {
        for good in ["BTCUSDT", "1INCHUSDT", "AB", "A1B2C3D4E5F6G7H8I9J0"] {
            assert_eq!(good.parse::<Symbol>().unwrap().as_str(), good);
        }
        for bad in ["", "B", "btcusdt", "BTC-USDT", "BTCUSDT ", "ÄBC", "A1B2C3D4E5F6G7H8I9J0K"] {
            let err = bad.parse::<Symbol>().unwrap_err();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
        assert_eq!(
            "ethusdt".parse::<Symbol>().unwrap_err(),
            "\"ethusdt\" must be 2-20 characters of A-Z and 0-9 (upper case: \"ETHUSDT\")"
        );
        assert!("BTC-USDT".parse::<Symbol>().unwrap_err().ends_with("(e.g. BTCUSDT)"));
        let parsed: Result<Vec<Symbol>, _> = serde_json::from_str(r#"["ETHUSDT", "eth"]"#);
        assert!(parsed.unwrap_err().to_string().contains("\"eth\""));
    }
}
