//! The host as a real process, killed with SIGKILL between the entry fill and the OCO, then
//! started again on the same data folder: reconciliation at start protects the position with
//! exactly one OCO, and the entry is never sent twice.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_between_fill_and_oco_is_protected_by_reconciliation_at_restart() {
    spotbot::exchange::exchange_a::client::ensure_crypto_provider();
    let http = reqwest::Client::new();
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
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
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
    let data = dir.path().join("data");

    let host = Process::start(&config, &data);
    let registered: Value = http
        .post(format!("{}/api/license/register", host.base))
        .json(&json!({"email": "crash@example.com", "name": "Crash Test"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(registered["ok"], true, "{registered}");

    // The OCO request hangs before the exchange executes it: the host is killed meanwhile.
    let mut hang = Fault::new(FaultKind::Delay { ms: 60_000, before: true });
    hang.path = Some("/api/v3/orderList/oco".into());
    hang.method = Some("POST".into());
    sim.sim.inject(hang);
    let trade = http
        .post(format!(
            "{}/api/trade?symbol=ETHUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9",
            host.base
        ))
        .send();
    let trade = tokio::spawn(trade);
    let entries = |sim: &spotbot_sim::RunningSim| {
        sim.sim.orders().into_iter().filter(|o| o["type"] == "MARKET" && o["side"] == "BUY").count()
    };
    wait_until("the entry filled", Duration::from_secs(20), || entries(&sim) == 1).await;
    // The host records the fill and sends the OCO, which hangs at the exchange (a request held
    // there is only recorded once answered). Kill it inside that window.
    tokio::time::sleep(Duration::from_millis(500)).await;
    host.kill_9();
    let _ = trade.await;
    sim.sim.clear_faults();
    let lists = |sim: &spotbot_sim::RunningSim| {
        sim.sim.orders().into_iter().filter(|o| o["type"] == "LIMIT_MAKER").count()
    };
    assert_eq!(lists(&sim), 0, "killed before the OCO existed: the position is naked");

    let host = Process::start(&config, &data);
    wait_until("reconciliation placed the OCO", Duration::from_secs(30), || lists(&sim) == 1).await;
    assert_eq!(entries(&sim), 1, "the entry was never sent again");
    let orders = sim.sim.orders();
    let tp = orders.iter().find(|o| o["type"] == "LIMIT_MAKER").unwrap();
    let sl = orders.iter().find(|o| o["type"] == "STOP_LOSS_LIMIT").unwrap();
    assert_eq!(tp["orderListId"], sl["orderListId"]);
    assert_eq!(tp["origQty"], sl["origQty"]);
    // The exchange holds the OCO a moment before the host has recorded its answer.
    let mut trades = Value::Null;
    for _ in 0..100 {
        trades = http
            .get(format!("{}/api/trades", host.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if trades["trades"][0]["protection"] == "protected" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(trades["count"], 1, "{trades}");
    assert_eq!(trades["trades"][0]["protection"], "protected", "{trades}");
    assert_eq!(trades["trades"][0]["sl_oid"], sl["orderId"], "{trades}");
    host.kill_9();
}
