//! The signed actions as the exchange's `/exchange` endpoint takes them (`order`, `cancel`,
//! `cancelByCloid`) and the envelope around them.
//!
//! Field declaration order IS the wire order: the signature is taken over the msgpack
//! encoding of these values with named keys, and the exchange hashes its own decoding of the
//! JSON in exactly this order (`a, b, p, s, r, t, c` for an order). Optional keys are left
//! out, never `null`. Numbers travel as [`WireDecimal`], which always spells itself the
//! canonical way (no trailing zeros), so a signer cannot hash "2000.0" where the verifier
//! hashes "2000".

use std::fmt;
use std::str::FromStr;

use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::signing::Signature;

/// An action of the `/exchange` endpoint; `type` is the first key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Action {
    Order { orders: Vec<OrderWire>, grouping: Grouping },
    Cancel { cancels: Vec<CancelWire> },
    CancelByCloid { cancels: Vec<CancelByCloidWire> },
}

impl Action {
    /// How many orders or cancels the action carries (the exchange's batch length).
    pub fn batch_len(&self) -> usize {
        match self {
            Self::Order { orders, .. } => orders.len(),
            Self::Cancel { cancels } => cancels.len(),
            Self::CancelByCloid { cancels } => cancels.len(),
        }
    }

    /// A cancel (by order id or by cloid): exchange B's address budget gives cancels a larger
    /// cap than orders.
    pub fn is_cancel(&self) -> bool {
        !matches!(self, Self::Order { .. })
    }
}

/// How the orders of one `order` action relate; the service only sends `na`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Grouping {
    #[serde(rename = "na")]
    Na,
    #[serde(rename = "normalTpsl")]
    NormalTpsl,
    #[serde(rename = "positionTpsl")]
    PositionTpsl,
}

/// One order of an `order` action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderWire {
    /// Asset id (spot: 10000 + the pair's index).
    pub a: u32,
    /// True for a buy.
    pub b: bool,
    /// Limit price.
    pub p: WireDecimal,
    /// Size in base units.
    pub s: WireDecimal,
    /// Reduce-only (refused on spot).
    pub r: bool,
    pub t: OrderTypeWire,
    /// Client order id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<Cloid>,
}

/// `{"limit":{"tif":…}}` or `{"trigger":{"isMarket","triggerPx","tpsl"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OrderTypeWire {
    Limit {
        tif: Tif,
    },
    #[serde(rename_all = "camelCase")]
    Trigger {
        is_market: bool,
        trigger_px: WireDecimal,
        tpsl: String,
    },
}

/// Time in force of a limit order: `Gtc` rests, `Ioc` cancels what does not fill at once,
/// `Alo` (post-only) is refused rather than crossing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tif {
    Gtc,
    Ioc,
    Alo,
}

/// One cancel by order id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelWire {
    pub a: u32,
    pub o: u64,
}

/// One cancel by client order id (note the long key names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelByCloidWire {
    pub asset: u32,
    pub cloid: Cloid,
}

/// The body of `POST /exchange`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    pub action: Action,
    pub nonce: u64,
    pub signature: Signature,
    #[serde(default)]
    pub vault_address: Option<String>,
    #[serde(default)]
    pub expires_after: Option<u64>,
}

/// A client order id: 16 bytes, spelled `0x` + 32 lower-case hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cloid(pub [u8; 16]);

impl fmt::Display for Cloid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{}", hex::encode(self.0))
    }
}

impl FromStr for Cloid {
    type Err = String;

    /// `0x` and exactly 32 hex digits; anything else is not a client order id.
    fn from_str(s: &str) -> Result<Self, String> {
        let digits = s
            .strip_prefix("0x")
            .filter(|d| d.len() == 32)
            .ok_or_else(|| format!("cloid {s:?} is not 0x followed by 32 hex digits"))?;
        let mut bytes = [0u8; 16];
        hex::decode_to_slice(digits, &mut bytes)
            .map_err(|_| format!("cloid {s:?} is not 0x followed by 32 hex digits"))?;
        Ok(Self(bytes))
    }
}

impl Serialize for Cloid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Cloid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A price or size on the wire: a decimal string in its canonical spelling (see
/// [`crate::numbers::to_wire`]), whatever spelling it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WireDecimal(pub Decimal);

impl fmt::Display for WireDecimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::numbers::to_wire(self.0))
    }
}

impl Serialize for WireDecimal {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for WireDecimal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let value = Decimal::from_str(&text)
            .map_err(|_| serde::de::Error::custom(format!("{text:?} is not a decimal string")))?;
        Ok(Self(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_action_reads_and_writes_the_sdk_json() {
        let json = r#"{"type":"order","orders":[{"a":10107,"b":false,"p":"17.689","s":"1.5","r":false,"t":{"limit":{"tif":"Ioc"}},"c":"0x4d545f000000000000000000000000aa"}],"grouping":"na"}"#;
        let action: Action = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&action).unwrap(), json);
        assert_eq!(action.batch_len(), 1);
        let cancel = r#"{"type":"cancelByCloid","cancels":[{"asset":10107,"cloid":"0x4d545f000000000000000000000000aa"}]}"#;
        let action: Action = serde_json::from_str(cancel).unwrap();
        assert_eq!(serde_json::to_string(&action).unwrap(), cancel);
        let trigger = r#"{"type":"order","orders":[{"a":1,"b":true,"p":"100","s":"1","r":false,"t":{"trigger":{"isMarket":true,"triggerPx":"99","tpsl":"sl"}}}],"grouping":"na"}"#;
        let action: Action = serde_json::from_str(trigger).unwrap();
        assert_eq!(serde_json::to_string(&action).unwrap(), trigger);
    }

    #[test]
    fn numbers_are_always_spelled_canonically() {
        let w: WireDecimal = serde_json::from_str(r#""2000.0""#).unwrap();
        assert_eq!(serde_json::to_string(&w).unwrap(), r#""2000""#);
        assert!(serde_json::from_str::<WireDecimal>(r#""1e5x""#).is_err());
        assert!(serde_json::from_str::<WireDecimal>("12.5").is_err(), "a JSON number");
    }

    #[test]
    fn cloids_are_sixteen_bytes_of_lower_case_hex() {
        let c: Cloid = "0x4d545f000000000000000000000000aa".parse().unwrap();
        assert_eq!(c.0[..3], *b"MT_");
        assert_eq!(c.to_string(), "0x4d545f000000000000000000000000aa");
        assert!("4d545f000000000000000000000000aa".parse::<Cloid>().is_err());
        assert!("0x4d545f".parse::<Cloid>().is_err());
        assert!("0xzz545f000000000000000000000000aa".parse::<Cloid>().is_err());
    }
}
