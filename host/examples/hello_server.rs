//! The baseline of the API throughput benchmark (docs/benchmarks.md, "API throughput with
//! metrics"): a bare axum server answering `GET /api/health` with a small JSON body, the same
//! axum and tokio the service runs, no layers. `wrk` against it and against the service in
//! the same run gives the ratio the service's layers (metrics, license, budget, tracing) cost.
//!
//! `cargo run -p spotbot --release --example hello_server -- 127.0.0.1:8001`

use axum::routing::get;
use axum::{Json, Router};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8001".into());
    let app = Router::new().route(
        "/api/health",
        get(|| async { Json(serde_json::json!({"ok": true, "license_status": "active"})) }),
    );
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    axum::serve(listener, app).await
}
