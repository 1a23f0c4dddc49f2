//! Exchange A's WebSocket services, served on their own port as the exchange does: the
//! WebSocket API with the user data stream at `/ws-api/v3` ([`ws_api`]) and the market streams
//! at `/ws/<stream>` and `/stream?streams=a/b` ([`market`]). Every connection follows the same
//! rules ([`link`]: pings, lifetime, stream faults). While they are served the engine catches
//! up with the market on its own every tick, so fills and triggers are pushed without a REST
//! request to set them off.

mod link;
mod market;
mod user_events;
mod ws_api;

use crate::clock::Millis;
use crate::state::Sim;
use serde::Serialize;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;

/// The `serverShutdown` event.
#[derive(Serialize)]
struct Shutdown {
    e: &'static str,
    #[serde(rename = "E")]
    event_time: Millis,
}

impl Shutdown {
    fn new(now: Millis) -> Self {
        Self { e: "serverShutdown", event_time: now }
    }
}

/// The WebSocket services serving on a socket; dropping it stops them.
pub struct RunningStreams {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
    ticker: tokio::task::JoinHandle<()>,
}

impl RunningStreams {
    /// `ws://host:port`, the base of the services' paths.
    pub fn base_url(&self) -> String {
        format!("ws://{}", self.addr)
    }
}

impl Drop for RunningStreams {
    fn drop(&mut self) {
        self.task.abort();
        self.ticker.abort();
    }
}

/// Binds `addr` and serves exchange A's WebSocket services for `sim`.
pub async fn serve_streams(sim: Sim, addr: &str) -> io::Result<RunningStreams> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let sequences = Arc::new(market::Sequences::default());
    let accepting = sim.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            tokio::spawn(connection(stream, accepting.clone(), sequences.clone()));
        }
    });
    let ticking = sim.clone();
    let ticker = tokio::spawn(async move {
        let mut tick = tokio::time::interval(ticking.stream_config().tick);
        loop {
            tick.tick().await;
            let now = ticking.now_ms();
            ticking.engine().catch_up(now);
        }
    });
    Ok(RunningStreams { addr: local, task, ticker })
}

/// Which service a handshake asked for.
enum Route {
    WsApi { query: String },
    Market { streams: Vec<String>, combined: bool },
}

fn route(path: &str, query: &str) -> Option<Route> {
    match path {
        "/ws-api/v3" => Some(Route::WsApi { query: query.to_string() }),
        "/stream" => {
            let streams = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("streams="))
                .map(market::MarketStreams::names)
                .unwrap_or_default();
            Some(Route::Market { streams, combined: true })
        }
        "/ws" => Some(Route::Market { streams: Vec::new(), combined: false }),
        _ => path
            .strip_prefix("/ws/")
            .map(|s| Route::Market { streams: market::MarketStreams::names(s), combined: false }),
    }
}

/// A connection's service, opened during the handshake.
enum Opened {
    WsApi { query: String },
    Market(market::MarketStreams),
}

async fn connection(stream: TcpStream, sim: Sim, sequences: Arc<market::Sequences>) {
    let mut opened = None;
    // The signature is tungstenite's handshake callback's.
    #[allow(clippy::result_large_err)]
    let pick = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        let uri = req.uri();
        match route(uri.path(), uri.query().unwrap_or("")) {
            Some(Route::WsApi { query }) => {
                opened = Some(Opened::WsApi { query });
                Ok(resp)
            }
            Some(Route::Market { streams, combined }) => {
                let service = market::MarketStreams::new(&sim, streams, combined, sequences);
                opened = Some(Opened::Market(service));
                Ok(resp)
            }
            None => {
                let mut not_found = ErrorResponse::new(Some("404 Not Found".to_string()));
                *not_found.status_mut() = StatusCode::NOT_FOUND;
                Err(not_found)
            }
        }
    };
    let Ok(ws) = tokio_tungstenite::accept_hdr_async(stream, pick).await else { return };
    match opened {
        Some(Opened::WsApi { query }) => {
            let service = ws_api::WsApi::open(&sim, &query);
            link::run(ws, sim, service).await;
        }
        Some(Opened::Market(service)) => link::run(ws, sim, service).await,
        None => {}
    }
}
