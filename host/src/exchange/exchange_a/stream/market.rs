//! The price link: the market streams' `<symbol>@trade` of the watched symbols (the symbols
//! of open trades), following the set as it changes with SUBSCRIBE/UNSUBSCRIBE. Idle, and
//! off, while nothing is watched.

use std::collections::BTreeSet;
use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;

use super::StreamSettings;
use super::wire::{Pushed, market_frame};
use crate::clock::SharedClock;
use crate::exchange::feed::{Feed, Link, LinkState};
use crate::exchange::links::Backoff;

/// Keeps the price link up while there is something to watch.
pub(super) async fn run(feed: Arc<Feed>, settings: StreamSettings, clock: SharedClock) {
    let mut watched = feed.watched_symbols();
    let mut backoff = Backoff::new(settings.max_backoff);
    loop {
        let symbols = watched.borrow_and_update().clone();
        if symbols.is_empty() {
            feed.set_link(Link::Prices, LinkState::Off);
            if watched.changed().await.is_err() {
                return;
            }
            continue;
        }
        feed.set_link(Link::Prices, LinkState::Reconnecting);
        match session(&feed, &settings, &clock, &mut watched, symbols).await {
            Ok(()) => backoff.reset(),
            Err(why) => {
                tracing::warn!(%why, "price stream down; the polled path covers it");
                backoff.wait().await;
            }
        }
    }
}

fn stream_name(symbol: &str) -> String {
    format!("{}@trade", symbol.to_ascii_lowercase())
}

/// One connection for `symbols`, following changes of the set. `Ok` when it ended on purpose.
async fn session(
    feed: &Feed,
    settings: &StreamSettings,
    clock: &SharedClock,
    watched: &mut watch::Receiver<BTreeSet<String>>,
    mut symbols: BTreeSet<String>,
) -> Result<(), String> {
    let names: Vec<String> = symbols.iter().map(|s| stream_name(s)).collect();
    let url = format!("{}/stream?streams={}", settings.stream_url, names.join("/"));
    let (mut ws, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .map_err(|e| format!("connect: {e}"))?;
    feed.set_link(Link::Prices, LinkState::Live);
    let opened_at = clock.now_ms();
    let mut request_id = 0u64;
    loop {
        if clock.now_ms() - opened_at >= settings.renew_after_ms {
            let _ = ws.close(None).await;
            return Ok(());
        }
        tokio::select! {
            frame = tokio::time::timeout(settings.silence, ws.next()) => {
                let text = match frame.map_err(|_| "silent".to_string())? {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None => return Err("closed by the server".into()),
                    Some(Err(e)) => return Err(format!("read: {e}")),
                    Some(Ok(_)) => continue,
                };
                match market_frame(text.as_str()) {
                    Pushed::Event(e) => feed.publish(e),
                    Pushed::Ending => return Ok(()),
                    Pushed::Ignored => {}
                }
            }
            changed = watched.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                let wanted = watched.borrow_and_update().clone();
                if wanted.is_empty() {
                    let _ = ws.close(None).await;
                    return Ok(());
                }
                for (method, set) in [
                    ("SUBSCRIBE", wanted.difference(&symbols).cloned().collect::<Vec<_>>()),
                    ("UNSUBSCRIBE", symbols.difference(&wanted).cloned().collect()),
                ] {
                    if set.is_empty() {
                        continue;
                    }
                    request_id += 1;
                    let params: Vec<String> = set.iter().map(|s| stream_name(s)).collect();
                    let msg =
                        serde_json::json!({"method": method, "params": params, "id": request_id});
                    let sent = ws.send(Message::text(msg.to_string())).await;
                    sent.map_err(|e| format!("send: {e}"))?;
                }
                symbols = wanted;
            }
        }
    }
}
