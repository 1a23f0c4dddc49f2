//! What the exchange pushes, in the host's own terms: order updates and last prices from the
//! exchange's streams, plus a "caught up" marker after every (re)subscription, on one
//! broadcast channel the rest of the host consumes. Nothing outside `exchange/` sees the
//! streams' wire; an exchange adapter's stream tasks publish here and report whether each
//! link is live, so protection knows when to fall back to polling.

use std::collections::BTreeSet;

use rust_decimal::Decimal;
use serde::Serialize;
use tokio::sync::{broadcast, watch};
use utoipa::ToSchema;

use super::OrderStatus;

/// One event from the exchange.
#[derive(Debug, Clone, PartialEq)]
pub enum ExchangeEvent {
    /// An order changed at the exchange: placed, (partly) filled, cancelled or expired.
    Order(OrderUpdate),
    /// A trade on the market: the symbol's last price.
    Price { symbol: String, price: Decimal, time_ms: i64 },
    /// The account's stream (re)subscribed. Whatever happened while it was down was not
    /// pushed, so consumers catch up once through the polled path.
    CaughtUp,
}

/// An order's state after a change, as the account stream reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderUpdate {
    pub symbol: String,
    pub order_id: i64,
    pub client_order_id: String,
    /// The order list it belongs to, if any.
    pub list_id: Option<i64>,
    pub status: OrderStatus,
    /// Cumulative filled base quantity.
    pub executed_qty: Decimal,
    pub time_ms: i64,
}

/// The state of one stream link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkState {
    /// Not used (streams off, or nothing to watch).
    Off,
    /// Connecting or reconnecting; the polled path covers what it would carry.
    Reconnecting,
    /// Connected, subscribed and heard from recently.
    Live,
}

/// Both links of an exchange's streams, as `GET /api/health` shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct FeedStatus {
    /// The account's order updates.
    pub account: LinkState,
    /// Last prices of the symbols with open trades.
    pub prices: LinkState,
    /// Reconnects since the service started (both links).
    pub reconnects: u64,
}

/// The host's end of an exchange's streams. Cheap to share (`Arc`).
#[derive(Debug)]
pub struct Feed {
    events: broadcast::Sender<ExchangeEvent>,
    status: watch::Sender<FeedStatus>,
    symbols: watch::Sender<BTreeSet<String>>,
}

impl Default for Feed {
    fn default() -> Self {
        Self {
            events: broadcast::channel(1024).0,
            status: watch::channel(FeedStatus {
                account: LinkState::Off,
                prices: LinkState::Off,
                reconnects: 0,
            })
            .0,
            symbols: watch::channel(BTreeSet::new()).0,
        }
    }
}

/// Which link a status change is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    Account,
    Prices,
}

impl Feed {
    /// Every event from now on. A receiver that falls too far behind gets `Lagged` and should
    /// catch up through the polled path.
    pub fn subscribe(&self) -> broadcast::Receiver<ExchangeEvent> {
        self.events.subscribe()
    }

    pub fn status(&self) -> FeedStatus {
        self.status.borrow().clone()
    }

    /// The links' state and its changes (for the dashboard's live view).
    pub fn status_changes(&self) -> watch::Receiver<FeedStatus> {
        self.status.subscribe()
    }

    /// Whether the account's order updates arrive live.
    pub fn account_live(&self) -> bool {
        self.status().account == LinkState::Live
    }

    /// Whether prices arrive live.
    pub fn prices_live(&self) -> bool {
        self.status().prices == LinkState::Live
    }

    /// Sets the symbols whose prices the price link follows.
    pub fn watch_symbols(&self, symbols: BTreeSet<String>) {
        self.symbols.send_if_modified(|s| {
            let changed = *s != symbols;
            *s = symbols;
            changed
        });
    }

    /// The watched symbols, and their changes (for the price link's task).
    pub fn watched_symbols(&self) -> watch::Receiver<BTreeSet<String>> {
        self.symbols.subscribe()
    }

    /// Publishes an event (nobody listening is fine).
    pub fn publish(&self, event: ExchangeEvent) {
        let _ = self.events.send(event);
    }

    /// Records a link's new state; going from live to anything else counts a reconnect.
    pub fn set_link(&self, link: Link, state: LinkState) {
        self.status.send_if_modified(|status| {
            let slot = match link {
                Link::Account => &mut status.account,
                Link::Prices => &mut status.prices,
            };
            let was = std::mem::replace(slot, state);
            if was == LinkState::Live && state != LinkState::Live {
                status.reconnects += 1;
            }
            was != state
        });
    }
}
