//! `post` requests: an `/info` body or a signed `/exchange` body sent over the socket,
//! answered on channel `post` with the caller's `id` by the same code that answers the REST
//! calls (`info::answer`, `rest::act`: signatures, nonces, spot rules). Unlike REST they are
//! not weighed, meet no armed faults and are not in the request log.

use crate::exchange_b::info::{self, InfoRequest};
use crate::exchange_b::rest::{act, unprocessable_text};
use crate::state::Sim;
use serde_json::{Value, json};
use spotbot_exchange_b_protocol::Envelope;

/// The `post` message answering `req`, or None when it has no numeric `id` or no `request`.
pub fn answer(sim: &Sim, req: &Value) -> Option<String> {
    let id = req.get("id").filter(|id| id.is_u64())?;
    let request = req.get("request")?;
    let payload = request.get("payload").cloned().unwrap_or(Value::Null);
    let now = sim.now_ms();
    let error = |reason: String| json!({"type": "error", "payload": format!("422 {}", unprocessable_text(&reason))});
    let response = match request.get("type").and_then(Value::as_str) {
        Some("info") => match serde_json::from_value::<InfoRequest>(payload.clone()) {
            Ok(r) => match info::answer(sim, &r, now) {
                Ok(a) => {
                    json!({"type": "info", "payload": {"type": payload["type"], "data": a.body}})
                }
                Err(reason) => error(reason),
            },
            Err(e) => error(e.to_string()),
        },
        Some("action") => match serde_json::from_value::<Envelope>(payload) {
            Ok(env) => json!({"type": "action", "payload": act(sim, &env, now).body}),
            Err(e) => error(e.to_string()),
        },
        _ => error(format!("unknown request type in {request}")),
    };
    Some(json!({"channel": "post", "data": {"id": id, "response": response}}).to_string())
}
