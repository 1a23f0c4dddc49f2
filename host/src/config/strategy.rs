//! `[strategy.<name>]` sections. The two strategies of the spec have typed sections with every
//! key and default of the spec; any other section is handed to the plugin of that name as is.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::market::Timeframe;

/// `[strategy.mr_combined]`, keys and defaults exactly as the spec lists them.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MrCombinedConfig {
    pub enabled: bool,
    /// true: scan the liquidity-filtered universe instead of the watchlist.
    pub use_universe: bool,
    /// Kline intervals as the exchange spells them (see `crate::market::Timeframe`).
    pub timeframes: Vec<Timeframe>,
    /// Percent of the capital base per trade.
    pub size_pct: f64,
    pub max_trades_per_day: u32,
    pub trailing_enabled: bool,
    pub trailing_trigger_pct: f64,
    pub trailing_distance_pct: f64,
    pub risk_normal: f64,
    pub risk_aplus: f64,
    pub risk_aplusplus: f64,
    pub sl_atr_multiplier: f64,
    pub tp2_atr_multiplier: f64,
    pub tp1_ratio: f64,
    pub tp2_ratio: f64,
    pub tp3_ratio: f64,
    /// Minimum reward-to-risk.
    pub min_rr: f64,
    /// Minimum 4H range width in ATRs.
    pub range_min_atr_multiplier: f64,
    pub zone_proximity_atr_min: f64,
    pub zone_proximity_atr_max: f64,
    pub vol_increase_min: f64,
    /// Windows `HH:MM-HH:MM` (UTC) in which signals are blocked.
    pub news_blackout_windows_utc: Vec<String>,
}

impl Default for MrCombinedConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            use_universe: false,
            timeframes: vec![Timeframe::D1, Timeframe::H4, Timeframe::H1],
            size_pct: 1.0,
            max_trades_per_day: 2,
            trailing_enabled: true,
            trailing_trigger_pct: 2.0,
            trailing_distance_pct: 1.0,
            risk_normal: 1.0,
            risk_aplus: 1.5,
            risk_aplusplus: 2.0,
            sl_atr_multiplier: 1.5,
            tp2_atr_multiplier: 0.75,
            tp1_ratio: 0.40,
            tp2_ratio: 0.40,
            tp3_ratio: 0.20,
            min_rr: 2.5,
            range_min_atr_multiplier: 3.0,
            zone_proximity_atr_min: 0.3,
            zone_proximity_atr_max: 0.5,
            vol_increase_min: 1.2,
            news_blackout_windows_utc: Vec::new(),
        }
    }
}

/// `[strategy.pump_momentum]`, keys and defaults exactly as the spec lists them.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PumpMomentumConfig {
    pub enabled: bool,
    pub use_universe: bool,
    pub watchlist_override: Vec<String>,
    /// 15m candles fetched per symbol.
    pub scan_limit_15m: u32,
    pub vol_ratio_threshold: f64,
    pub candle_return_min_pct: f64,
    pub close_strength_min: f64,
    pub rel_strength_15m_min: f64,
    pub rel_strength_1h_min: f64,
    pub follow_vol_ratio_min: f64,
    pub late_entry_atr_mult: f64,
    pub min_quote_volume_usd: f64,
    pub stage2_expiry_candles: u32,
}

impl Default for PumpMomentumConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            use_universe: true,
            watchlist_override: Vec::new(),
            scan_limit_15m: 80,
            vol_ratio_threshold: 3.0,
            candle_return_min_pct: 2.5,
            close_strength_min: 0.70,
            rel_strength_15m_min: 2.0,
            rel_strength_1h_min: 4.0,
            follow_vol_ratio_min: 1.5,
            late_entry_atr_mult: 5.0,
            min_quote_volume_usd: 200_000.0,
            stage2_expiry_candles: 3,
        }
    }
}

/// All `[strategy.*]` sections.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StrategySections {
    pub mr_combined: MrCombinedConfig,
    pub pump_momentum: PumpMomentumConfig,
    /// Sections of other plugins, passed through untyped.
    pub others: BTreeMap<String, toml::Table>,
}

impl StrategySections {
    /// The section for the plugin `name` as JSON, the form the plugin receives it in.
    /// `None` when the file has no section for a plugin the host does not know.
    pub fn section_json(&self, name: &str) -> Option<serde_json::Value> {
        let value = match name {
            "mr_combined" => serde_json::to_value(&self.mr_combined),
            "pump_momentum" => serde_json::to_value(&self.pump_momentum),
            other => serde_json::to_value(self.others.get(other)?),
        };
        value.ok()
    }
}

// Hand-written so that the typed sections are deserialized straight from the TOML deserializer:
// that keeps the file position in their errors (serde's `flatten` would lose it).
impl<'de> Deserialize<'de> for StrategySections {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SectionsVisitor;

        impl<'de> Visitor<'de> for SectionsVisitor {
            type Value = StrategySections;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of strategy sections")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut sections = StrategySections::default();
                while let Some(name) = map.next_key::<String>()? {
                    match name.as_str() {
                        "mr_combined" => sections.mr_combined = map.next_value()?,
                        "pump_momentum" => sections.pump_momentum = map.next_value()?,
                        _ => {
                            let table = map.next_value()?;
                            sections.others.insert(name, table);
                        }
                    }
                }
                Ok(sections)
            }
        }

        deserializer.deserialize_map(SectionsVisitor)
    }
}
