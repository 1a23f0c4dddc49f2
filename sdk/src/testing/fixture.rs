//! Loads a scan request saved from the host (`GET /api/strategies/{name}/request`) as the
//! SDK's [`ScanRequest`], so a strategy is unit-tested natively on the host's real input.
//!
//! The host's JSON is the contract types' own serde form (the host uses these very types), so
//! the file deserializes straight into them: snake_case enum values (`"trade_long"`), the
//! state as `[{"key", "value"}]`, `null` for a NaN number (JSON has no NaN). Numbers are read
//! exactly: the host writes the shortest text that round-trips and the SDK parses floats with
//! serde_json's `float_roundtrip`, so every candle comes back with the very same bits.

use crate as sdk;

/// Parses the JSON text of a host scan request.
pub fn load_request(json: &str) -> Result<sdk::ScanRequest, String> {
    serde_json::from_str(json).map_err(|e| format!("not a spotbot scan request: {e}"))
}

/// Reads and parses a file saved from `GET /api/strategies/{name}/request`.
pub fn read_request(path: impl AsRef<std::path::Path>) -> Result<sdk::ScanRequest, String> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    load_request(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request in the host's spelling, as `GET /api/strategies/{name}/request` writes it.
    const HOST_JSON: &str = r#"{
      "now_ms": 1767225600000,
      "config": "{\"rsi_max\":40.0,\"name\":\"a \\\"quoted\\\" 7\",\"windows\":[1,-2.5e3]}",
      "symbols": [{
        "symbol": "SOLUSDT",
        "last_price": 150.12345678901234,
        "quote_volume_24h": 5000000.0,
        "candles": [{
          "timeframe": "1h",
          "open_time": [1767218400000, 1767222000000],
          "open": [0.30000000000000004, 1e-8],
          "high": [151.99999999999997, 2.5E+2],
          "low": [-0.0, null],
          "close": [149.5, 150.12345678901234],
          "volume": [1000, 17.25]
        }],
        "market_context": {
          "htf_tf": "1d", "mtf_tf": "4h", "macro_phase": "range",
          "range_position": "just_broken_up", "liquidity_profile": "equal_highs",
          "range_high": 160.5, "range_low": 140.25, "regime": "volatile_chop",
          "trend_direction": "none", "bos_mode": "quick", "trend_age": "fresh",
          "compression_bias": "none", "volatile_chop": true, "atr": 3.75,
          "priority_decision": "watch_regime_shift", "no_trade_reason": "", "timestamp": 1767225600
        }
      }],
      "reference": null,
      "state": [{"key": "last_buy:SOLUSDT", "value": "1767200000000"}]
    }"#;

    #[test]
    fn the_hosts_json_loads_exactly() {
        let r = load_request(HOST_JSON).unwrap();
        assert_eq!(r.now_ms, 1_767_225_600_000);
        let config: serde_json::Value = serde_json::from_str(&r.config).unwrap();
        assert_eq!(config["name"], "a \"quoted\" 7", "strings stay untouched");
        assert_eq!(config["windows"][1], -2500.0);
        let s = &r.symbols[0];
        let exact = |t: &str| t.parse::<f64>().unwrap().to_bits();
        assert_eq!(s.last_price.to_bits(), exact("150.12345678901234"));
        let c = &s.candles[0];
        assert_eq!(c.open_time, [1_767_218_400_000, 1_767_222_000_000]);
        assert_eq!(c.open[0].to_bits(), exact("0.30000000000000004"));
        assert_eq!((c.open[1], c.high[1], c.volume[0]), (1e-8, 250.0, 1000.0));
        assert_eq!(c.high[0].to_bits(), exact("151.99999999999997"));
        assert!(c.low[0] == 0.0 && c.low[0].is_sign_negative() && c.low[1].is_nan());
        let m = s.market_context.as_ref().unwrap();
        assert_eq!(m.macro_phase, sdk::MacroPhase::Range);
        assert_eq!(m.range_position, sdk::RangePosition::JustBrokenUp);
        assert_eq!(m.liquidity_profile, sdk::LiquidityProfile::EqualHighs);
        assert_eq!(m.regime, sdk::Regime::VolatileChop);
        assert_eq!((m.bos_mode, m.trend_age), (sdk::BosMode::Quick, sdk::TrendAge::Fresh));
        assert_eq!(m.priority_decision, sdk::PriorityDecision::WatchRegimeShift);
        assert_eq!((m.timestamp, m.volatile_chop), (1_767_225_600, true));
        assert!(r.reference.is_none());
        assert_eq!(r.state[0].key, "last_buy:SOLUSDT");
        assert_eq!(crate::state_value(&r.state, "last_buy:SOLUSDT"), Some("1767200000000"));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let err = load_request(r#"{"now_ms": 1, "config": "{}"}"#).unwrap_err();
        assert!(err.contains("symbols"), "{err}");
        let err = load_request(r#"{"now_ms": 1.5, "config": "{}", "symbols": []}"#).unwrap_err();
        assert!(err.contains("1.5"), "{err}");
        let bad_case = HOST_JSON.replace("\"quick\"", "\"Quick\"");
        assert!(load_request(&bad_case).unwrap_err().contains("Quick"));
        assert!(read_request("/no/such/fixture.json").unwrap_err().contains("cannot read"));
        assert!(load_request("[1, 2").is_err());
    }
}
