//! What becomes of an answer once its request ran, by the fault armed for it (or the damage the
//! random mode drew): sent now (perhaps replaced or damaged), sent late, or never (the
//! connection cut). Both exchanges' REST front ends go through here, each with its [`Wire`].

use super::FaultKind;
use super::damage::Harm;
use crate::clock::Millis;
use crate::server::{RequestRecord, Sim};
use crate::transport::Conn;
use axum::body::Body;
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

/// What the fault `kind` (armed or drawn for this request, which ran at `now`) makes of its
/// answer `response`.
pub(crate) async fn after_execute(
    kind: Option<&FaultKind>,
    response: Response,
    wire: &Wire,
    now: Millis,
) -> Delivery {
    match kind {
        Some(FaultKind::ServerError { status, execute: true }) => {
            Delivery::Now((wire.server_error)(*status))
        }
        Some(FaultKind::Delay { ms, before: false }) => {
            Delivery::Late(response, Duration::from_millis(*ms))
        }
        Some(FaultKind::DropAfterExecute) => Delivery::Cut,
        Some(FaultKind::Damage { damage, seed, ms, retry_after }) => {
            let harm = Harm { damage: *damage, seed: *seed, ms: *ms, retry_after: *retry_after };
            harm.apply(response, wire, now).await
        }
        _ => Delivery::Now(response),
    }
}

/// Sends (or withholds) the answer and records the request: `finish` is the front end's own
/// (its headers, its log rule).
pub(crate) async fn deliver(
    delivery: Delivery,
    sim: &Sim,
    conn: &Conn,
    mut record: RequestRecord,
    finish: impl FnOnce(RequestRecord, Response) -> Response,
) -> Response {
    match delivery {
        Delivery::Now(response) => finish(record, response),
        Delivery::Late(response, wait) => {
            // Record before waiting: a client that gives up cancels this handler.
            let response = finish(record, response);
            tokio::time::sleep(wait).await;
            response
        }
        Delivery::Cut => {
            conn.kill();
            record.status = 0;
            sim.record(record);
            Response::new(Body::empty())
        }
    }
}
