//! `spotbot-sim`: a simulator of exchange A's spot REST API (wire reference:
//! `shared/reference/exchange-a-spot-api.md`) and of exchange B's spot `/info`, `/exchange` and
//! `/ws` (`shared/reference/exchange-b-api.md`), byte-compatible enough that the service's clients
//! and third-party client libraries work against it. Both exchanges trade on one core.
//!
//! The map:
//! - [`core`]: the exchange-neutral matching core (accounts, orders and lists, fills, fees,
//!   triggers); pure, no wire, no clock, no I/O.
//! - [`exchange_a`]: exchange A's front ends over the core: REST (parameters, signatures,
//!   endpoints, JSON shapes) and its WebSocket services (the API with the user data stream,
//!   market streams) on their own port.
//! - [`exchange_b`]: exchange B's front end over the same core: `POST /info` and
//!   `POST /exchange` (signatures, nonces, spot rules, its names for tokens and pairs) and its
//!   WebSocket at `GET /ws`, all on the REST port.
//! - [`clock`]: the one source of "now" (wall clock with an advanceable offset, or manual).
//! - [`symbols`]: the listing (many USDT symbols, BTCUSDT as the reference coin) and filters.
//! - [`market`]: prices — seeded synthetic market, scripted paths, CSV replay; klines.
//! - [`faults`]: faults a test arms (delays, 5xx, rate limits, bans, rejects, dropped answers,
//!   damaged answers, and the seeded random mode of damaged answers; on streams: drop,
//!   silence, delay, `serverShutdown`).
//! - [`limits`]: request weight per minute and IP bans.
//! - [`transport`]: connections a fault can cut.
//! - [`error`]: the refusal every layer answers with, in exchange A's codes and messages.
//! - [`state`]: what a running simulator keeps and its handle ([`Sim`]): the core behind a
//!   lock, the clock, faults, the request log, the weight meters, exchange B's front-end
//!   state. Below every handler; it knows none of them.
//! - [`delivery`]: the last step of both REST front ends (the answer sent as the fault
//!   decided, the request recorded).
//! - [`admin`]: the loopback-only admin API under `/sim/`.
//! - [`server`]: composes the handlers into one HTTP app and serves it.
//!
//! The simulator never talks to the network beyond the socket it serves on.

pub mod admin;
pub mod clock;
pub mod core;
pub mod delivery;
pub mod error;
pub mod exchange_a;
pub mod exchange_b;
pub mod faults;
pub mod limits;
pub mod market;
pub mod server;
pub mod state;
pub mod symbols;
pub mod transport;

/// Exchange A's parameter rules and request signing (tests sign their requests with it).
pub use exchange_a::params;

pub use clock::{Clock, ManualClock, Millis, SystemClock};
pub use core::EngineConfig;
pub use error::ApiError;
pub use exchange_a::streams::{RunningStreams, serve_streams};
pub use faults::damage::Damage;
pub use faults::mutation::{MutationConfig, MutationStats, MutationStatus};
pub use faults::{Fault, FaultKind, StreamFault, StreamFaultKind, StreamService};
pub use server::{RunningSim, router, serve, serve_sim};
pub use state::exchange_b::{ExchangeBConfig, WsConfig, seed_key};
pub use state::{RequestRecord, Sim, SimConfig, StreamConfig};
