//! Shared set-up of the exchange tests: the simulator on loopback and the real client of
//! exchange A or of exchange B pointed at it (one simulator speaks both, one engine behind
//! them); or, when EXCHANGE_API_KEY, EXCHANGE_API_SECRET and EXCHANGE_TESTNET=1 are set, the
//! exchange A client pointed at the real testnet.
//!
//! A scenario about the [`Exchange`] contract takes a [`Harness`] of either [`Venue`] and
//! runs on both through [`on_both!`]; the harness answers the wire facts that differ (where
//! orders are sent, how the simulator names a client order id, which path a fault targets).

use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use serde_json::Value;
use spotbot::clock::{SharedClock, SystemClock};
use spotbot::config::Secret;
use spotbot::exchange::core_exchange::CoreExchange;
use spotbot::exchange::exchange_a::{ClientConfig, ExchangeAClient, Signer, TESTNET_URL};
use spotbot::exchange::exchange_b::cloid::cloid_of;
use spotbot::exchange::exchange_b::{self, ExchangeBClient};
use spotbot::exchange::{Exchange, NewOco, OrderLists, Price, Qty, Side};
use spotbot_exchange_b_protocol::{Network, PrivateKey};
use spotbot_sim::{Fault, FaultKind, RequestRecord, RunningSim, SimConfig};
pub use spotbot_tests::venue::{B_KEY, Venue};

pub const KEY: &str = "conformance-key";
pub const SECRET: &str = "conformance-secret";

pub struct Harness {
    pub sim: RunningSim,
    pub venue: Venue,
    /// The venue's client, as the service holds it.
    pub client: Arc<dyn Exchange>,
    a: Option<Arc<ExchangeAClient>>,
}

/// Exchange A client settings for tests: short timeout and lookup pauses so faults resolve
/// quickly.
pub fn test_client_config(base_url: String) -> ClientConfig {
    let mut c = ClientConfig::new(base_url);
    c.timeout = Duration::from_millis(1500);
    c.lookup_delay = Duration::from_millis(50);
    c.max_auto_wait = Duration::from_secs(3);
    c
}

/// Exchange B's client of `sim` for the default account, with the same short timeout, lookup
/// pauses and longest automatic wait as exchange A's test client.
pub fn exchange_b_client(sim: &RunningSim) -> ExchangeBClient {
    let mut cc = exchange_b::ClientConfig::new(sim.base_url(), Network::Testnet);
    cc.timeout = Duration::from_millis(1500);
    cc.lookup_delay = Duration::from_millis(50);
    cc.max_auto_wait = Duration::from_secs(3);
    let key = PrivateKey::from_hex(B_KEY).expect("key");
    let clock: SharedClock = Arc::new(SystemClock);
    ExchangeBClient::new(cc, Some(key), None, clock, spotbot::metrics::Metrics::default())
        .expect("client")
}

/// A simulator with 100 000 USDT (USDC on exchange B) on the default account, and the client
/// of `venue` for it.
pub async fn start(venue: Venue) -> Harness {
    start_with(venue, |_| {}).await
}

/// As [`start`], with exchange A's client settings changed by `tweak`.
pub async fn start_with(venue: Venue, tweak: impl FnOnce(&mut ClientConfig)) -> Harness {
    let mut config = SimConfig::new(7, KEY, SECRET);
    config.initial_funds = vec![("USDT".into(), Decimal::from(100_000))];
    let owner = PrivateKey::from_hex(B_KEY).expect("key").address();
    config.exchange_b = spotbot_sim::ExchangeBConfig::owned_by(owner);
    let sim = spotbot_sim::serve(config, "127.0.0.1:0").await.expect("simulator binds");
    match venue {
        Venue::A => {
            let mut cc = test_client_config(sim.base_url());
            tweak(&mut cc);
            let clock: SharedClock = Arc::new(SystemClock);
            let client = Arc::new(
                ExchangeAClient::new(
                    cc,
                    Some(Signer::new(Secret::new(KEY), Secret::new(SECRET))),
                    clock,
                    spotbot::metrics::Metrics::default(),
                )
                .expect("client"),
            );
            Harness { sim, venue, client: client.clone(), a: Some(client) }
        }
        Venue::B => {
            let client = Arc::new(exchange_b_client(&sim));
            Harness { sim, venue, client, a: None }
        }
    }
}

impl Harness {
    /// The client as the service holds it.
    pub fn ex(&self) -> &dyn Exchange {
        self.client.as_ref()
    }

    /// Exchange A's client itself (for its own counters); only on [`Venue::A`].
    pub fn a(&self) -> &ExchangeAClient {
        self.a.as_deref().expect("an exchange A harness")
    }

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

    /// The path orders are placed on.
    pub fn placement_path(&self) -> &'static str {
        match self.venue {
            Venue::A => "/api/v3/order",
            Venue::B => "/exchange",
        }
    }

    /// The path the reads of balances go to.
    pub fn balance_path(&self) -> &'static str {
        match self.venue {
            Venue::A => "/api/v3/account",
            Venue::B => "/info",
        }
    }

    /// The client order id as the simulator records it: the id on exchange A, its 16-byte
    /// cloid (`0x…`) on exchange B.
    pub fn wire_id(&self, id: &str) -> String {
        match self.venue {
            Venue::A => id.to_string(),
            Venue::B => cloid_of(id).to_string(),
        }
    }

    /// Placement requests the simulator saw for client order id `id`.
    pub fn placements(&self, id: &str) -> Vec<RequestRecord> {
        let wire = self.wire_id(id);
        self.seen("POST", self.placement_path())
            .into_iter()
            .filter(|r| r.client_order_id.as_deref() == Some(wire.as_str()))
            // Exchange B names a cancel by cloid with the cloid too: orders only.
            .filter(|r| r.kind.as_deref().is_none_or(|kind| kind == "order"))
            .collect()
    }

    /// Requests after the first placement of `id` that were not placements: the lookups
    /// (on exchange B, `orderStatus` reads).
    pub fn lookups_after(&self, id: &str) -> Vec<RequestRecord> {
        let wire = self.wire_id(id);
        self.sim
            .sim
            .requests()
            .into_iter()
            .skip_while(|r| r.client_order_id.as_deref() != Some(wire.as_str()))
            .filter(|r| r.path != self.placement_path())
            .filter(|r| r.kind.as_deref().is_none_or(|kind| kind == "orderStatus"))
            .collect()
    }

    /// Orders the engine created with this client order id (the core's query shape).
    pub fn orders_with_client_id(&self, id: &str) -> usize {
        self.engine_orders(id).len()
    }

    /// The engine's orders with this client order id, in exchange A's query shape.
    pub fn engine_orders(&self, id: &str) -> Vec<Value> {
        let wire = self.wire_id(id);
        self.sim.sim.orders().into_iter().filter(|o| o["clientOrderId"] == wire.as_str()).collect()
    }

    /// The order with client order id `id` as exchange B's `orderStatus` shows it.
    pub fn exchange_b_order(&self, id: &str) -> Value {
        let cloid = cloid_of(id).to_string();
        self.sim
            .sim
            .exchange_b_orders()
            .into_iter()
            .find(|o| o["order"]["cloid"] == cloid.as_str())
            .unwrap_or_else(|| panic!("the simulator has no order with cloid {cloid} ({id})"))
    }

    /// A fault on the venue's order placement.
    pub fn placement_fault(&self, kind: FaultKind) -> Fault {
        match self.venue {
            Venue::A => Fault::new(kind),
            Venue::B => Fault { path: Some("/exchange".into()), ..Fault::new(kind) },
        }
    }

    /// A fault on the next `count` reads of balances (and, on exchange B, every other read).
    pub fn read_fault(&self, kind: FaultKind, count: u32) -> Fault {
        let method = (self.venue == Venue::A).then(|| "GET".to_string());
        Fault { count, path: Some(self.balance_path().into()), method, ..Fault::new(kind) }
    }
}

/// Test functions `on_a::<scenario>` and `on_b::<scenario>` for each `async fn
/// <scenario>(Harness)` named: one scenario, both exchanges.
macro_rules! on_both {
    ($($scenario:ident),* $(,)?) => {
        mod on_a {
            $(
                #[tokio::test]
                async fn $scenario() {
                    let h = crate::exchange_support::start(crate::exchange_support::Venue::A).await;
                    super::$scenario(h).await;
                }
            )*
        }
        mod on_b {
            $(
                #[tokio::test]
                async fn $scenario() {
                    let h = crate::exchange_support::start(crate::exchange_support::Venue::B).await;
                    super::$scenario(h).await;
                }
            )*
        }
    };
}
pub(crate) use on_both;

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

/// Exchange A's order lists (the scenarios about OCO lists run on exchange A only).
pub fn lists(ex: &dyn Exchange) -> &dyn OrderLists {
    ex.order_lists().expect("this exchange offers order lists")
}
