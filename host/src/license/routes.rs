//! The one table of which routes need an active license.
//!
//! The API's license layer looks every matched route up here (method + axum route pattern).
//! A route that is missing from the table needs a license, whatever its prefix: a new route
//! is safe by default, and its author adds a row here (and in docs/api.md, which a test
//! compares with this table) to make it free.
//!
//! The rule for the groups the spec leaves open: reading is free; anything that places,
//! changes or cancels orders, or changes what the bot will act on, needs the license. Saying
//! NO to a signal and cleaning up old signals are always possible.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::http::Method;

/// One route and whether it needs an active license.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteRule {
    /// HTTP method in upper case (`GET` also covers `HEAD`).
    pub method: &'static str,
    /// The axum route pattern, e.g. `/api/signal/{symbol}/confirm`.
    pub path: &'static str,
    /// Spec group the route belongs to.
    pub group: &'static str,
    pub licensed: bool,
    /// Why, in a few words (published in docs/api.md).
    pub why: &'static str,
}

const fn rule(
    method: &'static str,
    path: &'static str,
    group: &'static str,
    licensed: bool,
    why: &'static str,
) -> RouteRule {
    RouteRule { method, path, group, licensed, why }
}

const SPEC: &str = "spec";
const READ: &str = "reads only";
const MONEY: &str = "acts on money";
const EARLIER: &str = "earlier route set";

/// Every route of the current route set in the spec's order, then the earlier route set.
pub const ROUTES: &[RouteRule] = &[
    // Health and license: never need a license (spec, Authentication 2).
    rule("GET", "/api/health", "health and license", false, SPEC),
    rule(
        "GET",
        "/api/health/check",
        "health and license",
        false,
        "reports a lapsed license among its findings",
    ),
    rule("GET", "/api/license/status", "health and license", false, SPEC),
    rule("POST", "/api/license/register", "health and license", false, SPEC),
    rule("POST", "/api/license/activate", "health and license", false, SPEC),
    rule("GET", "/api/openapi.json", "health and license", false, "API document"),
    rule("GET", "/metrics", "health and license", false, "monitoring, no secrets"),
    // The MCP endpoint: each tool call is dispatched into the API and meets this table there.
    rule("POST", "/mcp", "mcp", false, "each tool call passes this table as its own route"),
    // Dashboard.
    rule("GET", "/api/dashboard", "dashboard", false, SPEC),
    rule("POST", "/api/agent/{name}", "dashboard", false, "dashboard state only"),
    rule("GET", "/api/state", "dashboard", false, READ),
    rule("GET", "/api/dashboard/footer", "dashboard", false, READ),
    rule("GET", "/api/dashboard/trades", "dashboard", false, READ),
    rule("GET", "/api/dashboard/pnl", "dashboard", false, READ),
    rule("GET", "/api/dashboard/chart", "dashboard", false, READ),
    rule("GET", "/api/dashboard/events", "dashboard", false, READ),
    // News and portfolio.
    rule("GET", "/api/news", "news and portfolio", false, SPEC),
    rule("GET", "/api/portfolio", "news and portfolio", false, SPEC),
    // Bot actions: all need a license (spec, Authentication 1).
    rule("POST", "/api/trade", "bot actions", true, SPEC),
    rule("POST", "/api/trade/manual", "bot actions", true, SPEC),
    rule("GET", "/api/pending-entries", "bot actions", true, SPEC),
    rule("GET", "/api/pending-entries/check", "bot actions", true, SPEC),
    rule("GET", "/api/pending-entries/recover", "bot actions", true, SPEC),
    rule("POST", "/api/pending-entries/cancel", "bot actions", true, MONEY),
    rule("GET", "/api/trailing", "bot actions", true, SPEC),
    rule("GET", "/api/status", "bot actions", true, SPEC),
    rule("POST", "/api/close", "bot actions", true, SPEC),
    rule("POST", "/api/closeall", "bot actions", true, SPEC),
    rule("POST", "/api/reset-daily", "bot actions", true, SPEC),
    // Scan and signal.
    rule("POST", "/api/mr-combined/scan-and-signal", "scan and signal", true, SPEC),
    // Pump Momentum: an alert-only scanner that never trades.
    rule("GET", "/api/pump-momentum/scan", "pump momentum", false, "alerts only, never trades"),
    rule("POST", "/api/pump-momentum/scan", "pump momentum", false, "alerts only, never trades"),
    rule("GET", "/api/pump-momentum/signals", "pump momentum", false, READ),
    rule("GET", "/api/pump-momentum/signals/{symbol}", "pump momentum", false, READ),
    rule(
        "POST",
        "/api/pump-momentum/outcomes",
        "pump momentum",
        false,
        "fills outcome fields of stored alerts from candles; never trades",
    ),
    // Market multi-timeframe: analysis only.
    rule("GET", "/api/market/{symbol}", "market", false, READ),
    rule("GET", "/api/market/scan", "market", false, "analysis only, never trades"),
    rule("GET", "/api/market/{symbol}/history", "market", false, READ),
    rule("GET", "/api/market/all", "market", false, READ),
    // Messenger and report.
    rule("GET", "/api/notify", "messenger and report", false, SPEC),
    rule("POST", "/api/status/report", "messenger and report", false, "report only"),
    // Protection: the drawdown watch. Measuring is free (the pause it may start only stops
    // entries); resuming entries changes what the bot will act on.
    rule("GET", "/api/protection", "protection", false, "measures; may only pause entries"),
    rule("GET", "/api/equity", "protection", false, "reads only"),
    rule("POST", "/api/protection/resume", "protection", true, "resumes automated entries"),
    rule("POST", "/api/protection/pause", "protection", false, "only stops new entries"),
    // Trade management.
    rule("GET", "/api/trades", "trade management", false, READ),
    rule("GET", "/api/trades/history", "trade management", false, READ),
    rule("GET", "/api/trades/stats", "trade management", false, READ),
    rule("GET", "/api/orders", "trade management", false, READ),
    rule("POST", "/api/trades/sync", "trade management", false, "copies history, no orders"),
    rule(
        "GET",
        "/api/trades/recover",
        "trade management",
        true,
        "adds trades the bot will then manage",
    ),
    rule(
        "POST",
        "/api/trades/restore",
        "trade management",
        true,
        "adds a trade the bot will then manage",
    ),
    // Signal flow.
    rule("POST", "/api/signal", "signal flow", true, "starts a trade, like scan-and-signal"),
    rule("GET", "/api/signal/list", "signal flow", false, READ),
    rule("GET", "/api/signal/pending", "signal flow", false, READ),
    rule("GET", "/api/signal/{symbol}", "signal flow", false, READ),
    rule("POST", "/api/signal/{symbol}/confirm", "signal flow", true, MONEY),
    rule(
        "POST",
        "/api/signal/{symbol}/reject",
        "signal flow",
        false,
        "saying NO is always possible",
    ),
    rule("POST", "/api/signal/cleanup", "signal flow", false, "housekeeping, no orders"),
    // The built-in scheduler's jobs and their runs.
    rule("GET", "/api/scheduler", "scheduler", false, READ),
    rule("GET", "/api/audit", "audit", false, READ),
    // Strategy plugins: listing and dry-run scans (no signals, no orders).
    rule("GET", "/api/strategies", "strategies", false, READ),
    rule(
        "POST",
        "/api/strategies/{name}/scan",
        "strategies",
        false,
        "raw results, no signals, never trades",
    ),
    rule("GET", "/api/strategies/{name}/request", "strategies", false, READ),
    rule("GET", "/api/strategies/{name}/state", "strategies", false, READ),
    rule(
        "DELETE",
        "/api/strategies/{name}/state",
        "strategies",
        false,
        "plugin memory only, like a scan's state updates; no signals, no orders",
    ),
    // The earlier route set (deprecated; old agents still call it): the same rule as the
    // current routes it mirrors. `/scan` and `/custom_check` are the spec's read-only checks:
    // they run a strategy like `POST /api/strategies/{name}/scan`, create no signal and never
    // trade.
    rule("GET", "/health", EARLIER, false, SPEC),
    rule("GET", "/license/status", EARLIER, false, SPEC),
    rule("POST", "/license/register", EARLIER, false, SPEC),
    rule("POST", "/license/activate", EARLIER, false, SPEC),
    rule("GET", "/dashboard", EARLIER, false, SPEC),
    rule("GET", "/scan", EARLIER, false, "read-only check: no signals, never trades"),
    rule("POST", "/trade", EARLIER, true, SPEC),
    rule("GET", "/custom_check", EARLIER, false, "read-only check: no signals, never trades"),
    rule("GET", "/trailing", EARLIER, true, SPEC),
    rule("GET", "/status", EARLIER, true, SPEC),
    rule("POST", "/api/scan-and-signal", EARLIER, true, SPEC),
];

/// The rule for a matched route, if the table has one.
pub fn rule_for(method: &Method, path: &str) -> Option<&'static RouteRule> {
    /// The table by (method, path): the license layer asks on every request.
    static INDEX: LazyLock<HashMap<(&str, &str), &RouteRule>> =
        LazyLock::new(|| ROUTES.iter().map(|r| ((r.method, r.path), r)).collect());
    let method = if method == Method::HEAD { "GET" } else { method.as_str() };
    INDEX.get(&(method, path)).copied()
}

/// Whether a matched route needs an active license: the table decides; a path missing from it
/// needs one whatever its prefix (fail closed). A listed path asked with a method it does not
/// have passes, so the router answers 405.
pub fn needs_license(method: &Method, path: &str) -> bool {
    if method == Method::OPTIONS {
        return false;
    }
    match rule_for(method, path) {
        Some(rule) => rule.licensed,
        None => !ROUTES.iter().any(|r| r.path == path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_row_per_route_and_follows_the_spec() {
        for (i, a) in ROUTES.iter().enumerate() {
            for b in &ROUTES[i + 1..] {
                assert!(a.method != b.method || a.path != b.path, "duplicate row {a:?}");
            }
        }
        let licensed = |m: &str, p: &str| needs_license(&m.parse().unwrap(), p);
        assert!(licensed("POST", "/api/trade"));
        assert!(licensed("POST", "/api/signal/{symbol}/confirm"));
        assert!(!licensed("POST", "/api/signal/{symbol}/reject"));
        assert!(!licensed("GET", "/api/health"));
        assert!(!licensed("HEAD", "/api/health"));
        assert!(licensed("HEAD", "/api/status"));
        assert!(licensed("POST", "/api/some-new-route"), "unlisted routes fail closed");
        assert!(licensed("GET", "/some-new-route"), "without the /api prefix too");
        assert!(licensed("POST", "/trade"));
        assert!(licensed("GET", "/status"));
        assert!(licensed("POST", "/api/scan-and-signal"));
        assert!(!licensed("GET", "/health"));
        assert!(!licensed("GET", "/scan"), "a read-only check");
        assert!(!licensed("POST", "/health"), "a wrong method is the router's 405");
        assert!(!licensed("OPTIONS", "/api/trade"));
        assert!(!licensed("DELETE", "/api/health"), "a wrong method is the router's 405");
    }
}
