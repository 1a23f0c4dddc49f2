//! The answers the simulator makes up after a request ran, and how an answer leaves: what a
//! front end's wire says in them ([`Wire`], [`Throttle`]) and whether the answer goes now,
//! late or never ([`Delivery`]). The fault handling ([`super::after`]) and the damages
//! ([`super::damage`]) both speak these, so they sit below both.

use crate::clock::Millis;
use axum::response::Response;
use std::time::Duration;

/// Which throttle an answer claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Throttle {
    /// Over the request-weight limit (HTTP 429).
    RateLimited,
    /// IP banned (HTTP 418).
    Banned,
}

/// What a front end's wire says in the answers the simulator makes up after executing.
pub(crate) struct Wire {
    /// The fields whose values are the wire's enums (status, side, order type, ...).
    pub(crate) enum_fields: &'static [&'static str],
    /// A 5xx answer with this status.
    pub(crate) server_error: fn(u16) -> Response,
    /// A throttle answer with Retry-After seconds, at a time (a ban names its end).
    pub(crate) throttled: fn(Throttle, u64, Millis) -> Response,
}

/// How an answer leaves.
pub(crate) enum Delivery {
    /// Sent at once.
    Now(Response),
    /// Sent after the wait.
    Late(Response, Duration),
    /// Never sent: the connection is cut.
    Cut,
}
