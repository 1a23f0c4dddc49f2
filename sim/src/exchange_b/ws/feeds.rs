//! What a `subscription` object asks for ([`Feed`]): read with serde from the client's JSON,
//! written back with its defaults filled in (the acknowledgement echoes it so, `type` first),
//! and checked against the listing. Two subscriptions are the same when their feeds are equal
//! (users compare case-insensitively, as addresses).

use crate::exchange_b::info::{INTERVALS, address};
use crate::exchange_b::listing::Listing;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use spotbot_exchange_b_protocol::Address;

fn display<S: Serializer>(a: &Address, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(a)
}

/// One subscription. Optional fields the simulator does not act on (`dex`, `nSigFigs`,
/// `mantissa`, `fast`) are accepted and left out of the echo.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Feed {
    AllMids {},
    Bbo {
        coin: String,
    },
    L2Book {
        coin: String,
    },
    Trades {
        coin: String,
    },
    Candle {
        interval: String,
        coin: String,
    },
    OrderUpdates {
        #[serde(deserialize_with = "address", serialize_with = "display")]
        user: Address,
    },
    #[serde(rename_all = "camelCase")]
    UserFills {
        #[serde(deserialize_with = "address", serialize_with = "display")]
        user: Address,
        /// Accepted and echoed; fills are never aggregated.
        #[serde(default)]
        aggregate_by_time: bool,
    },
    UserEvents {
        #[serde(deserialize_with = "address", serialize_with = "display")]
        user: Address,
    },
    SpotState {
        #[serde(deserialize_with = "address", serialize_with = "display")]
        user: Address,
    },
}

impl Feed {
    /// The subscription the client sent, or the simulator's text for one it cannot read.
    pub fn parse(subscription: Option<&Value>) -> Result<Self, String> {
        let Some(v) = subscription else {
            return Err(
                "Error parsing JSON into valid websocket request: missing subscription".to_string()
            );
        };
        serde_json::from_value(v.clone())
            .map_err(|e| format!("Error parsing JSON into valid websocket request: {v} ({e})"))
    }

    /// The account a user feed follows.
    pub fn user(&self) -> Option<Address> {
        match self {
            Self::OrderUpdates { user }
            | Self::UserFills { user, .. }
            | Self::UserEvents { user }
            | Self::SpotState { user } => Some(*user),
            _ => None,
        }
    }

    /// Refuses a coin that is not a listed pair and an interval exchange B does not serve.
    pub fn check(&self, l: &Listing) -> Result<(), String> {
        let coin = match self {
            Self::Bbo { coin } | Self::L2Book { coin } | Self::Trades { coin } => coin,
            Self::Candle { coin, interval } => {
                if !INTERVALS.contains(&interval.as_str()) {
                    return Err(format!("Invalid subscription {}: unknown interval", self.json()));
                }
                coin
            }
            _ => return Ok(()),
        };
        match l.pair_by_coin(coin) {
            Some(_) => Ok(()),
            None => Err(format!("Invalid subscription {}: unknown coin", self.json())),
        }
    }

    /// The subscription as the server writes it: `type` first, defaults filled in.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_filled_in_and_users_compare_without_case() {
        let user = "0x14791697260E4c9A71f18484C9f997B308e59325";
        let a = Feed::parse(Some(&json!({"type": "userFills", "user": user}))).unwrap();
        assert_eq!(
            a.json(),
            r#"{"type":"userFills","user":"0x14791697260e4c9a71f18484c9f997b308e59325","aggregateByTime":false}"#
        );
        let b = Feed::parse(Some(&json!({"type": "userFills", "user": user.to_lowercase()})));
        assert_eq!(b.unwrap(), a);
        let candle = json!({"type": "candle", "coin": "@1", "interval": "30m"});
        let candle = Feed::parse(Some(&candle)).unwrap();
        assert_eq!(candle.json(), r#"{"type":"candle","interval":"30m","coin":"@1"}"#);
        assert!(Feed::parse(Some(&json!({"type": "nope"}))).is_err());
        assert!(Feed::parse(Some(&json!({"type": "bbo"}))).is_err());
    }
}
