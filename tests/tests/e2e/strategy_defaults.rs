//! The plugins are the one source of their config keys and defaults; `examples/config.toml`
//! documents every key of `[strategy.mr_combined]`, `[strategy.pump_momentum]`,
//! `[strategy.ta_trend]` and `[strategy.ta_mean_revert]`. This checks
//! that the example says exactly what the plugins' manifests say, key for key and value for
//! value, and that the service accepts the example.

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
