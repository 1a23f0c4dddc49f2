//! How a trade's protection is stored: the flat fields every version of the service wrote
//! beside the trade's own (`stop`, `legs`, `sl_limit_px`, `protection_client_id`,
//! `protection`) — before `legs` existed, the OCO's loose ids (`oco_list_id`, `sl_oid`,
//! `tp_oid`, `oco_client_order_id`). Records read and write as before; only
//! [`TradeProtection`] is used in memory.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{Kind, OcoLegs, Placement, TradeProtection};
use crate::config::StopPlacement;
use crate::execution::trade::ProtectionState;

/// The stored protection fields of a trade record (flattened into it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::execution::trade) struct StoredProtection {
    #[serde(default = "on_the_exchange")]
    stop: StopPlacement,
    #[serde(default)]
    legs: Option<StoredLegs>,
    #[serde(default, skip_serializing)]
    oco_list_id: Option<i64>,
    #[serde(default, skip_serializing)]
    sl_oid: Option<i64>,
    #[serde(default, skip_serializing)]
    tp_oid: Option<i64>,
    sl_limit_px: Decimal,
    #[serde(default, alias = "oco_client_order_id")]
    protection_client_id: Option<String>,
    protection: ProtectionState,
}

/// The orders of a protection as stored, tagged with their kind.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum StoredLegs {
    Oco { list_id: i64, tp_order_id: Option<i64>, sl_order_id: Option<i64> },
    Watched { tp_order_id: i64 },
}

fn on_the_exchange() -> StopPlacement {
    StopPlacement::Exchange
}

/// The placement a stored state and its orders describe. A record cannot be protected
/// without orders, nor pending with some; such a record (none is ever written) reads as
/// pending, so reconciliation looks its protection up by its client id before placing any.
fn placement<L>(state: ProtectionState, legs: Option<L>) -> Placement<L> {
    match (state, legs) {
        (ProtectionState::Protected, Some(legs)) => Placement::Protected(legs),
        (ProtectionState::Protected | ProtectionState::Pending, _) => Placement::Pending,
        (ProtectionState::Unprotected { reason }, legs) => Placement::Unprotected { reason, legs },
    }
}

impl From<StoredProtection> for TradeProtection {
    fn from(s: StoredProtection) -> Self {
        let legacy = s.oco_list_id.map(|list_id| StoredLegs::Oco {
            list_id,
            tp_order_id: s.tp_oid,
            sl_order_id: s.sl_oid,
        });
        // The orders placed decide the kind; without any, where the stop was to live.
        let kind = match (s.legs.or(legacy), s.stop) {
            (Some(StoredLegs::Oco { list_id, tp_order_id, sl_order_id }), _) => {
                let legs = OcoLegs { list_id, tp_order_id, sl_order_id };
                Kind::Oco {
                    stop_limit_px: s.sl_limit_px,
                    placement: placement(s.protection, Some(legs)),
                }
            }
            (Some(StoredLegs::Watched { tp_order_id }), _) => {
                Kind::Watched { placement: placement(s.protection, Some(tp_order_id)) }
            }
            (None, StopPlacement::Exchange) => {
                Kind::Oco { stop_limit_px: s.sl_limit_px, placement: placement(s.protection, None) }
            }
            (None, StopPlacement::Service) => {
                Kind::Watched { placement: placement(s.protection, None) }
            }
        };
        TradeProtection { client_id: s.protection_client_id, kind }
    }
}

impl From<&TradeProtection> for StoredProtection {
    fn from(p: &TradeProtection) -> Self {
        let (legs, sl_limit_px) = match &p.kind {
            Kind::Oco { stop_limit_px, placement } => (
                placement.legs().map(|l| StoredLegs::Oco {
                    list_id: l.list_id,
                    tp_order_id: l.tp_order_id,
                    sl_order_id: l.sl_order_id,
                }),
                *stop_limit_px,
            ),
            Kind::Watched { placement } => {
                (placement.legs().map(|tp| StoredLegs::Watched { tp_order_id: *tp }), Decimal::ZERO)
            }
        };
        StoredProtection {
            stop: p.placement(),
            legs,
            oco_list_id: None,
            sl_oid: None,
            tp_oid: None,
            sl_limit_px,
            protection_client_id: p.client_id.clone(),
            protection: p.state(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: serde_json::Value) -> TradeProtection {
        serde_json::from_value::<StoredProtection>(json).unwrap().into()
    }

    #[test]
    fn orders_are_stored_with_their_kind_and_read_back() {
        let watched = read(serde_json::json!({
            "stop": "service", "legs": {"kind": "watched", "tp_order_id": 7},
            "sl_limit_px": "0", "protection_client_id": "SO_a_ETHUSDT",
            "protection": {"state": "protected"}
        }));
        assert_eq!(watched.take_profit_order_id(), Some(7));
        assert_eq!((watched.stop_order_id(), watched.list_id()), (None, None));
        let json = serde_json::to_value(StoredProtection::from(&watched)).unwrap();
        assert_eq!(json["legs"], serde_json::json!({"kind": "watched", "tp_order_id": 7}));
        assert_eq!(read(json), watched);
    }

    #[test]
    fn a_record_that_says_protected_without_orders_reads_as_pending() {
        let p = read(serde_json::json!({
            "stop": "exchange", "sl_limit_px": "2934", "protection": {"state": "protected"}
        }));
        assert_eq!(p.state(), ProtectionState::Pending);
        assert!(!p.has_legs());
    }

    #[test]
    fn a_watched_stop_keeps_no_stop_limit() {
        let p = TradeProtection::pending(StopPlacement::Service, Decimal::ONE, None);
        let stored = StoredProtection::from(&p.with_stop_limit(Decimal::TWO));
        assert_eq!(stored.sl_limit_px, Decimal::ZERO);
    }
}
