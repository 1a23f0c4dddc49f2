//! Who acts on exchange B: account addresses (the `user` of `/info` requests, and signers for
//! their own account) and API wallets (agents) that sign for an account but own nothing, with
//! the nonces each signer used and the actions each account sent.

use super::action_budget::Spending;
use super::nonces::{NonceError, Nonces};
use crate::clock::Millis;
use spotbot_exchange_b_protocol::Address;
use std::collections::HashMap;

#[derive(Debug, Default)]
pub struct Wallets {
    /// Account address → core account.
    users: HashMap<Address, usize>,
    /// API wallet → core account it signs for.
    agents: HashMap<Address, usize>,
    nonces: HashMap<Address, Nonces>,
    /// Orders and cancels each account sent (the address-based budget's "requests used").
    actions: HashMap<usize, Spending>,
}

impl Wallets {
    /// Makes `address` the address of core account `account` (replacing an earlier one).
    pub fn add_user(&mut self, address: Address, account: usize) {
        self.users.insert(address, account);
    }

    /// Lets `agent` sign for core account `account`.
    pub fn add_agent(&mut self, agent: Address, account: usize) {
        self.agents.insert(agent, account);
    }

    /// The account of a `user` address (an agent's address owns nothing: None).
    pub fn user(&self, address: &Address) -> Option<usize> {
        self.users.get(address).copied()
    }

    /// The account `signer` may act for: its own, or the one it is an agent of.
    pub fn signer(&self, signer: &Address) -> Option<usize> {
        self.user(signer).or_else(|| self.agents.get(signer).copied())
    }

    /// The address of core account `account`, if it has one on exchange B.
    pub fn address_of(&self, account: usize) -> Option<Address> {
        self.users.iter().find(|(_, a)| **a == account).map(|(address, _)| *address)
    }

    /// Uses `nonce` for `signer` (see [`Nonces::take`]).
    pub fn use_nonce(
        &mut self,
        signer: Address,
        nonce: u64,
        now: Millis,
    ) -> Result<(), NonceError> {
        self.nonces.entry(signer).or_default().take(nonce, now)
    }

    /// Spends `n` orders or cancels of `account` against `cap` at `now` (see
    /// [`Spending::spend`]): `Err(used)` when the budget refuses them.
    pub fn spend_actions(
        &mut self,
        account: usize,
        n: usize,
        cap: u64,
        now: Millis,
    ) -> Result<(), u64> {
        self.actions.entry(account).or_default().spend(n as u64, cap, now)
    }

    pub fn actions_used(&self, account: usize) -> u64 {
        self.actions.get(&account).map_or(0, |s| s.used)
    }
}
