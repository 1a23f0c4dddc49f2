//! The account link: the WebSocket API with the user data subscription. Order updates go out
//! on the feed; after each subscription a `CaughtUp` tells consumers to read what they missed.

use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

use super::StreamSettings;
use super::wire::{ApiFrame, Pushed, account_event};
use crate::clock::SharedClock;
use crate::exchange::Exchange;
use crate::exchange::exchange_a::Signer;
use crate::exchange::feed::{ExchangeEvent, Feed, Link, LinkState};
use crate::exchange::links::Backoff;

/// The recvWindow of the subscription, ms.
const RECV_WINDOW_MS: u64 = 5000;

/// Keeps the account link up for as long as the service runs.
pub(super) async fn run(
    feed: Arc<Feed>,
    settings: StreamSettings,
    signer: Signer,
    exchange: Arc<dyn Exchange>,
    clock: SharedClock,
) {
    let mut backoff = Backoff::new(settings.max_backoff);
    loop {
        feed.set_link(Link::Account, LinkState::Reconnecting);
        match session(&feed, &settings, &signer, exchange.as_ref(), &clock).await {
            Ok(()) => backoff.reset(),
            Err(why) => {
                tracing::warn!(%why, "account stream down; the polled path covers it");
                backoff.wait().await;
            }
        }
    }
}

/// One connection: subscribe, then pass events on until it ends. `Ok` when it ended on
/// purpose (renewal, the server's shutdown notice): reconnect at once.
async fn session(
    feed: &Feed,
    settings: &StreamSettings,
    signer: &Signer,
    exchange: &dyn Exchange,
    clock: &SharedClock,
) -> Result<(), String> {
    let server_time = exchange.server_time().await.map_err(|e| format!("server time: {e}"))?;
    let (mut ws, _) = tokio_tungstenite::connect_async(settings.ws_api_url.as_str())
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let subscribe = serde_json::json!({
        "id": "subscribe",
        "method": "userDataStream.subscribe.signature",
        "params": signer.subscription_params(server_time, RECV_WINDOW_MS),
    });
    ws.send(Message::text(subscribe.to_string())).await.map_err(|e| format!("send: {e}"))?;
    let opened_at = clock.now_ms();
    // The subscription must be answered within the silence limit, pings or not.
    let answer_by = tokio::time::Instant::now() + settings.silence;
    let mut subscribed = false;
    loop {
        if clock.now_ms() - opened_at >= settings.renew_after_ms {
            let _ = ws.close(None).await;
            return Ok(());
        }
        let wait = if subscribed {
            settings.silence
        } else {
            answer_by.saturating_duration_since(tokio::time::Instant::now())
        };
        let frame = tokio::time::timeout(wait, ws.next()).await.map_err(|_| {
            if subscribed { "silent" } else { "the subscription was not answered" }.to_string()
        })?;
        let text = match frame {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(_))) | None => return Err("closed by the server".into()),
            Some(Err(e)) => return Err(format!("read: {e}")),
            Some(Ok(_)) => continue, // pings (answered by tungstenite) and pongs
        };
        let Ok(frame) = serde_json::from_str::<ApiFrame>(text.as_str()) else { continue };
        if let Some(event) = &frame.event {
            match account_event(event) {
                Pushed::Event(e) => feed.publish(e),
                Pushed::Ending => return Ok(()),
                Pushed::Ignored => {}
            }
        } else if let Some(err) = frame.error {
            return Err(format!("subscription refused: {} {}", err.code, err.msg));
        } else if frame.status == Some(200) {
            subscribed = true;
            feed.set_link(Link::Account, LinkState::Live);
            feed.publish(ExchangeEvent::CaughtUp);
        }
    }
}
