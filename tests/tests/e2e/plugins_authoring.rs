//! Writing and operating a plugin over real HTTP: the plugin's log lines (`log!`) come back
//! with a preview scan, bounded per call; a preview's `config` override applies to that scan
//! only and persists nothing; `GET /api/strategies/{name}/request` is exactly what the plugin
//! receives, and the SDK loads it so a native scan answers like the host's Wasm scan; the
//! persisted state is shown and reset; the canary keeps a version that fails on synthetic data
//! from replacing a working one; the plugin list shows each version's last scan and last error.

use std::time::Duration;

use crate::plugin_support::{PluginHost, deploy, wasm};
use crate::trading_support::Trading;
use serde_json::{Value, json};
use spotbot::clock::Clock as _;
use spotbot::plugins::{Limits, Runtime, StandalonePlugin};
use spotbot_sdk::Strategy as _;
use spotbot_tests::contract::{built_plugin, view};

use crate::plugin_support::workspace_plugins;
use spotbot_tests::scripted::script;

/// How long a reload may take in a test build (compile + describe + canary).
const RELOAD: Duration = Duration::from_secs(5);

/// The per-call stderr buffer (`Limits::stderr_bytes`).
const LOG_CAP: usize = 16 * 1024;

/// A canary or scan that runs into the deadline takes this long.
const LIMITS: &str = "scan_timeout_ms = 300\n";

fn scan_path(name: &str) -> String {
    format!("/api/strategies/{name}/scan")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_lines_come_back_with_the_scan_and_are_bounded_per_call() {
    let h = PluginHost::start(&[("logger.wasm", "guest-logger")], "", "").await;
    let (status, body) =
        h.post_json(&scan_path("guest_logger"), &json!({"symbols": ["BTCUSDT", "ETHUSDT"]})).await;
    assert_eq!(status, 200, "{body}");
    let logs: Vec<&str> =
        body["logs"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert_eq!(logs.len(), 3, "{body}");
    assert_eq!(logs[0], "hello from guest_logger 1.0.0: 2 symbols");
    assert!(
        logs[1].starts_with("BTCUSDT: last ") && logs[1].ends_with("over 24 candles"),
        "{logs:?}"
    );
    assert!(logs[2].starts_with("ETHUSDT: last "), "{logs:?}");
    assert_eq!(body["logs_truncated"], false);

    // 1000 lines of 100 bytes do not fit the per-call buffer: the scan still succeeds, the
    // log stops at the cap and says so.
    let (status, body) = h
        .post_json(
            &scan_path("guest_logger"),
            &json!({"symbols": ["BTCUSDT"], "config": {"flood": 1000}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["logs_truncated"], true, "{body}");
    let lines = body["logs"].as_array().unwrap();
    // Lines and the newlines between them (the last one is cut at the cap).
    let bytes: usize = lines.iter().map(|l| l.as_str().unwrap().len() + 1).sum::<usize>() - 1;
    assert!(bytes <= LOG_CAP, "{bytes} bytes of log for one call");
    assert!(lines.len() > 100, "the buffer is used up to its cap: {} lines", lines.len());
    assert_eq!(lines[0], "hello from guest_logger 1.0.0: 1 symbols");
    // The next call has its own buffer.
    let (_, body) = h.post_json(&scan_path("guest_logger"), &json!({"symbols": ["BTCUSDT"]})).await;
    assert_eq!(
        (body["logs"].as_array().unwrap().len(), &body["logs_truncated"]),
        (2, &json!(false))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_override_applies_to_one_scan_and_persists_nothing_and_state_can_be_reset() {
    let h = PluginHost::start(&[("logger.wasm", "guest-logger")], "", "").await;
    let state = || h.get("/api/strategies/guest_logger/state");
    let btc = json!({"symbols": ["BTCUSDT"]});
    for _ in 0..2 {
        let (status, body) = h.post_json(&scan_path("guest_logger"), &btc).await;
        assert_eq!((status, &body["state_persisted"]), (200, &json!(true)), "{body}");
    }
    let (status, body) = state().await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"], json!({"scans": "2"}));
    assert_eq!((body["plugin"].as_str(), body["bytes"].as_u64()), (Some("guest_logger"), Some(6)));
    assert_eq!(body["cap_bytes"], 64 * 1024);

    // The override reaches the plugin for this scan only; its state update is not kept.
    let preview = json!({"symbols": ["BTCUSDT"], "config": {"greeting": "hey"}});
    let (status, body) = h.post_json(&scan_path("guest_logger"), &preview).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["logs"][0], "hey from guest_logger 1.0.0: 1 symbols");
    assert_eq!((&body["state_updates"], &body["state_persisted"]), (&json!(1), &json!(false)));
    assert_eq!(state().await.1["state"], json!({"scans": "2"}));
    let (_, body) = h.post_json(&scan_path("guest_logger"), &btc).await;
    assert_eq!(body["logs"][0], "hello from guest_logger 1.0.0: 1 symbols", "back to the section");
    assert_eq!(state().await.1["state"], json!({"scans": "3"}));

    // Checked like a section: unknown key or wrong type, named; the plugin judges values.
    for (config, code, words) in [
        (
            json!({"greting": "x"}),
            "invalid_config",
            "config.greting is not a key of plugin guest_logger",
        ),
        (json!({"flood": "lots"}), "invalid_config", "config.flood must be a whole number"),
        (json!({"flood": 1.5}), "invalid_config", "config.flood must be a whole number"),
        (json!({"greeting": ""}), "plugin_error", "greeting must not be empty"),
    ] {
        let (status, body) =
            h.post_json(&scan_path("guest_logger"), &json!({"config": config})).await;
        assert_eq!((status, body["error"].as_str()), (422, Some(code)), "{body}");
        assert!(body["detail"].as_str().unwrap().contains(words), "{body}");
    }
    for bad in [json!({"config": [1]}), json!([null, null]), json!([["BTCUSDT"], {}])] {
        let (status, body) = h.post_json(&scan_path("guest_logger"), &bad).await;
        assert_eq!((status, body["error"].as_str()), (422, Some("invalid_body")), "{bad}: {body}");
    }

    // Previews with an override are experiments: only the three plain scans count.
    let row = h.row("logger.wasm").await.unwrap();
    assert_eq!(row["scans"], json!({"ok": 3, "failed": 0}), "{row}");

    // Reset: the state is gone and the next request carries none.
    let (status, body) = h.delete("/api/strategies/guest_logger/state").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["removed"].as_u64(), body["plugin"].as_str()),
        (Some(1), Some("guest_logger"))
    );
    let (status, body) = state().await;
    assert_eq!((status, body["error"].as_str()), (404, Some("state_not_found")), "{body}");
    let (_, request) = h.get("/api/strategies/guest_logger/request?symbols=BTCUSDT").await;
    assert_eq!(request["state"], json!([]));
    let (_, body) = h.post_json(&scan_path("guest_logger"), &btc).await;
    assert_eq!(body["state_updates"], 1);
    assert_eq!(state().await.1["state"], json!({"scans": "1"}), "counting starts again");

    for path in ["/api/strategies/guest_logger/state", "/api/strategies/no_such/state"] {
        if path.contains("guest_logger") {
            assert_eq!(h.delete(path).await.0, 200);
        }
        assert_eq!(h.get(path).await.0, 404);
        let (status, body) = h.delete(path).await;
        assert_eq!((status, body["error"].as_str()), (404, Some("state_not_found")), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_route_returns_exactly_what_the_plugin_receives() {
    let h = PluginHost::start(
        &[("echo.wasm", "guest-echo")],
        "",
        "[strategy.guest_echo]\ngreeting = \"hi\"\n",
    )
    .await;
    let (status, _) = h.post_json(&scan_path("guest_echo"), &json!({"symbols": ["BTCUSDT"]})).await;
    assert_eq!(status, 200);

    let (status, text) =
        h.get_text("/api/strategies/guest_echo/request?symbols=BTCUSDT,ETHUSDT").await;
    assert_eq!(status, 200, "{text}");
    let request: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(request["now_ms"], h.host.clock.now_ms());
    let config: Value = serde_json::from_str(request["config"].as_str().unwrap()).unwrap();
    assert_eq!(config, json!({"greeting": "hi", "threshold": 1, "spin": 0}));
    assert_eq!(request["state"], json!([{"key": "scans", "value": "1"}]));
    assert!(request["reference"].is_null());

    // The scan made now echoes the same inputs, and the SDK loads the same request.
    let (_, scanned) =
        h.post_json(&scan_path("guest_echo"), &json!({"symbols": ["BTCUSDT", "ETHUSDT"]})).await;
    let loaded = spotbot_sdk::testing::load_request(&text).unwrap();
    for (i, symbol) in loaded.symbols.iter().enumerate() {
        let echo: Value =
            serde_json::from_str(scanned["results"][i]["reason"].as_str().unwrap()).unwrap();
        assert_eq!(scanned["results"][i]["symbol"], symbol.symbol.as_str());
        assert_eq!(echo["now_ms"], loaded.now_ms);
        assert_eq!(echo["config"], config);
        let shape: Vec<(String, usize)> =
            symbol.candles.iter().map(|c| (c.timeframe.clone(), c.len())).collect();
        assert_eq!(echo["candles"], json!(shape));
        assert_eq!(echo["state_keys"], json!(["scans"]));
        assert_eq!(scanned["results"][i]["price"].as_f64(), Some(symbol.last_price));
    }

    // Default symbols are the watchlist; errors are named.
    let (_, all) = h.get("/api/strategies/guest_echo/request").await;
    assert_eq!(
        all["symbols"].as_array().unwrap().len(),
        h.host.app.state.config.market.watchlist.len()
    );
    let (status, body) = h.get("/api/strategies/guest_echo/request?symbols=btc").await;
    assert_eq!((status, body["error"].as_str()), (422, Some("invalid_query")), "{body}");
    let (status, body) = h.get("/api/strategies/nope/request").await;
    assert_eq!((status, body["error"].as_str()), (404, Some("plugin_not_found")), "{body}");
}

fn standalone(file: &str) -> StandalonePlugin {
    let runtime = Runtime::new(Limits::default(), None).unwrap();
    StandalonePlugin::load(&runtime, &built_plugin(file)).unwrap()
}

/// Fetches `GET /api/strategies/{name}/request?symbols=..`, saves it as a fixture file and
/// loads it with the SDK, as an author would.
async fn fixture(t: &Trading, name: &str, symbols: &str) -> spotbot_sdk::ScanRequest {
    let url = t.host.url(&format!("/api/strategies/{name}/request?symbols={symbols}"));
    let response = t.host.http.get(url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.json"));
    std::fs::write(&path, &text).unwrap();
    spotbot_sdk::testing::read_request(&path).unwrap()
}

/// Results and alerts of `POST /api/strategies/{name}/scan` (numbers read back from JSON,
/// which loses the last bit of some floats, hence the tolerance of [`same_numbers`]).
async fn http_scan(t: &Trading, name: &str, symbols: &[&str]) -> Value {
    let (status, body) = t.post(&scan_path(name), json!({ "symbols": symbols })).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The same JSON apart from floats differing in their last bits.
fn same_numbers(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_numbers(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_numbers(v, w)))
        }
        _ => a == b,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_native_scan_of_a_saved_request_answers_like_the_hosts_wasm_scan() {
    let (_plugins, plugins_toml) = workspace_plugins(&["mr_combined.wasm"]);
    let t = Trading::start_synced(&format!("\n{plugins_toml}")).await;
    let now = t.rig.now().timestamp_millis();
    script(&t.sim.sim, "SOLUSDT", &mr_combined::scenarios::range_bounce_buy(now));

    let request = fixture(&t, "mr_combined", "SOLUSDT,ETHUSDT").await;
    assert_eq!(request.now_ms, now);
    let config: Value = serde_json::from_str(&request.config).unwrap();
    assert_eq!(
        (config["size_pct"].as_f64(), config["max_trades_per_day"].as_u64()),
        (Some(10.0), Some(5))
    );
    let sol = &request.symbols[0];
    assert_eq!(sol.symbol, "SOLUSDT");
    assert!(sol.market_context.is_some(), "the context the host computed is in the fixture");
    let shape: Vec<&str> = sol.candles.iter().map(|c| c.timeframe.as_str()).collect();
    assert_eq!(shape, ["1d", "4h", "1h"]);

    // The fixture is the host's own request to the bit (the SDK reads floats exactly).
    let symbols = vec!["SOLUSDT".to_string(), "ETHUSDT".to_string()];
    let hosts = t.host.app.state.plugins.request("mr_combined", Some(symbols)).await.unwrap();
    assert!(request == hosts, "the loaded fixture differs from the host's request");

    // Native and Wasm on the very same request: identical to the bit.
    let native = mr_combined::MrCombined::scan(request.clone()).unwrap();
    let wasm = standalone("mr_combined.wasm").scan(request.clone()).unwrap();
    assert_eq!(view(&native), view(&wasm));
    assert_eq!(native.results[0].direction, spotbot_sdk::Direction::Buy, "{native:?}");

    // And like the scan the host runs now on its own data.
    let scanned = http_scan(&t, "mr_combined", &["SOLUSDT", "ETHUSDT"]).await;
    let wasm_json = serde_json::to_value(&wasm.results).unwrap();
    assert!(same_numbers(&scanned["results"], &wasm_json), "{scanned}\n{wasm_json}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_request_carries_the_reference_and_the_persisted_state() {
    use pump_momentum::scenarios as s;
    let (_plugins, plugins_toml) = workspace_plugins(&["pump_momentum.wasm"]);
    let t = Trading::start_synced(&format!("\n{plugins_toml}")).await;
    const STEP: i64 = 15 * 60_000;
    let end = t.rig.now().timestamp_millis() + 19 * STEP;
    script(&t.sim.sim, "SOLUSDT", &s::pump_then_follow_through(end, 80, 60, 1).candles);
    script(&t.sim.sim, "BTCUSDT", &s::reference(end, 80));
    let first = http_scan(&t, "pump_momentum", &["SOLUSDT"]).await;
    assert_eq!(first["alerts"][0]["stage"], "pump_watch", "{first}");
    t.rig.advance_minutes(15);

    let request = fixture(&t, "pump_momentum", "SOLUSDT").await;
    assert_eq!(request.reference.as_ref().map(|r| r.symbol.as_str()), Some("BTCUSDT"));
    assert!(!request.state.is_empty(), "the watch the first scan remembered");
    let (_, stored) = t.get("/api/strategies/pump_momentum/state").await;
    let keys: Vec<&str> = request.state.iter().map(|e| e.key.as_str()).collect();
    let stored_keys: Vec<&str> =
        stored["state"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, stored_keys);

    let native = pump_momentum::PumpMomentum::scan(request.clone()).unwrap();
    let wasm = standalone("pump_momentum.wasm").scan(request.clone()).unwrap();
    assert_eq!(view(&native), view(&wasm));
    assert_eq!(native.alerts[0].stage, spotbot_sdk::Stage::PumpSignal, "{native:?}");
    let scanned = http_scan(&t, "pump_momentum", &["SOLUSDT"]).await;
    let wasm_json = serde_json::to_value(&wasm.alerts).unwrap();
    assert!(same_numbers(&scanned["alerts"], &wasm_json), "{scanned}\n{wasm_json}");
    assert_eq!(scanned["state_updates"], wasm.state_updates.len());
}

async fn wait_stale(h: &PluginHost, file: &str, words: &str) -> Value {
    h.wait_for(file, RELOAD, |r| {
        r.is_some_and(|r| {
            r["status"] == "stale" && r["last_error"].as_str().is_some_and(|e| e.contains(words))
        })
    })
    .await;
    h.row(file).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_that_fails_its_canary_never_replaces_the_serving_one() {
    // The looping build below hangs on the canary too (by default it spares it).
    let section = "[strategy.guest_loop]\nhang_on_canary = true\n";
    let h = PluginHost::start(&[("logger.wasm", "guest-logger")], LIMITS, section).await;
    let row = h.row("logger.wasm").await.unwrap();
    assert_eq!((row["status"].as_str(), row["version"].as_str()), (Some("loaded"), Some("1.0.0")));
    assert_eq!(row["canary"]["outcome"], "ok", "{row}");
    assert!(row["canary"]["duration_ms"].as_f64().unwrap() > 0.0, "{row}");

    // 2.0.0 panics on every scan: refused, 1.0.0 keeps serving, the error says why.
    deploy(h.dir(), "logger.wasm", &wasm("guest-logger-broken"));
    let row = wait_stale(&h, "logger.wasm", "broken on purpose").await;
    assert_eq!(row["version"], "1.0.0", "{row}");
    assert_eq!(row["last_error_source"], "load", "{row}");
    let error = row["last_error"].as_str().unwrap();
    assert!(error.contains("canary scan on synthetic data failed"), "{error}");
    assert!(error.contains("the plugin trapped") && error.contains("CANARY1USDT"), "{error}");
    assert!(row["last_error_at"].is_string());
    let (status, body, _) = h.scan("guest_logger", Some(&["BTCUSDT"])).await;
    assert_eq!((status, body["version"].as_str()), (200, Some("1.0.0")), "{body}");

    // A build that never returns is refused at the deadline.
    deploy(h.dir(), "logger.wasm", &wasm("guest-loop"));
    let row = wait_stale(&h, "logger.wasm", "deadline of 300 ms").await;
    assert_eq!(
        (row["name"].as_str(), row["version"].as_str()),
        (Some("guest_logger"), Some("1.0.0"))
    );

    // Put back, it loads and the error clears.
    deploy(h.dir(), "logger.wasm", &wasm("guest-logger"));
    h.wait_for("logger.wasm", RELOAD, |r| r.is_some_and(|r| r["status"] == "loaded")).await;
    let row = h.row("logger.wasm").await.unwrap();
    assert!(row["last_error"].is_null() && row["last_error_source"].is_null(), "{row}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_answer_to_the_canary_refuses_the_replacement() {
    let section = "[strategy.guest_logger]\nbreak_with = \"invalid\"\n";
    let h = PluginHost::start(&[("logger.wasm", "guest-logger")], LIMITS, section).await;
    deploy(h.dir(), "logger.wasm", &wasm("guest-logger-broken"));
    let row = wait_stale(&h, "logger.wasm", "invalid response").await;
    assert!(row["last_error"].as_str().unwrap().contains("someone_else"), "{row}");
    assert_eq!(row["version"], "1.0.0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_error_on_synthetic_data_does_not_refuse_but_a_bad_config_does() {
    // The plugin refuses the canary's symbols (`missing-data`): its right, it replaces.
    let section = "[strategy.guest_logger]\nrefuse_prefix = \"CANARY\"\n";
    let h = PluginHost::start(&[("plugin.wasm", "guest-echo")], LIMITS, section).await;
    deploy(h.dir(), "plugin.wasm", &wasm("guest-logger"));
    h.wait_for("plugin.wasm", RELOAD, |r| r.is_some_and(|r| r["name"] == "guest_logger")).await;
    let row = h.row("plugin.wasm").await.unwrap();
    assert_eq!(row["status"], "loaded", "{row}");
    assert_eq!(row["canary"]["outcome"], "plugin_error", "{row}");
    assert!(row["canary"]["detail"].as_str().unwrap().contains("CANARY1USDT is refused"), "{row}");
    assert!(row["last_error"].is_null(), "the plugin's own judgement is no error: {row}");
    let (status, body, _) = h.scan("guest_logger", Some(&["BTCUSDT"])).await;
    assert_eq!(status, 200, "{body}");

    // A value the plugin rejects refuses the file with its reason, as before the canary.
    let h = PluginHost::start(
        &[("logger.wasm", "guest-logger")],
        LIMITS,
        "[strategy.guest_logger]\ngreeting = \"\"\n",
    )
    .await;
    let row = h.row("logger.wasm").await.unwrap();
    assert_eq!(row["status"], "failed", "{row}");
    let error = row["last_error"].as_str().unwrap();
    assert!(error.contains("[strategy.guest_logger]: greeting must not be empty"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_shows_each_versions_last_scan_and_last_error() {
    let h = PluginHost::start(
        &[("broken.wasm", "guest-logger-broken"), ("echo.wasm", "guest-echo")],
        LIMITS,
        "",
    )
    .await;
    // A first load has nothing to fall back to: it serves, and its failed canary shows.
    let row = h.row("broken.wasm").await.unwrap();
    assert_eq!((row["status"].as_str(), row["version"].as_str()), (Some("loaded"), Some("2.0.0")));
    assert_eq!(row["canary"]["outcome"], "plugin_trapped", "{row}");
    assert_eq!(row["last_error_source"], "canary", "{row}");
    assert!(row["last_scan"].is_null());
    assert_eq!(row["scans"], json!({"ok": 0, "failed": 0}));

    h.host.clock.advance(chrono::Duration::seconds(5));
    let (status, body, _) = h.scan("guest_logger", Some(&["BTCUSDT"])).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("plugin_trapped")), "{body}");
    let row = h.row("broken.wasm").await.unwrap();
    let last = &row["last_scan"];
    assert_eq!(
        (last["outcome"].as_str(), last["symbols"].as_u64()),
        (Some("plugin_trapped"), Some(1))
    );
    assert!(last["duration_ms"].as_f64().unwrap() > 0.0, "{row}");
    let at = h.host.clock.now().to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
    let parsed = |v: &Value| chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap();
    assert_eq!(parsed(&last["at"]), parsed(&json!(at)), "{row}");
    assert_eq!(row["scans"], json!({"ok": 0, "failed": 1}));
    assert_eq!(row["last_error_source"], "scan", "{row}");
    assert!(row["last_error"].as_str().unwrap().contains("broken on purpose"), "{row}");
    assert_eq!(parsed(&row["last_error_at"]), parsed(&last["at"]));

    let (status, _, _) = h.scan("guest_echo", Some(&["BTCUSDT", "ETHUSDT"])).await;
    assert_eq!(status, 200);
    let row = h.row("echo.wasm").await.unwrap();
    assert_eq!(
        (row["last_scan"]["outcome"].as_str(), row["last_scan"]["symbols"].as_u64()),
        (Some("ok"), Some(2))
    );
    assert_eq!(row["scans"], json!({"ok": 1, "failed": 0}));
    assert!(row["last_error"].is_null(), "{row}");
}
