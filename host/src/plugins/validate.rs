//! Checks of what plugins hand to the host: the manifest at load time and the response of
//! every scan. A failed check refuses the file or fails that scan; it never reaches signals.

use std::collections::BTreeSet;

use super::model::{Manifest, PluginKind, ScanResponse};
use crate::config::{StrategyKeys, is_strategy_name};
use crate::market::Timeframe;

/// Most candles per timeframe a plugin may ask for.
pub const MAX_CANDLES: u32 = 1000;
/// Most timeframes per manifest.
pub const MAX_TIMEFRAMES: usize = 8;
/// A scan result's confidence is 0..=10 (the confirm gate needs at least 8).
pub const MAX_CONFIDENCE: u32 = 10;

pub fn manifest(m: &Manifest) -> Result<(), String> {
    if !is_strategy_name(&m.name) {
        return Err(format!("name {:?} must match [a-z][a-z0-9_]{{0,63}}", m.name));
    }
    let parts: Vec<&str> = m.version.split('.').collect();
    if parts.len() != 3
        || parts.iter().any(|p| p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()))
    {
        return Err(format!("version {:?} must be MAJOR.MINOR.PATCH", m.version));
    }
    if m.candles.len() > MAX_TIMEFRAMES {
        return Err(format!("{} candle needs, at most {MAX_TIMEFRAMES}", m.candles.len()));
    }
    let mut seen = BTreeSet::new();
    for need in &m.candles {
        // The manifest keeps strings (the WIT contract); the host's one type decides.
        if need.timeframe.parse::<Timeframe>().is_err() {
            return Err(format!(
                "timeframe {:?} is not one of {}",
                need.timeframe,
                Timeframe::list(" ")
            ));
        }
        if !seen.insert(need.timeframe.as_str()) {
            return Err(format!("timeframe {} is listed twice", need.timeframe));
        }
        if need.count == 0 || need.count > MAX_CANDLES {
            return Err(format!(
                "{} candles of {}: must be 1..={MAX_CANDLES}",
                need.count, need.timeframe
            ));
        }
    }
    match serde_json::from_str::<serde_json::Value>(&m.default_config) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        Ok(_) => Err("default_config must be a JSON object".into()),
        Err(e) => Err(format!("default_config is not JSON: {e}")),
    }
}

/// Checks a scan response against the request and the manifest.
pub fn response(
    m: &Manifest,
    request_symbols: &BTreeSet<&str>,
    r: &ScanResponse,
) -> Result<(), String> {
    if m.kind == PluginKind::Scanner && !r.results.is_empty() {
        return Err("a scanner returned scan results; scanners may only return alerts".into());
    }
    let mut seen = BTreeSet::new();
    for res in &r.results {
        if res.bot != m.name {
            return Err(format!(
                "result for {} has bot {:?}, expected {:?}",
                res.symbol, res.bot, m.name
            ));
        }
        if !request_symbols.contains(res.symbol.as_str()) {
            return Err(format!("result for {} which was not scanned", res.symbol));
        }
        if !seen.insert(res.symbol.as_str()) {
            return Err(format!("two results for {}", res.symbol));
        }
        for (field, value) in [("price", res.price), ("sl_pct", res.sl_pct), ("tp_pct", res.tp_pct)]
        {
            if !value.is_finite() || value < 0.0 {
                return Err(format!(
                    "result for {}: {field} is {value}; it must be a finite number >= 0",
                    res.symbol
                ));
            }
        }
        let optional = [
            ("ev", res.ev),
            ("tp1_pct", res.tp1_pct),
            ("tp2_pct", res.tp2_pct),
            ("range_support", res.range_support),
            ("range_resistance", res.range_resistance),
            ("range_midline", res.range_midline),
            ("rsi", res.rsi),
            ("macd_hist", res.macd_hist),
            ("bb_lower", res.bb_lower),
            ("bb_upper", res.bb_upper),
            ("bb_mid", res.bb_mid),
            ("vol_ratio", res.vol_ratio),
            ("adx", res.adx),
            ("stoch_k", res.stoch_k),
        ];
        for (field, value) in optional {
            if let Some(value) = value.filter(|v| !v.is_finite()) {
                return Err(format!(
                    "result for {}: {field} is {value}; it must be a finite number",
                    res.symbol
                ));
            }
        }
        if let Some(confidence) = res.confidence.filter(|c| *c > MAX_CONFIDENCE) {
            return Err(format!(
                "result for {}: confidence is {confidence}; it must be 0..={MAX_CONFIDENCE}",
                res.symbol
            ));
        }
        if res.passed > res.total || res.total as usize != res.checklist.len() {
            return Err(format!(
                "result for {}: passed {} / total {} do not match a checklist of {}",
                res.symbol,
                res.passed,
                res.total,
                res.checklist.len()
            ));
        }
    }
    for alert in &r.alerts {
        if !request_symbols.contains(alert.symbol.as_str()) {
            return Err(format!("alert for {} which was not scanned", alert.symbol));
        }
        if !alert.price.is_finite() || alert.price < 0.0 {
            return Err(format!(
                "alert for {}: price is {}; it must be a finite number >= 0",
                alert.symbol, alert.price
            ));
        }
        if let Some(metric) = alert.metrics.iter().find(|m| !m.value.is_finite()) {
            return Err(format!(
                "alert for {}: metric {:?} is {}; it must be a finite number",
                alert.symbol, metric.name, metric.value
            ));
        }
    }
    Ok(())
}

/// Checks the `[strategy.<name>]` section against the plugin's default config, the one source
/// of a plugin's keys: every key of the section must be a key of the defaults, with a value of
/// the same JSON type (a whole number where the default is one; any number where it is a
/// fraction; the defaults' element type inside a non-empty list). The error names the key as
/// written in the config file.
pub fn section(
    name: &str,
    default_config: &str,
    section: Option<&serde_json::Value>,
) -> Result<(), String> {
    match section {
        Some(serde_json::Value::Object(section)) => {
            let declared = for_plugin(&defaults(default_config), section);
            keys(&format!("strategy.{name}"), name, default_config, &declared)
        }
        _ => Ok(()),
    }
}

/// The keys of a section the plugin receives: all but the host's keys
/// ([`StrategyKeys::is_host_key`]) that its defaults do not declare; the host acts on those
/// itself, and the config check has validated them.
fn for_plugin(
    declared: &serde_json::Map<String, serde_json::Value>,
    section: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    section
        .iter()
        .filter(|(key, _)| declared.contains_key(*key) || !StrategyKeys::is_host_key(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

/// The check of [`section`] for any object of config keys; errors name a key as
/// `<at>.<key>` (a preview's `config` override uses `config`).
pub fn keys(
    at: &str,
    name: &str,
    default_config: &str,
    object: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), String> {
    let declared = defaults(default_config);
    for (key, value) in object {
        let at = format!("{at}.{key}");
        let Some(default) = declared.get(key) else {
            let known: Vec<&str> = declared.keys().map(String::as_str).collect();
            return Err(format!(
                "{at} is not a key of plugin {name} (its keys: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ));
        };
        if !same_type(default, value) {
            return Err(format!(
                "{at} must be {} like its default {default}, got {value}",
                kind(default)
            ));
        }
    }
    Ok(())
}

fn same_type(default: &serde_json::Value, value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (default, value) {
        (Value::Bool(_), Value::Bool(_)) | (Value::String(_), Value::String(_)) => true,
        (Value::Number(d), Value::Number(v)) => d.is_f64() || !v.is_f64(),
        (Value::Array(d), Value::Array(v)) => {
            d.first().is_none_or(|first| v.iter().all(|item| same_type(first, item)))
        }
        (Value::Object(_), Value::Object(_)) | (Value::Null, _) => true,
        _ => false,
    }
}

fn kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Bool(_) => "true or false",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "a whole number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
        Value::Null => "anything",
    }
}

/// The effective config, as the plugin receives it: the manifest's defaults with the top-level
/// keys of the config section replaced (host keys the plugin does not declare left out).
pub fn effective_config(default_config: &str, section: Option<serde_json::Value>) -> String {
    let mut merged = defaults(default_config);
    if let Some(serde_json::Value::Object(section)) = section {
        let own = for_plugin(&merged, &section);
        merged.extend(own);
    }
    serde_json::Value::Object(merged).to_string()
}

/// A manifest's default config as an object (empty when it is not one).
fn defaults(default_config: &str) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::from_str::<serde_json::Value>(default_config) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::model::{
        CandleNeed, Check, ConfidenceLevel, Direction, Metric, ScanResult, ScannerAlert, Stage,
    };

    fn good() -> Manifest {
        Manifest {
            name: "mr_combined".into(),
            version: "1.2.3".into(),
            kind: PluginKind::Strategy,
            description: String::new(),
            candles: vec![CandleNeed { timeframe: "1h".into(), count: 200 }],
            needs_reference: false,
            needs_market_context: false,
            default_config: "{}".into(),
        }
    }

    #[test]
    fn a_section_must_use_the_plugins_keys_and_types() {
        let defaults = r#"{"size_pct":1.0,"max_trades_per_day":2,"enabled":true,"windows":[],"timeframes":["1d"]}"#;
        let check = |s: serde_json::Value| super::section("mr_combined", defaults, Some(&s));
        assert!(check(serde_json::json!({"size_pct": 2, "max_trades_per_day": 3})).is_ok());
        assert!(
            check(serde_json::json!({"windows": ["13:00-14:00"], "timeframes": ["4h"]})).is_ok()
        );
        let err = check(serde_json::json!({"scan_limit": 80})).unwrap_err();
        assert!(err.starts_with("strategy.mr_combined.scan_limit is not a key"), "{err}");
        assert!(err.contains("size_pct"), "lists the keys: {err}");
        let err = check(serde_json::json!({"max_trades_per_day": 2.5})).unwrap_err();
        assert!(err.contains("strategy.mr_combined.max_trades_per_day must be a whole number"));
        let err = check(serde_json::json!({"enabled": "yes"})).unwrap_err();
        assert!(err.contains("strategy.mr_combined.enabled must be true or false"), "{err}");
        let err = check(serde_json::json!({"timeframes": [4]})).unwrap_err();
        assert!(err.contains("strategy.mr_combined.timeframes must be a list"), "{err}");
        assert!(section("x", "{}", None).is_ok());
    }

    #[test]
    fn a_host_key_the_plugin_does_not_declare_is_accepted_but_not_passed_to_it() {
        let defaults = r#"{"window":20}"#;
        let section_json = serde_json::json!({"window": 30, "max_trades_per_day": 6});
        assert!(section("breakout", defaults, Some(&section_json)).is_ok());
        let config = effective_config(defaults, Some(section_json));
        assert_eq!(config, r#"{"window":30}"#, "the plugin sees only its own keys");
        let err = section("breakout", defaults, Some(&serde_json::json!({"windw": 3})));
        assert!(err.unwrap_err().contains("windw is not a key"), "other unknown keys still fail");
    }

    #[test]
    fn an_override_is_checked_like_a_section_and_named_as_config() {
        let defaults = r#"{"size_pct":1.0,"enabled":true}"#;
        let check = |v: serde_json::Value| {
            super::keys("config", "mr_combined", defaults, v.as_object().unwrap())
        };
        assert!(check(serde_json::json!({"size_pct": 3})).is_ok());
        let err = check(serde_json::json!({"sizepct": 3})).unwrap_err();
        assert!(err.starts_with("config.sizepct is not a key of plugin mr_combined"), "{err}");
        let err = check(serde_json::json!({"enabled": 1})).unwrap_err();
        assert!(err.starts_with("config.enabled must be true or false"), "{err}");
    }

    #[test]
    fn manifest_rules() {
        assert!(manifest(&good()).is_ok());
        let bad = |f: fn(&mut Manifest)| {
            let mut m = good();
            f(&mut m);
            manifest(&m).unwrap_err()
        };
        assert!(bad(|m| m.name = "Bad-Name".into()).contains("name"));
        assert!(bad(|m| m.name = String::new()).contains("name"));
        assert!(bad(|m| m.version = "1.2".into()).contains("version"));
        assert!(bad(|m| m.candles[0].timeframe = "7m".into()).contains("7m"));
        assert!(bad(|m| m.candles[0].count = 0).contains("1..=1000"));
        assert!(bad(|m| m.candles.push(m.candles[0].clone())).contains("twice"));
        assert!(bad(|m| m.default_config = "[1]".into()).contains("object"));
        assert!(bad(|m| m.default_config = "{".into()).contains("JSON"));
    }

    fn result(symbol: &str) -> ScanResult {
        ScanResult {
            symbol: symbol.into(),
            bot: "mr_combined".into(),
            direction: Direction::Buy,
            price: 100.0,
            checklist: vec![Check { name: "trend".into(), pass: true, detail: String::new() }],
            passed: 1,
            total: 1,
            ask_coo: false,
            sl_pct: 1.5,
            tp_pct: 3.0,
            ev: Some(42.0),
            confidence: Some(9),
            tier: None,
            reason: None,
            tp1_pct: Some(1.0),
            tp2_pct: Some(2.0),
            range_support: Some(95.0),
            range_resistance: Some(110.0),
            range_midline: Some(102.5),
            rsi: Some(35.0),
            macd_hist: Some(-0.2),
            bb_lower: Some(96.0),
            bb_upper: Some(104.0),
            bb_mid: Some(100.0),
            vol_ratio: Some(1.4),
            adx: Some(22.0),
            stoch_k: Some(18.0),
            buy_signals: Some(3),
            sell_signals: Some(0),
        }
    }

    fn alert(symbol: &str) -> ScannerAlert {
        ScannerAlert {
            symbol: symbol.into(),
            stage: Stage::PumpWatch,
            confidence: ConfidenceLevel::Medium,
            price: 1.25,
            metrics: vec![Metric { name: "vol_ratio".into(), value: 3.5 }],
        }
    }

    /// Checks one result and one alert for BTCUSDT after `change`; the error, if any.
    fn check(change: impl FnOnce(&mut ScanResult, &mut ScannerAlert)) -> Result<(), String> {
        let (mut res, mut alert) = (result("BTCUSDT"), alert("BTCUSDT"));
        change(&mut res, &mut alert);
        let strategy = good();
        let scanned = BTreeSet::from(["BTCUSDT"]);
        let results = ScanResponse { results: vec![res], ..Default::default() };
        response(&strategy, &scanned, &results)?;
        let scanner = Manifest { kind: PluginKind::Scanner, ..good() };
        let alerts = ScanResponse { alerts: vec![alert], ..Default::default() };
        response(&scanner, &scanned, &alerts)
    }

    #[test]
    fn a_complete_result_and_alert_pass() {
        assert_eq!(check(|_, _| {}), Ok(()));
        assert_eq!(check(|r, _| r.ev = Some(-12.5)), Ok(()), "a negative ev is a number");
        assert_eq!(check(|r, _| r.confidence = Some(0)), Ok(()));
        assert_eq!(check(|r, _| r.confidence = Some(10)), Ok(()));
        assert_eq!(check(|r, _| r.confidence = None), Ok(()));
    }

    #[test]
    fn a_non_finite_number_in_any_field_is_refused_naming_symbol_and_field() {
        type Set = fn(&mut ScanResult, f64);
        let fields: [(&str, Set); 17] = [
            ("price", |r, v| r.price = v),
            ("sl_pct", |r, v| r.sl_pct = v),
            ("tp_pct", |r, v| r.tp_pct = v),
            ("ev", |r, v| r.ev = Some(v)),
            ("tp1_pct", |r, v| r.tp1_pct = Some(v)),
            ("tp2_pct", |r, v| r.tp2_pct = Some(v)),
            ("range_support", |r, v| r.range_support = Some(v)),
            ("range_resistance", |r, v| r.range_resistance = Some(v)),
            ("range_midline", |r, v| r.range_midline = Some(v)),
            ("rsi", |r, v| r.rsi = Some(v)),
            ("macd_hist", |r, v| r.macd_hist = Some(v)),
            ("bb_lower", |r, v| r.bb_lower = Some(v)),
            ("bb_upper", |r, v| r.bb_upper = Some(v)),
            ("bb_mid", |r, v| r.bb_mid = Some(v)),
            ("vol_ratio", |r, v| r.vol_ratio = Some(v)),
            ("adx", |r, v| r.adx = Some(v)),
            ("stoch_k", |r, v| r.stoch_k = Some(v)),
        ];
        for (field, set) in fields {
            for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                let err = check(|r, _| set(r, bad)).unwrap_err();
                assert!(err.contains("BTCUSDT") && err.contains(field), "{field} {bad}: {err}");
            }
        }
        let err = check(|_, a| a.price = f64::NAN).unwrap_err();
        assert!(err.contains("BTCUSDT") && err.contains("price"), "{err}");
        let err = check(|_, a| a.metrics[0].value = f64::INFINITY).unwrap_err();
        assert!(err.contains("BTCUSDT") && err.contains("vol_ratio"), "{err}");
        let err = check(|r, _| r.price = -1.0).unwrap_err();
        assert!(err.contains("price") && err.contains(">= 0"), "{err}");
    }

    #[test]
    fn a_confidence_over_10_is_refused() {
        for bad in [11, u32::MAX] {
            let err = check(|r, _| r.confidence = Some(bad)).unwrap_err();
            assert!(err.contains("BTCUSDT") && err.contains("confidence"), "{err}");
            assert!(err.contains(&bad.to_string()), "{err}");
        }
    }

    #[test]
    fn section_keys_replace_defaults() {
        let merged =
            effective_config(r#"{"a":1,"b":{"x":1}}"#, Some(serde_json::json!({"b": 2, "c": 3})));
        let v: serde_json::Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(v, serde_json::json!({"a": 1, "b": 2, "c": 3}));
        assert_eq!(effective_config("{}", None), "{}");
    }
}
