//! Exchange B's front end (spot, wire reference `shared/reference/exchange-b-api.md`): its
//! `POST /info` and `POST /exchange` translated into calls on the matching core
//! ([`crate::core`]), on the same port as exchange A's REST paths. Signatures, nonces and the
//! action types come from `spotbot-exchange-b-protocol`, the crate the service signs with;
//! the answers are written here from the wire reference, so a misreading on either side shows
//! in the tests.
//!
//! - [`rest`]: the two handlers (weights, faults, request log, envelope checks).
//! - [`info`]: `/info` dispatch on `type`, weights, market data; [`account`]: the account reads.
//! - [`actions`]: `order`, `cancel`, `cancelByCloid` against the core; [`errors`]: their texts.
//! - [`listing`]: tokens, pairs, names and asset ids over the core's symbols.
//! - [`render`]: the JSON shapes of orders, fills, balances, levels, candles.
//! - [`ws`]: the WebSocket at `GET /ws` (subscriptions, feeds off the core's event log,
//!   `post` requests, limits, idle timeout, stream faults).
//!
//! The state these handlers share (configuration, the address book with nonces and action
//! budgets, the weight meter, the WebSocket's limits, refused orders) is kept below them, in
//! [`crate::state::exchange_b`].

pub mod account;
pub mod actions;
pub mod errors;
pub mod info;
pub mod listing;
pub mod render;
pub mod rest;
pub mod ws;
