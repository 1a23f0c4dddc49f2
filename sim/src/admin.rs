//! The loopback-only admin API under `/sim/`: prices, paths and volumes, the clock, funds and
//! accounts (with their exchange B addresses and API wallets), faults and the random mode of
//! damaged answers, and what the simulator saw. Tests and operators script the market with it.

use crate::clock::Millis;
use crate::error::ApiError;
use crate::exchange_a::wire::{fmt8, to_value};
use crate::faults::mutation::MutationConfig;
use crate::faults::{Fault, StreamFault};
use crate::market;
use crate::state::Sim;
use crate::transport::Conn;
use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rust_decimal::Decimal;
use serde::Deserialize;
use spotbot_exchange_b_protocol::Address;
use std::str::FromStr;

/// The admin routes, loopback clients only.
pub fn routes() -> Router<Sim> {
    Router::new()
        .route("/sim/state", get(admin_state))
        .route("/sim/price", post(admin_price))
        .route("/sim/path", post(admin_path))
        .route("/sim/csv", post(admin_csv))
        .route("/sim/volume", post(admin_volume))
        .route("/sim/time", get(admin_time))
        .route("/sim/time/advance", post(admin_advance))
        .route("/sim/fund", post(admin_fund))
        .route("/sim/accounts", post(admin_account))
        .route("/sim/faults", post(admin_fault).delete(admin_clear_faults).get(admin_list_faults))
        .route(
            "/sim/mutation",
            post(admin_set_mutation).get(admin_mutation).delete(admin_clear_mutation),
        )
        .route("/sim/streams/faults", post(admin_stream_fault))
        .route("/sim/requests", get(admin_requests))
        .route("/sim/orders", get(admin_orders))
        .route("/sim/exchange-b/accounts", post(admin_b_account))
        .route("/sim/exchange-b/agents", post(admin_b_agent))
        .route("/sim/exchange-b/orders", get(admin_b_orders))
        .route_layer(axum::middleware::from_fn(loopback_only))
}

/// The admin API answers loopback clients only.
async fn loopback_only(
    ConnectInfo(c): ConnectInfo<Conn>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if c.remote.ip().is_loopback() {
        next.run(req).await
    } else {
        (StatusCode::FORBIDDEN, "admin API is loopback-only").into_response()
    }
}

type AdminResult = Result<Json<serde_json::Value>, ApiError>;

fn ok() -> AdminResult {
    Ok(Json(serde_json::json!({"ok": true})))
}

/// A price for the admin API: positive and at most 10^12 (so no engine arithmetic overflows).
fn positive(s: &str) -> Result<Decimal, ApiError> {
    Decimal::from_str(s)
        .ok()
        .filter(|d| *d > Decimal::ZERO && *d <= Decimal::from(1_000_000_000_000i64))
        .ok_or_else(|| ApiError::bad(-1100, format!("not a price in (0, 10^12]: {s}")))
}

#[derive(Deserialize)]
struct PriceReq {
    symbol: String,
    price: String,
}

async fn admin_price(State(sim): State<Sim>, Json(r): Json<PriceReq>) -> AdminResult {
    sim.set_price(&r.symbol, positive(&r.price)?)?;
    ok()
}

#[derive(Deserialize)]
struct PathReq {
    symbol: String,
    /// [[time_ms, "price"], ...]
    points: Vec<(Millis, String)>,
}

async fn admin_path(State(sim): State<Sim>, Json(r): Json<PathReq>) -> AdminResult {
    let pts =
        r.points.iter().map(|(t, p)| positive(p).map(|d| (*t, d))).collect::<Result<_, _>>()?;
    sim.set_path(&r.symbol, pts)?;
    ok()
}

async fn admin_volume(State(sim): State<Sim>, Json(r): Json<PathReq>) -> AdminResult {
    let pts = r
        .points
        .iter()
        .map(|(t, v)| match v.parse::<Decimal>() {
            Ok(d) if d >= Decimal::ZERO => Ok((*t, d)),
            _ => Err(ApiError::bad(-1100, format!("volume {v:?} must be a number >= 0"))),
        })
        .collect::<Result<_, _>>()?;
    sim.set_volumes(&r.symbol, pts)?;
    ok()
}

#[derive(Deserialize)]
struct CsvQuery {
    symbol: String,
}

async fn admin_csv(
    State(sim): State<Sim>,
    axum::extract::Query(q): axum::extract::Query<CsvQuery>,
    body: String,
) -> AdminResult {
    let pts = market::parse_csv(&body).map_err(|m| ApiError::bad(-1100, m))?;
    sim.set_path(&q.symbol, pts)?;
    ok()
}

async fn admin_time(State(sim): State<Sim>) -> AdminResult {
    Ok(Json(serde_json::json!({"serverTime": sim.now_ms()})))
}

#[derive(Deserialize)]
struct AdvanceReq {
    ms: Millis,
}

async fn admin_advance(State(sim): State<Sim>, Json(r): Json<AdvanceReq>) -> AdminResult {
    sim.advance(r.ms.max(0));
    admin_time(State(sim)).await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FundReq {
    #[serde(default)]
    api_key: Option<String>,
    asset: String,
    amount: String,
}

async fn admin_fund(State(sim): State<Sim>, Json(r): Json<FundReq>) -> AdminResult {
    let amount = Decimal::from_str(&r.amount)
        .ok()
        .filter(|a| a.abs() <= Decimal::from(1_000_000_000_000_000i64))
        .ok_or_else(|| {
            ApiError::bad(-1100, format!("not an amount within ±10^15: {}", r.amount))
        })?;
    sim.fund(r.api_key.as_deref(), &r.asset, amount)?;
    ok()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AccountReq {
    api_key: String,
    api_secret: String,
}

async fn admin_account(State(sim): State<Sim>, Json(r): Json<AccountReq>) -> AdminResult {
    sim.add_account(&r.api_key, &r.api_secret);
    ok()
}

/// An exchange B address in an admin request.
fn address(text: &str) -> Result<Address, ApiError> {
    text.parse().map_err(|_| ApiError::bad(-1100, format!("not an address (0x + 40 hex): {text}")))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BAccountReq {
    address: String,
    #[serde(default)]
    api_key: Option<String>,
}

async fn admin_b_account(State(sim): State<Sim>, Json(r): Json<BAccountReq>) -> AdminResult {
    sim.add_exchange_b_account(address(&r.address)?, r.api_key.as_deref())?;
    ok()
}

#[derive(Deserialize)]
struct BAgentReq {
    agent: String,
    user: String,
}

async fn admin_b_agent(State(sim): State<Sim>, Json(r): Json<BAgentReq>) -> AdminResult {
    sim.add_exchange_b_agent(address(&r.agent)?, address(&r.user)?)?;
    ok()
}

async fn admin_b_orders(State(sim): State<Sim>) -> AdminResult {
    Ok(Json(serde_json::Value::Array(sim.exchange_b_orders())))
}

async fn admin_fault(State(sim): State<Sim>, Json(f): Json<Fault>) -> AdminResult {
    sim.inject(f);
    ok()
}

async fn admin_stream_fault(State(sim): State<Sim>, Json(f): Json<StreamFault>) -> AdminResult {
    sim.stream_fault(f);
    ok()
}

async fn admin_clear_faults(State(sim): State<Sim>) -> AdminResult {
    sim.clear_faults();
    ok()
}

async fn admin_list_faults(State(sim): State<Sim>) -> AdminResult {
    Ok(Json(to_value(&sim.faults())))
}

async fn admin_set_mutation(
    State(sim): State<Sim>,
    Json(config): Json<MutationConfig>,
) -> AdminResult {
    sim.set_mutation(Some(config))?;
    ok()
}

async fn admin_clear_mutation(State(sim): State<Sim>) -> AdminResult {
    sim.set_mutation(None)?;
    ok()
}

async fn admin_mutation(State(sim): State<Sim>) -> AdminResult {
    Ok(Json(to_value(&sim.mutation_status())))
}

async fn admin_requests(State(sim): State<Sim>) -> AdminResult {
    Ok(Json(to_value(&sim.requests())))
}

async fn admin_orders(State(sim): State<Sim>) -> AdminResult {
    Ok(Json(serde_json::Value::Array(sim.orders())))
}

async fn admin_state(State(sim): State<Sim>) -> AdminResult {
    let now = sim.now_ms();
    let e = sim.engine();
    let prices: serde_json::Map<String, serde_json::Value> = e
        .rules
        .iter()
        .map(|r| (r.symbol.clone(), serde_json::Value::String(fmt8(e.market.price(r, now)))))
        .collect();
    let accounts: Vec<serde_json::Value> = e
        .accounts
        .iter()
        .map(|a| {
            let b: serde_json::Map<String, serde_json::Value> = a
                .balances
                .iter()
                .map(|(k, v)| {
                    (k.clone(), serde_json::json!({"free": fmt8(v.free), "locked": fmt8(v.locked)}))
                })
                .collect();
            // API keys are public identifiers; secrets are never shown.
            serde_json::json!({"apiKey": a.api_key, "balances": b})
        })
        .collect();
    Ok(Json(serde_json::json!({"serverTime": now, "prices": prices, "accounts": accounts})))
}
