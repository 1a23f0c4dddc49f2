//! The one table of what each route needs from its caller.
//!
//! The auth layer looks every matched route up here (method + axum route pattern). A route
//! missing from the table needs `admin`: a new route is closed by default, and a test over
//! the OpenAPI document fails until its author adds a row. The OpenAPI document's security
//! requirements are written from this table, so the contract and the check cannot differ.
//!
//! The rule: a GET that changes nothing is `read`; what puts a question or a message in front
//! of the boss, or records what an agent is doing, is `propose`; what places, moves or
//! cancels orders, or changes the trades the service manages, is `execute`; what changes the
//! service's own limits, license, tokens or plugin state is `admin`. Liveness, the API
//! document and the dashboard page itself are public (the page asks for a token).

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::http::Method;

use super::Scope;

/// What a route needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Anyone who reaches the port (no data beyond liveness and the contract).
    Public,
    /// A token of at least this scope.
    Scope(Scope),
}

/// One route and what it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteNeeds {
    /// HTTP method in upper case (`GET` also covers `HEAD`).
    pub method: &'static str,
    /// The axum route pattern, e.g. `/api/signal/{symbol}/confirm`.
    pub path: &'static str,
    pub needs: Needs,
}

const fn public(method: &'static str, path: &'static str) -> RouteNeeds {
    RouteNeeds { method, path, needs: Needs::Public }
}

const fn read(path: &'static str) -> RouteNeeds {
    RouteNeeds { method: "GET", path, needs: Needs::Scope(Scope::Read) }
}

const fn scoped(method: &'static str, path: &'static str, scope: Scope) -> RouteNeeds {
    RouteNeeds { method, path, needs: Needs::Scope(scope) }
}

const PROPOSE: Scope = Scope::Propose;
const EXECUTE: Scope = Scope::Execute;
const ADMIN: Scope = Scope::Admin;

/// Every route, in the order of the license table (`license::routes`).
pub const ROUTES: &[RouteNeeds] = &[
    // Liveness and the contract.
    public("GET", "/api/health"),
    public("GET", "/health"),
    public("GET", "/api/openapi.json"),
    read("/api/health/check"),
    read("/api/auth/me"),
    read("/api/license/status"),
    scoped("POST", "/api/license/register", ADMIN),
    scoped("POST", "/api/license/activate", ADMIN),
    read("/metrics"),
    // The MCP endpoint: listing tools needs a token; each call meets this table as its route.
    scoped("POST", "/mcp", Scope::Read),
    // The MCP service answers every method itself (the router never answers 405 there).
    scoped("GET", "/mcp", Scope::Read),
    scoped("DELETE", "/mcp", Scope::Read),
    // Dashboard: the page is public and asks for a token; its data is read.
    public("GET", "/api/dashboard"),
    public("GET", "/dashboard"),
    scoped("POST", "/api/agent/{name}", PROPOSE),
    read("/api/state"),
    read("/api/dashboard/footer"),
    read("/api/dashboard/trades"),
    read("/api/dashboard/pnl"),
    read("/api/dashboard/chart"),
    read("/api/dashboard/events"),
    // News and portfolio.
    read("/api/news"),
    read("/api/portfolio"),
    // Bot actions.
    scoped("POST", "/api/trade", EXECUTE),
    scoped("POST", "/api/trade/manual", EXECUTE),
    read("/api/pending-entries"),
    scoped("GET", "/api/pending-entries/check", EXECUTE),
    scoped("GET", "/api/pending-entries/recover", EXECUTE),
    scoped("POST", "/api/pending-entries/cancel", EXECUTE),
    scoped("GET", "/api/trailing", EXECUTE),
    read("/api/status"),
    scoped("POST", "/api/close", EXECUTE),
    scoped("POST", "/api/closeall", EXECUTE),
    scoped("POST", "/api/reset-daily", ADMIN),
    // Scan and signal.
    scoped("POST", "/api/mr-combined/scan-and-signal", PROPOSE),
    // Pump Momentum: its scan messages the boss.
    scoped("GET", "/api/pump-momentum/scan", PROPOSE),
    scoped("POST", "/api/pump-momentum/scan", PROPOSE),
    read("/api/pump-momentum/signals"),
    read("/api/pump-momentum/signals/{symbol}"),
    scoped("POST", "/api/pump-momentum/outcomes", PROPOSE),
    // Market: analysis only.
    read("/api/market/{symbol}"),
    read("/api/market/scan"),
    read("/api/market/{symbol}/history"),
    read("/api/market/all"),
    // Messenger and report: both message the boss.
    scoped("GET", "/api/notify", PROPOSE),
    scoped("POST", "/api/status/report", PROPOSE),
    // Protection: measuring may pause entries (never trades); resuming is the operator's.
    read("/api/protection"),
    read("/api/equity"),
    scoped("POST", "/api/protection/resume", ADMIN),
    scoped("POST", "/api/protection/pause", ADMIN),
    // Trade management: reading is read; adding trades for the service to manage is execute.
    read("/api/trades"),
    read("/api/trades/history"),
    read("/api/trades/stats"),
    read("/api/orders"),
    scoped("POST", "/api/trades/sync", EXECUTE),
    scoped("GET", "/api/trades/recover", EXECUTE),
    scoped("POST", "/api/trades/restore", EXECUTE),
    // Signal flow: proposing is propose; the decision the coo relays is execute.
    scoped("POST", "/api/signal", PROPOSE),
    read("/api/signal/list"),
    read("/api/signal/pending"),
    read("/api/signal/{symbol}"),
    scoped("POST", "/api/signal/{symbol}/confirm", EXECUTE),
    scoped("POST", "/api/signal/{symbol}/reject", EXECUTE),
    scoped("POST", "/api/signal/cleanup", PROPOSE),
    // Scheduler and the audit log.
    read("/api/scheduler"),
    read("/api/audit"),
    // Strategy plugins: a dry-run scan is a scan; resetting a plugin's state is the operator's.
    read("/api/strategies"),
    scoped("POST", "/api/strategies/{name}/scan", PROPOSE),
    read("/api/strategies/{name}/request"),
    read("/api/strategies/{name}/state"),
    scoped("DELETE", "/api/strategies/{name}/state", ADMIN),
    // News-driven checks and the earlier route set.
    scoped("POST", "/api/scan-and-signal", PROPOSE),
    scoped("GET", "/scan", PROPOSE),
    scoped("POST", "/trade", EXECUTE),
    read("/custom_check"),
    scoped("GET", "/trailing", EXECUTE),
    read("/status"),
    read("/license/status"),
    scoped("POST", "/license/register", ADMIN),
    scoped("POST", "/license/activate", ADMIN),
];

static BY_ROUTE: LazyLock<HashMap<(&'static str, &'static str), Needs>> =
    LazyLock::new(|| ROUTES.iter().map(|r| ((r.method, r.path), r.needs)).collect());

/// What `method` on the route pattern `path` needs; `None` when the table has no row.
pub fn needs_of(method: &Method, path: &str) -> Option<Needs> {
    let method = if method == Method::HEAD { "GET" } else { method.as_str() };
    BY_ROUTE.get(&(method, path)).copied()
}

/// Whether the table has a row for `path` with any method: a request with another method is
/// answered 405 by the router, whatever the caller.
pub fn listed_path(path: &str) -> bool {
    ROUTES.iter().any(|r| r.path == path)
}

/// What a route needs, `admin` when the table has no row (closed by default).
pub fn needs(method: &Method, path: &str) -> Needs {
    needs_of(method, path).unwrap_or(Needs::Scope(Scope::Admin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_unique_and_unlisted_routes_need_admin() {
        assert_eq!(BY_ROUTE.len(), ROUTES.len(), "a route is listed twice");
        assert_eq!(needs(&Method::POST, "/api/new-thing"), Needs::Scope(Scope::Admin));
        assert_eq!(needs(&Method::HEAD, "/api/health"), Needs::Public);
        assert_eq!(needs(&Method::GET, "/api/trailing"), Needs::Scope(Scope::Execute));
    }
}
