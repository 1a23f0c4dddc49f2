//! Exchange A's REST front end: one handler for every `/api/v3/` path that reads the
//! parameters, meters the request weight, applies injected faults, checks signatures, runs the
//! endpoint against the core, and answers with the exchange's headers and error bodies (or a
//! damaged answer, when a fault or the random mode says so).

use super::account;
use super::exchange_info::WEIGHT_LIMIT_PER_MINUTE;
use super::params::{ApiError, Params, check_timestamp, timestamp, verify_signature};
use super::wire::{ErrorJson, to_value};
use super::{lists, market_data, orders};
use crate::clock::Millis;
use crate::delivery;
use crate::error::default_msg;
use crate::faults::after;
use crate::faults::answer::{Throttle, Wire};
use crate::faults::{FaultKind, is_order_placement};
use crate::limits::Admission;
use crate::state::{RequestRecord, Sim};
use crate::transport::Conn;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::time::Duration;

const JSON_CT: &str = "application/json;charset=UTF-8";

fn json_response(status: u16, body: &serde_json::Value) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut r = Response::new(Body::from(bytes));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert("content-type", HeaderValue::from_static(JSON_CT));
    r
}

pub(crate) fn error_response(e: &ApiError) -> Response {
    json_response(e.status, &to_value(&ErrorJson { code: e.code, msg: e.msg.clone() }))
}

/// Exchange A's voice in the answers made up after executing.
const WIRE: Wire = Wire {
    enum_fields: &["status", "side", "type", "timeInForce", "listOrderStatus", "listStatusType"],
    server_error,
    throttled,
};

/// A 5xx with -1001, the exchange's internal error.
fn server_error(status: u16) -> Response {
    error_response(&ApiError::new(
        status,
        -1001,
        "Internal error; unable to process your request. Please try again.",
    ))
}

/// 429 or 418 -1003 with Retry-After `secs`; a ban names its end, `secs` after `now`.
fn throttled(throttle: Throttle, secs: u64, now: Millis) -> Response {
    let e = match throttle {
        Throttle::RateLimited => weight_error(),
        Throttle::Banned => banned_error(ban_end(now, secs)),
    };
    with_retry_after(error_response(&e), secs)
}

/// When a ban of `secs` from `now` ends (at most three days, so no clock overflows).
fn ban_end(now: Millis, secs: u64) -> Millis {
    now + secs.min(259_200) as i64 * 1000
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Security {
    None,
    Signed,
}

/// (security, weight) of an endpoint, or None for an unknown path.
fn endpoint(method: &Method, path: &str, p: &Params) -> Option<(Security, u64)> {
    use Security::*;
    let has_symbol = p.has("symbol");
    Some(match (method.as_str(), path) {
        ("GET", "/api/v3/ping") | ("GET", "/api/v3/time") => (None, 1),
        ("GET", "/api/v3/exchangeInfo") => (None, 20),
        ("GET", "/api/v3/klines") | ("GET", "/api/v3/uiKlines") => (None, 2),
        ("GET", "/api/v3/ticker/24hr") => (None, if has_symbol { 2 } else { 80 }),
        ("GET", "/api/v3/ticker/price") => (None, if has_symbol { 2 } else { 4 }),
        ("GET", "/api/v3/avgPrice") => (None, 2),
        ("GET", "/api/v3/depth") => (None, 5),
        ("GET", "/api/v3/account") => (Signed, 20),
        ("POST", "/api/v3/order") | ("POST", "/api/v3/order/test") => (Signed, 1),
        ("GET", "/api/v3/order") => (Signed, 4),
        ("DELETE", "/api/v3/order") => (Signed, 1),
        ("GET", "/api/v3/openOrders") => (Signed, if has_symbol { 6 } else { 80 }),
        ("DELETE", "/api/v3/openOrders") => (Signed, 1),
        ("GET", "/api/v3/allOrders") => (Signed, 20),
        ("GET", "/api/v3/myTrades") => (Signed, if p.has("orderId") { 5 } else { 20 }),
        ("POST", "/api/v3/orderList/oco") | ("POST", "/api/v3/order/oco") => (Signed, 1),
        ("DELETE", "/api/v3/orderList") => (Signed, 1),
        ("GET", "/api/v3/orderList") => (Signed, 4),
        ("GET", "/api/v3/allOrderList") => (Signed, 20),
        ("GET", "/api/v3/openOrderList") => (Signed, 6),
        ("GET", "/api/v3/rateLimit/order") => (Signed, 40),
        _ => return Option::None,
    })
}

/// Successful order placement and cancels cost no weight (rule of 2026-04-02).
fn zero_weight_on_success(method: &Method, path: &str) -> bool {
    (method == Method::POST && is_order_placement(path))
        || (method == Method::DELETE
            && matches!(path, "/api/v3/order" | "/api/v3/openOrders" | "/api/v3/orderList"))
}

fn client_id_of(p: &Params) -> Option<String> {
    ["newClientOrderId", "listClientOrderId", "origClientOrderId"]
        .iter()
        .find_map(|k| p.get(k).map(str::to_string))
}

/// Every request that is not the admin API: exchange A's REST paths.
pub async fn api(
    State(sim): State<Sim>,
    ConnectInfo(conn): ConnectInfo<Conn>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let raw_query = uri.query().unwrap_or("").to_string();
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let now = sim.now_ms();
    let mut record = RequestRecord {
        time: now,
        method: method.to_string(),
        path: path.clone(),
        client_order_id: None,
        kind: None,
        status: 0,
        executed: false,
        fault: None,
    };
    let params = match Params::parse(&raw_query, &raw_body) {
        Ok(p) => p,
        Err(e) => return finish(&sim, record, error_response(&e), 0),
    };
    record.client_order_id = client_id_of(&params);
    let Some((security, weight)) = endpoint(&method, &path, &params) else {
        let mut r = Response::new(Body::from("<html><body><h2>404 Not found</h2></body></html>"));
        *r.status_mut() = StatusCode::NOT_FOUND;
        return finish(&sim, record, r, 0);
    };

    // Rate limits: IP ban, then the per-minute weight.
    let charge = if zero_weight_on_success(&method, &path) { 0 } else { weight };
    let admission = sim.limits().admit(now, charge, WEIGHT_LIMIT_PER_MINUTE);
    let used = match admission {
        Admission::Admitted { used } => used,
        Admission::OverLimit { used, retry_after_secs } => {
            let r = with_retry_after(error_response(&weight_error()), retry_after_secs);
            return finish(&sim, record, r, used);
        }
        Admission::Banned { until, retry_after_secs } => {
            let r = with_retry_after(error_response(&banned_error(until)), retry_after_secs);
            return finish(&sim, record, r, 0);
        }
    };

    // Injected faults that answer before executing.
    let fault = sim.take_fault(&method, &path);
    record.fault = fault.as_ref().map(|f| format!("{:?}", f.kind));
    if let Some(f) = &fault {
        match &f.kind {
            FaultKind::RateLimit { retry_after } => {
                let r = throttled(Throttle::RateLimited, *retry_after, now);
                return finish(&sim, record, r, used);
            }
            FaultKind::Ban { retry_after } => {
                sim.limits().ban_until(ban_end(now, *retry_after));
                let r = throttled(Throttle::Banned, *retry_after, now);
                return finish(&sim, record, r, used);
            }
            FaultKind::Reject { code, msg } => {
                let status = if matches!(code, -1003 | -1015) { 429 } else { 400 };
                let e = ApiError::new(
                    status,
                    *code,
                    msg.clone().unwrap_or_else(|| default_msg(*code).to_string()),
                );
                return finish(&sim, record, error_response(&e), used);
            }
            FaultKind::ServerError { status, execute: false } => {
                return finish(&sim, record, server_error(*status), used);
            }
            FaultKind::Delay { ms, before: true } => {
                tokio::time::sleep(Duration::from_millis(*ms)).await
            }
            _ => {}
        }
    }

    // Security.
    let account = if security == Security::Signed {
        match check_signed(&sim, &headers, &raw_query, &raw_body, &params) {
            Ok(a) => Some(a),
            Err(e) => return finish(&sim, record, error_response(&e), used),
        }
    } else {
        None
    };

    // Execute.
    let result = execute(&sim, &method, &path, &params, account, now);
    record.executed = result.is_ok();
    let mut response = match &result {
        Ok(v) => json_response(200, v),
        Err(e) => error_response(e),
    };
    if result.is_ok()
        && method == Method::POST
        && is_order_placement(&path)
        && let Some(acc) = account
    {
        let (c10, c1d) = account::order_counts(&sim.engine(), acc, now);
        let h = response.headers_mut();
        h.insert("x-mbx-order-count-10s", HeaderValue::from(c10 as u64));
        h.insert("x-mbx-order-count-1d", HeaderValue::from(c1d as u64));
    }
    if result.is_err() && zero_weight_on_success(&method, &path) {
        sim.limits().charge(weight);
    }

    // Injected faults that act after executing; without one, the random mode's damage.
    let after = fault
        .map(|f| f.kind)
        .or_else(|| sim.draw_damage(&path).inspect(|k| record.fault = Some(format!("{k:?}"))));
    let delivery = after::after_execute(after.as_ref(), response, &WIRE, now).await;
    delivery::deliver(delivery, &sim, &conn, record, |record, r| finish(&sim, record, r, used))
        .await
}

/// 418 -1003: the IP is banned until `until` (epoch ms).
fn banned_error(until: Millis) -> ApiError {
    ApiError::new(
        418,
        -1003,
        format!(
            "Way too much request weight used; IP banned until {until}. Please use WebSocket Streams for live updates to avoid bans."
        ),
    )
}

/// 429 -1003: the minute's request weight is used up.
fn weight_error() -> ApiError {
    ApiError::new(
        429,
        -1003,
        format!(
            "Too much request weight used; current limit is {} request weight per 1 MINUTE. Please use WebSocket Streams for live updates to avoid polling the API.",
            WEIGHT_LIMIT_PER_MINUTE
        ),
    )
}

fn with_retry_after(mut r: Response, secs: u64) -> Response {
    r.headers_mut().insert("retry-after", HeaderValue::from(secs));
    r
}

/// Adds the weight headers and records the request.
fn finish(sim: &Sim, mut record: RequestRecord, mut r: Response, used: u64) -> Response {
    let used = used.max(sim.limits().used());
    let h = r.headers_mut();
    h.insert("x-mbx-used-weight", HeaderValue::from(used));
    h.insert("x-mbx-used-weight-1m", HeaderValue::from(used));
    record.status = r.status().as_u16();
    if record.path.starts_with("/api/") {
        sim.record(record);
    }
    r
}

/// Checks the API key, signature and timestamp of a SIGNED request; returns the account.
fn check_signed(
    sim: &Sim,
    headers: &HeaderMap,
    raw_query: &str,
    raw_body: &str,
    p: &Params,
) -> Result<usize, ApiError> {
    let key = headers
        .get("x-mbx-apikey")
        .and_then(|v| v.to_str().ok())
        .filter(|k| !k.is_empty())
        .ok_or_else(|| ApiError::new(401, -2014, "API-key format invalid."))?;
    let (account, secret) = {
        let e = sim.engine();
        let a =
            e.account_by_key(key).ok_or_else(|| ApiError::new(401, -2015, default_msg(-2015)))?;
        (a, e.accounts[a].secret.clone())
    };
    let ts = timestamp(p.req("timestamp")?)?;
    verify_signature(&secret, raw_query, raw_body, p)?;
    check_timestamp(ts, p.get("recvWindow"), sim.now_ms())?;
    Ok(account)
}

/// Runs one endpoint against the core.
fn execute(
    sim: &Sim,
    method: &Method,
    path: &str,
    p: &Params,
    account: Option<usize>,
    now: Millis,
) -> Result<serde_json::Value, ApiError> {
    let mut e = sim.engine();
    let e = &mut *e;
    let acc = account.unwrap_or(0);
    match (method.as_str(), path) {
        ("GET", "/api/v3/ping") => Ok(serde_json::json!({})),
        ("GET", "/api/v3/time") => Ok(serde_json::json!({ "serverTime": now })),
        ("GET", "/api/v3/exchangeInfo") => market_data::exchange_info(e, p, now),
        ("GET", "/api/v3/klines") | ("GET", "/api/v3/uiKlines") => market_data::klines(e, p, now),
        ("GET", "/api/v3/ticker/24hr") => market_data::ticker_24h(e, p, now),
        ("GET", "/api/v3/ticker/price") => market_data::ticker_price(e, p, now),
        ("GET", "/api/v3/avgPrice") => market_data::avg_price(e, p, now),
        ("GET", "/api/v3/depth") => market_data::depth(e, p, now),
        ("GET", "/api/v3/account") => account::account(e, acc, p, now),
        ("POST", "/api/v3/order") => orders::new_order(e, acc, p, now),
        ("POST", "/api/v3/order/test") => {
            // Accepted without validation or placement (documented).
            let _ = p.req("symbol")?;
            Ok(serde_json::json!({}))
        }
        ("GET", "/api/v3/order") => orders::query_order(e, acc, p, now),
        ("DELETE", "/api/v3/order") => orders::cancel_order(e, acc, p, now),
        ("GET", "/api/v3/openOrders") => orders::open_orders(e, acc, p, now),
        ("DELETE", "/api/v3/openOrders") => orders::cancel_open_orders(e, acc, p, now),
        ("GET", "/api/v3/allOrders") => orders::all_orders(e, acc, p, now),
        ("GET", "/api/v3/myTrades") => orders::my_trades(e, acc, p, now),
        ("POST", "/api/v3/orderList/oco") => lists::new_oco(e, acc, p, now),
        ("POST", "/api/v3/order/oco") => lists::new_oco_legacy(e, acc, p, now),
        ("DELETE", "/api/v3/orderList") => lists::cancel_list(e, acc, p, now),
        ("GET", "/api/v3/orderList") => lists::query_list(e, acc, p, now),
        ("GET", "/api/v3/allOrderList") => lists::all_lists(e, acc, p, now),
        ("GET", "/api/v3/openOrderList") => Ok(lists::open_lists(e, acc, now)),
        ("GET", "/api/v3/rateLimit/order") => Ok(account::order_rate_limits(e, acc, now)),
        _ => Err(ApiError::bad(-1000, default_msg(-1000))),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error_response(&self)
    }
}
