//! The demo's set-up (paper mode: the exchange simulator in-process with its seeded synthetic
//! market, no keys) with both strategy plugins loaded: right after start, MR Combined answers
//! every watchlist symbol with a signal or a skip and its reason, and Pump Momentum scans its
//! liquidity-filtered universe.

use serde_json::json;

use crate::plugin_support::workspace_plugins;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_paper_market_both_strategies_answer_right_after_start() {
    let rig = crate::license_support::Rig::new().await;
    // The paper simulator runs on the wall clock, as in the demo: so does everyone here.
    rig.clock.set(chrono::Utc::now());
    let (_plugins, plugins_toml) = workspace_plugins(&["mr_combined.wasm", "pump_momentum.wasm"]);
    let host = rig.licensed_host(&format!("[exchange]\nmode = \"paper\"\n{plugins_toml}")).await;
    let (_, list) = host.get("/api/strategies").await;
    let loaded: Vec<&str> =
        list["plugins"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(loaded.len(), 2, "{list}");

    let (status, mr) = host.post("/api/mr-combined/scan-and-signal", json!({})).await;
    assert_eq!(status, 200, "{mr}");
    assert_eq!(mr["ok"], true, "{mr}");
    let answered =
        mr["signaled"].as_array().unwrap().len() + mr["skipped"].as_array().unwrap().len();
    assert_eq!(answered, 5, "one answer per watchlist symbol: {mr}");
    for skip in mr["skipped"].as_array().unwrap() {
        assert!(!skip["reason"].as_str().unwrap().is_empty(), "{skip}");
    }

    let (status, pump) = host.post("/api/pump-momentum/scan", json!(null)).await;
    assert_eq!(status, 200, "{pump}");
    assert_eq!(pump["ok"], true, "{pump}");
    assert!(pump["scanned"].as_u64().unwrap() >= 10, "the universe of liquid symbols: {pump}");
    assert_eq!(pump["count"].as_u64().unwrap() as usize, pump["signals"].as_array().unwrap().len());

    let (status, market) = host.get("/api/market/scan").await;
    assert_eq!(status, 200, "{market}");
    assert_eq!(market["scanned"], 5, "{market}");
    assert_eq!(market["cached"], 5, "the MR scan already computed the watchlist's contexts");

    // The demo's banner names the simulator (from the status) and how to move its market.
    let (status, answer) = host.get("/api/status").await;
    assert_eq!(status, 200, "{answer}");
    let simulator = answer["config"]["paper_simulator"].as_str().expect("paper mode");
    assert!(simulator.starts_with("http://127.0.0.1:"), "{simulator}");
    let moved = host
        .http
        .post(format!("{simulator}/sim/price"))
        .json(&json!({"symbol": "ETHUSDT", "price": "4321"}))
        .send()
        .await
        .unwrap();
    assert!(moved.status().is_success(), "{:?}", moved.text().await);
    let state: serde_json::Value =
        host.http.get(format!("{simulator}/sim/state")).send().await.unwrap().json().await.unwrap();
    assert!(state.to_string().contains("4321"), "the simulator's market moved: {state}");
}
