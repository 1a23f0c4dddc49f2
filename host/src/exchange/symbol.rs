//! The symbol type every request that names a trading pair uses.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A trading pair as the exchanges spell it, e.g. `BTCUSDT`: 2 to 20 characters of `A-Z` and
/// `0-9`. Deserializing refuses anything else, naming the value (422 `invalid_body`,
/// `invalid_query` or `invalid_path` in the API); whether the active exchange lists it is
/// checked where it is used (`unknown_symbol`).
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

    /// The error names the value, not the field: the caller's message names the field
    /// (`` `symbol` "ethusdt" must be ... ``).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let valid = |t: &str| {
            (Self::MIN_LEN..=Self::MAX_LEN).contains(&t.len())
                && t.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        };
        if valid(text) {
            return Ok(Symbol(text.to_string()));
        }
        let upper = text.to_ascii_uppercase();
        let hint = if valid(&upper) {
            format!("upper case: {upper:?}")
        } else {
            "e.g. BTCUSDT".to_string()
        };
        Err(format!(
            "{text:?} must be {}-{} characters of A-Z and 0-9 ({hint})",
            Self::MIN_LEN,
            Self::MAX_LEN
        ))
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
