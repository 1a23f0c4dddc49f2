//! Damaged answers: what a mutating proxy between the client and the exchange does to an
//! answer after the exchange executed the request. The order exists; the client meets an
//! answer it cannot read, one with a field missing or of the wrong type, one that contradicts
//! itself, a proxy's error page, an empty 200, a late answer, a throttle the exchange never
//! sent, or no answer at all. The service must take each as "outcome unknown" (or, for
//! reordered keys, as the correct answer it is) and never place the order a second time.
//!
//! A damage is armed once with [`FaultKind::Damage`](crate::FaultKind::Damage) or drawn per
//! answer by the random mode ([`super::mutation`]); either way its picks come from a seed.
//!
//! - [`json`]: the ordered JSON tree the body damages edit;
//! - [`edits`]: the damages that rewrite the body.

mod edits;
mod json;
#[cfg(test)]
mod tests;

use super::answer::{Delivery, Throttle, Wire};
use crate::clock::Millis;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use fastrand::Rng;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How long `slow` holds an answer back unless told.
pub const DEFAULT_SLOW_MS: u64 = 2000;
/// The Retry-After of `rate_limited` unless told.
pub const DEFAULT_RATE_LIMITED_RETRY_AFTER: u64 = 1;
/// The Retry-After of `banned` unless told.
pub const DEFAULT_BANNED_RETRY_AFTER: u64 = 2;

/// What is done to an answer after its request executed normally.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Damage {
    /// The body cut at a point in its first half (invalid JSON), status unchanged.
    Truncated,
    /// An object answer becomes a one-element list holding it, a list `{"data": [...]}`.
    WrongShape,
    /// One scalar at any depth gets a value of another JSON type (string → 7, number → "x",
    /// bool → "yes").
    WrongType,
    /// One member of the top-level object (or of a top-level list's first element) is removed.
    MissingField,
    /// One numeric value (a JSON number or a decimal string) becomes 1e400, keeping its type.
    HugeNumber,
    /// One numeric value becomes -0.0001, keeping its type.
    NegativeNumber,
    /// One enum field (status, side, type, ...) becomes "MYSTERY_VALUE"; without one, as
    /// `wrong_type`.
    UnknownEnum,
    /// One top-level key repeated at the end of its object with a different value.
    DuplicateKeys,
    /// The keys of every object in reverse order: still a correct answer.
    ReorderedKeys,
    /// A proxy's HTML error page with status 502, 503 or 504.
    HtmlError,
    /// Status 200 with an empty body.
    EmptyOk,
    /// The real answer, held back (`ms`, default 2000).
    Slow,
    /// HTTP 429 with Retry-After and the wire's rate-limit body, though the request ran.
    RateLimited,
    /// HTTP 418 with Retry-After and the wire's ban body, though the request ran and nothing
    /// is banned.
    Banned,
    /// The connection cut without an answer.
    Dropped,
}

impl Damage {
    /// Every kind, in declaration order (the random mode's default choice).
    pub const ALL: [Damage; 15] = [
        Damage::Truncated,
        Damage::WrongShape,
        Damage::WrongType,
        Damage::MissingField,
        Damage::HugeNumber,
        Damage::NegativeNumber,
        Damage::UnknownEnum,
        Damage::DuplicateKeys,
        Damage::ReorderedKeys,
        Damage::HtmlError,
        Damage::EmptyOk,
        Damage::Slow,
        Damage::RateLimited,
        Damage::Banned,
        Damage::Dropped,
    ];

    /// Whether the kind reads `ms` (`slow`).
    pub fn takes_ms(self) -> bool {
        self == Damage::Slow
    }

    /// Whether the kind reads `retry_after` (`rate_limited`, `banned`).
    pub fn takes_retry_after(self) -> bool {
        matches!(self, Damage::RateLimited | Damage::Banned)
    }
}

/// One damage to do to one answer, as [`FaultKind::Damage`](crate::FaultKind::Damage) arms it.
pub(crate) struct Harm {
    pub(crate) damage: Damage,
    pub(crate) seed: u64,
    pub(crate) ms: Option<u64>,
    pub(crate) retry_after: Option<u64>,
}

impl Harm {
    /// What becomes of `response` (the answer of a request that ran at `now` on `wire`).
    pub(crate) async fn apply(&self, response: Response, wire: &Wire, now: Millis) -> Delivery {
        let throttled = |throttle, default| {
            Delivery::Now((wire.throttled)(throttle, self.retry_after.unwrap_or(default), now))
        };
        match self.damage {
            Damage::Slow => {
                Delivery::Late(response, Duration::from_millis(self.ms.unwrap_or(DEFAULT_SLOW_MS)))
            }
            Damage::Dropped => Delivery::Cut,
            Damage::RateLimited => {
                throttled(Throttle::RateLimited, DEFAULT_RATE_LIMITED_RETRY_AFTER)
            }
            Damage::Banned => throttled(Throttle::Banned, DEFAULT_BANNED_RETRY_AFTER),
            Damage::HtmlError => Delivery::Now(html_error(self.seed)),
            Damage::EmptyOk => {
                let (mut parts, _) = response.into_parts();
                parts.status = StatusCode::OK;
                Delivery::Now(Response::from_parts(parts, Body::empty()))
            }
            body_damage => {
                let (parts, body) = response.into_parts();
                // The simulator's answers are whole in memory: collecting cannot wait or fail.
                let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
                let edited = edits::edit(body_damage, &bytes, self.seed, wire.enum_fields);
                Delivery::Now(Response::from_parts(parts, Body::from(edited)))
            }
        }
    }
}

/// The gateway errors a proxy in front of an exchange answers with, as nginx writes them.
const GATEWAY_ERRORS: [(StatusCode, &str); 3] = [
    (StatusCode::BAD_GATEWAY, "502 Bad Gateway"),
    (StatusCode::SERVICE_UNAVAILABLE, "503 Service Temporarily Unavailable"),
    (StatusCode::GATEWAY_TIMEOUT, "504 Gateway Time-out"),
];

/// A proxy's HTML error page, its status drawn from `seed`.
fn html_error(seed: u64) -> Response {
    let (status, title) = GATEWAY_ERRORS[Rng::with_seed(seed).usize(..GATEWAY_ERRORS.len())];
    let page = format!(
        "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    );
    let mut r = Response::new(Body::from(page));
    *r.status_mut() = status;
    r.headers_mut().insert("content-type", HeaderValue::from_static("text/html"));
    r
}
