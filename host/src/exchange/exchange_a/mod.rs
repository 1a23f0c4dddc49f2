//! Exchange A (spot REST API v3): the signer, the wire types exactly as the exchange spells
//! them, the symbol filters and the client that puts them together.

pub mod client;
pub mod filters;
pub mod signer;
mod weights;
pub mod wire;

pub use client::{ClientConfig, ExchangeAClient, MAINNET_URL, TESTNET_URL};
pub use signer::Signer;
