//! Exchange A's streams, client side: the account's order updates from the WebSocket API
//! (`userDataStream.subscribe.signature`) and the last prices of the watched symbols from the
//! market streams, published on the host's [`Feed`]. Each link keeps itself up: it
//! (re)connects with backoff, resubscribes, says "caught up" so consumers read what they
//! missed through REST, renews its connection before the exchange's 24 h limit, reconnects at
//! once on `serverShutdown`, and counts a link that says nothing (not even a ping) for
//! `silence` as dead, so the polled path takes over until it is back.

mod account;
mod market;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use super::Signer;
use crate::clock::SharedClock;
use crate::exchange::Exchange;
use crate::exchange::feed::Feed;
pub use crate::exchange::links::StreamTasks;

/// WebSocket API of exchange A's mainnet.
pub const MAINNET_WS_API: &str = "wss://ws-api.binance.com:443/ws-api/v3";
/// Market streams of exchange A's mainnet.
pub const MAINNET_STREAMS: &str = "wss://stream.binance.com:9443";
/// WebSocket API of exchange A's spot testnet.
pub const TESTNET_WS_API: &str = "wss://ws-api.testnet.binance.vision/ws-api/v3";
/// Market streams of exchange A's spot testnet.
pub const TESTNET_STREAMS: &str = "wss://stream.testnet.binance.vision";

/// Where and how the links connect.
#[derive(Debug, Clone)]
pub struct StreamSettings {
    /// The WebSocket API's URL (`…/ws-api/v3`).
    pub ws_api_url: String,
    /// The market streams' base (`/stream?streams=` is appended).
    pub stream_url: String,
    /// A link that says nothing for this long is dead.
    pub silence: Duration,
    /// A connection is renewed after this long (the exchange closes at 24 h), ms.
    pub renew_after_ms: i64,
    /// The longest wait between reconnects.
    pub max_backoff: Duration,
}

impl StreamSettings {
    pub fn new(ws_api_url: String, stream_url: String, silence: Duration) -> Self {
        Self {
            ws_api_url,
            stream_url,
            silence,
            renew_after_ms: (23 * 60 + 50) * 60_000,
            max_backoff: Duration::from_secs(30),
        }
    }
}

/// Starts the price link, and the account link when there are keys. `exchange` tells the
/// server time the subscription is signed with.
pub fn start(
    feed: Arc<Feed>,
    settings: StreamSettings,
    signer: Option<Signer>,
    exchange: Arc<dyn Exchange>,
    clock: SharedClock,
) -> StreamTasks {
    let mut tasks = vec![tokio::spawn(market::run(feed.clone(), settings.clone(), clock.clone()))];
    if let Some(signer) = signer {
        tasks.push(tokio::spawn(account::run(feed, settings, signer, exchange, clock)));
    }
    StreamTasks::new(tasks)
}
