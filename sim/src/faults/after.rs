//! What becomes of an answer once its request ran, by the fault armed for it (or the damage the
//! random mode drew): sent now (perhaps replaced or damaged), sent late, or never (the
//! connection cut). Both exchanges' REST front ends go through here, each with its [`Wire`];
//! [`crate::delivery`] then sends the answer as decided.

use super::FaultKind;
use super::answer::{Delivery, Wire};
use super::damage::Harm;
use crate::clock::Millis;
use axum::response::Response;
use std::time::Duration;

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
