//! The configuration, `[strategy.pump_momentum]`: exactly the spec's keys and defaults.
//!
//! The plugin is the one source of these defaults: the manifest publishes
//! `serde_json::to_string(&Config::default())`, the host overlays the config file's section on
//! it and refuses unknown keys and wrong types against it.

use serde::{Deserialize, Serialize};
use spotbot_sdk::ScanError;
use spotbot_sdk::config::{self, ScanKeys, bad};

/// Fewest `scan_limit_15m` accepted: the rules need [`crate::MIN_CLOSED_CANDLES`] closed
/// candles, the newest candle is usually still forming, and EMA/ATR (Wilder) want some warm-up.
pub const SCAN_LIMIT_MIN: u32 = 30;
/// Most `scan_limit_15m` accepted: the contract's candle-need limit.
pub const SCAN_LIMIT_MAX: u32 = 1000;

/// `[strategy.pump_momentum]`. Every key is optional; unknown keys are refused.
///
/// `enabled`, `use_universe`, `watchlist_override`, `scan_limit_15m` and
/// `min_quote_volume_usd` are read by the host to choose the symbols and the candle count; the
/// plugin validates them and re-checks the quote volume itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Host-read: `enabled` (whether the scheduled pump scan runs; the plugin scans whatever
    /// it is given, so a manual API scan of a disabled scanner still answers), `use_universe`
    /// (on by default: the exchange universe, 24 h quote volume ≥ `min_quote_volume_usd`),
    /// `watchlist_override` (the symbols when `use_universe` is false; empty: the watchlist)
    /// and `min_quote_volume_usd` (200 000 here; the plugin re-checks it per symbol).
    #[serde(flatten)]
    pub scan: ScanKeys,
    /// Host-read: 15m candles fetched per symbol (replaces the manifest's count).
    pub scan_limit_15m: u32,
    /// Ignition volume / mean volume of the 20 candles before it must be at least this.
    pub vol_ratio_threshold: f64,
    /// Ignition candle return (close − open) / open, percent, must be at least this.
    pub candle_return_min_pct: f64,
    /// Ignition close strength (close − low) / (high − low) must be at least this (0..=1).
    pub close_strength_min: f64,
    /// Ignition 15m return minus the reference's, percentage points, must be at least this.
    pub rel_strength_15m_min: f64,
    /// Follow-through: 1 h return (4 closed candles) minus the reference's, percentage points,
    /// must be at least this.
    pub rel_strength_1h_min: f64,
    /// Follow-through volume / the pre-ignition mean volume must be at least this.
    pub follow_vol_ratio_min: f64,
    /// Close above the pre-ignition EMA(20) in ATR(14) units must be at most this (else: late).
    pub late_entry_atr_mult: f64,
    /// A watch waits at most this many closed candles after the ignition for follow-through.
    pub stage2_expiry_candles: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            scan: ScanKeys {
                use_universe: true,
                min_quote_volume_usd: 200_000.0,
                ..ScanKeys::default()
            },
            scan_limit_15m: 80,
            vol_ratio_threshold: 3.0,
            candle_return_min_pct: 2.5,
            close_strength_min: 0.70,
            rel_strength_15m_min: 2.0,
            rel_strength_1h_min: 4.0,
            follow_vol_ratio_min: 1.5,
            late_entry_atr_mult: 5.0,
            stage2_expiry_candles: 3,
        }
    }
}

/// The default config as JSON text, published in the manifest.
pub fn default_config_json() -> String {
    // Serializing a struct of plain numbers, bools and strings can not fail.
    serde_json::to_string(&Config::default()).unwrap_or_else(|_| "{}".to_string())
}

impl Config {
    /// Parses the request's config and validates every key; errors name the key
    /// ([`config::parse`]).
    pub fn parse(json: &str) -> Result<Config, ScanError> {
        let config: Config = config::parse(json)?;
        config.validate()?;
        Ok(config)
    }

    /// Checks every key; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ScanError> {
        self.scan.validate()?;
        if !(SCAN_LIMIT_MIN..=SCAN_LIMIT_MAX).contains(&self.scan_limit_15m) {
            return Err(bad(
                "scan_limit_15m",
                format!(
                    "must be between {SCAN_LIMIT_MIN} and {SCAN_LIMIT_MAX}, got {}",
                    self.scan_limit_15m
                ),
            ));
        }
        for (key, value) in [
            ("vol_ratio_threshold", self.vol_ratio_threshold),
            ("candle_return_min_pct", self.candle_return_min_pct),
            ("rel_strength_15m_min", self.rel_strength_15m_min),
            ("rel_strength_1h_min", self.rel_strength_1h_min),
            ("follow_vol_ratio_min", self.follow_vol_ratio_min),
            ("late_entry_atr_mult", self.late_entry_atr_mult),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(bad(key, format!("must be a finite number > 0, got {value}")));
            }
        }
        let cs = self.close_strength_min;
        if !(cs.is_finite() && (0.0..=1.0).contains(&cs)) {
            return Err(bad("close_strength_min", format!("must be between 0 and 1, got {cs}")));
        }
        if self.stage2_expiry_candles == 0 {
            return Err(bad("stage2_expiry_candles", "must be at least 1".to_string()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> String {
        match Config::parse(json) {
            Err(ScanError::BadConfig(m)) => m,
            other => panic!("expected BadConfig for {json}, got {other:?}"),
        }
    }

    #[test]
    fn every_bad_value_names_its_key() {
        let cases = [
            (r#"{"watchlist_override": ["btcusdt"]}"#, "watchlist_override"),
            (r#"{"scan_limit_15m": 29}"#, "scan_limit_15m"),
            (r#"{"scan_limit_15m": 1001}"#, "scan_limit_15m"),
            (r#"{"vol_ratio_threshold": 0}"#, "vol_ratio_threshold"),
            (r#"{"candle_return_min_pct": -1}"#, "candle_return_min_pct"),
            (r#"{"rel_strength_15m_min": 0}"#, "rel_strength_15m_min"),
            (r#"{"rel_strength_1h_min": -0.5}"#, "rel_strength_1h_min"),
            (r#"{"follow_vol_ratio_min": 0}"#, "follow_vol_ratio_min"),
            (r#"{"late_entry_atr_mult": 0}"#, "late_entry_atr_mult"),
            (r#"{"close_strength_min": 1.5}"#, "close_strength_min"),
            (r#"{"min_quote_volume_usd": -1}"#, "min_quote_volume_usd"),
            (r#"{"stage2_expiry_candles": 0}"#, "stage2_expiry_candles"),
            (r#"{"unknown_key": 1}"#, "unknown_key"),
            (r#"{"enabled": "yes"}"#, "enabled: invalid type"),
            (r#"{"stage2_expiry_candles": -1}"#, "stage2_expiry_candles: invalid value"),
            (r#"{"late_entry_atr_mult": null}"#, "late_entry_atr_mult: invalid type"),
            (r#"{"watchlist_override": "BTCUSDT"}"#, "watchlist_override: invalid type"),
            (r#"{"scan_limit_15m": 80.5}"#, "scan_limit_15m: invalid type"),
        ];
        for (json, key) in cases {
            let message = err(json);
            assert!(message.contains(key), "{json}: {message}");
        }
        assert!(err("not json").contains("expected"));
        assert!(err("[1]").contains("JSON object"));
    }

    #[test]
    fn edge_values_are_accepted() {
        let c = Config::parse(
            r#"{"scan_limit_15m": 30, "close_strength_min": 0, "min_quote_volume_usd": 0,
                "watchlist_override": ["BTCUSDT", "PEPEUSDT"], "enabled": false}"#,
        )
        .unwrap();
        assert_eq!(c.scan_limit_15m, 30);
        assert!(!c.scan.enabled);
        assert!(Config::parse(r#"{"scan_limit_15m": 1000, "close_strength_min": 1}"#).is_ok());
    }
}
