//! The definition of a trade's protection: its kind (an OCO list on the exchange, or a stop
//! the service watches beside a resting take-profit), the orders placed for it, whether they
//! are in place, and the client order id they are placed under — in one type whose invalid
//! combinations cannot be written. What each kind does (place, cancel, move the stop, settle,
//! reconcile) is its component's, behind the face in `execution::protector`: the face is the
//! only place outside this module that looks at the kind. How the protection is stored is
//! [`stored`]'s.

use rust_decimal::Decimal;

use super::ProtectionState;
use crate::config::StopPlacement;
use crate::exchange::OrderList;
use crate::exchange::OrderType;
use crate::exchange::feed::OrderUpdate;

mod stored;
pub(super) use stored::StoredProtection;

/// How an open trade is protected: where its stop lives, the orders placed for it, whether
/// they are in place, and the client order id they are (or will be) placed under.
#[derive(Debug, Clone, PartialEq)]
pub struct TradeProtection {
    /// Client order id of the protection (the OCO list, or the watched trade's take-profit),
    /// derived from the cause of the entry; a watched stop's exit uses it with an `X` suffix.
    client_id: Option<String>,
    kind: Kind,
}

/// The kinds of protection, each with the orders it places. Read outside this module by the
/// face of `execution::protector` only, which hands each kind to its component.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::execution) enum Kind {
    /// An OCO list; `stop_limit_px` is its stop leg's limit (the stop × 0.998 on the tick).
    Oco { stop_limit_px: Decimal, placement: Placement<OcoLegs> },
    /// A resting take-profit (its order id once placed); the stop is a level the service
    /// watches.
    Watched { placement: Placement<i64> },
}

/// Whether the orders `L` of a protection are in place.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::execution) enum Placement<L> {
    /// Being placed: nothing on the exchange yet (a restart in this state makes
    /// reconciliation look the protection up by its client id, then place it).
    Pending,
    /// In place.
    Protected(L),
    /// Not in place: placing failed (no orders), or the orders ended on the exchange without
    /// a fill (they are kept, so reconciliation knows to place anew under a fresh id).
    Unprotected { reason: String, legs: Option<L> },
}

impl<L> Placement<L> {
    pub(in crate::execution) fn legs(&self) -> Option<&L> {
        match self {
            Self::Protected(legs) => Some(legs),
            Self::Unprotected { legs, .. } => legs.as_ref(),
            Self::Pending => None,
        }
    }

    fn state(&self) -> ProtectionState {
        match self {
            Self::Pending => ProtectionState::Pending,
            Self::Protected(_) => ProtectionState::Protected,
            Self::Unprotected { reason, .. } => {
                ProtectionState::Unprotected { reason: reason.clone() }
            }
        }
    }

    fn unprotected(self, reason: String) -> Self {
        Self::Unprotected { reason, legs: self.into_legs() }
    }

    /// The same state without the orders (they ended; new ones get a fresh id).
    fn without_legs(self) -> Self {
        match self {
            Self::Unprotected { reason, .. } => Self::Unprotected { reason, legs: None },
            Self::Pending | Self::Protected(_) => Self::Pending,
        }
    }

    fn into_legs(self) -> Option<L> {
        match self {
            Self::Protected(legs) => Some(legs),
            Self::Unprotected { legs, .. } => legs,
            Self::Pending => None,
        }
    }
}

impl TradeProtection {
    /// The kind and its orders, for the face and the components.
    pub(in crate::execution) fn kind(&self) -> &Kind {
        &self.kind
    }

    /// The protection of a new trade, not placed yet: an OCO whose stop leg's limit is
    /// `stop_limit_px` where the stop lives on the exchange, else a watched stop.
    pub fn pending(stop: StopPlacement, stop_limit_px: Decimal, client_id: Option<String>) -> Self {
        let kind = match stop {
            StopPlacement::Exchange => Kind::Oco { stop_limit_px, placement: Placement::Pending },
            StopPlacement::Service => Kind::Watched { placement: Placement::Pending },
        };
        Self { client_id, kind }
    }

    /// Where the stop lives.
    pub fn placement(&self) -> StopPlacement {
        match self.kind {
            Kind::Oco { .. } => StopPlacement::Exchange,
            Kind::Watched { .. } => StopPlacement::Service,
        }
    }

    /// True when the service watches the stop (no stop order on the exchange).
    pub fn stop_watched(&self) -> bool {
        matches!(self.kind, Kind::Watched { .. })
    }

    /// Pending, protected, or unprotected with the reason.
    pub fn state(&self) -> ProtectionState {
        match &self.kind {
            Kind::Oco { placement, .. } => placement.state(),
            Kind::Watched { placement } => placement.state(),
        }
    }

    pub fn is_protected(&self) -> bool {
        self.state() == ProtectionState::Protected
    }

    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// True once orders were placed (in place, or ended on the exchange).
    pub fn has_legs(&self) -> bool {
        self.list_id().is_some() || self.take_profit_order_id().is_some()
    }

    /// The take-profit's order id on the exchange, once known.
    pub fn take_profit_order_id(&self) -> Option<i64> {
        match &self.kind {
            Kind::Oco { placement, .. } => placement.legs().and_then(|l| l.tp_order_id),
            Kind::Watched { placement } => placement.legs().copied(),
        }
    }

    /// The stop's order id on the exchange (none for a watched stop).
    pub fn stop_order_id(&self) -> Option<i64> {
        self.oco_legs().and_then(|l| l.sl_order_id)
    }

    /// The OCO list's id (none for a watched stop).
    pub fn list_id(&self) -> Option<i64> {
        self.oco_legs().map(|l| l.list_id)
    }

    fn oco_legs(&self) -> Option<&OcoLegs> {
        match &self.kind {
            Kind::Oco { placement, .. } => placement.legs(),
            Kind::Watched { .. } => None,
        }
    }

    /// True when `other` names the same orders (whatever their state).
    pub fn same_orders(&self, other: &Self) -> bool {
        (self.list_id(), self.take_profit_order_id(), self.stop_order_id())
            == (other.list_id(), other.take_profit_order_id(), other.stop_order_id())
    }

    /// What protects the trade, in the words of a report.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::Oco { .. } => "OCO",
            Kind::Watched { .. } => "take-profit (stop watched)",
        }
    }

    /// The orders that protect the trade, in the words of a report ("order list 7").
    pub fn orders_named(&self) -> String {
        match (self.list_id(), self.take_profit_order_id()) {
            (Some(list_id), _) => format!("order list {list_id}"),
            (None, Some(tp)) => format!("take-profit order {tp}"),
            (None, None) => "nothing".into(),
        }
    }

    /// Not in place because of `reason`; orders placed before are kept.
    pub fn unprotected(self, reason: String) -> Self {
        let kind = match self.kind {
            Kind::Oco { stop_limit_px, placement } => {
                Kind::Oco { stop_limit_px, placement: placement.unprotected(reason) }
            }
            Kind::Watched { placement } => {
                Kind::Watched { placement: placement.unprotected(reason) }
            }
        };
        Self { kind, ..self }
    }

    /// Nothing placed, to be placed anew under `client_id`.
    pub fn unplaced(self, client_id: String) -> Self {
        let kind = match self.kind {
            Kind::Oco { stop_limit_px, .. } => {
                Kind::Oco { stop_limit_px, placement: Placement::Pending }
            }
            Kind::Watched { .. } => Kind::Watched { placement: Placement::Pending },
        };
        Self { client_id: Some(client_id), kind }
    }

    /// The same state, with the orders that ended on the exchange forgotten and `client_id`
    /// for the new ones (their old id is journaled as placed).
    pub fn renewed(self, client_id: String) -> Self {
        let kind = match self.kind {
            Kind::Oco { stop_limit_px, placement } => {
                Kind::Oco { stop_limit_px, placement: placement.without_legs() }
            }
            Kind::Watched { placement } => Kind::Watched { placement: placement.without_legs() },
        };
        Self { client_id: Some(client_id), kind }
    }

    /// With the stop leg's limit at `stop_limit_px` (an OCO's; a watched stop has none).
    pub fn with_stop_limit(self, stop_limit_px: Decimal) -> Self {
        let kind = match self.kind {
            Kind::Oco { placement, .. } => Kind::Oco { stop_limit_px, placement },
            watched @ Kind::Watched { .. } => watched,
        };
        Self { kind, ..self }
    }

    /// Whether `update` (an order that is no longer open) ended one of these orders.
    pub(in crate::execution) fn ended_by(&self, update: &OrderUpdate) -> bool {
        update.list_id.is_some() && self.list_id() == update.list_id
            || self.take_profit_order_id() == Some(update.order_id)
            || self.stop_order_id() == Some(update.order_id)
    }

    /// The watched trade's take-profit, which rests alone on the book (not in a list).
    pub(in crate::execution) fn lone_take_profit(&self) -> Option<i64> {
        match &self.kind {
            Kind::Watched { placement } => placement.legs().copied(),
            Kind::Oco { .. } => None,
        }
    }
}

/// The orders of an OCO list on the exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OcoLegs {
    pub list_id: i64,
    pub tp_order_id: Option<i64>,
    pub sl_order_id: Option<i64>,
}

impl OcoLegs {
    /// The legs of `list`, found by their order types.
    pub fn of(list: &OrderList) -> Self {
        let leg = |wanted: OrderType| {
            list.orders.iter().find(|o| o.order_type == wanted).map(|o| o.order_id)
        };
        OcoLegs {
            list_id: list.order_list_id,
            tp_order_id: leg(OrderType::LimitMaker),
            sl_order_id: leg(OrderType::StopLossLimit).or_else(|| leg(OrderType::StopLoss)),
        }
    }
}

impl TradeProtection {
    /// An OCO list in place on the exchange (restored, adopted or made outside the service),
    /// under `client_id`, its stop leg's limit at `stop_limit_px`.
    pub fn list_in_place(client_id: Option<String>, stop_limit_px: Decimal, legs: OcoLegs) -> Self {
        let kind = Kind::Oco { stop_limit_px, placement: Placement::Protected(legs) };
        Self { client_id, kind }
    }

    /// A round trip made outside the service (history only): never protected by it, `reason`
    /// saying where the record came from; the list that sold it, if one did.
    pub fn made_outside(list_id: Option<i64>, reason: String) -> Self {
        let legs = list_id.map(|list_id| OcoLegs { list_id, tp_order_id: None, sl_order_id: None });
        let placement = Placement::Unprotected { reason, legs };
        Self { client_id: None, kind: Kind::Oco { stop_limit_px: Decimal::ZERO, placement } }
    }

    /// Protected by the OCO list found on the exchange. Only a trade whose stop lives on the
    /// exchange places lists; should one be found for a watched trade all the same, it
    /// protects the trade at its own stop leg's limit.
    pub(in crate::execution) fn protected_by_list(self, list: &OrderList) -> Self {
        let stop_limit_px = match &self.kind {
            Kind::Oco { stop_limit_px, .. } => *stop_limit_px,
            Kind::Watched { .. } => list
                .orders
                .iter()
                .find(|o| o.order_type == OrderType::StopLossLimit)
                .map_or(Decimal::ZERO, |o| o.price.0),
        };
        Self::list_in_place(self.client_id, stop_limit_px, OcoLegs::of(list))
    }

    /// Protected by the resting take-profit `order_id`, the stop watched.
    pub(in crate::execution) fn placed_take_profit(self, order_id: i64) -> Self {
        Self { kind: Kind::Watched { placement: Placement::Protected(order_id) }, ..self }
    }
}
