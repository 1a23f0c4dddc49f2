//! Money and percentages as they enter the service: a request's prices, sizes and percents and
//! the config file's amounts and percents are decimals from the moment they are read, so no
//! binary float reaches execution and nothing converts them again on the way to the exchange.
//!
//! Why this shape: JSON numbers and query parameters reach serde as `f64` (serde_json's
//! `arbitrary_precision` would hand over the digits, but it changes number handling for the
//! whole workspace), and TOML floats do too. The one conversion is here: the `f64`'s shortest
//! round-trip text, what `{}` prints (`0.1` for the number written `0.1`, not the binary
//! 0.1000000000000000055...), read exactly as a [`Decimal`]. For every number written with at
//! most 15 significant digits that text is the number the caller wrote.
//!
//! A request field is a [`Number`]: a value no decimal can hold (NaN or infinity, which a query
//! parameter may spell, beyond ±7.9e28, or finer than 28 decimals) is kept as
//! [`Number::Beyond`] rather than refused by the parser, so the field's own range check
//! refuses it with the same code and sentence as any other value out of range. The OpenAPI
//! document describes a `Number` as a JSON number (`#[schema(value_type = f64)]`). Config
//! values are plain [`Decimal`]s read by [`decimal`]: the file is refused at load when one
//! cannot be a decimal.
//!
//! The way out is here too: answers keep their JSON number fields (their schema and their
//! callers know them as numbers), filled by [`json_number`] and [`json_amount`].

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize, Serializer};

/// A number from a request (a JSON number or a query parameter), read as a decimal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// The number as written (see the module doc).
    Decimal(Decimal),
    /// A number no decimal can hold; every range check refuses it, naming it as written.
    Beyond(f64),
}

impl Number {
    /// The decimal; `None` for a [`Number::Beyond`].
    pub fn decimal(self) -> Option<Decimal> {
        self.decimal_if(|_| true)
    }

    /// The decimal when `accept` takes it; `None` for a value it refuses or a
    /// [`Number::Beyond`].
    pub fn decimal_if(self, accept: impl FnOnce(Decimal) -> bool) -> Option<Decimal> {
        match self {
            Number::Decimal(d) if accept(d) => Some(d),
            _ => None,
        }
    }

    /// The number as a float, for math that stays in floats (scores, indicator levels shown
    /// in a message).
    pub fn to_f64(self) -> f64 {
        match self {
            Number::Decimal(d) => d.to_f64().unwrap_or(f64::NAN),
            Number::Beyond(v) => v,
        }
    }
}

/// The one float-to-decimal conversion: the float's shortest round-trip text, read exactly.
impl From<f64> for Number {
    fn from(value: f64) -> Self {
        let exact = value.is_finite().then(|| Decimal::from_str_exact(&value.to_string()).ok());
        exact.flatten().map_or(Number::Beyond(value), Number::Decimal)
    }
}

impl FromStr for Number {
    type Err = std::num::ParseFloatError;

    /// Reads text as a float first, exactly as serde reads a query parameter, so text and
    /// JSON give the same decimal.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse::<f64>().map(Number::from)
    }
}

/// As written: a decimal shows the digits a float of the same value shows.
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Decimal(d) => d.fmt(f),
            Number::Beyond(v) => v.fmt(f),
        }
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        f64::deserialize(deserializer).map(Number::from)
    }
}

/// A JSON number, as the field was received.
impl Serialize for Number {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.to_f64())
    }
}

/// `deserialize_with` for a config value: a TOML (or JSON) number as a [`Decimal`]; anything
/// else, or a number no decimal holds, is refused with the key named by the loader.
pub fn decimal<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Decimal, D::Error> {
    match Number::deserialize(deserializer)? {
        Number::Decimal(d) => Ok(d),
        Number::Beyond(v) => Err(D::Error::custom(format!("{v} cannot be a decimal number"))),
    }
}

/// `serialize_with` for a [`Decimal`] that is a number in JSON (the host's strategy keys are
/// merged as JSON with the plugins' configs, where they are numbers).
pub fn as_number<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(value.to_f64().unwrap_or(f64::NAN))
}

/// A decimal as a JSON number of an answer: answers keep the number fields their schema and
/// their callers know, and a decimal of the service's range has a float within 1e-15 of it.
pub fn json_number(value: Decimal) -> f64 {
    value.to_f64().unwrap_or(0.0)
}

/// An amount as a JSON number of an answer, to 8 decimals (the exchanges' finest step): a
/// computed pnl, equity or percentage carries more digits than any amount that moved.
pub fn json_amount(value: Decimal) -> f64 {
    json_number(value.round_dp(8))
}

#[cfg(test)]
mod tests {
    use rust_decimal_macros::dec;

    use super::*;

    #[test]
    fn a_number_is_the_decimal_written_not_its_binary_neighbour() {
        assert_eq!(Number::from(0.1), Number::Decimal(dec!(0.1)));
        assert_eq!(Number::from(2950.0), Number::Decimal(dec!(2950)));
        assert_eq!(Number::from(1e-8), Number::Decimal(dec!(0.00000001)));
        assert_eq!(Number::from(1e12), Number::Decimal(dec!(1000000000000)));
        assert_eq!("0.3".parse::<Number>().unwrap(), Number::Decimal(dec!(0.3)));
        let json: Number = serde_json::from_str("123.456").unwrap();
        assert_eq!(json, Number::Decimal(dec!(123.456)));
    }

    #[test]
    fn what_no_decimal_holds_is_kept_as_written_for_the_range_check() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30, -1e300, 1e-30] {
            let number = Number::from(v);
            assert!(matches!(number, Number::Beyond(_)), "{v}");
            assert_eq!(number.to_string(), v.to_string());
            assert_eq!(number.decimal(), None);
        }
    }

    #[test]
    fn it_shows_as_the_float_did() {
        for v in [0.1, 2.0, -1.0, 99.0, 0.0001, 1e-8, 1e12, 12345.678901, 0.0] {
            assert_eq!(Number::from(v).to_string(), v.to_string(), "{v}");
        }
    }

    #[test]
    fn config_values_are_decimals_or_refused() {
        let read = |text: &str| decimal(&mut serde_json::Deserializer::from_str(text));
        assert_eq!(read("15").unwrap(), dec!(15));
        assert_eq!(read("0.1").unwrap(), dec!(0.1));
        assert!(read("\"lots\"").is_err());
        assert!(read("1e30").is_err());
    }
}
