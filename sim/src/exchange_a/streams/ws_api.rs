//! Exchange A's WebSocket API at `/ws-api/v3`: the request/response framing (`id` echoed,
//! `status`, `result` or `error`, `rateLimits`), `ping`, `time`, `session.status`,
//! `session.subscriptions`, and the user data stream (`userDataStream.subscribe.signature`,
//! `userDataStream.unsubscribe`) that pushes the account's events as they happen in the core.

use super::link::{Reply, Service};
use super::user_events;
use crate::clock::Millis;
use crate::error::default_msg;
use crate::exchange_a::exchange_info::WEIGHT_LIMIT_PER_MINUTE;
use crate::exchange_a::params::{ApiError, check_timestamp, timestamp, verify_ws_signature};
use crate::exchange_a::wire::to_value;
use crate::faults::StreamService;
use crate::limits::Admission;
use crate::state::Sim;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Subscriptions over the life of one connection (then -2042).
const MAX_SUBSCRIPTION_IDS: u32 = 65_535;

/// One WebSocket API connection.
pub(super) struct WsApi {
    connected_since: Millis,
    return_rate_limits: bool,
    subscriptions: Vec<Subscription>,
    next_subscription: u32,
    /// The next core event this connection has not looked at.
    cursor: u64,
}

struct Subscription {
    id: u32,
    account: usize,
    /// The first event it receives.
    from: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    id: Value,
    status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_limits: Option<Vec<RateLimitCount>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionStatus {
    api_key: Option<String>,
    authorized_since: Option<Millis>,
    connected_since: Millis,
    return_rate_limits: bool,
    server_time: Millis,
    user_data_stream: bool,
}

#[derive(Serialize)]
struct Terminated {
    e: &'static str,
    #[serde(rename = "E")]
    event_time: Millis,
}

#[derive(Serialize)]
struct ErrorBody {
    code: i64,
    msg: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RateLimitCount {
    rate_limit_type: &'static str,
    interval: &'static str,
    interval_num: u32,
    limit: u64,
    count: u64,
}

impl WsApi {
    /// A new connection (opening one costs 2 request weight); `query` is the URL's query.
    pub fn open(sim: &Sim, query: &str) -> Self {
        let now = sim.now_ms();
        let _ = sim.limits().admit(now, 2, WEIGHT_LIMIT_PER_MINUTE);
        Self {
            connected_since: now,
            return_rate_limits: !query.split('&').any(|kv| kv == "returnRateLimits=false"),
            subscriptions: Vec::new(),
            next_subscription: 0,
            cursor: sim.engine().event_count(),
        }
    }

    /// One response frame: `result` or `error`, and the minute's weight unless suppressed.
    fn respond(
        &self,
        id: Value,
        outcome: Result<Value, Failure>,
        used: u64,
        limits: bool,
    ) -> String {
        let rate_limits = (self.return_rate_limits && limits).then(|| {
            vec![RateLimitCount {
                rate_limit_type: "REQUEST_WEIGHT",
                interval: "MINUTE",
                interval_num: 1,
                limit: WEIGHT_LIMIT_PER_MINUTE,
                count: used,
            }]
        });
        let (status, result, error) = match outcome {
            Ok(v) => (200, Some(v), None),
            Err(f) => (f.status, None, Some(f.body)),
        };
        let r = Response { id, status, result, error, rate_limits };
        serde_json::to_string(&r).unwrap_or_default()
    }

    fn request(
        &mut self,
        sim: &Sim,
        method: &str,
        params: &Map<String, Value>,
    ) -> Result<Value, ApiError> {
        let now = sim.now_ms();
        match method {
            "ping" => Ok(json!({})),
            "time" => Ok(json!({ "serverTime": now })),
            "session.status" => Ok(to_value(&SessionStatus {
                api_key: None,
                authorized_since: None,
                connected_since: self.connected_since,
                return_rate_limits: self.return_rate_limits,
                server_time: now,
                user_data_stream: !self.subscriptions.is_empty(),
            })),
            "session.subscriptions" => Ok(Value::Array(
                self.subscriptions.iter().map(|s| json!({ "subscriptionId": s.id })).collect(),
            )),
            "userDataStream.subscribe.signature" => self.subscribe(sim, params, now),
            "userDataStream.unsubscribe" => Ok(json!({})),
            _ => Err(ApiError::bad(-1000, format!("Unknown method '{method}'."))),
        }
    }

    fn subscribe(
        &mut self,
        sim: &Sim,
        p: &Map<String, Value>,
        now: Millis,
    ) -> Result<Value, ApiError> {
        let text = |name: &str| -> Result<String, ApiError> {
            match p.get(name) {
                Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                Some(Value::Number(n)) => Ok(n.to_string()),
                _ => Err(ApiError::mandatory(name)),
            }
        };
        let key = text("apiKey")?;
        let ts = timestamp(&text("timestamp")?)?;
        text("signature")?;
        let (account, secret) = {
            let e = sim.engine();
            let a = e
                .account_by_key(&key)
                .ok_or_else(|| ApiError::new(401, -2015, default_msg(-2015)))?;
            (a, e.accounts[a].secret.clone())
        };
        verify_ws_signature(&secret, p)?;
        let recv_window =
            p.get("recvWindow").map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string));
        check_timestamp(ts, recv_window.as_deref(), now)?;
        if self.subscriptions.iter().any(|s| s.account == account) {
            return Err(ApiError::bad(-2035, "User Data Stream subscription already active."));
        }
        if self.next_subscription >= MAX_SUBSCRIPTION_IDS {
            return Err(ApiError::bad(
                -2042,
                "Maximum subscription ID reached for this connection.",
            ));
        }
        let id = self.next_subscription;
        self.next_subscription += 1;
        let from = sim.engine().event_count();
        self.subscriptions.push(Subscription { id, account, from });
        Ok(json!({ "subscriptionId": id }))
    }

    /// Ends one subscription (or all without `subscriptionId`): the frames that say so.
    fn unsubscribe(&mut self, params: &Map<String, Value>, now: Millis) -> Vec<String> {
        let wanted = params.get("subscriptionId").and_then(Value::as_u64);
        let (ended, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.subscriptions)
            .into_iter()
            .partition(|s| wanted.is_none_or(|w| u64::from(s.id) == w));
        self.subscriptions = kept;
        ended
            .iter()
            .map(|s| {
                let ended = Terminated { e: "eventStreamTerminated", event_time: now };
                frame(s.id, &serde_json::to_string(&ended).unwrap_or_default())
            })
            .collect()
    }
}

/// A user data frame around an event's JSON text.
fn frame(subscription_id: u32, event: &str) -> String {
    format!(r#"{{"subscriptionId":{subscription_id},"event":{event}}}"#)
}

/// The weight of each method (unknown ones cost 1).
fn weight(method: &str) -> u64 {
    match method {
        "ping" | "time" => 1,
        _ => 2,
    }
}

impl Service for WsApi {
    fn kind(&self) -> StreamService {
        StreamService::UserData
    }

    fn on_text(&mut self, sim: &Sim, text: &str) -> Reply {
        let Ok(Value::Object(req)) = serde_json::from_str::<Value>(text) else {
            let err = ApiError::bad(-1000, "Malformed request: not a JSON object.");
            return Reply::one(self.respond(Value::Null, Err(err.into()), 0, false));
        };
        let id = req.get("id").cloned().unwrap_or(Value::Null);
        let Some(method) = req.get("method").and_then(Value::as_str) else {
            let err = ApiError::mandatory("method").into();
            return Reply::one(self.respond(id, Err(err), 0, false));
        };
        let method = method.strip_prefix("v3/").unwrap_or(method);
        let empty = Map::new();
        let params = match req.get("params") {
            None => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => {
                let err = ApiError::mandatory("params").into();
                return Reply::one(self.respond(id, Err(err), 0, false));
            }
        };
        // `returnRateLimits: false` leaves the array out of this answer; the limits still apply.
        let limits = params.get("returnRateLimits") != Some(&Value::Bool(false));
        let now = sim.now_ms();
        let used = match sim.limits().admit(now, weight(method), WEIGHT_LIMIT_PER_MINUTE) {
            Admission::Admitted { used } => used,
            Admission::OverLimit { used, retry_after_secs } => {
                let e = rate_limited(now, now + retry_after_secs as i64 * 1000, false);
                return Reply::one(self.respond(id, Err(e), used, limits));
            }
            Admission::Banned { until, .. } => {
                let frame = self.respond(id, Err(rate_limited(now, until, true)), 0, limits);
                return Reply { frames: vec![frame], close: true };
            }
        };
        let mut frames = Vec::new();
        let outcome = if method == "userDataStream.unsubscribe" {
            frames = self.unsubscribe(params, now);
            Ok(json!({}))
        } else {
            self.request(sim, method, params).map_err(Failure::from)
        };
        frames.insert(0, self.respond(id, outcome, used, limits));
        Reply { frames, close: false }
    }

    fn poll(&mut self, sim: &Sim) -> Vec<String> {
        let e = sim.engine();
        let events = e.events_since(self.cursor);
        self.cursor = e.event_count();
        let mut frames = Vec::new();
        for ev in events {
            for s in &self.subscriptions {
                if s.account == ev.account() && ev.seq >= s.from {
                    frames.push(frame(s.id, &user_events::render(&e, ev)));
                }
            }
        }
        frames
    }

    fn shutdown_frame(&self, now: Millis) -> String {
        let event = serde_json::to_string(&super::Shutdown::new(now)).unwrap_or_default();
        format!(r#"{{"event":{event}}}"#)
    }
}

/// A refused request: its status and error body.
struct Failure {
    status: u16,
    body: ErrorBody,
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Self { status: e.status, body: ErrorBody { code: e.code, msg: e.msg, data: None } }
    }
}

/// A 429 (or, banned, 418) answer with `data.serverTime` and `data.retryAfter`.
fn rate_limited(now: Millis, retry_after: Millis, banned: bool) -> Failure {
    let msg = if banned {
        format!(
            "Way too much request weight used; IP banned until {retry_after}. Please use WebSocket Streams for live updates to avoid bans."
        )
    } else {
        format!(
            "Too much request weight used; current limit is {WEIGHT_LIMIT_PER_MINUTE} request weight per 1 MINUTE. Please use WebSocket Streams for live updates to avoid polling the API."
        )
    };
    let data = Some(json!({ "serverTime": now, "retryAfter": retry_after }));
    Failure { status: if banned { 418 } else { 429 }, body: ErrorBody { code: -1003, msg, data } }
}
