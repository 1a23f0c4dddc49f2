//! The host as a real process, killed with SIGKILL, then started again on the same data
//! folder: between the entry fill and the OCO, reconciliation at start protects the position
//! with exactly one OCO; right after a confirm answered (its journal settlements and the OCO's
//! own row are committed without waiting for the disk, so a crash may lose them),
//! reconciliation settles them again from the exchange, finding the OCO by the client id the
//! entry's durable row names. Either way nothing is sent twice.

#![cfg(unix)]

mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use serde_json::{Value, json};
use spotbot_sim::{Fault, FaultKind, SimConfig};

const BIN: &str = env!("CARGO_BIN_EXE_spotbot");
const KEY: &str = "crash-key";
const SECRET: &str = "crash-secret";

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

/// The exchange simulator, the license server and a config for a host process on them.
struct Rig {
    http: reqwest::Client,
    sim: spotbot_sim::RunningSim,
    _license: spotbot_license_server::LicenseServer,
    _license_dir: tempfile::TempDir,
    dir: tempfile::TempDir,
}

impl Rig {
    async fn new() -> Rig {
        spotbot::exchange::exchange_a::client::ensure_crypto_provider();
        let mut sim_config = SimConfig::new(5, KEY, SECRET);
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
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            format!(
                "[exchange]\nmode = \"testnet\"\nbase_url = \"{}\"\nrequest_timeout_ms = 1500\n\
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
        Rig { http: reqwest::Client::new(), sim, _license: license, _license_dir: license_dir, dir }
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
        self.http.post(format!(
            "{}/api/trade?symbol=ETHUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9",
            host.base
        ))
    }

    fn entries(&self) -> usize {
        let orders = self.sim.sim.orders();
        orders.iter().filter(|o| o["type"] == "MARKET" && o["side"] == "BUY").count()
    }

    fn lists(&self) -> usize {
        self.sim.sim.orders().into_iter().filter(|o| o["type"] == "LIMIT_MAKER").count()
    }

    /// Waits until the host reports its one trade protected, and checks its stop is the OCO's.
    async fn assert_protected_once(&self, host: &Process) {
        let orders = self.sim.sim.orders();
        let tp = orders.iter().find(|o| o["type"] == "LIMIT_MAKER").unwrap();
        let sl = orders.iter().find(|o| o["type"] == "STOP_LOSS_LIMIT").unwrap();
        assert_eq!(tp["orderListId"], sl["orderListId"]);
        assert_eq!(tp["origQty"], sl["origQty"]);
        // The exchange holds the OCO a moment before the host has recorded its answer.
        let mut trades = Value::Null;
        for _ in 0..100 {
            trades = answer(self.http.get(format!("{}/api/trades", host.base))).await;
            if trades["trades"][0]["protection"] == "protected" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(trades["count"], 1, "{trades}");
        assert_eq!(trades["trades"][0]["protection"], "protected", "{trades}");
        assert_eq!(trades["trades"][0]["sl_oid"], sl["orderId"], "{trades}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_between_fill_and_oco_is_protected_by_reconciliation_at_restart() {
    let rig = Rig::new().await;
    let host = rig.start();
    rig.register(&host).await;

    // The OCO request hangs before the exchange executes it: the host is killed meanwhile.
    let mut hang = Fault::new(FaultKind::Delay { ms: 60_000, before: true });
    hang.path = Some("/api/v3/orderList/oco".into());
    hang.method = Some("POST".into());
    rig.sim.sim.inject(hang);
    let trade = tokio::spawn(rig.trade(&host).send());
    wait_until("the entry filled", Duration::from_secs(20), || rig.entries() == 1).await;
    // The host records the fill and sends the OCO, which hangs at the exchange (a request held
    // there is only recorded once answered). Kill it inside that window.
    tokio::time::sleep(Duration::from_millis(500)).await;
    host.kill_9();
    let _ = trade.await;
    rig.sim.sim.clear_faults();
    assert_eq!(rig.lists(), 0, "killed before the OCO existed: the position is naked");

    let host = rig.start();
    wait_until("reconciliation placed the OCO", Duration::from_secs(30), || rig.lists() == 1).await;
    assert_eq!(rig.entries(), 1, "the entry was never sent again");
    rig.assert_protected_once(&host).await;
    host.kill_9();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_right_after_a_confirm_loses_nothing_the_exchange_did() {
    let rig = Rig::new().await;
    let host = rig.start();
    rig.register(&host).await;
    let traded = answer(rig.trade(&host)).await;
    assert_eq!(traded["ok"], true, "{traded}");
    // The entry's settlement and the OCO's rows may still be only in memory: kill at once.
    // Without its row, the OCO is found by its client id (a second one would be refused).
    host.kill_9();
    assert_eq!((rig.entries(), rig.lists()), (1, 1));
    let sent = rig.sim.sim.orders().len();

    let host = rig.start();
    rig.assert_protected_once(&host).await;
    assert_eq!(rig.sim.sim.orders().len(), sent, "nothing was sent again: {}", rig.entries());
    host.kill_9();
}
