//! Exchange B's front end (spot, wire reference `shared/reference/exchange-b-api.md`): its
//! `POST /info` and `POST /exchange` translated into calls on the matching core
//! ([`crate::core`]), on the same port as exchange A's REST paths. Signatures, nonces and the
//! action types come from `spotbot-exchange-b-protocol`, the crate the service signs with;
//! the answers are written here from the wire reference, so a misreading on either side shows
//! in the tests.
//!
//! - [`rest`]: the two handlers (weights, faults, request log, envelope checks).
//! - [`info`]: `/info` dispatch on `type`, weights, market data; [`account`]: the account reads.
//! - [`actions`]: `order`, `cancel`, `cancelByCloid` against the core; [`errors`]: their texts;
//!   [`action_budget`]: the address-based budget every action spends from.
//! - [`listing`]: tokens, pairs, names and asset ids over the core's symbols.
//! - [`render`]: the JSON shapes of orders, fills, balances, levels, candles.
//! - [`state`]: configuration, the address book ([`wallets`]) with [`nonces`], the weight meter.
//! - [`ws`]: the WebSocket at `GET /ws` (subscriptions, feeds off the core's event log,
//!   `post` requests, limits, idle timeout, stream faults).

pub mod account;
pub mod action_budget;
pub mod actions;
pub mod errors;
pub mod info;
pub mod listing;
pub mod nonces;
pub mod render;
pub mod rest;
pub mod state;
pub mod wallets;
pub mod ws;

pub use state::{ExchangeBConfig, seed_key};
pub use ws::WsConfig;
