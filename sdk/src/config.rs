//! A strategy's config: the keys the host reads, declared once, and a parse that refuses what
//! the defaults lack.
//!
//! The manifest publishes `Config::default()` as JSON, and the host checks every
//! `[strategy.<name>]` section against those keys and overlays the section on them
//! (docs/strategies.md, "Config"). A few keys of that config are read by the service itself
//! ("Keys the host acts on"); a strategy that wants them embeds the SDK's groups instead of
//! declaring them again:
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use spotbot_sdk::config::{self, ScanKeys, TradeKeys};
//!
//! #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
//! #[serde(default)]
//! pub struct Config {
//!     /// `enabled`, `use_universe`, `watchlist_override`, `min_quote_volume_usd`.
//!     #[serde(flatten)]
//!     pub scan: ScanKeys,
//!     /// `size_pct`, `max_trades_per_day`, `trailing_*`, `risk_normal`.
//!     #[serde(flatten)]
//!     pub trade: TradeKeys,
//!     /// The strategy's own keys follow.
//!     pub rsi_max: f64,
//! }
//!
//! impl Default for Config {
//!     fn default() -> Self {
//!         Config { scan: ScanKeys::default(), trade: TradeKeys::default(), rsi_max: 40.0 }
//!     }
//! }
//!
//! let c: Config = config::parse(r#"{"size_pct": 2.5, "rsi_max": 35}"#).unwrap();
//! assert_eq!((c.trade.size_pct, c.rsi_max, c.scan.enabled), (2.5, 35.0, true));
//! // The published keys are flat, exactly as if declared in `Config` itself.
//! let published = serde_json::to_value(Config::default()).unwrap();
//! assert_eq!(published["size_pct"], 1.0);
//! // Unknown keys are refused, naming the key.
//! let e = config::parse::<Config>(r#"{"size": 2}"#).unwrap_err();
//! assert!(matches!(e, spotbot_sdk::ScanError::BadConfig(m) if m.starts_with("size: ")));
//! ```
//!
//! Why a parse of its own and not `#[serde(deny_unknown_fields)]`: serde does not support that
//! attribute together with `#[serde(flatten)]`, so a struct embedding these groups can not
//! refuse unknown keys by itself. [`parse`] refuses every key the default config lacks, which
//! is the same rule, against the same keys, as the host's check of a section, so the plugin
//! and the host agree by construction. A declarative macro that pasted the keys into each
//! struct would keep the attribute, but hide the fields from the author and from rustdoc; the
//! groups stay plain serde structs an author reads and constructs like any other.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::ScanError;

/// Whether and over which symbols the service scans the strategy (docs/strategies.md, "Which
/// symbols a scan reads"). Embed it with `#[serde(flatten)]`; the host reads these keys, the
/// plugin may re-check them with [`ScanKeys::validate`].
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ScanKeys {
    /// Host: false refuses scans of this strategy (the scheduler skips it).
    pub enabled: bool,
    /// Host: true scans the liquidity-filtered universe instead of the watchlist.
    pub use_universe: bool,
    /// Host: symbols scanned instead of the watchlist when not empty.
    pub watchlist_override: Vec<String>,
    /// Host: the universe's floor of 24 h quote volume, quote currency.
    pub min_quote_volume_usd: f64,
}

/// The service's fallbacks: on, the watchlist, a universe floor of 1 000 000.
impl Default for ScanKeys {
    fn default() -> Self {
        ScanKeys {
            enabled: true,
            use_universe: false,
            watchlist_override: Vec::new(),
            min_quote_volume_usd: 1_000_000.0,
        }
    }
}

impl ScanKeys {
    /// Every `watchlist_override` entry a symbol (2-20 upper-case letters or digits) and
    /// `min_quote_volume_usd` finite and ≥ 0; the error names the key. For a plugin that reads
    /// the list or the floor itself and must not work on nonsense the host would also refuse.
    pub fn validate(&self) -> Result<(), ScanError> {
        for symbol in &self.watchlist_override {
            let ok = (2..=20).contains(&symbol.len())
                && symbol.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
            if !ok {
                return Err(bad(
                    "watchlist_override",
                    format!("`{symbol}` is not a symbol (2-20 upper-case letters or digits)"),
                ));
            }
        }
        let qv = self.min_quote_volume_usd;
        if !(qv.is_finite() && qv >= 0.0) {
            return Err(bad(
                "min_quote_volume_usd",
                format!("must be a finite number >= 0, got {qv}"),
            ));
        }
        Ok(())
    }
}

/// How the service trades a signal of the strategy: entry size, daily limit, trailing stop and
/// the `normal` tier's size multiplier (docs/strategies.md, "Keys the host acts on"). Embed it
/// with `#[serde(flatten)]`; a strategy whose results carry the `A+` / `A++` tiers declares
/// `risk_aplus` and `risk_aplusplus` beside it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TradeKeys {
    /// Host: percent of the capital base per trade, in (0, 100].
    pub size_pct: f64,
    /// Host: buys per day.
    pub max_trades_per_day: u32,
    /// Host: whether a trailing stop follows the trade.
    pub trailing_enabled: bool,
    /// Host: profit in percent at which the trailing stop starts.
    pub trailing_trigger_pct: f64,
    /// Host: distance of the trailing stop below the price, percent.
    pub trailing_distance_pct: f64,
    /// Host: size multiplier of a `normal` tier signal (and of one without a tier).
    pub risk_normal: f64,
}

/// The service's fallbacks: 1 %, 2 trades a day, trailing on at 2.0 / 1.0 %, risk 1.
impl Default for TradeKeys {
    fn default() -> Self {
        TradeKeys {
            size_pct: 1.0,
            max_trades_per_day: 2,
            trailing_enabled: true,
            trailing_trigger_pct: 2.0,
            trailing_distance_pct: 1.0,
            risk_normal: 1.0,
        }
    }
}

impl TradeKeys {
    /// `size_pct` and `trailing_distance_pct` in (0, 100], `trailing_trigger_pct` and
    /// `risk_normal` > 0; the error names the key. The host checks a section's values too; a
    /// plugin that calls this refuses them at its own scan as well.
    pub fn validate(&self) -> Result<(), ScanError> {
        percent("size_pct", self.size_pct)?;
        positive("trailing_trigger_pct", self.trailing_trigger_pct)?;
        percent("trailing_distance_pct", self.trailing_distance_pct)?;
        positive("risk_normal", self.risk_normal)
    }
}

/// Parses the request's config (a JSON object as text) into `T`, the way the host reads a
/// section: every key must be one of `T::default()`'s, and a key left out takes the value of
/// `T::default()` (so an embedded group's defaults are the strategy's, whatever the group's
/// own `Default` says). Every error is a [`ScanError::BadConfig`] whose text starts with the
/// offending key (`"size_pct: invalid type: ..."`, `"size: unknown field ..."`), except for
/// text that is no JSON object at all.
pub fn parse<T: Serialize + DeserializeOwned + Default>(json: &str) -> Result<T, ScanError> {
    let given: Value = serde_json::from_str(json)
        .map_err(|e| ScanError::BadConfig(format!("config is not JSON: {e}")))?;
    let Value::Object(given) = given else {
        return Err(ScanError::BadConfig("config must be a JSON object".to_string()));
    };
    let defaults = match serde_json::to_value(T::default()) {
        Ok(Value::Object(defaults)) => defaults,
        _ => return Err(ScanError::BadConfig("the default config is no JSON object".to_string())),
    };
    let mut merged = defaults.clone();
    for (key, value) in &given {
        let Some(slot) = merged.get_mut(key) else {
            let known: Vec<String> = defaults.keys().map(|k| format!("`{k}`")).collect();
            let why = format!("unknown field `{key}`, expected one of {}", known.join(", "));
            return Err(bad(key, why));
        };
        *slot = value.clone();
    }
    serde_json::from_value(Value::Object(merged)).map_err(|e| {
        // serde does not say which key; the first one refused on its own is the one.
        let alone = |key: &String, value: &Value| {
            let mut one: Map<String, Value> = defaults.clone();
            one.insert(key.clone(), value.clone());
            serde_json::from_value::<T>(Value::Object(one)).err()
        };
        match given.iter().find_map(|(key, value)| Some((key, alone(key, value)?))) {
            Some((key, why)) => bad(key, why),
            None => ScanError::BadConfig(e.to_string()),
        }
    })
}

/// A [`ScanError::BadConfig`] naming `key`: `"<key>: <why>"`, the form the host shows the
/// operator (`[strategy.<name>]: <key>: <why>`).
pub fn bad(key: &str, why: impl std::fmt::Display) -> ScanError {
    ScanError::BadConfig(format!("{key}: {why}"))
}

/// `lo <= v <= hi` and finite, or `"<key>: must be <lo>..=<hi>, got <v>"`.
pub fn within(key: &str, v: f64, lo: f64, hi: f64) -> Result<(), ScanError> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(bad(key, format!("must be {lo}..={hi}, got {v}")))
    }
}

/// `v` finite and > 0, or `"<key>: must be > 0, got <v>"`.
pub fn positive(key: &str, v: f64) -> Result<(), ScanError> {
    if v.is_finite() && v > 0.0 { Ok(()) } else { Err(bad(key, format!("must be > 0, got {v}"))) }
}

/// `v` in (0, 100], or `"<key>: must be > 0 and <= 100, got <v>"`.
pub fn percent(key: &str, v: f64) -> Result<(), ScanError> {
    if v.is_finite() && v > 0.0 && v <= 100.0 {
        Ok(())
    } else {
        Err(bad(key, format!("must be > 0 and <= 100, got {v}")))
    }
}

/// The one timeframe of a strategy that reads one (`timeframes = ["1h"]`, the host's
/// per-need override of the manifest's candles), or `"timeframes: must list exactly one
/// timeframe, got [...]"` when the list holds none, several or an unknown one.
pub fn one_timeframe(timeframes: &[String]) -> Result<&str, ScanError> {
    match timeframes {
        [tf] if crate::candles::timeframe_ms(tf).is_some_and(|ms| ms > 0) => Ok(tf),
        _ => Err(bad("timeframes", format!("must list exactly one timeframe, got {timeframes:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(default)]
    struct Config {
        #[serde(flatten)]
        scan: ScanKeys,
        timeframes: Vec<String>,
        #[serde(flatten)]
        trade: TradeKeys,
        risk_aplus: f64,
        period: u32,
    }

    impl Default for Config {
        fn default() -> Self {
            Config {
                scan: ScanKeys { use_universe: true, ..ScanKeys::default() },
                timeframes: vec!["4h".into()],
                trade: TradeKeys { size_pct: 2.0, ..TradeKeys::default() },
                risk_aplus: 1.5,
                period: 14,
            }
        }
    }

    fn refused(json: &str) -> String {
        match parse::<Config>(json) {
            Err(ScanError::BadConfig(why)) => why,
            other => panic!("{json}: {other:?}"),
        }
    }

    #[test]
    fn the_groups_publish_flat_keys_in_field_order() {
        let text = serde_json::to_string(&Config::default()).unwrap();
        assert_eq!(
            text,
            r#"{"enabled":true,"use_universe":true,"watchlist_override":[],"min_quote_volume_usd":1000000.0,"timeframes":["4h"],"size_pct":2.0,"max_trades_per_day":2,"trailing_enabled":true,"trailing_trigger_pct":2.0,"trailing_distance_pct":1.0,"risk_normal":1.0,"risk_aplus":1.5,"period":14}"#
        );
    }

    #[test]
    fn missing_keys_take_the_strategys_defaults_not_the_groups() {
        assert_eq!(parse::<Config>("{}").unwrap(), Config::default());
        let text = serde_json::to_string(&Config::default()).unwrap();
        assert_eq!(parse::<Config>(&text).unwrap(), Config::default());
        let c: Config = parse(r#"{"size_pct": 3, "enabled": false, "period": 20}"#).unwrap();
        assert_eq!((c.trade.size_pct, c.scan.enabled, c.period), (3.0, false, 20));
        assert!(c.scan.use_universe, "the strategy's default, not ScanKeys::default()");
    }

    #[test]
    fn every_refusal_names_its_key() {
        assert!(refused(r#"{"nope": 1}"#).starts_with("nope: unknown field `nope`, expected"));
        assert!(refused(r#"{"enabled": "yes"}"#).starts_with("enabled: invalid type"));
        assert!(refused(r#"{"max_trades_per_day": -1}"#).starts_with("max_trades_per_day: "));
        assert!(refused(r#"{"period": 1.5, "size_pct": 1}"#).starts_with("period: invalid type"));
        assert!(refused(r#"{"timeframes": {"not": "a value"}}"#).starts_with("timeframes: "));
        assert!(refused("not json").starts_with("config is not JSON: expected"));
        assert_eq!(refused("[1]"), "config must be a JSON object");
    }

    #[test]
    fn the_groups_validate_what_the_host_reads() {
        assert_eq!(TradeKeys::default().validate(), Ok(()));
        assert_eq!(ScanKeys::default().validate(), Ok(()));
        let trade = |edit: fn(&mut TradeKeys)| {
            let mut t = TradeKeys::default();
            edit(&mut t);
            t.validate().unwrap_err()
        };
        assert_eq!(trade(|t| t.size_pct = 0.0), bad("size_pct", "must be > 0 and <= 100, got 0"));
        assert!(matches!(trade(|t| t.trailing_trigger_pct = -1.0),
            ScanError::BadConfig(m) if m.starts_with("trailing_trigger_pct: ")));
        assert!(matches!(trade(|t| t.trailing_distance_pct = 101.0),
            ScanError::BadConfig(m) if m.starts_with("trailing_distance_pct: ")));
        assert!(matches!(trade(|t| t.risk_normal = f64::NAN),
            ScanError::BadConfig(m) if m.starts_with("risk_normal: ")));
        let scan = ScanKeys { watchlist_override: vec!["btcusdt".into()], ..ScanKeys::default() };
        assert!(matches!(scan.validate(), Err(ScanError::BadConfig(m)) if m.contains("`btcusdt`")));
        let scan = ScanKeys { min_quote_volume_usd: -1.0, ..ScanKeys::default() };
        assert!(matches!(scan.validate(),
            Err(ScanError::BadConfig(m)) if m.starts_with("min_quote_volume_usd: ")));
    }

    #[test]
    fn the_small_validators_word_their_bounds() {
        assert_eq!(within("k", 5.0, 0.0, 10.0), Ok(()));
        assert_eq!(within("k", 11.0, 0.0, 10.0), Err(bad("k", "must be 0..=10, got 11")));
        assert!(within("k", f64::NAN, 0.0, 10.0).is_err());
        assert_eq!(positive("k", 0.0), Err(bad("k", "must be > 0, got 0")));
        assert_eq!(percent("k", 100.0), Ok(()));
        assert_eq!(one_timeframe(&["1h".to_string()]), Ok("1h"));
        for bad_list in [vec![], vec!["1h".to_string(), "4h".to_string()], vec!["soon".into()]] {
            assert!(matches!(one_timeframe(&bad_list),
                Err(ScanError::BadConfig(m)) if m.starts_with("timeframes: must list exactly one")));
        }
    }
}
