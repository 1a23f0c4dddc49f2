//! The simulator as a running thing: its HTTP app composed from the handlers ([`router`]) and
//! served on a socket ([`serve`], [`RunningSim`]). What the handlers share is in
//! [`crate::state`], below them.

use crate::admin;
use crate::exchange_a;
use crate::exchange_b;
use crate::state::{Sim, SimConfig};
use crate::transport::{Conn, KillableListener};
use axum::Router;
use axum::routing::{get, post};
use std::io;
use std::net::SocketAddr;
use tokio::net::TcpListener;

/// A simulator serving on a socket.
pub struct RunningSim {
    pub addr: SocketAddr,
    pub sim: Sim,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl RunningSim {
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for RunningSim {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Binds `addr` and serves the simulator in a background task.
pub async fn serve(config: SimConfig, addr: &str) -> io::Result<RunningSim> {
    let sim = Sim::new(config);
    serve_sim(sim, addr).await
}

/// Serves an existing simulator handle.
pub async fn serve_sim(sim: Sim, addr: &str) -> io::Result<RunningSim> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let app = router(sim.clone());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(
            KillableListener { inner: listener },
            app.into_make_service_with_connect_info::<Conn>(),
        )
        .with_graceful_shutdown(async {
            let _ = rx.await;
        })
        .await;
    });
    Ok(RunningSim { addr: local, sim, shutdown: Some(tx), task })
}

/// The simulator's HTTP app: the admin API under `/sim/`, exchange B's `POST /info`,
/// `POST /exchange` and WebSocket `GET /ws`, exchange A's REST paths elsewhere.
pub fn router(sim: Sim) -> Router {
    admin::routes()
        .route(exchange_b::rest::INFO_PATH, post(exchange_b::rest::info))
        .route(exchange_b::rest::EXCHANGE_PATH, post(exchange_b::rest::exchange))
        .route(exchange_b::ws::WS_PATH, get(exchange_b::ws::upgrade))
        .fallback(exchange_a::rest::api)
        .with_state(sim)
}
