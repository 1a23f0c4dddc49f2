//! The link task: one connection at a time, both subscriptions on it, events out on the feed,
//! pings in, silence and refusals out — and a new connection after a backoff when it ends.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rust_decimal::Decimal;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

use super::StreamSettings;
use super::wire::{self, Frame};
use crate::clock::SharedClock;
use crate::exchange::exchange_b::ExchangeBClient;
use crate::exchange::exchange_b::symbols::SymbolMap;
use crate::exchange::exchange_b::wire::OrderWithStatus;
use crate::exchange::feed::{ExchangeEvent, Feed, Link, LinkState};
use crate::exchange::links::Backoff;

const ALL_MIDS: &str = "allMids";
const ORDER_UPDATES: &str = "orderUpdates";
/// How often the link takes the client's symbol map again (pairs listed since; a read of
/// spotMeta when the client's copy is older than its `meta_ttl`, at most this often if the
/// read fails).
const MAP_EVERY: Duration = Duration::from_secs(10);

/// Keeps the connection up for as long as the service runs.
pub(super) async fn run(
    feed: Arc<Feed>,
    settings: StreamSettings,
    client: Arc<ExchangeBClient>,
    clock: SharedClock,
) {
    let mut backoff = Backoff::new(settings.max_backoff);
    let user = client.account().map(|a| a.to_string());
    loop {
        feed.set_link(Link::Prices, LinkState::Reconnecting);
        if user.is_some() {
            feed.set_link(Link::Account, LinkState::Reconnecting);
        }
        let session = Session { feed: &feed, settings: &settings, client: &client, clock: &clock };
        if let Err(why) = session.run(user.as_deref(), &mut backoff).await {
            tracing::warn!(%why, "exchange B stream down; the polled path covers it");
        }
        backoff.wait().await;
    }
}

struct Session<'a> {
    feed: &'a Feed,
    settings: &'a StreamSettings,
    client: &'a ExchangeBClient,
    clock: &'a SharedClock,
}

impl Session<'_> {
    /// One connection: subscribe to the mids, and to the orders of `user` when there is one,
    /// then pass events on until it ends. The backoff starts over once both are acknowledged.
    async fn run(&self, user: Option<&str>, backoff: &mut Backoff) -> Result<(), String> {
        let mut map = self.client.symbol_map().await.map_err(|e| format!("listing: {e}"))?;
        let mut map_taken = Instant::now();
        let (mut ws, _) = tokio_tungstenite::connect_async(self.settings.url.as_str())
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let mut pending = vec![ALL_MIDS];
        let mut requests = vec![wire::subscribe(serde_json::json!({"type": ALL_MIDS}))];
        if let Some(user) = user {
            pending.push(ORDER_UPDATES);
            requests
                .push(wire::subscribe(serde_json::json!({"type": ORDER_UPDATES, "user": user})));
        }
        for request in requests {
            ws.send(Message::text(request)).await.map_err(|e| format!("send: {e}"))?;
        }
        let silence = self.settings.silence;
        // The subscriptions must be answered within the silence limit, pings or not.
        let answer_by = Instant::now() + silence;
        let mut last_heard = Instant::now();
        let every = self.settings.ping_every;
        let mut ping = tokio::time::interval_at(Instant::now() + every, every);
        let mut watched = self.feed.watched_symbols();
        let mut following = watched.borrow_and_update().clone();
        // The last mids heard: a symbol watched from now on gets its price at once, not at
        // the next push (pushes may come only when a mid changes).
        let mut last_mids = HashMap::new();
        loop {
            let deadline = if pending.is_empty() { last_heard + silence } else { answer_by };
            let frame = tokio::select! {
                _ = ping.tick() => {
                    let sent = ws.send(Message::text(wire::PING)).await;
                    sent.map_err(|e| format!("send: {e}"))?;
                    continue;
                }
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(if pending.is_empty() {
                        "silent".into()
                    } else {
                        format!("{pending:?} not acknowledged")
                    });
                }
                frame = ws.next() => frame,
                changed = watched.changed() => {
                    changed.map_err(|_| "the service is stopping".to_string())?;
                    let now_watched = watched.borrow_and_update().clone();
                    let added = now_watched.difference(&following).cloned().collect();
                    for e in prices(&map, &added, &last_mids, self.clock.now_ms()) {
                        self.feed.publish(e);
                    }
                    following = now_watched;
                    continue;
                }
            };
            last_heard = Instant::now();
            if map_taken.elapsed() >= MAP_EVERY {
                map = self.client.symbol_map().await.unwrap_or(map);
                map_taken = Instant::now();
            }
            let text = match frame {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(_))) | None => return Err("closed by the server".into()),
                Some(Err(e)) => return Err(format!("read: {e}")),
                Some(Ok(_)) => continue, // WebSocket pings (answered by tungstenite) and pongs
            };
            match wire::frame(text.as_str()) {
                Frame::Subscribed { kind, user: acked } => {
                    let link = match kind.as_str() {
                        ALL_MIDS => Link::Prices,
                        ORDER_UPDATES if acked.as_deref() == user => Link::Account,
                        _ => continue,
                    };
                    pending.retain(|p| *p != kind);
                    self.feed.set_link(link, LinkState::Live);
                    if link == Link::Account {
                        self.feed.publish(ExchangeEvent::CaughtUp);
                    }
                    if pending.is_empty() {
                        backoff.reset();
                    }
                }
                Frame::Error(text) if !pending.is_empty() => {
                    return Err(format!("subscription refused: {text}"));
                }
                Frame::Error(text) => tracing::warn!(%text, "exchange B stream error"),
                Frame::Mids(mids) => {
                    let now = self.clock.now_ms();
                    for e in prices(&map, &following, &mids, now) {
                        self.feed.publish(e);
                    }
                    last_mids = mids;
                }
                Frame::Orders(updates) => {
                    for e in orders(self.client, &map, &updates) {
                        self.feed.publish(e);
                    }
                }
                Frame::Pong | Frame::Ignored => {}
            }
        }
    }
}

/// The prices of the watched symbols among `mids` (coin → mid), at `now`.
fn prices(
    map: &SymbolMap,
    watched: &BTreeSet<String>,
    mids: &HashMap<String, Decimal>,
    now: i64,
) -> Vec<ExchangeEvent> {
    watched
        .iter()
        .filter_map(|symbol| {
            let price = *mids.get(&map.pair(symbol)?.coin)?;
            Some(ExchangeEvent::Price { symbol: symbol.clone(), price, time_ms: now })
        })
        .collect()
}

/// The order updates of the pairs the service trades.
fn orders(
    client: &ExchangeBClient,
    map: &SymbolMap,
    updates: &[OrderWithStatus],
) -> Vec<ExchangeEvent> {
    updates
        .iter()
        .filter_map(|u| match client.order_update(map, u) {
            Ok(update) => update.map(ExchangeEvent::Order),
            Err(err) => {
                tracing::warn!(%err, oid = u.order.oid, "exchange B order update not read");
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::OrderStatus;
    use crate::exchange::exchange_b::ClientConfig;
    use crate::exchange::exchange_b::cloid::cloid_of;
    use crate::exchange::exchange_b::stream::wire::tests::{TP_FILLED, TP_OPEN};
    use crate::exchange::exchange_b::wire::fixtures;
    use crate::exchange::feed::OrderUpdate;
    use rust_decimal_macros::dec;
    use spotbot_exchange_b_protocol::Network;

    fn map() -> SymbolMap {
        SymbolMap::from_meta(&serde_json::from_str(fixtures::SPOT_META).unwrap())
    }

    fn client() -> ExchangeBClient {
        let config = ClientConfig::new("http://127.0.0.1:9", Network::Testnet);
        let clock: SharedClock = Arc::new(crate::clock::SystemClock);
        ExchangeBClient::new(config, None, None, clock, crate::metrics::Metrics::default()).unwrap()
    }

    /// `frame` (an `orderUpdates` frame of the reference) with its coin set to `@142` (BTCUSDT
    /// in the fixture listing) and its cloid to `cloid`.
    fn on_btc(frame: &str, cloid: &str) -> Vec<OrderWithStatus> {
        let text =
            frame.replace("@107", "@142").replace("0x4d545f000000000000000000000000aa", cloid);
        let Frame::Orders(updates) = wire::frame(&text) else { panic!("{text}") };
        updates
    }

    #[test]
    fn order_updates_carry_the_service_s_id_the_symbol_and_what_was_filled() {
        let c = client();
        c.learn_client_ids(["TO_abc_BTCUSDT".to_string()]);
        let known = cloid_of("TO_abc_BTCUSDT").to_string();
        let filled = orders(&c, &map(), &on_btc(TP_FILLED, &known));
        let expected = OrderUpdate {
            symbol: "BTCUSDT".into(),
            order_id: 59071663721,
            client_order_id: "TO_abc_BTCUSDT".into(),
            list_id: None,
            status: OrderStatus::Filled,
            executed_qty: dec!(43.84),
            time_ms: 1750000600000,
        };
        assert_eq!(filled, [ExchangeEvent::Order(expected)]);

        let unknown = cloid_of("someone else").to_string();
        let [ExchangeEvent::Order(open)] = &orders(&c, &map(), &on_btc(TP_OPEN, &unknown))[..]
        else {
            panic!()
        };
        assert_eq!(open.client_order_id, unknown, "an unknown cloid shows as hex");
        assert_eq!((open.status, open.executed_qty), (OrderStatus::New, dec!(0)));

        let Frame::Orders(elsewhere) = wire::frame(TP_FILLED) else { panic!() };
        assert!(orders(&c, &map(), &elsewhere).is_empty(), "@107 is no pair of the service");
    }

    #[test]
    fn only_watched_symbols_get_prices() {
        let mids: HashMap<String, Decimal> =
            [("@142", dec!(97123.5)), ("@151", dec!(3321.45)), ("@107", dec!(18.62))]
                .into_iter()
                .map(|(c, p)| (c.to_string(), p))
                .collect();
        let watched: BTreeSet<String> = ["BTCUSDT", "PURRUSDT"].map(String::from).into();
        let events = prices(&map(), &watched, &mids, 7);
        let btc =
            ExchangeEvent::Price { symbol: "BTCUSDT".into(), price: dec!(97123.5), time_ms: 7 };
        assert_eq!(events, [btc], "ETH is not watched; PURR has no mid");
    }
}
