//! One client's conversation on exchange B's WebSocket, without the socket: its messages
//! (`subscribe`, `unsubscribe`, `ping`, `post`) and the messages its subscriptions have due at
//! each tick. Its subscriptions hold places in the IP's limits until it ends.

use super::feeds::Feed;
use super::{market, post, user};
use crate::core::{EventKind, OrderChange, Trade};
use crate::exchange_b::listing::Listing;
use crate::state::Sim;
use crate::state::exchange_b::refused::RefusedOrder;
use serde_json::{Value, json};
use std::net::IpAddr;
use std::time::Duration;
use tokio::time::Instant;

/// `l2Book` snapshots of one subscription are at least this far apart.
const BOOK_INTERVAL: Duration = Duration::from_millis(500);

/// One subscription of the connection.
struct Sub {
    feed: Feed,
    /// Account events from this position of the core's log on are its.
    since: u64,
    /// Refused orders from this position of their log on are its.
    refused_since: usize,
    /// What was pushed last (market feeds and `spotState` push on a change).
    last: Option<Value>,
    last_push: Option<Instant>,
}

pub struct Session {
    sim: Sim,
    ip: IpAddr,
    subs: Vec<Sub>,
    /// The next core event and refused order this connection has not looked at.
    cursor: u64,
    refused_cursor: usize,
}

/// An `error` message.
fn error(text: &str) -> String {
    user::message("error", &text)
}

/// The text for a message that is no request.
fn unreadable(text: &str) -> String {
    error(&format!("Error parsing JSON into valid websocket request: {text}"))
}

/// What one subscription has due in a poll: a message, or fills of its coin for `trades`
/// (written once the engine is released: they need the address book).
enum Due {
    Message(String),
    Trades(Vec<Trade>),
}

impl Session {
    pub fn open(sim: Sim, ip: IpAddr) -> Self {
        let cursor = sim.engine().event_count();
        let refused_cursor = sim.exchange_b().refused().count();
        Self { sim, ip, subs: Vec::new(), cursor, refused_cursor }
    }

    /// The answers to one text message of the client.
    pub fn on_text(&mut self, text: &str) -> Vec<String> {
        let state = self.sim.exchange_b();
        let limit = state.ws_limits().message(self.ip, self.sim.now_ms(), &state.ws);
        if let Err(text) = limit {
            return vec![error(&text)];
        }
        let Ok(req) = serde_json::from_str::<Value>(text) else { return vec![unreadable(text)] };
        match req.get("method").and_then(Value::as_str) {
            Some("ping") => vec![r#"{"channel":"pong"}"#.to_string()],
            Some("subscribe") => self.subscribe(req.get("subscription")),
            Some("unsubscribe") => self.unsubscribe(req.get("subscription")),
            Some("post") => vec![post::answer(&self.sim, &req).unwrap_or_else(|| unreadable(text))],
            _ => vec![unreadable(text)],
        }
    }

    fn subscribe(&mut self, subscription: Option<&Value>) -> Vec<String> {
        let feed = match Feed::parse(subscription) {
            Ok(f) => f,
            Err(text) => return vec![error(&text)],
        };
        if self.subs.iter().any(|s| s.feed == feed) {
            return vec![error(&format!("Already subscribed: {}", feed.json()))];
        }
        let listed = feed.check(&Listing::new(&self.sim.engine().rules));
        let state = self.sim.exchange_b();
        let taken =
            listed.and_then(|()| state.ws_limits().subscribe(self.ip, feed.user(), &state.ws));
        if let Err(text) = taken {
            return vec![error(&text)];
        }
        let account = feed.user().and_then(|u| state.wallets().user(&u));
        let refused_since = state.refused().count();
        let now = self.sim.now_ms();
        let mut e = self.sim.engine();
        e.catch_up(now);
        let mut frames = vec![ack("subscribe", &feed)];
        if let Feed::UserFills { user, .. } = feed {
            frames.push(user::snapshot(&e, &Listing::new(&e.rules), user, account));
        }
        let since = e.event_count();
        self.subs.push(Sub { feed, since, refused_since, last: None, last_push: None });
        frames
    }

    fn unsubscribe(&mut self, subscription: Option<&Value>) -> Vec<String> {
        let feed = match Feed::parse(subscription) {
            Ok(f) => f,
            Err(text) => return vec![error(&text)],
        };
        let Some(i) = self.subs.iter().position(|s| s.feed == feed) else {
            return vec![error(&format!("Already unsubscribed: {}", feed.json()))];
        };
        self.subs.remove(i);
        self.sim.exchange_b().ws_limits().release(self.ip, feed.user());
        vec![ack("unsubscribe", &feed)]
    }

    /// The messages due now: the engine catches up with the market first, so a resting order
    /// the market reaches fills without any request.
    pub fn poll(&mut self) -> Vec<String> {
        let state = self.sim.exchange_b();
        let accounts: Vec<Option<usize>> = {
            let wallets = state.wallets();
            self.subs.iter().map(|s| s.feed.user().and_then(|u| wallets.user(&u))).collect()
        };
        let refused_from = self.refused_cursor;
        let refused: Vec<RefusedOrder> = {
            let log = state.refused();
            self.refused_cursor = log.count();
            log.since(refused_from).to_vec()
        };
        let now = self.sim.now_ms();
        let mut due = Vec::new();
        {
            let mut engine = self.sim.engine();
            engine.catch_up(now);
            let e = &*engine;
            let l = Listing::new(&e.rules);
            let events = e.events_since(self.cursor);
            self.cursor = e.event_count();
            for (sub, account) in self.subs.iter_mut().zip(accounts) {
                let mine = events.iter().filter(|ev| ev.seq >= sub.since);
                let of_account = mine.clone().filter(|ev| Some(ev.account()) == account);
                match &sub.feed {
                    Feed::OrderUpdates { .. } => {
                        let mut updates: Vec<Value> =
                            of_account.filter_map(|ev| user::order_update(&l, ev)).collect();
                        let refused = refused.iter().enumerate().filter(|(i, r)| {
                            refused_from + i >= sub.refused_since && Some(r.account) == account
                        });
                        updates.extend(refused.map(|(_, r)| user::refused_update(r)));
                        if !updates.is_empty() {
                            due.push(Due::Message(user::message("orderUpdates", &updates)));
                        }
                    }
                    Feed::UserFills { user, .. } => {
                        let fills: Vec<_> =
                            of_account.filter_map(|ev| user::fill(e, &l, ev)).collect();
                        if !fills.is_empty() {
                            due.push(Due::Message(user::fills_message(*user, &fills, false)));
                        }
                    }
                    Feed::UserEvents { .. } => {
                        let fills: Vec<_> =
                            of_account.clone().filter_map(|ev| user::fill(e, &l, ev)).collect();
                        if !fills.is_empty() {
                            due.push(Due::Message(user::message("user", &json!({"fills": fills}))));
                        }
                        let cancels: Vec<Value> =
                            of_account.filter_map(|ev| user::non_user_cancel(&l, ev)).collect();
                        if !cancels.is_empty() {
                            let data = json!({"nonUserCancel": cancels});
                            due.push(Due::Message(user::message("user", &data)));
                        }
                    }
                    Feed::SpotState { user } => {
                        let data = user::spot_state(e, &l, *user, account);
                        if sub.last.as_ref() != Some(&data) {
                            due.push(Due::Message(user::message("spotState", &data)));
                            sub.last = Some(data);
                        }
                    }
                    Feed::Trades { coin } => {
                        let Some(pair) = l.pair_by_coin(coin) else { continue };
                        let trades: Vec<Trade> = mine
                            .filter_map(|ev| match &ev.kind {
                                EventKind::Order { order, change: OrderChange::Trade(f) }
                                    if order.symbol == pair.symbol =>
                                {
                                    let i = usize::try_from(f.trade_id).ok()?.checked_sub(1)?;
                                    e.trades.get(i).cloned()
                                }
                                _ => None,
                            })
                            .collect();
                        if !trades.is_empty() {
                            due.push(Due::Trades(trades));
                        }
                    }
                    market_feed => {
                        let Some((key, data)) = market::state(e, &l, market_feed, now) else {
                            continue;
                        };
                        let throttled = matches!(market_feed, Feed::L2Book { .. })
                            && sub.last_push.is_some_and(|t| t.elapsed() < BOOK_INTERVAL);
                        if throttled || sub.last.as_ref() == Some(&key) {
                            continue;
                        }
                        let channel = match market_feed {
                            Feed::AllMids {} => "allMids",
                            Feed::Bbo { .. } => "bbo",
                            Feed::L2Book { .. } => "l2Book",
                            _ => "candle",
                        };
                        due.push(Due::Message(user::message(channel, &data)));
                        sub.last = Some(key);
                        sub.last_push = Some(Instant::now());
                    }
                }
            }
        }
        self.write(due)
    }

    /// The due messages as sent: `trades` with the addresses of the accounts that traded.
    fn write(&self, due: Vec<Due>) -> Vec<String> {
        let l = Listing::new(&self.sim.engine().rules);
        let wallets = self.sim.exchange_b().wallets();
        due.into_iter()
            .map(|d| match d {
                Due::Message(m) => m,
                Due::Trades(trades) => {
                    let trades: Vec<Value> = trades
                        .iter()
                        .filter_map(|t| market::trade(&l, t, wallets.address_of(t.account)))
                        .collect();
                    user::message("trades", &trades)
                }
            })
            .collect()
    }
}

/// The acknowledgement of a subscribe or unsubscribe, echoing the subscription as the server
/// writes it (`type` first, defaults filled in).
fn ack(method: &str, feed: &Feed) -> String {
    format!(
        r#"{{"channel":"subscriptionResponse","data":{{"method":"{method}","subscription":{}}}}}"#,
        feed.json()
    )
}

impl Drop for Session {
    fn drop(&mut self) {
        let state = self.sim.exchange_b();
        let mut limits = state.ws_limits();
        for sub in &self.subs {
            limits.release(self.ip, sub.feed.user());
        }
    }
}
