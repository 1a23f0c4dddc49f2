//! The host as a real process, killed with SIGKILL, then started again on the same data
//! folder, on both exchanges:
//! - between the entry fill and its protection (exchange A's OCO, exchange B's resting
//!   take-profit), reconciliation at start protects the position exactly once;
//! - right after a confirm answered (its journal settlements and the protection's own row are
//!   committed without waiting for the disk, so a crash may lose them), reconciliation settles
//!   them again from the exchange, finding the protection by the client id the entry's durable
//!   row names;
//! - a take-profit that fills while the process is dead closes the trade at restart.
//!
//! Either way nothing is sent twice, which the tests read from the simulator's own orders.

#![cfg(unix)]

mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use serde_json::{Value, json};
use spotbot::config::ExchangeName;
use spotbot_sim::{Fault, FaultKind, SimConfig};

const BIN: &str = env!("CARGO_BIN_EXE_spotbot");
const KEY: &str = "crash-key";
const SECRET: &str = "crash-secret";
/// The private key of the exchange B account (the official SDK's test key).
const B_KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";

struct Process {
    child: Child,
    base: String,
}

impl Process {
    fn start(config: &std::path::Path, data: &std::path::Path) -> Process {
        let mut child = Command::new(BIN)
            .args(["serve", "--config", config.to_str().unwrap(), "--addr", "127.0.0.1:0"])
            .args(["--data-dir", data.to_str().unwrap()])
            .env("EXCHANGE_API_KEY", KEY)
            .env("EXCHANGE_API_SECRET", SECRET)
            .env("EXCHANGE_PRIVATE_KEY", B_KEY)
            .env_remove("MESSENGER_BOT_TOKEN")
            .env_remove("TRADER_LICENSE_KEY")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr = support::announced_addr(&mut child);
        Process { child, base: format!("http://{addr}") }
    }

    fn kill_9(mut self) {
        let killed =
            Command::new("kill").args(["-KILL", &self.child.id().to_string()]).status().unwrap();
        assert!(killed.success());
        let _ = self.child.wait();
    }
}

/// A test that fails part-way must not leave its service running on the machine (a failed
/// run once left six behind): whatever ends the test stops the child. After `kill_9` this
/// finds it already reaped and does nothing.
impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn wait_until(what: &str, timeout: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The JSON body of the answer to `request`.
async fn answer(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// One order as the test compares them across venues.
#[derive(Debug)]
struct Seen {
    id: String,
    qty: Decimal,
    status: String,
}

/// The exchange simulator, the license server and a config for a host process on them.
struct Rig {
    venue: ExchangeName,
    http: reqwest::Client,
    sim: spotbot_sim::RunningSim,
    _license: spotbot_license_server::LicenseServer,
    _license_dir: tempfile::TempDir,
    dir: tempfile::TempDir,
}

impl Rig {
    async fn new(venue: ExchangeName) -> Rig {
        spotbot::exchange::exchange_a::client::ensure_crypto_provider();
        let mut sim_config = SimConfig::new(5, KEY, SECRET);
        let b_key = spotbot_exchange_b_protocol::PrivateKey::from_hex(B_KEY).unwrap();
        sim_config.exchange_b = spotbot_sim::ExchangeBConfig::owned_by(b_key.address());
        sim_config.initial_funds = vec![("USDT".into(), Decimal::from(10_000))];
        let sim = spotbot_sim::serve(sim_config, "127.0.0.1:0").await.unwrap();
        sim.sim.set_price("ETHUSDT", "3000".parse().unwrap()).unwrap();
        let license_dir = tempfile::tempdir().unwrap();
        let license = spotbot_license_server::LicenseServer::bind(
            spotbot_license_server::Config::new(license_dir.path()),
            "127.0.0.1:0".parse().unwrap(),
        )
        .await
        .unwrap();
        // Exchange B follows the simulator's `/ws` on the REST port (derived from `base_url`).
        let active = venue.as_str();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            format!(
                "[exchange]\nactive = \"{active}\"\nmode = \"testnet\"\nbase_url = \"{}\"\n\
                 request_timeout_ms = 1500\n\
                 [strategy.mr_combined]\nsize_pct = 10.0\n\
                 [plugins]\ndir = {:?}\n\
                 [license]\nserver_url = \"http://{}\"\npublic_key = \"{}\"\n",
                sim.base_url(),
                dir.path().join("plugins").display().to_string(),
                license.addr(),
                license.public_key_hex()
            ),
        )
        .unwrap();
        Rig {
            venue,
            http: reqwest::Client::new(),
            sim,
            _license: license,
            _license_dir: license_dir,
            dir,
        }
    }

    /// A host process on the rig's config and data folder.
    fn start(&self) -> Process {
        Process::start(&self.dir.path().join("config.toml"), &self.dir.path().join("data"))
    }

    async fn register(&self, host: &Process) {
        let registered = answer(
            self.http
                .post(format!("{}/api/license/register", host.base))
                .json(&json!({"email": "crash@example.com", "name": "Crash Test"})),
        )
        .await;
        assert_eq!(registered["ok"], true, "{registered}");
    }

    /// The buy the tests confirm: ETHUSDT, 2 % stop, 5 % target.
    fn trade(&self, host: &Process) -> reqwest::RequestBuilder {
        self.http
            .post(format!(
                "{}/api/trade?symbol=ETHUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9",
                host.base
            ))
            .header("content-type", "application/json")
    }

    async fn trades(&self, host: &Process, path: &str) -> Value {
        answer(self.http.get(format!("{}/api/trades{path}", host.base))).await
    }

    /// Buys at market: exchange A's MARKET, exchange B's IOC.
    fn entries(&self) -> Vec<Seen> {
        match self.venue {
            ExchangeName::ExchangeA => self.orders_a("MARKET", "BUY"),
            ExchangeName::ExchangeB => self.orders_b("Ioc", "B"),
        }
    }

    /// Take-profits: exchange A's OCO limit leg, exchange B's resting GTC sell.
    fn take_profits(&self) -> Vec<Seen> {
        match self.venue {
            ExchangeName::ExchangeA => self.orders_a("LIMIT_MAKER", "SELL"),
            ExchangeName::ExchangeB => self.orders_b("Gtc", "A"),
        }
    }

    /// Sells at market (exits): none of the tests' trades leaves by one.
    fn market_sells(&self) -> Vec<Seen> {
        match self.venue {
            ExchangeName::ExchangeA => self.orders_a("MARKET", "SELL"),
            ExchangeName::ExchangeB => self.orders_b("Ioc", "A"),
        }
    }

    fn orders_a(&self, order_type: &str, side: &str) -> Vec<Seen> {
        let orders = self.sim.sim.orders().into_iter();
        orders
            .filter(|o| o["type"] == order_type && o["side"] == side)
            .map(|o| Seen {
                id: o["orderId"].to_string(),
                qty: o["origQty"].as_str().unwrap().parse().unwrap(),
                status: o["status"].as_str().unwrap().to_lowercase(),
            })
            .collect()
    }

    fn orders_b(&self, tif: &str, side: &str) -> Vec<Seen> {
        let field = |o: &Value, name: &str| o["order"][name].as_str().unwrap_or("").to_string();
        let orders = self.sim.sim.exchange_b_orders().into_iter();
        orders
            .filter(|o| field(o, "tif") == tif && field(o, "side") == side)
            .map(|o| Seen {
                id: o["order"]["oid"].to_string(),
                qty: field(&o, "origSz").parse().unwrap(),
                status: o["status"].as_str().unwrap().to_string(),
            })
            .collect()
    }

    /// The simulator's orders, whichever venue's shape, for failure messages.
    fn all_orders(&self) -> Value {
        match self.venue {
            ExchangeName::ExchangeA => Value::from(self.sim.sim.orders()),
            ExchangeName::ExchangeB => Value::from(self.sim.sim.exchange_b_orders()),
        }
    }

    /// Arms a fault that holds the protection's placement for a minute before the exchange
    /// executes it: on exchange A its own path, on exchange B the action after the entry.
    fn hold_the_protection(&self) {
        let mut hang = Fault::new(FaultKind::Delay { ms: 60_000, before: true });
        hang.method = Some("POST".into());
        match self.venue {
            ExchangeName::ExchangeA => hang.path = Some("/api/v3/orderList/oco".into()),
            ExchangeName::ExchangeB => {
                hang.path = Some("/exchange".into());
                hang.skip = 1;
            }
        }
        self.sim.sim.inject(hang);
    }

    /// Waits until the host reports its one trade protected, and checks at the simulator that
    /// exactly one take-profit rests, for the whole entry, under the id the host names.
    async fn assert_protected_once(&self, host: &Process) {
        let entry = &self.entries()[0];
        let take_profits = self.take_profits();
        assert_eq!(take_profits.len(), 1, "{}", self.all_orders());
        let tp = &take_profits[0];
        assert_eq!(tp.status, self.resting(), "{tp:?}");
        // On exchange B the buy's fee is taken in the coin: the take-profit sells what is held.
        assert!(tp.qty <= entry.qty && tp.qty >= entry.qty * Decimal::new(99, 2), "{tp:?}");
        if self.venue == ExchangeName::ExchangeA {
            let orders = self.sim.sim.orders();
            let tp = orders.iter().find(|o| o["type"] == "LIMIT_MAKER").unwrap();
            let sl = orders.iter().find(|o| o["type"] == "STOP_LOSS_LIMIT").unwrap();
            assert_eq!(tp["orderListId"], sl["orderListId"]);
            assert_eq!(tp["origQty"], sl["origQty"]);
        }
        // The exchange holds the protection a moment before the host has recorded its answer.
        let mut trades = Value::Null;
        for _ in 0..100 {
            trades = self.trades(host, "").await;
            if trades["trades"][0]["protection"] == "protected" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(trades["count"], 1, "{trades}");
        let trade = &trades["trades"][0];
        assert_eq!(trade["protection"], "protected", "{trades}");
        assert_eq!(trade["tp_oid"].to_string(), tp.id, "{trades}");
        match self.venue {
            ExchangeName::ExchangeA => assert_eq!(trade["stop"], "exchange", "{trades}"),
            ExchangeName::ExchangeB => {
                assert_eq!(trade["stop"], "service", "the stop is watched: {trades}")
            }
        }
    }

    /// How the simulator spells a resting order's status on the venue.
    fn resting(&self) -> &'static str {
        match self.venue {
            ExchangeName::ExchangeA => "new",
            ExchangeName::ExchangeB => "open",
        }
    }
}

/// Killed while the protection's request is held at the exchange: the position is naked until
/// the next start protects it, once, without buying again.
async fn sigkill_between_fill_and_protection(venue: ExchangeName) {
    let rig = Rig::new(venue).await;
    let host = rig.start();
    rig.register(&host).await;

    rig.hold_the_protection();
    let trade = tokio::spawn(rig.trade(&host).send());
    wait_until("the entry filled", Duration::from_secs(20), || rig.entries().len() == 1).await;
    // The host records the fill and sends the protection, which hangs at the exchange (a
    // request held there is only recorded once answered). Kill it inside that window.
    tokio::time::sleep(Duration::from_millis(500)).await;
    host.kill_9();
    let _ = trade.await;
    rig.sim.sim.clear_faults();
    assert!(rig.take_profits().is_empty(), "killed before the protection existed: naked");

    let host = rig.start();
    wait_until("reconciliation protected the position", Duration::from_secs(30), || {
        rig.take_profits().len() == 1
    })
    .await;
    assert_eq!(rig.entries().len(), 1, "the entry was never sent again");
    rig.assert_protected_once(&host).await;
    assert!(rig.market_sells().is_empty(), "nothing sold: {}", rig.all_orders());
    host.kill_9();
}

/// Killed at once after the confirm answered: whatever the store had not written yet is read
/// back from the exchange; nothing is sent twice.
async fn sigkill_right_after_a_confirm(venue: ExchangeName) {
    let rig = Rig::new(venue).await;
    let host = rig.start();
    rig.register(&host).await;
    let traded = answer(rig.trade(&host)).await;
    assert_eq!(traded["ok"], true, "{traded}");
    // The entry's settlement and the protection's rows may still be only in memory: kill at
    // once. Without its row, the protection is found by its client id.
    host.kill_9();
    assert_eq!((rig.entries().len(), rig.take_profits().len()), (1, 1));
    let sent = rig.all_orders().as_array().unwrap().len();

    let host = rig.start();
    rig.assert_protected_once(&host).await;
    let now = rig.all_orders().as_array().unwrap().len();
    assert_eq!(now, sent, "nothing was sent again: {}", rig.all_orders());
    host.kill_9();
}

/// Killed with the trade protected; the take-profit fills while nothing runs. The next start
/// sees it filled and closes the trade as a take-profit, selling nothing itself.
async fn sigkill_then_the_take_profit_fills_while_down(venue: ExchangeName) {
    let rig = Rig::new(venue).await;
    let host = rig.start();
    rig.register(&host).await;
    let traded = answer(rig.trade(&host)).await;
    assert_eq!(traded["ok"], true, "{traded}");
    rig.assert_protected_once(&host).await;
    host.kill_9();

    rig.sim.sim.set_price("ETHUSDT", "3200".parse().unwrap()).unwrap();
    wait_until("the take-profit filled", Duration::from_secs(5), || {
        rig.take_profits().iter().all(|tp| tp.status == "filled")
    })
    .await;

    let host = rig.start();
    let mut history = Value::Null;
    for _ in 0..100 {
        history = rig.trades(&host, "/history").await;
        if history["count"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(history["trades"][0]["reason"], "take_profit", "{history}");
    assert_eq!(rig.trades(&host, "").await["count"], 0);
    assert!(rig.market_sells().is_empty(), "nothing sold at market: {}", rig.all_orders());
    host.kill_9();
}

mod on_a {
    use super::ExchangeName;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigkill_between_fill_and_oco_is_protected_by_reconciliation_at_restart() {
        super::sigkill_between_fill_and_protection(ExchangeName::ExchangeA).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigkill_right_after_a_confirm_loses_nothing_the_exchange_did() {
        super::sigkill_right_after_a_confirm(ExchangeName::ExchangeA).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigkill_then_a_take_profit_filled_while_down_closes_the_trade() {
        super::sigkill_then_the_take_profit_fills_while_down(ExchangeName::ExchangeA).await;
    }
}

mod on_b {
    use super::ExchangeName;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigkill_between_fill_and_take_profit_is_protected_by_reconciliation_at_restart() {
        super::sigkill_between_fill_and_protection(ExchangeName::ExchangeB).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigkill_right_after_a_confirm_loses_nothing_the_exchange_did() {
        super::sigkill_right_after_a_confirm(ExchangeName::ExchangeB).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigkill_then_a_take_profit_filled_while_down_closes_the_trade() {
        super::sigkill_then_the_take_profit_fills_while_down(ExchangeName::ExchangeB).await;
    }
}
