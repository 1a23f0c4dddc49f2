//! The rule the exchange clients read answers by: only a well-formed, documented answer is an
//! outcome. Between the service and an exchange there may be a proxy or a gateway that cuts,
//! reshapes or replaces an answer after the request was forwarded, so a damaged answer says
//! nothing about what the exchange did:
//!
//! - the text must be one JSON value in which no object names a key twice (a typed read keeps
//!   one of two duplicated keys silently, so a mangled answer could read as another one);
//! - prices, sizes and amounts are plain decimal strings (`"0.02"`, `"-0.3"`): an exponent
//!   (`"1e400"`), a JSON number where the exchange sends a string, or more digits than a
//!   decimal holds is no number, and the sign must be one the field can have;
//! - what does not read is [`Unreadable`]. For an action (an order, a cancel) the request was
//!   sent, so it may have executed: [`Unreadable::action`] is [`ExchangeError::Unknown`],
//!   settled by looking the order up by its client id — never a rejection (a confirm would
//!   send the entry again) and never "absent". For a read it is [`ExchangeError::Decode`]
//!   ([`Unreadable::read`]): never a value built from defaults.

use std::collections::HashSet;
use std::fmt;

use rust_decimal::Decimal;
use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};

use super::ExchangeError;

/// Why an answer is not a well-formed, documented one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable(String);

impl Unreadable {
    pub fn new(detail: impl Into<String>) -> Self {
        Self(detail.into())
    }

    /// The answer to an action sent as `what`: it may have executed, so its outcome is unknown.
    pub fn action(self, what: &str) -> ExchangeError {
        ExchangeError::Unknown {
            detail: format!("{what}: not a well-formed answer ({}); it may have executed", self.0),
        }
    }

    /// The answer to the read `what`: unreadable.
    pub fn read(self, what: &str) -> ExchangeError {
        ExchangeError::Decode { detail: format!("{what}: {}", self.0) }
    }
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `body` as `T`: one JSON value, no key twice in any object, then `T`'s own shape.
pub fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, Unreadable> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(Unreadable::new("an empty answer"));
    }
    serde_json::from_slice::<UniqueKeys>(body).map_err(|e| Unreadable::new(e.to_string()))?;
    serde_json::from_slice(body).map_err(|e| Unreadable::new(e.to_string()))
}

/// Any JSON value, walked only to refuse an object that names a key twice.
struct UniqueKeys;

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeysVisitor)
    }
}

struct UniqueKeysVisitor;

impl<'de> Visitor<'de> for UniqueKeysVisitor {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_i64<E>(self, _: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_u64<E>(self, _: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_f64<E>(self, _: f64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_str<E>(self, _: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!("the key {key:?} appears twice")));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(UniqueKeys)
    }
}

/// A decimal written plainly: an optional `-`, digits, and digits after one `.` if any; and
/// exactly representable (no rounding of a number with too many digits).
pub fn decimal_text(text: &str) -> Result<Decimal, String> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) {
        return Err(format!("{text:?} is not a plain decimal number"));
    }
    Decimal::from_str_exact(text).map_err(|e| format!("{text:?} is beyond a decimal: {e}"))
}

/// A decimal string of any sign (a fee may be a rebate).
pub fn decimal<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
    let text = String::deserialize(d)?;
    decimal_text(&text).map_err(de::Error::custom)
}

/// A decimal string that is zero or more: a size, a balance, a volume.
pub fn non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
    let value = decimal(d)?;
    if value < Decimal::ZERO {
        return Err(de::Error::custom(format!("{value} is negative")));
    }
    Ok(value)
}

/// A decimal string above zero: an order's price or size, a fill's price or size.
pub fn positive<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
    let value = decimal(d)?;
    if value <= Decimal::ZERO {
        return Err(de::Error::custom(format!("{value} is not above zero")));
    }
    Ok(value)
}

/// A nullable decimal string that is zero or more when given. The key must be there (use it
/// without `#[serde(default)]`): only its value may be `null`.
pub fn nullable_non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decimal>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => match decimal_text(&text) {
            Ok(value) if value >= Decimal::ZERO => Ok(Some(value)),
            Ok(value) => Err(de::Error::custom(format!("{value} is negative"))),
            Err(e) => Err(de::Error::custom(e)),
        },
    }
}

/// A key whose presence matters: with `#[serde(default)]`, an absent key is `None` and a
/// present one `Some` of its value (which may itself be `null` when `T` is an `Option`).
pub fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[derive(Debug, Deserialize)]
    struct Amounts {
        #[serde(deserialize_with = "decimal")]
        fee: Decimal,
        #[serde(deserialize_with = "non_negative")]
        size: Decimal,
        #[serde(deserialize_with = "positive")]
        price: Decimal,
        #[serde(deserialize_with = "nullable_non_negative")]
        mid: Option<Decimal>,
        #[serde(default, deserialize_with = "present")]
        tif: Option<Option<String>>,
    }

    fn amounts(text: &str) -> Result<Amounts, Unreadable> {
        parse(text.as_bytes())
    }

    const GOOD: &str = r#"{"fee":"-0.01","size":"0.0","price":"97000.5","mid":null,"tif":null}"#;

    #[test]
    fn plain_decimal_strings_with_their_sign_read() {
        let a = amounts(GOOD).unwrap();
        assert_eq!((a.fee, a.size, a.price, a.mid), (dec!(-0.01), dec!(0), dec!(97000.5), None));
        assert_eq!(a.tif, Some(None), "present, null");
        let no_tif = amounts(&GOOD.replace(r#","tif":null"#, "")).unwrap();
        assert_eq!(no_tif.tif, None, "absent");
        let mid = amounts(&GOOD.replace(r#""mid":null"#, r#""mid":"18.62""#)).unwrap();
        assert_eq!(mid.mid, Some(dec!(18.62)));
        assert_eq!(decimal_text("00012.50"), Ok(dec!(12.5)));
    }

    #[test]
    fn anything_else_is_unreadable() {
        for (from, to) in [
            (r#""price":"97000.5""#, r#""price":"1e400""#),
            (r#""price":"97000.5""#, r#""price":"9.7e4""#),
            (r#""price":"97000.5""#, r#""price":97000.5"#),
            (r#""price":"97000.5""#, r#""price":"0""#),
            (r#""price":"97000.5""#, r#""price":"-0.0001""#),
            (r#""price":"97000.5""#, r#""price":"NaN""#),
            (r#""price":"97000.5""#, r#""price":"inf""#),
            (r#""price":"97000.5""#, r#""price":"+1""#),
            (r#""price":"97000.5""#, r#""price":"1_000""#),
            (r#""price":"97000.5""#, r#""price":" 1""#),
            (r#""price":"97000.5""#, r#""price":"1.""#),
            (r#""price":"97000.5""#, r#""price":".5""#),
            (r#""price":"97000.5""#, r#""price":"""#),
            (r#""price":"97000.5""#, r#""price":"99999999999999999999999999999999""#),
            (r#""price":"97000.5""#, r#""price":"0.000000000000000000000000000001""#),
            (r#""price":"97000.5""#, r#""price":null"#),
            (r#""size":"0.0""#, r#""size":"-0.0001""#),
            (r#""mid":null"#, r#""mid":"-1""#),
            (r#","mid":null"#, ""),
            (r#""fee":"-0.01""#, r#""fee":"--0.01""#),
            (r#""fee":"-0.01""#, r#""fee":"-0.01","fee":"0""#),
            (r#""tif":null"#, r#""tif":null,"tif":null"#),
        ] {
            assert!(GOOD.contains(from), "{from}");
            let text = GOOD.replacen(from, to, 1);
            assert!(amounts(&text).is_err(), "{text}");
        }
        for text in ["", " \n", "<html>502</html>", r#"{"fee":"-0.01""#, "[]", "{} {}"] {
            assert!(amounts(text).is_err(), "{text:?}");
        }
        let nested = r#"[{"a":{"b":1,"b":2}}]"#;
        let e = parse::<serde_json::Value>(nested.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("\"b\" appears twice"), "{e}");
    }

    #[test]
    fn unreadable_is_unknown_for_an_action_and_decode_for_a_read() {
        let e = amounts("").unwrap_err();
        assert_eq!(e.to_string(), "an empty answer");
        let action = e.clone().action("/exchange");
        assert!(action.is_unknown_outcome(), "{action:?}");
        assert!(action.to_string().contains("may have executed"), "{action}");
        assert!(matches!(e.read("/info orderStatus"), ExchangeError::Decode { .. }));
    }
}
