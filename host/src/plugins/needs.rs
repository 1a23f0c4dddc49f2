//! The candles a scan fetches: the manifest's needs, adjusted by two keys of the plugin's
//! effective config so that an operator's `[strategy.<name>]` section is honoured without a
//! plugin rebuild:
//! - `timeframes` (a list as long as the manifest's needs) replaces each need's timeframe in
//!   order (MR Combined: `["1d", "4h", "1h"]`, the roles macro, regime, entry);
//! - `scan_limit_<timeframe>` (a whole number) replaces the count of the need of that
//!   timeframe, after the replacement above (Pump Momentum: `scan_limit_15m`).
//!
//! Keys a config does not have leave the manifest as it is.

use super::model::CandleNeed;
use super::validate::MAX_CANDLES;
use crate::market::Timeframe;

/// The needs of one scan, or a sentence naming the bad key.
pub fn effective(
    manifest: &[CandleNeed],
    config: &serde_json::Value,
) -> Result<Vec<CandleNeed>, String> {
    let mut needs = manifest.to_vec();
    if let Some(list) = config.get("timeframes") {
        let timeframes: Vec<&str> = list
            .as_array()
            .and_then(|items| items.iter().map(serde_json::Value::as_str).collect())
            .ok_or("`timeframes` must be a list of timeframe strings")?;
        if timeframes.len() != needs.len() {
            return Err(format!(
                "`timeframes` lists {} timeframes; the plugin reads {} ({})",
                timeframes.len(),
                needs.len(),
                manifest.iter().map(|n| n.timeframe.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        for (need, timeframe) in needs.iter_mut().zip(timeframes) {
            let parsed: Timeframe = timeframe.parse().map_err(|e| format!("`timeframes`: {e}"))?;
            need.timeframe = parsed.as_str().to_string();
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = needs.iter().find(|n| !seen.insert(n.timeframe.clone())) {
            return Err(format!("`timeframes` lists {} twice", twice.timeframe));
        }
    }
    for need in &mut needs {
        let key = format!("scan_limit_{}", need.timeframe);
        if let Some(value) = config.get(&key) {
            match value.as_u64() {
                Some(count @ 1..) if count <= u64::from(MAX_CANDLES) => need.count = count as u32,
                _ => {
                    return Err(format!(
                        "`{key}` must be a whole number 1-{MAX_CANDLES}, got {value}"
                    ));
                }
            }
        }
    }
    Ok(needs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn need(timeframe: &str, count: u32) -> CandleNeed {
        CandleNeed { timeframe: timeframe.into(), count }
    }

    #[test]
    fn config_keys_adjust_the_manifest() {
        let manifest = [need("1d", 120), need("4h", 200), need("1h", 200)];
        let same = effective(&manifest, &json!({"size_pct": 1.0})).unwrap();
        assert_eq!(same, manifest.to_vec());
        let moved = effective(&manifest, &json!({"timeframes": ["1w", "1d", "4h"]})).unwrap();
        assert_eq!(moved, vec![need("1w", 120), need("1d", 200), need("4h", 200)]);
        let pump = effective(&[need("15m", 80)], &json!({"scan_limit_15m": 120})).unwrap();
        assert_eq!(pump, vec![need("15m", 120)]);
    }

    #[test]
    fn bad_keys_are_named() {
        let manifest = [need("1d", 120), need("4h", 200)];
        let err = effective(&manifest, &json!({"timeframes": ["1d"]})).unwrap_err();
        assert!(err.contains("`timeframes` lists 1"), "{err}");
        let err = effective(&manifest, &json!({"timeframes": ["1d", "7h"]})).unwrap_err();
        assert!(err.contains("7h"), "{err}");
        let err = effective(&manifest, &json!({"timeframes": ["1d", "1d"]})).unwrap_err();
        assert!(err.contains("twice"), "{err}");
        let err = effective(&[need("15m", 80)], &json!({"scan_limit_15m": 0})).unwrap_err();
        assert!(err.contains("scan_limit_15m"), "{err}");
        let err = effective(&[need("15m", 80)], &json!({"scan_limit_15m": 5000})).unwrap_err();
        assert!(err.contains("1-1000"), "{err}");
    }
}
