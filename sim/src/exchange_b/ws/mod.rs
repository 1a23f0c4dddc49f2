//! Exchange B's WebSocket at `GET /ws` on the REST port (a client derives `ws://host:port/ws`
//! from the REST base): subscriptions to market and account feeds pushed from the same state
//! `/info` answers from, `ping`, `post` requests, the exchange's limits, idle timeout and the
//! simulator's stream faults. It only reads the core (its event log) and exchange B's state;
//! it never changes an order except through `post` actions, which run the REST code.
//!
//! - [`feeds`]: what a subscription asks for (the per-IP limits and their
//!   [`WsConfig`](crate::state::exchange_b::WsConfig) are kept in
//!   [`crate::state::exchange_b::ws_limits`], below these handlers).
//! - [`session`]: one client's messages and what its subscriptions have due;
//!   [`market`] and [`user`]: the feeds' messages; [`post`]: `post` requests.
//! - [`link`]: the socket loop (greeting, ticks, idle timeout, faults).

pub mod feeds;
pub mod link;
pub mod market;
pub mod post;
pub mod session;
pub mod user;

use crate::state::Sim;
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
