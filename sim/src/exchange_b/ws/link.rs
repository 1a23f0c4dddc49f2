//! The socket side of one connection: the greeting, the client's messages to its
//! [`Session`], the ticks that push what is due, the idle timeout, and the stream faults armed
//! for exchange B (drop without a close frame, silence, delay; a `server_shutdown` closes after
//! the grace, as exchange B announces nothing).

use super::session::Session;
use crate::faults::{Held, StreamFaultKind, StreamService};
use crate::state::Sim;
use axum::extract::ws::{Message, WebSocket};
use futures_util::{SinkExt, StreamExt};
use std::net::IpAddr;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

/// The plain-text frame the exchange sends first (clients skip frames that are not JSON).
pub const GREETING: &str = "Websocket connection established.";

/// Serves one connection until either side ends it.
pub async fn run(mut ws: WebSocket, sim: Sim, ip: IpAddr) {
    let config = sim.stream_config().clone();
    let idle_timeout = sim.exchange_b().ws.idle_timeout;
    let mut faults = sim.stream_faults();
    let mut session = Session::open(sim.clone(), ip);
    let mut tick = tokio::time::interval(config.tick);
    let mut last_heard = Instant::now();
    let mut silent_until = sim.silent_until(StreamService::ExchangeB);
    let mut held = Held::default();
    let mut close_at: Option<Instant> = None;
    let silent = |until: Option<Instant>| until.is_some_and(|t| Instant::now() < t);
    if !silent(silent_until) && send_all(&mut ws, vec![GREETING.to_string()]).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            incoming = ws.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    last_heard = Instant::now();
                    let frames = session.on_text(text.as_str());
                    if !silent(silent_until) && send_all(&mut ws, frames).await.is_err() {
                        return;
                    }
                }
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                // Any other frame is traffic too (axum answers WebSocket pings by itself).
                Some(Ok(_)) => last_heard = Instant::now(),
            },
            _ = tokio::time::sleep_until(last_heard + idle_timeout) => {
                let _ = ws.send(Message::Close(None)).await;
                return;
            },
            _ = tick.tick() => {
                if close_at.is_some_and(|t| Instant::now() >= t) {
                    let _ = ws.send(Message::Close(None)).await;
                    return;
                }
                let frames = session.poll();
                if silent(silent_until) {
                    continue; // lost, as on a dead link
                }
                if send_all(&mut ws, held.due(frames)).await.is_err() {
                    return;
                }
            },
            fault = faults.recv() => match fault {
                Ok(f) if f.applies_to(StreamService::ExchangeB) => match f.kind {
                    StreamFaultKind::Drop => return, // no close frame: the socket just goes
                    StreamFaultKind::Silence { ms } => {
                        silent_until = Some(Instant::now() + Duration::from_millis(ms));
                    }
                    StreamFaultKind::Delay { ms } => held.set_delay(ms),
                    StreamFaultKind::ServerShutdown => {
                        close_at = Some(Instant::now() + config.shutdown_grace);
                    }
                },
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
        }
    }
}

async fn send_all(ws: &mut WebSocket, frames: Vec<String>) -> Result<(), axum::Error> {
    for f in frames {
        ws.feed(Message::Text(f.into())).await?;
    }
    ws.flush().await
}
