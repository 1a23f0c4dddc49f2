//! Exchange B's WebSocket at `GET /ws` on the REST port (a client derives `ws://host:port/ws`
//! from the REST base): subscriptions to market and account feeds pushed from the same state
//! `/info` answers from, `ping`, `post` requests, the exchange's limits, idle timeout and the
//! simulator's stream faults. It only reads the core (its event log) and exchange B's state;
//! it never changes an order except through `post` actions, which run the REST code.
//!
//! - [`feeds`]: what a subscription asks for; [`limits`]: the per-IP limits and [`WsConfig`].
//! - [`session`]: one client's messages and what its subscriptions have due;
//!   [`market`] and [`user`]: the feeds' messages; [`post`]: `post` requests.
//! - [`refused`]: orders `/exchange` refused before the core saw them, for `orderUpdates`.
//! - [`link`]: the socket loop (greeting, ticks, idle timeout, faults).

pub mod feeds;
pub mod limits;
pub mod link;
pub mod market;
pub mod post;
pub mod refused;
pub mod session;
pub mod user;

pub use limits::{WsConfig, WsLimits};
pub use refused::{RefusedLog, RefusedOrder};

use crate::server::Sim;
use crate::transport::Conn;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, State};
use axum::response::Response;

pub const WS_PATH: &str = "/ws";

/// `GET /ws`: the WebSocket handshake, then [`link::run`].
pub async fn upgrade(
    State(sim): State<Sim>,
    ConnectInfo(conn): ConnectInfo<Conn>,
    ws: WebSocketUpgrade,
) -> Response {
    ws.on_upgrade(move |socket| link::run(socket, sim, conn.remote.ip()))
}
