//! The example strategy gives identical results natively and as a Wasm component on the same
//! inputs: every field of every result, bit for bit (JSON of f64 is round-trip exact), the
//! state updates, and the errors.

mod plugin_wasm;

use spotbot::plugins::model;
use spotbot::plugins::{Limits, Runtime, StandalonePlugin};
use spotbot_sdk::{ScanError, StateEntry, Strategy, testing};
use strategy_template::Template;

const NOW: i64 = 1_767_225_600_000;

fn plugin() -> StandalonePlugin {
    let runtime = Runtime::new(Limits::default(), None).unwrap();
    StandalonePlugin::load(&runtime, &plugin_wasm::template_wasm()).unwrap()
}

#[test]
fn native_and_wasm_builds_agree_on_every_field() {
    let wasm = plugin();
    assert_eq!(wasm.manifest.name, strategy_template::NAME);
    assert_eq!(wasm.manifest.default_config, strategy_template::default_config_json());

    let needs = Template::describe().candles;
    let mut buys = 0;
    for (config, symbols) in [("{}", 40), (r#"{"min_passed": 4, "vol_ratio_min": 0.5}"#, 60)] {
        let mut request = testing::request(&needs, symbols, config, NOW);
        // Some symbols bought recently (cooldown line), some with too little history.
        request.state = vec![
            StateEntry { key: "last_buy:SYM1USDT".into(), value: (NOW - 60_000).to_string() },
            StateEntry { key: "last_buy:SYM2USDT".into(), value: (NOW - 86_400_000).to_string() },
        ];
        for c in &mut request.symbols[3].candles {
            *c = testing::candles(99, &c.timeframe, 30, 50.0, 0.0, NOW);
        }
        let native = Template::scan(request.clone()).unwrap();
        let from_wasm = wasm.scan(request.clone()).unwrap();
        assert_eq!(native.results.len(), from_wasm.results.len());
        for (n, w) in native.results.iter().zip(&from_wasm.results) {
            assert_eq!(
                serde_json::to_value(n).unwrap(),
                serde_json::to_value(w).unwrap(),
                "{}",
                n.symbol
            );
        }
        assert_eq!(native.state_updates, from_wasm.state_updates);
        assert!(from_wasm.alerts.is_empty() && native.alerts.is_empty());
        buys += from_wasm.results.iter().filter(|r| r.direction == model::Direction::Buy).count();
    }
    assert!(buys > 0, "the inputs must exercise the buy path too");
}

#[test]
fn native_and_wasm_builds_fail_the_same_way() {
    let wasm = plugin();
    let needs = Template::describe().candles;
    let mut request = testing::request(&needs, 2, r#"{"rsi_max": "low"}"#, NOW);
    let native = Template::scan(request.clone()).unwrap_err();
    let err = wasm.scan(request.clone()).unwrap_err();
    let ScanError::BadConfig(native_msg) = native else { panic!("{native:?}") };
    assert!(
        matches!(&err, spotbot::plugins::PluginError::Plugin(model::ScanError::BadConfig(m)) if *m == native_msg),
        "{err:?} vs {native_msg}"
    );

    request.config = "{}".into();
    request.symbols[1].candles.pop();
    let native = Template::scan(request.clone()).unwrap_err();
    let err = wasm.scan(request.clone()).unwrap_err();
    let ScanError::MissingData(native_msg) = native else { panic!("{native:?}") };
    assert!(
        matches!(&err, spotbot::plugins::PluginError::Plugin(model::ScanError::MissingData(m)) if *m == native_msg),
        "{err:?}"
    );
}
