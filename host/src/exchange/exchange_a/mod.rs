//! Exchange A (spot REST API v3 and its WebSocket streams): the signer, the wire types exactly
//! as the exchange spells them, the symbol filters, the client that puts them together, and
//! the stream links that push order updates and prices.

pub mod client;
pub mod filters;
pub mod signer;
pub mod stream;
mod weights;
pub mod wire;

pub use client::{ClientConfig, ExchangeAClient, MAINNET_URL, TESTNET_URL};
pub use signer::Signer;
