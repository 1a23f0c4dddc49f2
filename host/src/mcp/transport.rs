//! The Streamable HTTP transport at `/mcp`: stateless (every POST carries one JSON-RPC
//! message and gets its answer as JSON), so there are no sessions to keep or expire and no
//! open stream for a shutdown to wait on. The `Host` header must be one of
//! `[api] allowed_hosts` (403 otherwise, here and on the whole API): a web page that points
//! its own name at this machine (DNS rebinding) cannot reach the tools.

use std::sync::Arc;

use axum::Router;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::catalog::Catalog;
use super::server::Tools;

/// Where the endpoint is mounted.
pub const PATH: &str = "/mcp";

/// The endpoint's service: tools derived from `document`, calls dispatched into `api` (the
/// API router without `/mcp`). Requests over `max_body` bytes get 413, as on the API.
pub fn service(
    document: &serde_json::Value,
    api: Router,
    allowed_hosts: &[String],
    max_body: usize,
) -> Result<StreamableHttpService<Tools, NeverSessionManager>, String> {
    let tools = Tools::new(Catalog::from_document(document)?, api);
    let transport = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts.iter().cloned())
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(max_body);
    Ok(StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(NeverSessionManager::default()),
        transport,
    ))
}
