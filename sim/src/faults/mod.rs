//! Injected faults: what a test arms through `POST /sim/faults` (or `Sim::inject`) to make the
//! next matching requests slow, failing, rate limited, banned, rejected, executed without an
//! answer, or executed with a damaged answer.
//!
//! - [`damage`]: the damaged answers (unreadable, incomplete or contradictory JSON, a proxy's
//!   error page, a late, throttled or cut answer) told after the request executed.
//! - [`mutation`]: the seeded random mode that damages a share of all answers.
//! - `after`: what becomes of an answer once its request ran (sent now, late, or never);
//!   `answer`: the made-up answers' wire and the ways an answer leaves, which it and the
//!   damages speak.

pub(crate) mod after;
pub(crate) mod answer;
pub mod damage;
pub mod mutation;

use axum::http::Method;
use damage::Damage;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::time::Instant;

/// What an injected fault does.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FaultKind {
    /// Hold the response for `ms` (after executing, unless `before`).
    Delay {
        ms: u64,
        #[serde(default)]
        before: bool,
    },
    /// Answer with a 5xx; with `execute` the request is executed first (outcome unknown to the
    /// client, as on the real exchange).
    ServerError {
        #[serde(default = "default_5xx")]
        status: u16,
        #[serde(default)]
        execute: bool,
    },
    /// HTTP 429, -1003, with Retry-After; not executed.
    RateLimit { retry_after: u64 },
    /// HTTP 418 IP ban, -1003, with Retry-After; not executed.
    Ban { retry_after: u64 },
    /// Execute the request, then cut the connection without answering.
    DropAfterExecute,
    /// Reject with this code (HTTP 400, or 429 for -1003/-1015); not executed.
    Reject {
        code: i64,
        #[serde(default)]
        msg: Option<String>,
    },
    /// Execute the request, then damage its answer as `damage` says, with the picks (cut
    /// point, field, status) drawn from `seed`: the client meets an answer it cannot trust
    /// for an order that exists.
    Damage {
        damage: Damage,
        #[serde(default)]
        seed: u64,
        /// How long `slow` holds the answer back (default 2000 ms).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ms: Option<u64>,
        /// The Retry-After of `rate_limited` (default 1 s) and `banned` (default 2 s).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<u64>,
    },
}

fn default_5xx() -> u16 {
    500
}

/// A fault armed through `POST /sim/faults`: applies to the next `count` matching requests.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Fault {
    #[serde(flatten)]
    pub kind: FaultKind,
    #[serde(default = "one")]
    pub count: u32,
    /// Exact path to match; default: the order-placing endpoints (POST /api/v3/order,
    /// /api/v3/orderList/oco, /api/v3/order/oco).
    #[serde(default)]
    pub path: Option<String>,
    /// HTTP method to match (with `path`); any if absent.
    #[serde(default)]
    pub method: Option<String>,
    /// Matching requests to let through before the fault applies: every exchange B action
    /// goes to `POST /exchange`, so "the take-profit after the entry" is `skip: 1` there.
    #[serde(default)]
    pub skip: u32,
}

fn one() -> u32 {
    1
}

impl Fault {
    pub fn new(kind: FaultKind) -> Self {
        Self { kind, count: 1, path: None, method: None, skip: 0 }
    }
    pub(crate) fn matches(&self, method: &Method, path: &str) -> bool {
        match &self.path {
            Some(p) => {
                p == path
                    && self
                        .method
                        .as_deref()
                        .is_none_or(|m| m.eq_ignore_ascii_case(method.as_str()))
            }
            None => method == Method::POST && is_order_placement(path),
        }
    }
}

/// Exchange A's paths that place orders: the default target of an injected fault. Exchange
/// A's front end asks the same question (placements cost no weight), so the list lives here,
/// below both.
pub fn is_order_placement(path: &str) -> bool {
    matches!(path, "/api/v3/order" | "/api/v3/orderList/oco" | "/api/v3/order/oco")
}

/// A fault on the WebSocket connections that are open when it is armed
/// (`POST /sim/streams/faults`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StreamFault {
    #[serde(flatten)]
    pub kind: StreamFaultKind,
    /// Which connections: exchange A's WebSocket API (user data) or market streams, or
    /// exchange B's `/ws`; all if absent.
    #[serde(default)]
    pub service: Option<StreamService>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StreamService {
    UserData,
    Market,
    /// Exchange B's WebSocket (`"exchange_b"`).
    ExchangeB,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StreamFaultKind {
    /// Cut the connection without a close frame.
    Drop,
    /// Send nothing for `ms` (events of that time are lost, as on a dead link; no pings), on the
    /// open connections and on those opened meanwhile.
    Silence { ms: u64 },
    /// Hold every event `ms` before sending it, until a delay of 0 is armed.
    Delay { ms: u64 },
    /// Announce `serverShutdown`, then close after the configured grace.
    ServerShutdown,
}

impl StreamFault {
    pub fn new(kind: StreamFaultKind) -> Self {
        Self { kind, service: None }
    }
    pub(crate) fn applies_to(&self, service: StreamService) -> bool {
        self.service.is_none_or(|s| s == service)
    }
}

/// The frames a connection holds back under a stream `delay` fault, each until its time
/// (shared by every WebSocket front end).
#[derive(Debug, Default)]
pub(crate) struct Held {
    delay: Duration,
    frames: VecDeque<(Instant, String)>,
}

impl Held {
    /// Holds every later frame `ms` (0 ends the delay).
    pub(crate) fn set_delay(&mut self, ms: u64) {
        self.delay = Duration::from_millis(ms);
    }

    /// Queues `frames` behind the delay and hands back those due now, in order.
    pub(crate) fn due(&mut self, frames: Vec<String>) -> Vec<String> {
        let now = Instant::now();
        self.frames.extend(frames.into_iter().map(|f| (now + self.delay, f)));
        let due = self.frames.iter().take_while(|(at, _)| *at <= now).count();
        self.frames.drain(..due).map(|(_, f)| f).collect()
    }
}
