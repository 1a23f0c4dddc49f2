//! `spotbot-sim`: a simulator of exchange A's spot REST API (wire reference:
//! `shared/reference/exchange-a-spot-api.md`), byte-compatible enough that the service's client
//! and third-party client libraries work against it.
//!
//! The map:
//! - [`clock`]: the one source of "now" (wall clock with an advanceable offset, or manual).
//! - [`symbols`]: the listing (many USDT symbols, BTCUSDT as the reference coin) and filters.
//! - [`market`]: prices — seeded synthetic market, scripted paths, CSV replay; klines.
//! - [`params`]: query/body parameters, decimal rules, HMAC signature verification.
//! - [`engine`]: matching engine, OCO lists, balances free/locked, fees, trades.
//! - [`wire`]: JSON shapes with the exchange's field names.
//! - [`server`]: the HTTP server, fault injection, the loopback-only admin API under `/sim/`.
//!
//! The simulator never talks to the network beyond the socket it serves on.

pub mod clock;
pub mod engine;
pub mod market;
pub mod params;
pub mod server;
pub mod symbols;
pub mod wire;

pub use clock::{Clock, ManualClock, Millis, SystemClock};
pub use engine::EngineConfig;
pub use params::ApiError;
pub use server::{
    Fault, FaultKind, RequestRecord, RunningSim, Sim, SimConfig, router, serve, serve_sim,
};
