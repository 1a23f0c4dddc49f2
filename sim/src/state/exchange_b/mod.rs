//! Exchange B's configuration and the state its front end keeps beside the core: the
//! address book with nonces ([`Wallets`]), its own request-weight meter (exchange B counts
//! weight per IP separately from exchange A), the WebSocket's limits and the orders refused
//! before the core saw them. The simulator's handle builds it and its admin operations write
//! into the address book, so it sits here, below exchange B's handlers
//! ([`crate::exchange_b`]), with the rules that guard it.
//!
//! - [`wallets`]: who acts (account addresses and API wallets), with [`nonces`] per signer
//!   and the [`action_budget`] per account.
//! - [`ws_limits`]: the WebSocket's per-IP limits and [`WsConfig`].
//! - [`refused`]: orders `/exchange` refused before the core saw them, for `orderUpdates`.

pub mod action_budget;
pub mod nonces;
pub mod refused;
pub mod wallets;
pub mod ws_limits;

pub use ws_limits::WsConfig;

use crate::limits::Limits;
use crate::market::mix;
use action_budget::INITIAL_REQUESTS;
use refused::RefusedLog;
use spotbot_exchange_b_protocol::{Address, Network, PrivateKey};
use std::sync::{Mutex, MutexGuard};
use wallets::Wallets;
use ws_limits::WsLimits;

/// Exchange B's documented IP weight per minute.
pub const WEIGHT_LIMIT_PER_MINUTE: u64 = 1200;

/// How exchange B's front end is set up.
#[derive(Debug, Clone)]
pub struct ExchangeBConfig {
    /// The address that owns the simulator's default account on exchange B.
    pub account: Address,
    /// Which signatures are accepted (the phantom agent's source: testnet "b" by default).
    pub network: Network,
    /// IP weight per minute before HTTP 429.
    pub weight_limit: u64,
    /// The address-based action budget's initial buffer (the exchange's 10 000; a test sets a
    /// few to see it spent).
    pub initial_requests: u64,
    /// The WebSocket's idle timeout and limits.
    pub ws: WsConfig,
}

impl ExchangeBConfig {
    /// The default account owned by the address of [`seed_key`]`(seed)`, testnet signatures,
    /// the exchange's weight limit.
    pub fn from_seed(seed: u64) -> Self {
        Self::owned_by(seed_key(seed).address())
    }

    /// The default account owned by `account`, testnet signatures, the exchange's limit.
    pub fn owned_by(account: Address) -> Self {
        Self {
            account,
            network: Network::Testnet,
            weight_limit: WEIGHT_LIMIT_PER_MINUTE,
            initial_requests: INITIAL_REQUESTS,
            ws: WsConfig::default(),
        }
    }
}

/// A private key derived from the seed alone: a simulator started without a key still has an
/// owner for its default account, and a test that knows the seed can sign for it.
pub fn seed_key(seed: u64) -> PrivateKey {
    let mut z = seed ^ 0x4558_4348_414e_4745;
    loop {
        let hex: String = (0..4)
            .map(|_| {
                z = mix(z);
                format!("{z:016x}")
            })
            .collect();
        // Out of range (zero or above the curve order) is astronomically rare: draw again.
        if let Ok(key) = PrivateKey::from_hex(&hex) {
            return key;
        }
    }
}

/// What exchange B's front end shares between its handlers.
#[derive(Debug)]
pub struct State {
    pub network: Network,
    pub weight_limit: u64,
    pub initial_requests: u64,
    pub ws: WsConfig,
    wallets: Mutex<Wallets>,
    limits: Mutex<Limits>,
    ws_limits: Mutex<WsLimits>,
    refused: Mutex<RefusedLog>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    /// The state of a simulator whose default account is core account `account`.
    pub fn new(config: &ExchangeBConfig, account: usize) -> Self {
        let mut wallets = Wallets::default();
        wallets.add_user(config.account, account);
        Self {
            network: config.network,
            weight_limit: config.weight_limit,
            initial_requests: config.initial_requests,
            ws: config.ws.clone(),
            wallets: Mutex::new(wallets),
            limits: Mutex::new(Limits::without_bans()),
            ws_limits: Mutex::new(WsLimits::default()),
            refused: Mutex::new(RefusedLog::default()),
        }
    }

    pub fn wallets(&self) -> MutexGuard<'_, Wallets> {
        lock(&self.wallets)
    }

    pub fn limits(&self) -> MutexGuard<'_, Limits> {
        lock(&self.limits)
    }

    pub fn ws_limits(&self) -> MutexGuard<'_, WsLimits> {
        lock(&self.ws_limits)
    }

    pub fn refused(&self) -> MutexGuard<'_, RefusedLog> {
        lock(&self.refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_key_is_stable_and_differs_per_seed() {
        assert_eq!(seed_key(7).address(), seed_key(7).address());
        assert_ne!(seed_key(7).address(), seed_key(8).address());
        assert_eq!(ExchangeBConfig::from_seed(7).account, seed_key(7).address());
    }
}
