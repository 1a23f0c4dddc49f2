//! Checks of what plugins hand to the host: the manifest at load time and the response of
//! every scan. A failed check refuses the file or fails that scan; it never reaches signals.

use std::collections::BTreeSet;

use super::model::{Manifest, PluginKind, ScanResponse};

/// Timeframes a plugin may ask for.
pub const TIMEFRAMES: &[&str] =
    &["1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1d", "3d", "1w"];
/// Most candles per timeframe a plugin may ask for.
pub const MAX_CANDLES: u32 = 1000;
/// Most timeframes per manifest.
pub const MAX_TIMEFRAMES: usize = 8;

pub fn manifest(m: &Manifest) -> Result<(), String> {
    let name_ok = m.name.len() <= 64
        && m.name.starts_with(|c: char| c.is_ascii_lowercase())
        && m.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !name_ok {
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
        if !TIMEFRAMES.contains(&need.timeframe.as_str()) {
            return Err(format!(
                "timeframe {:?} is not one of {}",
                need.timeframe,
                TIMEFRAMES.join(" ")
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
        let numbers = [res.price, res.sl_pct, res.tp_pct];
        if numbers.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(format!(
                "result for {}: price, sl_pct and tp_pct must be finite and >= 0",
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
    }
    Ok(())
}

/// The effective config: the manifest's defaults with the top-level keys of the config
/// section replaced.
pub fn effective_config(default_config: &str, section: Option<serde_json::Value>) -> String {
    let mut merged = match serde_json::from_str::<serde_json::Value>(default_config) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    if let Some(serde_json::Value::Object(section)) = section {
        merged.extend(section);
    }
    serde_json::Value::Object(merged).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::model::CandleNeed;

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

    #[test]
    fn section_keys_replace_defaults() {
        let merged =
            effective_config(r#"{"a":1,"b":{"x":1}}"#, Some(serde_json::json!({"b": 2, "c": 3})));
        let v: serde_json::Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(v, serde_json::json!({"a": 1, "b": 2, "c": 3}));
        assert_eq!(effective_config("{}", None), "{}");
    }
}
