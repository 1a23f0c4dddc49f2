//! `[strategy.<name>]` sections. The plugin called `<name>` is the one source of a section's
//! keys and defaults: its manifest's default config. A section only overrides them, and the
//! plugins area refuses a plugin whose section has a key the defaults lack or a value of
//! another type (`plugins::validate::section`). The file is read here without knowing the
//! plugins, so a section is kept as written.
//!
//! The host itself acts on a few keys of a strategy's effective config (which symbols to scan,
//! position size, daily limit, trailing stops, tier risk): [`StrategyKeys`]. Where they
//! appear in a section they are checked when the file is read, whatever the plugin, and any
//! section may set them: a plugin that does not declare one does not receive it, but the
//! host acts on it.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A strategy (plugin) name: `[a-z][a-z0-9_]{0,63}`. It names a `[strategy.<name>]` section,
/// a plugin's manifest, and the `bot` of signals and trades; the rule lives here, the lowest
/// layer that needs it, so config does not depend on the plugins area.
pub fn is_strategy_name(name: &str) -> bool {
    name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// All `[strategy.*]` sections, by plugin name, as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct StrategySections {
    pub sections: BTreeMap<String, toml::Table>,
}

impl StrategySections {
    /// The section for the plugin `name` as JSON, the form the plugin receives it in.
    pub fn section_json(&self, name: &str) -> Option<serde_json::Value> {
        serde_json::to_value(self.sections.get(name)?).ok()
    }
}

/// The strategy whose keys stand in for a strategy that has none of its own (manual entries,
/// `POST /api/trade` with a bot that has no plugin): the spec's strategy.
pub const DEFAULT_STRATEGY: &str = "mr_combined";

/// The keys of a strategy's effective config the host acts on. Each is resolved, in order,
/// from the strategy's own effective config (its plugin's defaults overlaid with its section),
/// then from [`DEFAULT_STRATEGY`]'s, then from these fallbacks: the spec's general values
/// (size 1 %, 2 trades a day, trailing 2.0 / 1.0 %), used only when no plugin is loaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StrategyKeys {
    /// false: scans of this strategy are refused and the scheduler skips it.
    pub enabled: bool,
    /// true: scan the liquidity-filtered universe instead of the watchlist.
    pub use_universe: bool,
    /// Symbols scanned instead of the watchlist when not empty (and not `use_universe`).
    pub watchlist_override: Vec<String>,
    /// The universe's liquidity floor: 24 h quote volume, quote currency.
    pub min_quote_volume_usd: f64,
    /// Percent of the capital base per trade.
    #[serde(with = "decimal_number")]
    pub size_pct: Decimal,
    /// The daily trade limit while this strategy trades.
    pub max_trades_per_day: u32,
    pub trailing_enabled: bool,
    #[serde(with = "decimal_number")]
    pub trailing_trigger_pct: Decimal,
    #[serde(with = "decimal_number")]
    pub trailing_distance_pct: Decimal,
    /// Size multipliers by the result's tier: `normal`, `A+`, `A++`.
    #[serde(with = "decimal_number")]
    pub risk_normal: Decimal,
    #[serde(with = "decimal_number")]
    pub risk_aplus: Decimal,
    #[serde(with = "decimal_number")]
    pub risk_aplusplus: Decimal,
}

/// The keys are numbers in the JSON configs they are merged from (a string is a wrong type,
/// as for any number), read as decimals (`crate::money`).
mod decimal_number {
    pub use crate::money::{as_number as serialize, decimal as deserialize};
}

impl Default for StrategyKeys {
    fn default() -> Self {
        StrategyKeys {
            enabled: true,
            use_universe: false,
            watchlist_override: Vec::new(),
            min_quote_volume_usd: 1_000_000.0,
            size_pct: Decimal::ONE,
            max_trades_per_day: 2,
            trailing_enabled: true,
            trailing_trigger_pct: Decimal::TWO,
            trailing_distance_pct: Decimal::ONE,
            risk_normal: Decimal::ONE,
            risk_aplus: Decimal::new(15, 1),
            risk_aplusplus: Decimal::TWO,
        }
    }
}

impl StrategyKeys {
    /// Whether `key` is one the host reads ([`StrategyKeys`]'s fields). A section may set it
    /// for any strategy, declared by its plugin or not (the config check validates it).
    pub fn is_host_key(key: &str) -> bool {
        static NAMES: std::sync::LazyLock<Vec<String>> =
            std::sync::LazyLock::new(|| match serde_json::to_value(StrategyKeys::default()) {
                Ok(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
                _ => Vec::new(),
            });
        NAMES.iter().any(|name| name == key)
    }

    /// Resolves the keys from effective configs, most specific last (see the type's doc). A
    /// value of the wrong type is skipped with a warning (sections are checked when the file
    /// is read; this guards a plugin's own defaults).
    pub fn resolve<'a>(configs: impl IntoIterator<Item = &'a serde_json::Value>) -> Self {
        let mut merged = match serde_json::to_value(StrategyKeys::default()) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        let fallback = merged.clone();
        for config in configs {
            let serde_json::Value::Object(config) = config else { continue };
            for (key, value) in config {
                let Some(slot) = merged.get_mut(key) else { continue };
                let previous = std::mem::replace(slot, value.clone());
                let candidate = serde_json::Value::Object(merged.clone());
                if serde_json::from_value::<StrategyKeys>(candidate).is_err() {
                    tracing::warn!(key, %value, "a strategy key of the wrong type is ignored");
                    merged.insert(key.clone(), previous);
                }
            }
        }
        serde_json::from_value(serde_json::Value::Object(merged))
            .or_else(|_| serde_json::from_value(serde_json::Value::Object(fallback)))
            .unwrap_or_default()
    }

    /// The size multiplier of a setup's tier (none given: normal).
    pub fn risk_of_tier(&self, tier: Option<Tier>) -> Decimal {
        match tier {
            Some(Tier::APlusPlus) => self.risk_aplusplus,
            Some(Tier::APlus) => self.risk_aplus,
            Some(Tier::Normal) | None => self.risk_normal,
        }
    }
}

/// A setup's quality label, as MR Combined reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum Tier {
    #[serde(rename = "normal")]
    Normal,
    #[serde(rename = "A+")]
    APlus,
    #[serde(rename = "A++")]
    APlusPlus,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Normal => "normal",
            Tier::APlus => "A+",
            Tier::APlusPlus => "A++",
        }
    }

    /// The label of a plugin result (`None` for anything else).
    pub fn parse(label: &str) -> Option<Tier> {
        [Tier::Normal, Tier::APlus, Tier::APlusPlus].into_iter().find(|t| t.as_str() == label)
    }
}

#[cfg(test)]
mod tests {
    use rust_decimal_macros::dec;

    use super::*;
    use serde_json::json;

    #[test]
    fn the_most_specific_config_wins_and_bad_types_are_skipped() {
        let mr = json!({"size_pct": 2.0, "max_trades_per_day": 4, "trailing_enabled": false});
        let own = json!({"size_pct": 0.5, "max_trades_per_day": "many", "other": 1});
        let keys = StrategyKeys::resolve([&mr, &own]);
        assert_eq!(keys.size_pct, dec!(0.5));
        assert_eq!(keys.max_trades_per_day, 4, "the bad value is skipped");
        assert!(!keys.trailing_enabled);
        assert_eq!(keys.trailing_trigger_pct, dec!(2.0), "fallback");
        assert_eq!(StrategyKeys::resolve([]), StrategyKeys::default());
        assert_eq!(keys.risk_of_tier(Some(Tier::APlusPlus)), dec!(2.0));
        assert_eq!(keys.risk_of_tier(Some(Tier::APlus)), dec!(1.5));
        assert_eq!(keys.risk_of_tier(None), dec!(1.0));
    }
}
