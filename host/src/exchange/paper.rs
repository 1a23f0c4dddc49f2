//! Paper mode: the exchange simulator runs inside the process on 127.0.0.1 with a synthetic
//! market, and the real client of the active exchange talks to it over loopback — the demo
//! exercises the same wire code as live trading and needs no keys. The simulator speaks both
//! exchanges on one engine, so paper mode works the same on exchange A and exchange B.

use rust_decimal::Decimal;
use spotbot_exchange_b_protocol::PrivateKey;
use spotbot_sim::{ExchangeBConfig, RunningSim, SimConfig};

use super::ExchangeError;
use super::exchange_a::Signer;
use crate::config::{ExchangeName, Secret};

/// Settings of the in-process simulator.
#[derive(Debug, Clone)]
pub struct PaperSettings {
    /// Whose wire the service's client speaks to it.
    pub exchange: ExchangeName,
    pub seed: u64,
    /// The quote asset the paper account starts with (USDT; exchange B shows it as USDC).
    pub usdt: Decimal,
}

impl Default for PaperSettings {
    fn default() -> Self {
        Self { exchange: ExchangeName::ExchangeA, seed: 1, usdt: Decimal::from(10_000) }
    }
}

/// 64 random-looking hex digits for the paper account's credentials (never leave the
/// process): the seed, the time and the process id mixed.
fn paper_hex(seed: u64, salt: u64) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut z = seed ^ nanos ^ u64::from(std::process::id()).rotate_left(32) ^ salt;
    (0..4)
        .map(|_| {
            z = spotbot_sim::market::mix(z);
            format!("{z:016x}")
        })
        .collect()
}

/// A fresh key for the paper account on exchange B (a zero or out-of-range draw is
/// astronomically rare: draw again).
fn paper_key(seed: u64) -> PrivateKey {
    (0u64..)
        .find_map(|salt| PrivateKey::from_hex(&paper_hex(seed, salt)).ok())
        .unwrap_or_else(|| spotbot_sim::seed_key(seed))
}

/// Requests the paper simulator remembers (its `/sim` admin view shows them; nothing else
/// reads them), so that months of paper trading keep a bounded log.
const PAPER_REQUEST_LOG: usize = 1000;

/// The running paper simulator and the keys of its account, for the client
/// [`super::connect`] builds as it builds any other.
pub struct PaperExchange {
    pub sim: RunningSim,
    /// The account's keys on exchange A's wire.
    pub signer: Signer,
    /// The account's key on exchange B's wire.
    pub b_key: PrivateKey,
}

/// Starts the simulator on 127.0.0.1:0 with a paper account funded by `settings`.
pub async fn start_paper(settings: &PaperSettings) -> Result<PaperExchange, ExchangeError> {
    let (key, secret) =
        (format!("paper{}", paper_hex(settings.seed, 1)), paper_hex(settings.seed, 2));
    let b_key = paper_key(settings.seed);
    let mut config = SimConfig::new(settings.seed, key.clone(), secret.clone());
    config.initial_funds = vec![("USDT".to_string(), settings.usdt)];
    config.exchange_b = ExchangeBConfig::owned_by(b_key.address());
    config.request_log = Some(PAPER_REQUEST_LOG);
    let sim = spotbot_sim::serve(config, "127.0.0.1:0")
        .await
        .map_err(|e| ExchangeError::NotConfigured { detail: format!("paper simulator: {e}") })?;
    tracing::info!(addr = %sim.addr, seed = settings.seed, exchange = settings.exchange.as_str(), "paper mode: exchange simulator running in-process");
    Ok(PaperExchange { sim, signer: Signer::new(Secret::new(key), Secret::new(secret)), b_key })
}
