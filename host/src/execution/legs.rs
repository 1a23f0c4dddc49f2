//! How a trade is protected at the exchange: the orders its take-profit and stop-loss live in.
//!
//! The exchange adapter's capability and `[protection] stop` decide, when a trade opens, where
//! its stop lives ([`StopPlacement`]): one OCO order list on the book (exchange A's native bracket), or a
//! resting take-profit LIMIT while the service itself watches the stop and exits at market
//! when the price crosses it (`protection::watch`). Everything that touches a trade's
//! protection — placing, moving the stop, closing, settling an exit, reconciling — matches on
//! [`Legs`], never on loose order ids.

use serde::{Deserialize, Serialize};

pub use crate::config::StopPlacement;

/// The orders that protect an open trade at the exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Legs {
    /// One OCO order list: a LIMIT_MAKER take-profit and a STOP_LOSS_LIMIT stop.
    Oco { list_id: i64, tp_order_id: Option<i64>, sl_order_id: Option<i64> },
    /// A resting take-profit LIMIT; the stop is watched by the service (no order until it
    /// triggers, then one market exit with the trade's own client order id).
    Watched { tp_order_id: i64 },
}

impl Legs {
    pub fn take_profit_order_id(&self) -> Option<i64> {
        match self {
            Self::Oco { tp_order_id, .. } => *tp_order_id,
            Self::Watched { tp_order_id } => Some(*tp_order_id),
        }
    }

    /// The stop's order id on the exchange (none for a watched stop).
    pub fn stop_order_id(&self) -> Option<i64> {
        match self {
            Self::Oco { sl_order_id, .. } => *sl_order_id,
            Self::Watched { .. } => None,
        }
    }

    pub fn list_id(&self) -> Option<i64> {
        match self {
            Self::Oco { list_id, .. } => Some(*list_id),
            Self::Watched { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legs_are_stored_with_their_kind() {
        let watched = Legs::Watched { tp_order_id: 7 };
        let json = serde_json::to_value(&watched).unwrap();
        assert_eq!(json, serde_json::json!({"kind": "watched", "tp_order_id": 7}));
        assert_eq!(serde_json::from_value::<Legs>(json).unwrap(), watched);
        assert_eq!(watched.stop_order_id(), None);
        let oco = Legs::Oco { list_id: 1, tp_order_id: Some(2), sl_order_id: Some(3) };
        assert_eq!((oco.list_id(), oco.stop_order_id()), (Some(1), Some(3)));
    }
}
