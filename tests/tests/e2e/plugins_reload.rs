//! Hot reload over real HTTP: adding, replacing and removing a `.wasm` is reflected within
//! one second; a scan in flight finishes on the version it started with; a broken replacement
//! keeps the previous version serving. Plugin state and the config section reach the plugin,
//! and state and compiled artifacts survive a restart.

use std::time::Duration;

use crate::plugin_support::{PluginHost, config_toml, deploy, wasm};
use serde_json::Value;
use spotbot::clock::Clock as _;
use spotbot_tests::TestHost;

/// The bound is one second, which `cargo bench --bench plugins` (release) checks with
/// margin. An unoptimised test build compiles Wasm several times slower, and CI machines are
/// shared, so debug builds get three seconds; release test runs keep the one second.
const ONE_SECOND: Duration =
    if cfg!(debug_assertions) { Duration::from_secs(3) } else { Duration::from_secs(1) };

fn echo(body: &Value, i: usize) -> Value {
    serde_json::from_str(body["results"][i]["reason"].as_str().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_replace_break_and_remove_are_reflected_within_a_second() {
    let h = PluginHost::start(&[], "", "").await;
    let (_, list) = h.get("/api/strategies").await;
    assert!(list["plugins"].as_array().unwrap().is_empty());

    deploy(h.dir(), "echo.wasm", &wasm("guest-echo"));
    let took =
        h.wait_for("echo.wasm", ONE_SECOND, |r| r.is_some_and(|r| r["version"] == "1.0.0")).await;
    eprintln!("added: serving after {took:?}");
    let (status, body, _) = h.scan("guest_echo", Some(&["BTCUSDT"])).await;
    assert_eq!(status, 200, "{body}");

    deploy(h.dir(), "echo.wasm", &wasm("guest-echo-next"));
    let took =
        h.wait_for("echo.wasm", ONE_SECOND, |r| r.is_some_and(|r| r["version"] == "1.1.0")).await;
    eprintln!("replaced: serving after {took:?}");
    let (_, body, _) = h.scan("guest_echo", None).await;
    assert_eq!(
        (body["version"].as_str(), echo(&body, 0)["version"].as_str()),
        (Some("1.1.0"), Some("1.1.0"))
    );

    // A broken replacement: refused, the previous version keeps serving and the row says why.
    let serving_sha = h.row("echo.wasm").await.unwrap()["sha256"].clone();
    deploy(h.dir(), "echo.wasm", b"\0asm\x0d\0\x01\0 truncated upload");
    h.wait_for("echo.wasm", ONE_SECOND, |r| r.is_some_and(|r| r["status"] == "stale")).await;
    let row = h.row("echo.wasm").await.unwrap();
    assert_eq!((row["version"].as_str(), &row["sha256"]), (Some("1.1.0"), &serving_sha));
    assert!(
        row["last_error"].as_str().unwrap().contains("not a valid WebAssembly component"),
        "{row}"
    );
    let (status, body, _) = h.scan("guest_echo", None).await;
    assert_eq!((status, body["version"].as_str()), (200, Some("1.1.0")));

    // Fixed again: the error clears.
    deploy(h.dir(), "echo.wasm", &wasm("guest-echo"));
    h.wait_for("echo.wasm", ONE_SECOND, |r| {
        r.is_some_and(|r| r["status"] == "loaded" && r["version"] == "1.0.0")
    })
    .await;
    assert!(h.row("echo.wasm").await.unwrap()["last_error"].is_null());

    std::fs::remove_file(h.dir().join("echo.wasm")).unwrap();
    let took = h.wait_for("echo.wasm", ONE_SECOND, |r| r.is_none()).await;
    eprintln!("removed: gone after {took:?}");
    let (status, _, _) = h.scan("guest_echo", None).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scan_in_flight_finishes_on_the_version_it_started_with() {
    // `spin` keeps guest_echo busy for a while (Cranelift code, ~1 ns per iteration).
    let h = PluginHost::start(
        &[("echo.wasm", "guest-echo")],
        "scan_timeout_ms = 20000\n",
        "[strategy.guest_echo]\nspin = 3000000000\n",
    )
    .await;
    let slow = h.scan("guest_echo", Some(&["BTCUSDT"]));
    let swap = async {
        tokio::time::sleep(Duration::from_millis(30)).await;
        deploy(h.dir(), "echo.wasm", &wasm("guest-echo-next"));
        h.wait_for("echo.wasm", ONE_SECOND, |r| r.is_some_and(|r| r["version"] == "1.1.0")).await
    };
    let ((status, body, took), swapped_after) = tokio::join!(slow, swap);
    assert_eq!(status, 200, "{body}");
    assert!(
        swapped_after + Duration::from_millis(30) < took,
        "the swap ({swapped_after:?}) happened while the scan ({took:?}) ran"
    );
    assert_eq!(
        (body["version"].as_str(), echo(&body, 0)["version"].as_str()),
        (Some("1.0.0"), Some("1.0.0"))
    );
    let (_, body, _) = h.scan("guest_echo", Some(&["BTCUSDT"])).await;
    assert_eq!(echo(&body, 0)["version"], "1.1.0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_section_and_persisted_state_reach_the_plugin_across_restarts() {
    let plugins_dir = tempfile::tempdir().unwrap();
    deploy(plugins_dir.path(), "echo.wasm", &wasm("guest-echo"));
    let toml = config_toml(plugins_dir.path(), "", "[strategy.guest_echo]\ngreeting = \"hi\"\n");
    let host = TestHost::start(&toml).await;
    let url = host.url("/api/strategies/guest_echo/scan");
    let mut last = Value::Null;
    for expected in 1..=3u64 {
        let r = host
            .http
            .post(&url)
            .json(&serde_json::json!({"symbols": ["BTCUSDT", "ETHUSDT"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        last = r.json().await.unwrap();
        let e = echo(&last, 1);
        assert_eq!(e["scans"], expected, "{e}");
        // The section's key replaces the default, the other default stays.
        assert_eq!(e["config"], serde_json::json!({"greeting": "hi", "threshold": 1, "spin": 0}));
        assert_eq!(e["candles"], serde_json::json!([["1h", 24], ["4h", 6]]));
        assert_eq!(e["now_ms"], host.clock.now_ms());
    }
    assert_eq!(last["state_updates"], 1);
    assert!(!host.app.state.plugins.get("guest_echo").unwrap().from_cache);
    let data_dir = host.stop().await;

    // Restart on the same data folder: the state is there and the artifact is not recompiled.
    let host = TestHost::start_in(&toml, data_dir).await;
    assert!(host.app.state.plugins.get("guest_echo").unwrap().from_cache);
    let r = host
        .http
        .post(host.url("/api/strategies/guest_echo/scan"))
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    let e = echo(&body, 0);
    assert_eq!(e["scans"], 4, "{e}");
    assert_eq!(e["state_keys"], serde_json::json!(["scans"]));
    // Default symbols are the watchlist.
    assert_eq!(
        body["results"].as_array().unwrap().len(),
        host.app.state.config.market.watchlist.len()
    );
    host.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_body_is_validated() {
    let h = PluginHost::start(&[("echo.wasm", "guest-echo")], "", "").await;
    let url = h.host.url("/api/strategies/guest_echo/scan");
    let r = h
        .host
        .http
        .post(&url)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = h.host.http.post(&url).json(&serde_json::json!({"symbols": []})).send().await.unwrap();
    assert_eq!(r.status(), 422);
    let r =
        h.host.http.post(&url).json(&serde_json::json!({"symbolz": ["X"]})).send().await.unwrap();
    assert_eq!(r.status(), 422);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"], "invalid_body");
}
