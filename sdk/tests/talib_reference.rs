//! The SDK indicators against reference values computed with TA-Lib
//! (`fixtures/talib_reference.json`, made by `fixtures/gen_talib.py`).
//!
//! Every value must match to 1e-9 relative (1e-9 absolute near zero) and every `NaN` of the
//! lookback must sit exactly where TA-Lib has one.

use serde_json::Value;
use spotbot_sdk::indicators as ind;

const FIXTURE: &str = include_str!("fixtures/talib_reference.json");

struct Dataset {
    high: Vec<f64>,
    low: Vec<f64>,
    close: Vec<f64>,
}

fn column(v: &Value, name: &str) -> Vec<f64> {
    v[name].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn expected(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect()
}

fn param(case: &Value, name: &str) -> usize {
    case["params"][name].as_u64().unwrap() as usize
}

fn assert_series(label: &str, ours: &[f64], theirs: &[f64]) -> usize {
    assert_eq!(ours.len(), theirs.len(), "{label}: length");
    let mut compared = 0;
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        if b.is_nan() {
            assert!(a.is_nan(), "{label}[{i}]: TA-Lib has no value yet, we have {a}");
            continue;
        }
        let tolerance = 1e-9 * b.abs().max(a.abs()).max(1.0);
        assert!((a - b).abs() <= tolerance, "{label}[{i}]: ours {a} vs TA-Lib {b}");
        compared += 1;
    }
    compared
}

/// Runs our implementation of one fixture case; returns (output name, our series) pairs.
fn run(d: &Dataset, case: &Value) -> Vec<(&'static str, Vec<f64>)> {
    let (h, l, c) = (&d.high[..], &d.low[..], &d.close[..]);
    let f = case["function"].as_str().unwrap();
    let p = |n| param(case, n);
    match f {
        "SMA" => vec![("real", ind::sma(c, p("timeperiod")))],
        "EMA" => vec![("real", ind::ema(c, p("timeperiod")))],
        "RSI" => vec![("real", ind::rsi(c, p("timeperiod")))],
        "ATR" => vec![("real", ind::atr(h, l, c, p("timeperiod")))],
        "TRANGE" => vec![("real", ind::trange(h, l, c))],
        "ADX" => vec![("real", ind::adx(h, l, c, p("timeperiod")))],
        "PLUS_DI" => vec![("real", ind::dmi(h, l, c, p("timeperiod")).plus_di)],
        "MINUS_DI" => vec![("real", ind::dmi(h, l, c, p("timeperiod")).minus_di)],
        "BBANDS" => {
            let dev = case["params"]["nbdevup"].as_f64().unwrap();
            let b = ind::bollinger(c, p("timeperiod"), dev);
            vec![("upperband", b.upper), ("middleband", b.middle), ("lowerband", b.lower)]
        }
        "MACD" => {
            let m = ind::macd(c, p("fastperiod"), p("slowperiod"), p("signalperiod"));
            vec![("macd", m.macd), ("macdsignal", m.signal), ("macdhist", m.hist)]
        }
        "STOCH" => {
            let s = ind::stoch(h, l, c, p("fastk_period"), p("slowk_period"), p("slowd_period"));
            vec![("slowk", s.k), ("slowd", s.d)]
        }
        other => panic!("fixture has a function the test does not know: {other}"),
    }
}

#[test]
fn indicators_match_talib_reference_values() {
    let doc: Value = serde_json::from_str(FIXTURE).unwrap();
    let mut compared = 0;
    let mut functions = std::collections::BTreeSet::new();
    for (name, set) in doc["datasets"].as_object().unwrap() {
        let candles = &set["candles"];
        let d = Dataset {
            high: column(candles, "high"),
            low: column(candles, "low"),
            close: column(candles, "close"),
        };
        for case in set["cases"].as_array().unwrap() {
            functions.insert(case["function"].as_str().unwrap().to_string());
            for (output, ours) in run(&d, case) {
                let label = format!("{name} {} {} {output}", case["function"], case["params"]);
                compared += assert_series(&label, &ours, &expected(&case["outputs"][output]));
            }
        }
    }
    // Guard against a fixture that silently lost its content.
    assert!(compared > 30_000, "only {compared} values compared");
    let expected_functions =
        ["ADX", "ATR", "BBANDS", "EMA", "MACD", "MINUS_DI", "PLUS_DI", "RSI", "SMA", "STOCH"];
    for f in expected_functions {
        assert!(functions.contains(f), "fixture lacks {f}");
    }
}

#[test]
fn fixture_records_the_talib_version() {
    let doc: Value = serde_json::from_str(FIXTURE).unwrap();
    assert!(doc["talib_c"].as_str().unwrap().starts_with("0.8"), "{}", doc["talib_c"]);
}
