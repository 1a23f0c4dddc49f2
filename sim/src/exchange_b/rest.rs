//! Exchange B's HTTP face on the simulator's port: `POST /info` and `POST /exchange`. Every
//! request is weighed on exchange B's own meter (HTTP 429 past the limit), meets the faults
//! armed for its path (or the random mode's damage), runs, and is recorded in the request log.
//! `/exchange` checks the envelope first: no vault, a signature that recovers a known signer, a
//! fresh nonce.

use super::actions::{self, Outcome};
use super::info::{self, InfoRequest};
use crate::clock::Millis;
use crate::delivery;
use crate::faults::FaultKind;
use crate::faults::after;
use crate::faults::answer::{Throttle, Wire};
use crate::limits::Admission;
use crate::state::exchange_b::action_budget;
use crate::state::{RequestRecord, Sim};
use crate::transport::Conn;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};
use spotbot_exchange_b_protocol::signing::recover_signer;
use spotbot_exchange_b_protocol::{Action, Envelope};
use std::time::Duration;

pub const INFO_PATH: &str = "/info";
pub const EXCHANGE_PATH: &str = "/exchange";

/// Exchange B's voice in the answers made up after executing.
const WIRE: Wire =
    Wire { enum_fields: &["status", "side", "orderType", "tif"], server_error, throttled };

/// `POST /info`.
pub async fn info(
    State(sim): State<Sim>,
    ConnectInfo(conn): ConnectInfo<Conn>,
    body: Bytes,
) -> Response {
    let parsed = serde_json::from_slice::<InfoRequest>(&body);
    let weight = parsed.as_ref().map_or(20, InfoRequest::weight);
    let kind = type_in(&body, "/type");
    let call = Call { path: INFO_PATH, weight, client_order_id: None, kind };
    handle(&sim, &conn, call, |sim, now| match &parsed {
        Err(e) => Ran::refused(unprocessable(&e.to_string())),
        Ok(req) => match info::answer(sim, req, now) {
            Ok(a) => {
                Ran { response: json_response(&a.body), executed: true, surcharge: a.surcharge }
            }
            Err(text) => Ran::refused(unprocessable(&text)),
        },
    })
    .await
}

/// `POST /exchange`.
pub async fn exchange(
    State(sim): State<Sim>,
    ConnectInfo(conn): ConnectInfo<Conn>,
    body: Bytes,
) -> Response {
    let parsed = serde_json::from_slice::<Envelope>(&body);
    let (weight, client_order_id) = match &parsed {
        Ok(env) => (1 + env.action.batch_len() as u64 / 40, first_cloid(&env.action)),
        Err(_) => (1, None),
    };
    let kind = type_in(&body, "/action/type");
    let call = Call { path: EXCHANGE_PATH, weight, client_order_id, kind };
    handle(&sim, &conn, call, |sim, now| match &parsed {
        Err(e) => Ran::refused(unprocessable(&e.to_string())),
        Ok(env) => {
            let out = act(sim, env, now);
            Ran { response: json_response(&out.body), executed: out.executed, surcharge: 0 }
        }
    })
    .await
}

/// The `type` at `pointer` of a JSON body, for the request log (also of a body that is not a
/// valid request).
fn type_in(body: &Bytes, pointer: &str) -> Option<String> {
    let value = serde_json::from_slice::<Value>(body).ok()?;
    value.pointer(pointer)?.as_str().map(String::from)
}

/// The cloid a request names first (the request log's client order id).
fn first_cloid(action: &Action) -> Option<String> {
    let cloid = match action {
        Action::Order { orders, .. } => orders.iter().find_map(|o| o.c),
        Action::CancelByCloid { cancels } => cancels.first().map(|c| c.cloid),
        Action::Cancel { .. } => None,
    };
    cloid.map(|c| c.to_string())
}

/// A top-level `err` answer.
fn err(text: String) -> Outcome {
    Outcome {
        body: json!({"status": "err", "response": text}),
        executed: false,
        refused: Vec::new(),
    }
}

/// Checks the envelope and runs its action for the signer's account (also for the
/// WebSocket's `post` requests); refused orders go to the log `orderUpdates` reads.
pub(super) fn act(sim: &Sim, env: &Envelope, now: Millis) -> Outcome {
    if env.vault_address.is_some() {
        return err("Vault and sub-account actions are not simulated: vaultAddress must be null."
            .to_string());
    }
    let state = sim.exchange_b();
    let signer = match recover_signer(
        &env.action,
        env.nonce,
        None,
        env.expires_after,
        state.network,
        &env.signature,
    ) {
        Ok(signer) => signer,
        Err(e) => return err(format!("L1 error: {e}")),
    };
    let account = {
        let mut wallets = state.wallets();
        let Some(account) = wallets.signer(&signer) else {
            return err(format!("L1 error: User or API Wallet {signer} does not exist."));
        };
        if let Err(e) = wallets.use_nonce(signer, env.nonce, now) {
            return err(e.text());
        }
        account
    };
    let volume = action_budget::traded_volume(&sim.engine(), account);
    let cap = action_budget::cap(state.initial_requests, volume);
    let cap = action_budget::cap_for(cap, env.action.is_cancel());
    let spent = state.wallets().spend_actions(account, env.action.batch_len(), cap, now);
    if let Err(used) = spent {
        return err(action_budget::refusal(used, cap, volume));
    }
    let mut out = actions::run(&mut sim.engine(), account, &env.action, now);
    let mut refused = state.refused();
    for order in out.refused.drain(..) {
        refused.push(order);
    }
    out
}

/// What the handler knows before running a request.
struct Call {
    path: &'static str,
    weight: u64,
    client_order_id: Option<String>,
    /// The request's `type` (see [`RequestRecord::kind`]).
    kind: Option<String>,
}

/// What running a request gave.
struct Ran {
    response: Response,
    executed: bool,
    /// Weight charged after the answer (per item returned).
    surcharge: u64,
}

impl Ran {
    fn refused(response: Response) -> Self {
        Self { response, executed: false, surcharge: 0 }
    }
}

/// Weighs, applies the armed fault, runs and records one request.
async fn handle(
    sim: &Sim,
    conn: &Conn,
    call: Call,
    run: impl FnOnce(&Sim, Millis) -> Ran,
) -> Response {
    let path = call.path;
    let now = sim.now_ms();
    let mut record = RequestRecord {
        time: now,
        method: Method::POST.to_string(),
        path: call.path.to_string(),
        client_order_id: call.client_order_id,
        kind: call.kind,
        status: 0,
        executed: false,
        fault: None,
    };
    let state = sim.exchange_b();
    let admission = state.limits().admit(now, call.weight, state.weight_limit);
    if let Admission::OverLimit { used, retry_after_secs } = admission {
        let text = format!(
            "Too many requests: {used} request weight used of {} per minute",
            state.weight_limit
        );
        return finish(sim, record, with_retry_after(text_response(429, &text), retry_after_secs));
    }
    let fault = sim.take_fault(&Method::POST, path).map(|f| f.kind);
    record.fault = fault.as_ref().map(|k| format!("{k:?}"));
    if let Some(early) = answer_before(fault.as_ref(), path).await {
        return finish(sim, record, early);
    }
    let ran = run(sim, now);
    record.executed = ran.executed;
    if ran.surcharge > 0 {
        state.limits().charge(ran.surcharge);
    }
    let after =
        fault.or_else(|| sim.draw_damage(path).inspect(|k| record.fault = Some(format!("{k:?}"))));
    let delivery = after::after_execute(after.as_ref(), ran.response, &WIRE, now).await;
    delivery::deliver(delivery, sim, conn, record, |record, r| finish(sim, record, r)).await
}

/// The answer of a fault that acts before the request runs (it then never runs), after a
/// delay that comes first.
async fn answer_before(fault: Option<&FaultKind>, path: &str) -> Option<Response> {
    match fault? {
        FaultKind::Delay { ms, before: true } => {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
            None
        }
        FaultKind::ServerError { status, execute: false } => Some(server_error(*status)),
        FaultKind::RateLimit { retry_after } => {
            Some(throttled(Throttle::RateLimited, *retry_after, 0))
        }
        FaultKind::Ban { retry_after } => Some(throttled(Throttle::Banned, *retry_after, 0)),
        FaultKind::Reject { code, msg } => {
            let text = msg.clone().unwrap_or_else(|| format!("Rejected by the simulator ({code})"));
            Some(if path == EXCHANGE_PATH {
                json_response(&json!({"status": "err", "response": text}))
            } else {
                text_response(400, &text)
            })
        }
        _ => None,
    }
}

/// Records the request with the status answered.
fn finish(sim: &Sim, mut record: RequestRecord, response: Response) -> Response {
    record.status = response.status().as_u16();
    sim.record(record);
    response
}

fn json_response(body: &Value) -> Response {
    let mut r = Response::new(Body::from(serde_json::to_vec(body).unwrap_or_default()));
    r.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    r
}

fn text_response(status: u16, text: &str) -> Response {
    let mut r = Response::new(Body::from(text.to_string()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert("content-type", HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

/// The exchange's text for a body it cannot read.
pub(super) fn unprocessable_text(reason: &str) -> String {
    format!("Failed to deserialize the JSON body into the target type: {reason}")
}

/// HTTP 422 with the plain-text body the exchange's server gives a body it cannot read.
fn unprocessable(reason: &str) -> Response {
    text_response(422, &unprocessable_text(reason))
}

fn server_error(status: u16) -> Response {
    text_response(status, "Internal Server Error")
}

/// 429 or 418 with Retry-After `secs` and a plain-text body (exchange B's texts name no time,
/// so the time is unused).
fn throttled(throttle: Throttle, secs: u64, _now: Millis) -> Response {
    let (status, text) = match throttle {
        Throttle::RateLimited => (429, "Too many requests"),
        Throttle::Banned => (418, "IP banned"),
    };
    with_retry_after(text_response(status, text), secs)
}

fn with_retry_after(mut r: Response, secs: u64) -> Response {
    r.headers_mut().insert("retry-after", HeaderValue::from(secs));
    r
}
