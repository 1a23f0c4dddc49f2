//! The rules every WebSocket connection of the simulator follows, whatever it carries: the
//! server pings and closes a connection that stops answering, closes it at the end of its
//! lifetime (on the simulator's clock), and obeys stream faults (drop, silence, delay,
//! `serverShutdown`). What a connection says is up to its [`Service`].

use crate::clock::Millis;
use crate::faults::{Held, StreamFaultKind, StreamService};
use crate::state::Sim;
use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

/// What one kind of connection says.
pub(super) trait Service {
    fn kind(&self) -> StreamService;
    /// The answer to one text frame of the client.
    fn on_text(&mut self, sim: &Sim, text: &str) -> Reply;
    /// Frames due now (account events, market updates).
    fn poll(&mut self, sim: &Sim) -> Vec<String>;
    /// The frame that announces a server shutdown.
    fn shutdown_frame(&self, now: Millis) -> String;
}

/// Frames to send back, and whether to close afterwards.
#[derive(Default)]
pub(super) struct Reply {
    pub frames: Vec<String>,
    pub close: bool,
}

impl Reply {
    pub fn one(frame: String) -> Self {
        Self { frames: vec![frame], close: false }
    }
}

type Socket = WebSocketStream<TcpStream>;

/// Serves one connection until either side ends it.
pub(super) async fn run(mut ws: Socket, sim: Sim, mut service: impl Service) {
    let config = sim.stream_config().clone();
    let connected_at = sim.now_ms();
    let mut faults = sim.stream_faults();
    let mut ping =
        tokio::time::interval_at(Instant::now() + config.ping_interval, config.ping_interval);
    let mut tick = tokio::time::interval(config.tick);
    let mut last_pong = Instant::now();
    let mut silent_until: Option<Instant> = sim.silent_until(service.kind());
    let mut held = Held::default();
    let mut close_at: Option<Instant> = None;
    loop {
        let silent = silent_until.is_some_and(|t| Instant::now() < t);
        tokio::select! {
            incoming = ws.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    let reply = service.on_text(&sim, text.as_str());
                    if !silent && send_all(&mut ws, reply.frames).await.is_err() {
                        return;
                    }
                    if reply.close {
                        let _ = ws.close(None).await;
                        return;
                    }
                }
                // tungstenite answers pings by itself.
                Some(Ok(Message::Pong(_))) => last_pong = Instant::now(),
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
            _ = ping.tick() => {
                if silent {
                    // No ping goes out, so no pong is owed.
                    last_pong = Instant::now();
                    continue;
                }
                if last_pong.elapsed() > config.pong_timeout {
                    let _ = ws.close(None).await;
                    return;
                }
                if ws.send(Message::Ping("sim".into())).await.is_err() {
                    return;
                }
            },
            _ = tick.tick() => {
                let lived = sim.now_ms().saturating_sub(connected_at);
                if lived >= config.max_lifetime_ms || close_at.is_some_and(|t| Instant::now() >= t) {
                    let _ = ws.close(None).await;
                    return;
                }
                let frames = service.poll(&sim);
                if silent {
                    continue; // lost, as on a dead link
                }
                if send_all(&mut ws, held.due(frames)).await.is_err() {
                    return;
                }
            },
            fault = faults.recv() => match fault {
                Ok(f) if f.applies_to(service.kind()) => match f.kind {
                    StreamFaultKind::Drop => return, // no close frame: the socket just goes
                    StreamFaultKind::Silence { ms } => {
                        silent_until = Some(Instant::now() + Duration::from_millis(ms));
                    }
                    StreamFaultKind::Delay { ms } => held.set_delay(ms),
                    StreamFaultKind::ServerShutdown => {
                        let frame = service.shutdown_frame(sim.now_ms());
                        if ws.send(Message::text(frame)).await.is_err() {
                            return;
                        }
                        close_at = Some(Instant::now() + config.shutdown_grace);
                    }
                },
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
        }
    }
}

async fn send_all(ws: &mut Socket, frames: Vec<String>) -> Result<(), ()> {
    for f in frames {
        ws.feed(Message::text(f)).await.map_err(|_| ())?;
    }
    ws.flush().await.map_err(|_| ())
}
