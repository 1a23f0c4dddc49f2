//! What each operation does to the world, for the tools' hints: a client may run a read-only
//! tool freely and should ask its human before a destructive one. The method alone does not
//! say it: `GET /api/trailing` moves stop orders and `GET /api/trades/recover` protects and
//! closes trades. So every operation that is not a plain read is listed here, and the tests
//! check the lists against the document and the license table (whatever moves money needs a
//! license, and every licensed non-GET operation is listed as moving money).

use rmcp::model::ToolAnnotations;

/// The effect of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only: the read-only hint.
    Reads,
    /// Changes the service's state or messages the boss, but places, moves or cancels no
    /// order and does not change which trades the bot will open or manage.
    Changes,
    /// Places, moves, cancels or closes orders, or changes what the bot will trade or manage:
    /// the destructive hint.
    MovesMoney,
}

/// Operations that are no tools, and why.
pub const EXCLUDED: &[(&str, &str, &str)] = &[
    ("GET", "/api/dashboard", "an HTML page for people"),
    ("GET", "/dashboard", "the same HTML page (earlier route set)"),
    ("GET", "/api/dashboard/events", "an endless event stream for the page"),
    ("GET", "/metrics", "Prometheus text for a scraper"),
    ("GET", "/api/pump-momentum/scan", "the same scan as POST /api/pump-momentum/scan, the tool"),
];

/// Operations that move money.
pub const MOVES_MONEY: &[(&str, &str)] = &[
    ("POST", "/api/trade"),
    ("POST", "/api/trade/manual"),
    ("POST", "/api/pending-entries/cancel"),
    ("GET", "/api/pending-entries/check"),
    ("GET", "/api/pending-entries/recover"),
    ("GET", "/api/trailing"),
    ("POST", "/api/close"),
    ("POST", "/api/closeall"),
    ("POST", "/api/reset-daily"),
    ("POST", "/api/mr-combined/scan-and-signal"),
    ("POST", "/api/protection/resume"),
    ("GET", "/api/trades/recover"),
    ("POST", "/api/trades/restore"),
    ("POST", "/api/signal"),
    ("POST", "/api/signal/{symbol}/confirm"),
    ("POST", "/trade"),
    ("GET", "/trailing"),
    ("POST", "/api/scan-and-signal"),
];

/// Operations that change state but move no money.
pub const CHANGES: &[(&str, &str)] = &[
    ("POST", "/api/license/register"),
    ("POST", "/api/license/activate"),
    ("POST", "/license/register"),
    ("POST", "/license/activate"),
    ("POST", "/api/agent/{name}"),
    ("GET", "/api/health/check"),
    ("GET", "/api/notify"),
    ("POST", "/api/status/report"),
    ("POST", "/api/pump-momentum/scan"),
    ("POST", "/api/pump-momentum/outcomes"),
    ("POST", "/api/trades/sync"),
    ("POST", "/api/signal/{symbol}/reject"),
    // Stops new entries only: nothing is placed, moved or closed.
    ("POST", "/api/protection/pause"),
    ("POST", "/api/signal/cleanup"),
    ("POST", "/api/strategies/{name}/scan"),
    ("DELETE", "/api/strategies/{name}/state"),
];

fn listed(list: &[(&str, &str)], method: &str, path: &str) -> bool {
    list.iter().any(|&(m, p)| m == method && p == path)
}

/// Whether the operation is left out of the tools.
pub fn excluded(method: &str, path: &str) -> bool {
    EXCLUDED.iter().any(|&(m, p, _)| m == method && p == path)
}

/// The effect of `method path` (method in upper case). An unlisted GET reads; an unlisted
/// operation of another method is taken to move money (fail closed: the destructive hint
/// asks a human first), and the tests fail until it is listed.
pub fn of(method: &str, path: &str) -> Effect {
    if listed(MOVES_MONEY, method, path) {
        Effect::MovesMoney
    } else if listed(CHANGES, method, path) {
        Effect::Changes
    } else if method == "GET" {
        Effect::Reads
    } else {
        Effect::MovesMoney
    }
}

impl Effect {
    /// The tool annotations of an operation with this effect, titled `title`.
    pub fn annotations(self, title: &str) -> ToolAnnotations {
        let hints = ToolAnnotations::with_title(title);
        match self {
            Effect::Reads => hints.read_only(true),
            Effect::Changes => hints.read_only(false).destructive(false),
            Effect::MovesMoney => hints.read_only(false).destructive(true),
        }
    }
}
