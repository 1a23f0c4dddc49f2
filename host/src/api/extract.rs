//! Request extractors whose rejections use the API's error body.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

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

/// A trading pair as the exchanges spell it, e.g. `BTCUSDT`: 2 to 20 characters of `A-Z` and
/// `0-9`. Deserializing refuses anything else, naming the value (422 `invalid_body`,
/// `invalid_query` or `invalid_path`); whether the active exchange lists it is the route's
/// check (`unknown_symbol`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Symbol(String);

impl Symbol {
    pub const MIN_LEN: usize = 2;
    pub const MAX_LEN: usize = 20;
    /// The same rule for the OpenAPI document.
    pub const PATTERN: &str = "^[A-Z0-9]{2,20}$";

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Display for Symbol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for Symbol {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let ok = (Self::MIN_LEN..=Self::MAX_LEN).contains(&text.len())
            && text.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        if ok {
            Ok(Symbol(text.to_string()))
        } else {
            Err(format!(
                "symbol {text:?} must be {}-{} characters of A-Z and 0-9, e.g. BTCUSDT",
                Self::MIN_LEN,
                Self::MAX_LEN
            ))
        }
    }
}

impl utoipa::PartialSchema for Symbol {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .description(Some(
                "A symbol as the exchanges spell it: 2 to 20 characters of A-Z and 0-9.",
            ))
            .pattern(Some(Self::PATTERN))
            .min_length(Some(Self::MIN_LEN))
            .max_length(Some(Self::MAX_LEN))
            .examples(["BTCUSDT"])
            .into()
    }
}

impl ToSchema for Symbol {}

impl<'de> Deserialize<'de> for Symbol {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
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
        let parsed: Result<Vec<Symbol>, _> = serde_json::from_str(r#"["ETHUSDT", "eth"]"#);
        assert!(parsed.unwrap_err().to_string().contains("\"eth\""));
    }
}
