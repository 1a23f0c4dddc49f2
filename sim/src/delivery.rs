//! The last step of both exchanges' REST handlers: the answer sent as the fault decided
//! ([`Delivery`]: now, late, or never with the connection cut) and the request recorded. It
//! needs the simulator's request log and the connection, so it sits above the state and the
//! faults, below the front ends.

use crate::faults::answer::Delivery;
use crate::state::{RequestRecord, Sim};
use crate::transport::Conn;
use axum::body::Body;
use axum::response::Response;

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
