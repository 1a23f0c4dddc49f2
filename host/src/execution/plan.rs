//! What an entry is meant to become, decided before anything is sent: the symbol, the
//! strategy, the stop and target percentages and the client order ids of the entry and its
//! OCO. It travels in the journal with the entry, so a trade can be rebuilt and protected
//! after a crash between the fill and the OCO.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::client_id::{ClientOrderId, Purpose};
use super::trade::{Direction, TradeSource};
use crate::config::Tier;

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
    pub tier: Option<Tier>,
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
        let (entry, protection) = match source {
            TradeSource::Signal => (Purpose::SignalEntry, Purpose::SignalProtection),
            TradeSource::Manual => (Purpose::ManualEntry, Purpose::ManualProtection),
            _ => (Purpose::TradeEntry, Purpose::TradeProtection),
        };
        Self {
            symbol: symbol.to_string(),
            direction: Direction::Buy,
            bot: bot.to_string(),
            sl_pct,
            tp_pct,
            source,
            cause,
            entry_client_order_id: ClientOrderId::new(entry, cause_id, symbol).into_string(),
            oco_client_order_id: ClientOrderId::new(protection, cause_id, symbol).into_string(),
            expires_ms: None,
            tier: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_derive_from_the_cause() {
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
    }
}
