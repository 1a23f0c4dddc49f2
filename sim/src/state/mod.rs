//! What a running simulator keeps, below every handler that reads or changes it: the handle
//! its owner and its handlers share ([`Sim`]: the core behind a lock, the clock, faults and
//! the random mode of damaged answers, the request log and the weight meter, exchange B's
//! front-end state), how to build one ([`SimConfig`]) and what it saw ([`RequestRecord`]).
//! The handlers import from here and [`crate::server`] composes them; nothing here knows a
//! handler.
//!
//! - [`config`]: [`SimConfig`] and the WebSocket rules ([`StreamConfig`]).
//! - [`exchange_b`]: exchange B's front-end state (address book with nonces and action
//!   budgets, weight meter, WebSocket limits, refused orders) and its configuration.
//!
//! The handle's views of every order in an exchange's JSON shape live with that exchange's
//! renderers (`Sim::orders`, `Sim::exchange_b_orders`).

pub mod config;
pub mod exchange_b;

pub use config::{SimConfig, StreamConfig};

use crate::clock::{Clock, Millis};
use crate::core::Engine;
use crate::error::{ApiError, default_msg};
use crate::faults::mutation::{Mutation, MutationConfig, MutationStatus};
use crate::faults::{Fault, FaultKind, StreamFault, StreamFaultKind, StreamService};
use crate::limits::Limits;
use crate::market::Market;
use axum::http::Method;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use spotbot_exchange_b_protocol::Address;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::broadcast;

/// What the simulator saw: one record per request to an `/api/` path (exchange A) or to
/// `/info` and `/exchange` (exchange B).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestRecord {
    pub time: Millis,
    pub method: String,
    pub path: String,
    /// newClientOrderId / listClientOrderId / origClientOrderId if sent (exchange A); the
    /// first cloid of an order or cancelByCloid action (exchange B).
    pub client_order_id: Option<String>,
    /// Exchange B: the request's `type` — the action of an `/exchange` request (`order`,
    /// `cancel`, `cancelByCloid`), the read of an `/info` one (`orderStatus`, ...) — so a
    /// cancel by cloid is not mistaken for a placement with that cloid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// HTTP status answered (0 when the connection was dropped).
    pub status: u16,
    /// Whether the engine executed the request (also when its answer was then damaged).
    pub executed: bool,
    /// The fault armed for this request or the damage the random mode drew for it, in its
    /// `Debug` spelling (`Damage { damage: Truncated, seed: 7, ms: None, retry_after: None }`,
    /// `DropAfterExecute`).
    pub fault: Option<String>,
}

/// Everything a running simulator shares between its handlers and its owner.
pub struct Shared {
    pub engine: Mutex<Engine>,
    pub clock: Arc<dyn Clock>,
    faults: Mutex<Vec<Fault>>,
    mutation: Mutex<Mutation>,
    log: Mutex<std::collections::VecDeque<RequestRecord>>,
    log_capacity: Option<usize>,
    limits: Mutex<Limits>,
    streams: StreamConfig,
    stream_faults: broadcast::Sender<StreamFault>,
    /// Until when new connections of a service start silent (the last silence fault).
    silent_until: Mutex<Vec<(tokio::time::Instant, Option<StreamService>)>>,
    pub api_key: String,
    pub api_secret: String,
    exchange_b: exchange_b::State,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A handle to a simulator (cheap to clone): the admin operations as Rust methods.
#[derive(Clone)]
pub struct Sim {
    pub shared: Arc<Shared>,
}

impl Sim {
    pub fn new(config: SimConfig) -> Self {
        let mut engine = Engine::new(config.rules, Market::new(config.seed), config.engine);
        let acc = engine.add_account(&config.api_key, &config.api_secret);
        for (asset, amount) in &config.initial_funds {
            engine.fund(acc, asset, *amount, config.clock.now_ms());
        }
        let exchange_b = exchange_b::State::new(&config.exchange_b, acc);
        Self {
            shared: Arc::new(Shared {
                engine: Mutex::new(engine),
                clock: config.clock,
                faults: Mutex::new(Vec::new()),
                mutation: Mutex::new(Mutation::default()),
                log: Mutex::new(std::collections::VecDeque::new()),
                log_capacity: config.request_log,
                limits: Mutex::new(Limits::default()),
                streams: config.streams,
                stream_faults: broadcast::channel(64).0,
                silent_until: Mutex::new(Vec::new()),
                api_key: config.api_key,
                api_secret: config.api_secret,
                exchange_b,
            }),
        }
    }

    pub fn now_ms(&self) -> Millis {
        self.shared.clock.now_ms()
    }
    pub fn engine(&self) -> MutexGuard<'_, Engine> {
        lock(&self.shared.engine)
    }
    pub fn set_price(&self, symbol: &str, price: Decimal) -> Result<(), ApiError> {
        let now = self.now_ms();
        let mut e = self.engine();
        e.rules(symbol)?;
        e.catch_up(now);
        e.market.set_price(symbol, now, price);
        e.catch_up(now);
        Ok(())
    }
    /// Fills part of a resting limit order at its price (see `Engine::fill_partially`).
    pub fn fill_partially(&self, order_id: i64, qty: Decimal) -> Result<(), ApiError> {
        let now = self.now_ms();
        let mut e = self.engine();
        e.catch_up(now);
        Ok(e.fill_partially(order_id, qty, now)?)
    }
    pub fn set_path(&self, symbol: &str, points: Vec<(Millis, Decimal)>) -> Result<(), ApiError> {
        self.set_paths(vec![(symbol.to_string(), points)])
    }
    /// [`Sim::set_path`] of several symbols at once: the market is caught up to now once,
    /// then every script is replaced (a backtest scripts every symbol at every step).
    pub fn set_paths(&self, paths: Vec<(String, Vec<(Millis, Decimal)>)>) -> Result<(), ApiError> {
        let now = self.now_ms();
        let mut e = self.engine();
        for (symbol, _) in &paths {
            e.rules(symbol)?;
        }
        e.catch_up(now);
        for (symbol, points) in paths {
            e.market.set_path(&symbol, points);
        }
        Ok(())
    }
    /// Scripts the traded volume of `symbol`: (time, base volume) points; a candle's volume
    /// becomes the sum of the points inside it.
    pub fn set_volumes(
        &self,
        symbol: &str,
        points: Vec<(Millis, Decimal)>,
    ) -> Result<(), ApiError> {
        let mut e = self.engine();
        e.rules(symbol)?;
        e.market.set_volumes(symbol, points);
        Ok(())
    }
    pub fn advance(&self, ms: Millis) {
        self.shared.clock.advance(ms);
        let now = self.now_ms();
        self.engine().catch_up(now);
    }
    /// Adds free balance to the account of `api_key` (the default account if None).
    pub fn fund(
        &self,
        api_key: Option<&str>,
        asset: &str,
        amount: Decimal,
    ) -> Result<(), ApiError> {
        let mut e = self.engine();
        let key = api_key.unwrap_or(&self.shared.api_key);
        let acc =
            e.account_by_key(key).ok_or_else(|| ApiError::new(401, -2015, default_msg(-2015)))?;
        e.fund(acc, asset, amount, self.now_ms());
        Ok(())
    }
    pub fn add_account(&self, api_key: &str, secret: &str) {
        self.engine().add_account(api_key, secret);
    }
    /// Gives the account of `api_key` the exchange B address `address`; without a key, a new
    /// account whose API key is the address's text (so `fund` reaches it by that text).
    pub fn add_exchange_b_account(
        &self,
        address: Address,
        api_key: Option<&str>,
    ) -> Result<(), ApiError> {
        let account = {
            let mut e = self.engine();
            match api_key {
                Some(key) => e
                    .account_by_key(key)
                    .ok_or_else(|| ApiError::new(401, -2015, default_msg(-2015)))?,
                None => {
                    let secret = e.new_client_id();
                    e.add_account(&address.to_string(), &secret)
                }
            }
        };
        self.shared.exchange_b.wallets().add_user(address, account);
        Ok(())
    }
    /// Lets API wallet `agent` sign exchange B actions for the account of address `user`.
    pub fn add_exchange_b_agent(&self, agent: Address, user: Address) -> Result<(), ApiError> {
        let mut wallets = self.shared.exchange_b.wallets();
        let account = wallets
            .user(&user)
            .ok_or_else(|| ApiError::bad(-2015, format!("no account has the address {user}")))?;
        wallets.add_agent(agent, account);
        Ok(())
    }
    /// Exchange B's front-end state: the address book, nonces, the weight meter.
    pub(crate) fn exchange_b(&self) -> &exchange_b::State {
        &self.shared.exchange_b
    }
    pub fn inject(&self, fault: Fault) {
        lock(&self.shared.faults).push(fault);
    }
    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }
    /// Turns the random mode of damaged answers on (its counts start afresh) or, with None,
    /// off. Settings out of range (share outside 0..=1, an empty list) are refused (-1100)
    /// and leave the mode as it was.
    pub fn set_mutation(&self, config: Option<MutationConfig>) -> Result<(), ApiError> {
        lock(&self.shared.mutation).set(config).map_err(|problem| ApiError::bad(-1100, problem))
    }
    /// The random mode's settings (None: off) and what it damaged since it was last set.
    pub fn mutation_status(&self) -> MutationStatus {
        lock(&self.shared.mutation).status()
    }
    /// The random mode's damage for the answer of a request on `path` that ran, if any.
    pub(crate) fn draw_damage(&self, path: &str) -> Option<FaultKind> {
        lock(&self.shared.mutation).draw(path)
    }
    pub fn requests(&self) -> Vec<RequestRecord> {
        lock(&self.shared.log).iter().cloned().collect()
    }
    pub fn price(&self, symbol: &str) -> Result<Decimal, ApiError> {
        let now = self.now_ms();
        Ok(self.engine().price(symbol, now)?)
    }
    /// Arms a fault on the WebSocket connections open now; a silence also holds for the
    /// connections opened while it lasts (the service stalled, not one connection).
    pub fn stream_fault(&self, fault: StreamFault) {
        if let StreamFaultKind::Silence { ms } = fault.kind {
            let until = tokio::time::Instant::now() + Duration::from_millis(ms);
            lock(&self.shared.silent_until).push((until, fault.service));
        }
        let _ = self.shared.stream_faults.send(fault);
    }
    /// Until when a new connection of `service` stays silent, if a silence holds.
    pub(crate) fn silent_until(&self, service: StreamService) -> Option<tokio::time::Instant> {
        let now = tokio::time::Instant::now();
        let mut windows = lock(&self.shared.silent_until);
        windows.retain(|(until, _)| *until > now);
        windows.iter().filter(|(_, s)| s.is_none_or(|s| s == service)).map(|(u, _)| *u).max()
    }
    pub(crate) fn stream_faults(&self) -> broadcast::Receiver<StreamFault> {
        self.shared.stream_faults.subscribe()
    }
    pub(crate) fn stream_config(&self) -> &StreamConfig {
        &self.shared.streams
    }
    /// The request-weight meter.
    pub(crate) fn limits(&self) -> MutexGuard<'_, Limits> {
        lock(&self.shared.limits)
    }
    pub(crate) fn faults(&self) -> Vec<Fault> {
        lock(&self.shared.faults).clone()
    }

    pub(crate) fn take_fault(&self, method: &Method, path: &str) -> Option<Fault> {
        let mut faults = lock(&self.shared.faults);
        let i = faults.iter().position(|f| f.count > 0 && f.matches(method, path))?;
        if faults[i].skip > 0 {
            faults[i].skip -= 1;
            return None;
        }
        faults[i].count -= 1;
        let f = faults[i].clone();
        if faults[i].count == 0 {
            faults.remove(i);
        }
        Some(f)
    }

    pub(crate) fn record(&self, r: RequestRecord) {
        let mut log = lock(&self.shared.log);
        if self.shared.log_capacity.is_some_and(|keep| log.len() >= keep) {
            log.pop_front();
        }
        log.push_back(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_request_log_keeps_the_newest_requests() {
        let mut config = SimConfig::new(1, "key", "secret");
        config.request_log = Some(3);
        let sim = Sim::new(config);
        for i in 0..5 {
            sim.record(RequestRecord {
                time: i,
                method: "GET".into(),
                path: format!("/p{i}"),
                client_order_id: None,
                kind: None,
                status: 200,
                executed: true,
                fault: None,
            });
        }
        let paths: Vec<String> = sim.requests().into_iter().map(|r| r.path).collect();
        assert_eq!(paths, ["/p2", "/p3", "/p4"]);
    }
}
