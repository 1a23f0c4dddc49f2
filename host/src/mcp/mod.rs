//! The Model Context Protocol endpoint at `/mcp` (Streamable HTTP, the official Rust SDK
//! `rmcp`), so any MCP-capable agent can drive the service.
//!
//! There is no second set of handlers: the tools are derived from the API's own OpenAPI
//! document (one tool per operation, [`catalog`]), and a tool call becomes an HTTP request
//! dispatched into the API router with all its layers ([`dispatch`]), so the license gate, the
//! ev/confidence gates, the read budget and every validation apply exactly as over HTTP.
//! [`effects`] says which tools read, which change state and which move money (the clients'
//! read-only and destructive hints); [`transport`] mounts the SDK's HTTP service with the
//! configured allowed hosts.

mod catalog;
mod dispatch;
mod effects;
mod schema;
mod server;
mod transport;

pub use transport::{PATH, service};

#[cfg(test)]
mod tests;
