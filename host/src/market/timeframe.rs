//! The one timeframe type: the kline intervals the service supports, spelled as the exchange
//! spells them (`15m`, `4h`, `1w`). Config, plugin manifests and the market area all parse
//! through [`Timeframe::from_str`]; the plugin contract (WIT) keeps strings on the wire and the
//! host converts at its edge.
//!
//! `1M` (calendar month) is left out on purpose: a month has no fixed length, so "how many
//! candles are new since the last one" is not a division, and no strategy of the spec reads
//! monthly candles. `1s` is left out too (no strategy scans seconds).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A kline interval with a fixed length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Timeframe {
    M1,
    M3,
    M5,
    M15,
    M30,
    H1,
    H2,
    H4,
    H6,
    H8,
    H12,
    D1,
    D3,
    W1,
}

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

impl Timeframe {
    /// Every supported timeframe, shortest first.
    pub const ALL: [Timeframe; 14] = [
        Timeframe::M1,
        Timeframe::M3,
        Timeframe::M5,
        Timeframe::M15,
        Timeframe::M30,
        Timeframe::H1,
        Timeframe::H2,
        Timeframe::H4,
        Timeframe::H6,
        Timeframe::H8,
        Timeframe::H12,
        Timeframe::D1,
        Timeframe::D3,
        Timeframe::W1,
    ];

    /// The exchange's spelling (`"4h"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Timeframe::M1 => "1m",
            Timeframe::M3 => "3m",
            Timeframe::M5 => "5m",
            Timeframe::M15 => "15m",
            Timeframe::M30 => "30m",
            Timeframe::H1 => "1h",
            Timeframe::H2 => "2h",
            Timeframe::H4 => "4h",
            Timeframe::H6 => "6h",
            Timeframe::H8 => "8h",
            Timeframe::H12 => "12h",
            Timeframe::D1 => "1d",
            Timeframe::D3 => "3d",
            Timeframe::W1 => "1w",
        }
    }

    /// Length of one candle in milliseconds (every supported timeframe has a fixed length).
    pub const fn duration_ms(self) -> i64 {
        match self {
            Timeframe::M1 => MINUTE,
            Timeframe::M3 => 3 * MINUTE,
            Timeframe::M5 => 5 * MINUTE,
            Timeframe::M15 => 15 * MINUTE,
            Timeframe::M30 => 30 * MINUTE,
            Timeframe::H1 => HOUR,
            Timeframe::H2 => 2 * HOUR,
            Timeframe::H4 => 4 * HOUR,
            Timeframe::H6 => 6 * HOUR,
            Timeframe::H8 => 8 * HOUR,
            Timeframe::H12 => 12 * HOUR,
            Timeframe::D1 => DAY,
            Timeframe::D3 => 3 * DAY,
            Timeframe::W1 => 7 * DAY,
        }
    }

    /// The supported spellings joined by `sep`, for error messages.
    pub fn list(sep: &str) -> String {
        Self::ALL.map(Timeframe::as_str).join(sep)
    }
}

/// An unknown timeframe; its message lists the supported ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown timeframe `{0}`; known: {list}", list = Timeframe::list(", "))]
pub struct UnknownTimeframe(pub String);

impl FromStr for Timeframe {
    type Err = UnknownTimeframe;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|t| t.as_str() == s).ok_or_else(|| UnknownTimeframe(s.into()))
    }
}

impl fmt::Display for Timeframe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Timeframe {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Timeframe {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_as_the_exchange_spells_it() {
        for tf in Timeframe::ALL {
            assert_eq!(tf.as_str().parse::<Timeframe>(), Ok(tf));
            assert_eq!(tf.to_string(), tf.as_str());
            assert_eq!(serde_json::to_string(&tf).unwrap(), format!("\"{tf}\""));
        }
        assert_eq!("4h".parse::<Timeframe>().unwrap().duration_ms(), 14_400_000);
        assert_eq!(Timeframe::W1.duration_ms(), 604_800_000);
        let err = "1M".parse::<Timeframe>().unwrap_err().to_string();
        assert!(err.starts_with("unknown timeframe `1M`; known: 1m, 3m,"), "{err}");
        assert!(serde_json::from_str::<Timeframe>("\"4H\"").is_err());
    }

    #[test]
    fn agrees_with_the_simulator_and_the_sdk_generator() {
        // The simulator (the exchange's side) and the SDK's test generator (the guest's side)
        // keep their own tables because they cannot depend on the host; this pins them to ours.
        for tf in Timeframe::ALL {
            assert_eq!(spotbot_sim::market::interval_ms(tf.as_str()), Some(tf.duration_ms()));
            assert_eq!(spotbot_sdk::testing::timeframe_ms(tf.as_str()), Some(tf.duration_ms()));
        }
    }
}
