//! Exchange A's front end: its REST wire translated into calls on the matching core
//! ([`crate::core`]) and the core's answers rendered in its JSON shapes.
//!
//! - [`rest`]: the handler of every `/api/v3/` path (weights, faults, signatures, dispatch).
//! - [`params`]: query and body parameters, decimal rules, HMAC signatures (refusing with
//!   [`crate::error::ApiError`]).
//! - [`names`]: the exchange's spelling of sides, order types, statuses, expiry reasons.
//! - [`orders`], [`lists`], [`account`], [`market_data`]: the endpoints, by area.
//! - [`exchange_info`]: the listing and rate limits as `exchangeInfo` shows them.
//! - [`render`], [`wire`]: the JSON shapes.
//! - [`streams`]: the WebSocket API with the user data stream, and the market streams.

pub mod account;
pub mod exchange_info;
pub mod lists;
pub mod market_data;
pub mod names;
pub mod orders;
pub mod params;
pub mod render;
pub mod rest;
pub mod streams;
pub mod wire;
