//! What an entry is meant to become, decided before anything is sent: the symbol, the
//! strategy, the stop and target percentages and the client order ids of the entry and its
//! OCO. It travels in the journal with the entry, so a trade can be rebuilt and protected
//! after a crash between the fill and the OCO.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::trade::{Direction, TradeSource};

/// The longest client order id exchange A accepts.
const MAX_CLIENT_ID: usize = 36;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryPlan {
    pub symbol: String,
    /// Buy opens a long position; sell (manual LIMIT entries only) sells held coin and is
    /// protected by a mirrored OCO that buys it back.
    #[serde(default = "buy")]
    pub direction: Direction,
    /// Strategy name (`bot`).
    pub bot: String,
    pub sl_pct: Decimal,
    pub tp_pct: Decimal,
    pub source: TradeSource,
    /// What caused it, in words (journal and log).
    pub cause: String,
    pub entry_client_order_id: String,
    pub oco_client_order_id: String,
    /// Manual LIMIT entries: when the entry is cancelled if it has not filled (epoch ms).
    #[serde(default)]
    pub expires_ms: Option<i64>,
    /// The setup's tier (`normal`, `A+`, `A++`) when a strategy gave one: it scales the size
    /// by the strategy's `risk_*` multiplier.
    #[serde(default)]
    pub tier: Option<String>,
}

fn buy() -> Direction {
    Direction::Buy
}

impl EntryPlan {
    /// A plan whose order ids derive from `cause_id` (a signal id, or the request time for
    /// `POST /api/trade`): the same cause always produces the same ids.
    pub fn new(
        symbol: &str,
        bot: &str,
        sl_pct: Decimal,
        tp_pct: Decimal,
        source: TradeSource,
        cause_id: &str,
        cause: String,
    ) -> Self {
        // Manual LIMIT entries start with MT_ (spec: recovered from open orders by prefix).
        let (entry_prefix, oco_prefix) = match source {
            TradeSource::Signal => ("SE", "SO"),
            TradeSource::Manual => ("MT", "MO"),
            _ => ("TE", "TO"),
        };
        Self {
            symbol: symbol.to_string(),
            direction: Direction::Buy,
            bot: bot.to_string(),
            sl_pct,
            tp_pct,
            source,
            cause,
            entry_client_order_id: client_id(entry_prefix, cause_id, symbol),
            oco_client_order_id: client_id(oco_prefix, cause_id, symbol),
            expires_ms: None,
            tier: None,
        }
    }
}

/// `<prefix>_<id>_<SYMBOL>`, cut to the exchange's 36 characters (symbols are at most 20, ids
/// are short base-36 numbers, so nothing is cut in practice).
pub fn client_id(prefix: &str, id: &str, symbol: &str) -> String {
    let mut out = format!("{prefix}_{id}_{symbol}");
    out.truncate(MAX_CLIENT_ID);
    out
}

/// A new cause id: the time in base 36 and 4 random hex digits, so two causes in the same
/// millisecond (or on a test clock that stands still, or after a restart) never share order
/// ids — a shared id would make the journal treat the second as a retry of the first.
pub fn fresh_id(ms: i64) -> String {
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{}{}", time_id(ms), &random[..4])
}

/// A short id from a millisecond time: base 36, 8 characters until the year 2059.
fn time_id(ms: i64) -> String {
    let mut n = ms.max(0) as u64;
    let mut digits = Vec::new();
    loop {
        let d = (n % 36) as u8;
        digits.push(if d < 10 { b'0' + d } else { b'a' + d - 10 });
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_derive_from_the_cause_and_fit_the_exchange() {
        let a = EntryPlan::new(
            "BTCUSDT",
            "mr_combined",
            Decimal::ONE,
            Decimal::TWO,
            TradeSource::Signal,
            "mubbs7i8",
            "signal".into(),
        );
        assert_eq!(a.entry_client_order_id, "SE_mubbs7i8_BTCUSDT");
        assert_eq!(a.oco_client_order_id, "SO_mubbs7i8_BTCUSDT");
        let long = client_id("SO", "mvh9ufk0", "ABCDEFGHIJKLMNOPQRST");
        assert!(long.len() <= 36, "{long}");
        assert_eq!(time_id(0), "0");
        assert_eq!(time_id(35), "z");
        assert_eq!(time_id(1_790_000_000_000), "mubbs7i8");
        let (a, b) = (fresh_id(1), fresh_id(1));
        assert_ne!(a, b, "same millisecond, different causes");
        let longest = client_id("SX", &fresh_id(1_790_000_000_000), "ABCDEFGHIJKLMNOPQRST");
        assert!(longest.len() == 36 && longest.ends_with("_ABCDEFGHIJKLMNOPQRST"), "{longest}");
    }
}
