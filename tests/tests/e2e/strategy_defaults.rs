//! The plugins are the one source of their config keys and defaults; `examples/config.toml`
//! documents every key of `[strategy.mr_combined]`, `[strategy.pump_momentum]`,
//! `[strategy.ta_trend]` and `[strategy.ta_mean_revert]`. This checks
//! that the example says exactly what the plugins' manifests say, key for key and value for
//! value, and that the service accepts the example; and that the keys the host reads can be set
//! in any strategy's section, declared by its plugin or not.

use spotbot_sdk::Strategy;

fn example_section(name: &str) -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/config.toml");
    let text = std::fs::read_to_string(path).expect("examples/config.toml");
    let config =
        spotbot::config::Config::parse(&text, path.as_ref()).expect("the example is valid");
    config
        .strategy
        .section_json(name)
        .unwrap_or_else(|| panic!("the example has [strategy.{name}]"))
}

fn assert_documents(name: &str, default_config: &str) {
    let defaults: serde_json::Value = serde_json::from_str(default_config).unwrap();
    let example = example_section(name);
    let (defaults, example) = (defaults.as_object().unwrap(), example.as_object().unwrap());
    let missing: Vec<&String> = defaults.keys().filter(|k| !example.contains_key(*k)).collect();
    let unknown: Vec<&String> = example.keys().filter(|k| !defaults.contains_key(*k)).collect();
    assert!(missing.is_empty(), "[strategy.{name}] in the example lacks {missing:?}");
    assert!(unknown.is_empty(), "[strategy.{name}] in the example has unknown {unknown:?}");
    for (key, value) in defaults {
        let documented = &example[key];
        let same = match (value.as_f64(), documented.as_f64()) {
            (Some(a), Some(b)) => a == b,
            _ => value == documented,
        };
        assert!(same, "strategy.{name}.{key}: the plugin says {value}, the example {documented}");
    }
}

#[test]
fn the_example_documents_mr_combineds_keys_and_defaults() {
    let manifest = mr_combined::MrCombined::describe();
    assert_eq!(manifest.name, "mr_combined");
    assert_documents("mr_combined", &manifest.default_config);
}

#[test]
fn the_example_documents_pump_momentums_keys_and_defaults() {
    let manifest = pump_momentum::PumpMomentum::describe();
    assert_eq!(manifest.name, "pump_momentum");
    assert_documents("pump_momentum", &manifest.default_config);
}

#[test]
fn the_example_documents_ta_trends_keys_and_defaults() {
    let manifest = ta_trend::TaTrend::describe();
    assert_eq!(manifest.name, "ta_trend");
    assert_documents("ta_trend", &manifest.default_config);
}

#[test]
fn the_example_documents_ta_mean_reverts_keys_and_defaults() {
    let manifest = ta_mean_revert::TaMeanRevert::describe();
    assert_eq!(manifest.name, "ta_mean_revert");
    assert_documents("ta_mean_revert", &manifest.default_config);
}

/// A section may set a key the host reads (daily limit, trailing, size) for a plugin that does
/// not declare it: the plugin loads, the host acts on the value, and the plugin's config stays
/// its own keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_key_the_plugin_does_not_declare_is_set_in_its_section() {
    let plugins_dir = tempfile::tempdir().unwrap();
    crate::plugin_support::deploy(
        plugins_dir.path(),
        "echo.wasm",
        &crate::plugin_support::wasm("guest-echo"),
    );
    let toml = format!(
        "[plugins]\ndir = {:?}\n[market]\nwatchlist = [\"BTCUSDT\"]\n\
         [strategy.guest_echo]\ngreeting = \"hi\"\nmax_trades_per_day = 7\nsize_pct = 3.5\n\
         trailing_enabled = false\n",
        plugins_dir.path().display().to_string()
    );
    let host = spotbot_tests::TestHost::start(&toml).await;
    let keys = host.app.state.execution.strategy_keys("guest_echo");
    assert_eq!(keys.max_trades_per_day, 7);
    assert_eq!(keys.size_pct, rust_decimal::Decimal::new(35, 1));
    assert!(!keys.trailing_enabled);
    let r = host
        .http
        .post(host.url("/api/strategies/guest_echo/scan"))
        .json(&serde_json::json!({"symbols": ["BTCUSDT"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the plugin loaded and scans");
    let body: serde_json::Value = r.json().await.unwrap();
    let echo: serde_json::Value =
        serde_json::from_str(body["results"][0]["reason"].as_str().unwrap()).unwrap();
    assert_eq!(
        echo["config"],
        serde_json::json!({"greeting": "hi", "threshold": 1, "spin": 0}),
        "the plugin receives only the keys it declares"
    );
    // A bad value of a host key is still refused when the file is read.
    let bad = toml.replace("max_trades_per_day = 7", "max_trades_per_day = 2.5");
    let err = spotbot::config::Config::parse(&bad, "t.toml".as_ref()).unwrap_err().to_string();
    assert!(err.contains("strategy.guest_echo.max_trades_per_day"), "{err}");
    host.stop().await;
}
