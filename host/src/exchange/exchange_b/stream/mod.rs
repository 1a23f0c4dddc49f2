//! Exchange B's WebSocket, client side (wire reference §9): one connection to the REST
//! host's `/ws` carries both links — `allMids` for the prices of the watched symbols (the
//! price link) and `orderUpdates` of the account (the account link) — published on the host's
//! [`Feed`]. A link is live once its subscription is acknowledged; after the account's
//! (re)subscription a `CaughtUp` tells consumers to read what they missed through REST
//! (exchange B sends no snapshot of orders). The link pings (`{"method":"ping"}`, the server
//! closes a connection on which the client said nothing for 60 s), counts a connection that
//! says nothing (not even a pong) for `silence` as dead, and reconnects with backoff; while it
//! is down the polled paths cover both links. Fills are not followed: order updates say when
//! to settle, and settlement reads the fills through REST.

mod link;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use super::ExchangeBClient;
use crate::clock::SharedClock;
use crate::exchange::feed::Feed;
use crate::exchange::links::StreamTasks;

/// How often the link pings at most (the official SDKs' 50 s).
pub const PING_EVERY: Duration = Duration::from_secs(50);

/// Where and how the link connects.
#[derive(Debug, Clone)]
pub struct StreamSettings {
    /// The WebSocket's URL (`wss://<host>/ws`).
    pub url: String,
    /// A connection that says nothing for this long is dead.
    pub silence: Duration,
    /// How often the link pings: [`PING_EVERY`], or a third of `silence` when that is shorter,
    /// so a quiet but healthy connection is heard (its pong) before it would count as dead.
    pub ping_every: Duration,
    /// The longest wait between reconnects.
    pub max_backoff: Duration,
}

impl StreamSettings {
    pub fn new(url: String, silence: Duration) -> Self {
        Self {
            url,
            silence,
            ping_every: PING_EVERY.min(silence / 3),
            max_backoff: Duration::from_secs(30),
        }
    }
}

/// The WebSocket URL of a REST base, as the official SDK derives it: `http` → `ws`,
/// `https` → `wss`, plus `/ws`.
pub fn ws_url(rest_base: &str) -> String {
    let base = rest_base.trim_end_matches('/');
    let rest = base.strip_prefix("http").unwrap_or(base);
    format!("ws{rest}/ws")
}

/// Starts the link: prices always, the account's orders when the client has an account.
pub fn start(
    feed: Arc<Feed>,
    settings: StreamSettings,
    client: Arc<ExchangeBClient>,
    clock: SharedClock,
) -> StreamTasks {
    StreamTasks::new(vec![tokio::spawn(link::run(feed, settings, client, clock))])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_follows_the_rest_base() {
        assert_eq!(ws_url("https://api.hyperliquid.xyz"), "wss://api.hyperliquid.xyz/ws");
        assert_eq!(ws_url("http://127.0.0.1:3001/"), "ws://127.0.0.1:3001/ws");
        let s = StreamSettings::new("ws://x/ws".into(), Duration::from_millis(1500));
        assert_eq!(s.ping_every, Duration::from_millis(500));
        let s = StreamSettings::new("ws://x/ws".into(), Duration::from_secs(300));
        assert_eq!(s.ping_every, PING_EVERY);
    }
}
