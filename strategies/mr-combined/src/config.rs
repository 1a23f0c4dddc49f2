//! `[strategy.mr_combined]`: the keys and defaults of the service spec, and their validation.
//!
//! The plugin is the one source of these defaults: the manifest publishes
//! `serde_json::to_string(&Config::default())`, the host overlays the config file's section on
//! it and refuses unknown keys and wrong types against it. Validation of the values happens at
//! every scan ([`Config::validate`]), so a bad value fails the scan with `bad-config` naming
//! the key instead of producing a signal.

use serde::{Deserialize, Serialize};
use spotbot_sdk::ScanError;
use spotbot_sdk::config::{self, TradeKeys, bad, positive};
use spotbot_sdk::testing::timeframe_ms;

use crate::windows::Window;

/// The timeframes the host and the exchange know (`candle-need.timeframe` in the WIT).
pub const VALID_TIMEFRAMES: [&str; 14] =
    ["1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1d", "3d", "1w"];

/// Tolerance of the "tp1_ratio + tp2_ratio + tp3_ratio = 1" rule (decimal fractions such as
/// 0.4 + 0.4 + 0.2 do not add up to exactly 1.0 in binary floating point).
pub const RATIO_SUM_TOLERANCE: f64 = 1e-6;

/// The configuration. Every key is optional (serde default); unknown keys are refused
/// ([`Config::parse`]).
///
/// Keys marked "host" are read by the host (scan universe, position size, daily limit,
/// trailing stop, tier → risk multiplier); the plugin only validates them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Host: whether the scheduler scans this strategy.
    pub enabled: bool,
    /// Host: true scans the liquidity-filtered universe instead of the watchlist.
    pub use_universe: bool,
    /// The three roles, by position: `[macro, regime, entry]`, coarse to fine. The host asks
    /// the exchange for these timeframes in the manifest's order, so candles are read by
    /// `timeframes[i]`, never by a hard-coded string.
    pub timeframes: Vec<String>,
    /// Host: `size_pct`, `max_trades_per_day`, `trailing_*` and `risk_normal`, the spec's
    /// values (the service's defaults).
    #[serde(flatten)]
    pub trade: TradeKeys,
    /// Host: size multiplier of an `A+` tier signal.
    pub risk_aplus: f64,
    /// Host: size multiplier of an `A++` tier signal.
    pub risk_aplusplus: f64,
    /// Stop-loss: this many ATR beyond the range edge the trade leans on.
    pub sl_atr_multiplier: f64,
    /// TP2: the far range edge moved inward by this many ATR.
    pub tp2_atr_multiplier: f64,
    /// Share of the position for TP1 (midline); the three ratios weight `tp_pct`.
    pub tp1_ratio: f64,
    /// Share of the position for TP2 (far edge − tp2_atr_multiplier × ATR).
    pub tp2_ratio: f64,
    /// Share of the position for TP3 (far edge).
    pub tp3_ratio: f64,
    /// Minimum reward/risk, `tp_pct / sl_pct`.
    pub min_rr: f64,
    /// Minimum range width in ATR of the regime timeframe.
    pub range_min_atr_multiplier: f64,
    /// The entry price must be at least this many ATR inside the range from its edge ...
    pub zone_proximity_atr_min: f64,
    /// ... and at most this many.
    pub zone_proximity_atr_max: f64,
    /// Volume of the reversal candle over the mean of the 20 before it, at least.
    pub vol_increase_min: f64,
    /// Windows `HH:MM-HH:MM` (UTC, end exclusive, may wrap midnight) in which no signal is
    /// given.
    pub news_blackout_windows_utc: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            enabled: true,
            use_universe: false,
            timeframes: vec!["1d".into(), "4h".into(), "1h".into()],
            trade: TradeKeys::default(),
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

/// The default config as JSON, published in the manifest.
pub fn default_config_json() -> String {
    // Serializing a struct of plain numbers, booleans and strings cannot fail.
    serde_json::to_string(&Config::default()).unwrap_or_else(|_| "{}".to_string())
}

/// A validated config: the parsed keys plus what validation derived from them. Only
/// [`Config::validate`] builds one, so the three timeframes are always there.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    config: Config,
    windows: Vec<Window>,
}

impl Settings {
    /// The validated keys.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The parsed `news_blackout_windows_utc`, in the config's order.
    pub fn windows(&self) -> &[Window] {
        &self.windows
    }

    /// The macro timeframe (role 0, e.g. 1d).
    pub fn macro_tf(&self) -> &str {
        &self.config.timeframes[0]
    }

    /// The regime timeframe (role 1, e.g. 4h): range, ATR, ADX.
    pub fn regime_tf(&self) -> &str {
        &self.config.timeframes[1]
    }

    /// The entry timeframe (role 2, e.g. 1h): reversal candle, volume, chop.
    pub fn entry_tf(&self) -> &str {
        &self.config.timeframes[2]
    }
}

fn non_negative(key: &str, v: f64) -> Result<(), ScanError> {
    if v.is_finite() && v >= 0.0 { Ok(()) } else { Err(bad(key, format!("must be >= 0, got {v}"))) }
}

impl Config {
    /// Parses the request's config and validates it. A key of the wrong type or an unknown
    /// key is named in the error too ([`config::parse`]).
    pub fn parse(json: &str) -> Result<Settings, ScanError> {
        config::parse::<Config>(json)?.validate()
    }

    /// Checks every value; the error's text starts with the offending key.
    pub fn validate(self) -> Result<Settings, ScanError> {
        self.check_timeframes()?;
        self.trade.validate()?;
        for (key, v) in [
            ("risk_aplus", self.risk_aplus),
            ("risk_aplusplus", self.risk_aplusplus),
            ("sl_atr_multiplier", self.sl_atr_multiplier),
            ("tp2_atr_multiplier", self.tp2_atr_multiplier),
            ("min_rr", self.min_rr),
            ("range_min_atr_multiplier", self.range_min_atr_multiplier),
            ("vol_increase_min", self.vol_increase_min),
        ] {
            positive(key, v)?;
        }
        for (key, v) in [
            ("tp1_ratio", self.tp1_ratio),
            ("tp2_ratio", self.tp2_ratio),
            ("tp3_ratio", self.tp3_ratio),
        ] {
            non_negative(key, v)?;
        }
        let sum = self.tp1_ratio + self.tp2_ratio + self.tp3_ratio;
        if (sum - 1.0).abs() > RATIO_SUM_TOLERANCE {
            return Err(bad(
                "tp3_ratio",
                format!("tp1_ratio + tp2_ratio + tp3_ratio must be 1 (±1e-6), got {sum}"),
            ));
        }
        non_negative("zone_proximity_atr_min", self.zone_proximity_atr_min)?;
        non_negative("zone_proximity_atr_max", self.zone_proximity_atr_max)?;
        if self.zone_proximity_atr_min > self.zone_proximity_atr_max {
            return Err(bad(
                "zone_proximity_atr_min",
                format!(
                    "must be <= zone_proximity_atr_max, got {} > {}",
                    self.zone_proximity_atr_min, self.zone_proximity_atr_max
                ),
            ));
        }
        let windows = self
            .news_blackout_windows_utc
            .iter()
            .map(|w| Window::parse(w).map_err(|why| bad("news_blackout_windows_utc", why)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Settings { config: self, windows })
    }

    /// Exactly three known timeframes, strictly coarse to fine (macro > regime > entry), so
    /// each role reads its own series.
    fn check_timeframes(&self) -> Result<(), ScanError> {
        const KEY: &str = "timeframes";
        if self.timeframes.len() != 3 {
            return Err(bad(
                KEY,
                format!(
                    "must list exactly 3 timeframes [macro, regime, entry], got {}",
                    self.timeframes.len()
                ),
            ));
        }
        let mut durations = [0_i64; 3];
        for (d, tf) in durations.iter_mut().zip(&self.timeframes) {
            if !VALID_TIMEFRAMES.contains(&tf.as_str()) {
                return Err(bad(
                    KEY,
                    format!("`{tf}` is not one of {}", VALID_TIMEFRAMES.join(" ")),
                ));
            }
            *d = timeframe_ms(tf).unwrap_or(0);
        }
        if !(durations[0] > durations[1] && durations[1] > durations[2]) {
            return Err(bad(
                KEY,
                format!(
                    "must go from coarse to fine [macro, regime, entry], got [{}]",
                    self.timeframes.join(", ")
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_spec_values_and_valid() {
        let c = Config::default();
        assert_eq!(c.timeframes, ["1d", "4h", "1h"]);
        assert_eq!((c.tp1_ratio, c.tp2_ratio, c.tp3_ratio), (0.4, 0.4, 0.2));
        assert_eq!((c.zone_proximity_atr_min, c.zone_proximity_atr_max), (0.3, 0.5));
        let s = c.clone().validate().unwrap();
        assert_eq!((s.macro_tf(), s.regime_tf(), s.entry_tf()), ("1d", "4h", "1h"));
        assert!(s.windows().is_empty());
    }
}
