//! Shared set-up of the exchange tests: the simulator on loopback and the real exchange A
//! client pointed at it; or, when EXCHANGE_API_KEY, EXCHANGE_API_SECRET and
//! EXCHANGE_TESTNET=1 are set, the client pointed at the real testnet.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use spotbot::clock::{SharedClock, SystemClock};
use spotbot::config::Secret;
use spotbot::exchange::core_exchange::CoreExchange;
use spotbot::exchange::exchange_a::{ClientConfig, ExchangeAClient, Signer, TESTNET_URL};
use spotbot::exchange::{NewOco, Price, Qty, Side};
use spotbot_sim::{RequestRecord, RunningSim, SimConfig};

pub const KEY: &str = "conformance-key";
pub const SECRET: &str = "conformance-secret";

pub struct Harness {
    pub sim: RunningSim,
    pub client: Arc<ExchangeAClient>,
}

/// Client settings for tests: short timeout and lookup pauses so faults resolve quickly.
pub fn test_client_config(base_url: String) -> ClientConfig {
    let mut c = ClientConfig::new(base_url);
    c.timeout = Duration::from_millis(1500);
    c.lookup_delay = Duration::from_millis(50);
    c.max_auto_wait = Duration::from_secs(3);
    c
}

pub async fn start() -> Harness {
    start_with(|_| {}).await
}

pub async fn start_with(tweak: impl FnOnce(&mut ClientConfig)) -> Harness {
    let mut config = SimConfig::new(7, KEY, SECRET);
    config.initial_funds = vec![("USDT".into(), Decimal::from(100_000))];
    let sim = spotbot_sim::serve(config, "127.0.0.1:0").await.expect("simulator binds");
    let mut cc = test_client_config(sim.base_url());
    tweak(&mut cc);
    let clock: SharedClock = Arc::new(SystemClock);
    let client = ExchangeAClient::new(
        cc,
        Some(Signer::new(Secret::new(KEY), Secret::new(SECRET))),
        clock,
        spotbot::metrics::Metrics::default(),
    )
    .expect("client");
    Harness { sim, client: Arc::new(client) }
}

impl Harness {
    /// Exchange A's rules on the same simulator's core, in process (the backtest's exchange).
    pub fn core(&self) -> CoreExchange {
        CoreExchange::new(self.sim.sim.clone(), KEY).expect("the simulator's account and listing")
    }

    pub fn set_price(&self, symbol: &str, price: &str) {
        self.sim.sim.set_price(symbol, price.parse().expect("decimal")).expect("set price");
    }

    /// Requests the simulator saw on `path` with `method`.
    pub fn seen(&self, method: &str, path: &str) -> Vec<RequestRecord> {
        self.sim
            .sim
            .requests()
            .into_iter()
            .filter(|r| r.method == method && r.path == path)
            .collect()
    }

    /// Orders the engine created with this client order id.
    pub fn orders_with_client_id(&self, id: &str) -> usize {
        self.sim.sim.orders().iter().filter(|o| o["clientOrderId"] == id).count()
    }
}

/// The real testnet client, when the environment asks for it.
pub fn testnet_client() -> Option<ExchangeAClient> {
    let enabled = std::env::var("EXCHANGE_TESTNET").is_ok_and(|v| v == "1" || v == "true");
    let key = std::env::var("EXCHANGE_API_KEY").ok().filter(|k| !k.is_empty())?;
    let secret = std::env::var("EXCHANGE_API_SECRET").ok().filter(|k| !k.is_empty())?;
    if !enabled {
        return None;
    }
    let mut cc = ClientConfig::new(TESTNET_URL);
    cc.lookup_delay = Duration::from_millis(500);
    let clock: SharedClock = Arc::new(SystemClock);
    let signer = Signer::new(Secret::new(key), Secret::new(secret));
    ExchangeAClient::new(cc, Some(signer), clock, spotbot::metrics::Metrics::default()).ok()
}

/// The ETHUSDT bracket the tests use after buying 1 ETH at 3000 (0.1 % fee in ETH).
pub fn eth_bracket(list_client_order_id: &str) -> NewOco {
    let d = |v: &str| v.parse::<Decimal>().expect("decimal");
    NewOco {
        symbol: "ETHUSDT".into(),
        side: Side::Sell,
        qty: Qty(d("0.999")),
        take_profit: Price(d("3150")),
        stop_price: Price(d("2900")),
        stop_limit_price: Price(d("2894.2")),
        list_client_order_id: list_client_order_id.into(),
        take_profit_client_order_id: None,
        stop_client_order_id: None,
    }
}
