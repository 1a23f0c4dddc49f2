//! The search space: the keys a run varies, each with its range and step, from a small TOML
//! file the strategy's author writes beside the plugin:
//!
//! ```toml
//! [fast]          # a numeric key of the plugin's default config
//! min = 5
//! max = 20
//! step = 1
//!
//! [sl_pct]        # a host key: the stop distance of every entry, instead of the result's
//! min = 2.0
//! max = 8.0
//! step = 0.5
//! ```
//!
//! A key is one of: a numeric top-level key of the plugin's default config (the plugin
//! receives it through its `[strategy.<name>]` section, as in service); a host key the
//! backtest acts on (`size_pct`, `max_trades_per_day`, `risk_normal`, `risk_aplus`,
//! `risk_aplusplus`: set in the same section); or `sl_pct` / `tp_pct`, which replace the stop
//! and target distance of every buy result. A key is an integer when the plugin's default is
//! one (or the host key is a count); its values are then whole numbers.

use std::collections::BTreeMap;

use anyhow::{Context, bail};
use serde::Serialize;

/// Values of the searched keys for one trial, by key.
pub type Point = BTreeMap<String, f64>;

/// Where a key's value goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The plugin's config (its `[strategy.<name>]` section).
    Plugin,
    /// A key the host reads from the same section.
    Host,
    /// `sl_pct` / `tp_pct` of every entry.
    Bracket,
}

/// One searched key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    pub key: String,
    pub min: f64,
    pub max: f64,
    /// Distance between two values; `None`: any value in the range.
    pub step: Option<f64>,
    pub integer: bool,
    pub target: Target,
}

impl Param {
    /// How many values the key can take (`None`: a continuous range).
    pub fn levels(&self) -> Option<usize> {
        let step = self.step?;
        Some(((self.max - self.min) / step + 1e-9).floor() as usize + 1)
    }

    /// The value of level `i` (0-based).
    pub fn level(&self, i: usize) -> f64 {
        let step = self.step.unwrap_or(0.0);
        self.snap(self.min + i as f64 * step)
    }

    /// `value` rounded onto the key's grid (its step from `min`; whole numbers for integers)
    /// and into its range.
    pub fn snap(&self, value: f64) -> f64 {
        let mut v = value.clamp(self.min, self.max);
        if let Some(step) = self.step {
            v = self.min + ((v - self.min) / step).round() * step;
            v = v.min(self.max);
        }
        if self.integer {
            v = v.round();
        }
        // Decimal noise of the multiplication (0.1 × 3) would show in the report.
        (v * 1e9).round() / 1e9
    }
}

/// The keys a run searches, in the order of their names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Space {
    pub params: Vec<Param>,
}

/// Host keys a search may set, and whether each is a count.
const HOST_KEYS: &[(&str, bool)] = &[
    ("size_pct", false),
    ("max_trades_per_day", true),
    ("risk_normal", false),
    ("risk_aplus", false),
    ("risk_aplusplus", false),
    ("trailing_trigger_pct", false),
    ("trailing_distance_pct", false),
];

/// Host keys the backtest does not act on: searching them would only repeat the same trial.
const INERT_HOST_KEYS: &[(&str, &str)] =
    &[("min_quote_volume_usd", "the backtest trades the symbols it is given")];

impl Space {
    /// Reads the space file's text against the plugin's default config (its JSON text).
    pub fn parse(text: &str, default_config: &str) -> anyhow::Result<Space> {
        let table: toml::Table = toml::from_str(text).context("the space file is not TOML")?;
        let defaults: serde_json::Value =
            serde_json::from_str(default_config).unwrap_or(serde_json::Value::Null);
        let mut params = Vec::new();
        for (key, value) in &table {
            let toml::Value::Table(range) = value else {
                bail!("[{key}] must be a table with min, max and optionally step");
            };
            let (target, integer) = target_of(key, &defaults)?;
            params.push(param(key, range, target, integer)?);
        }
        if params.is_empty() {
            bail!("the space file names no key to search");
        }
        Ok(Space { params })
    }

    /// How many points a grid over every key has (`None`: a key has no step, or too many).
    pub fn grid_size(&self) -> Option<usize> {
        self.params.iter().try_fold(1usize, |n, p| n.checked_mul(p.levels()?))
    }

    /// The grid's point number `index` (the first key varies slowest).
    pub fn grid_point(&self, mut index: usize) -> Point {
        let mut point = Point::new();
        for p in self.params.iter().rev() {
            let levels = p.levels().unwrap_or(1).max(1);
            point.insert(p.key.clone(), p.level(index % levels));
            index /= levels;
        }
        point
    }
}

/// Where `key` goes, and whether its values are whole numbers.
fn target_of(key: &str, defaults: &serde_json::Value) -> anyhow::Result<(Target, bool)> {
    if key == "sl_pct" || key == "tp_pct" {
        return Ok((Target::Bracket, false));
    }
    if let Some((_, count)) = HOST_KEYS.iter().find(|(k, _)| *k == key) {
        return Ok((Target::Host, *count));
    }
    if let Some((_, why)) = INERT_HOST_KEYS.iter().find(|(k, _)| *k == key) {
        bail!("[{key}] cannot be searched: {why}");
    }
    match defaults.get(key) {
        Some(serde_json::Value::Number(n)) => Ok((Target::Plugin, n.is_i64() || n.is_u64())),
        Some(other) => bail!("[{key}]: the plugin's default is {other}, not a number"),
        None => {
            let host: Vec<&str> = HOST_KEYS.iter().map(|(k, _)| *k).collect();
            bail!(
                "[{key}] is neither a key of the plugin's default config nor a searchable host \
                 key (sl_pct, tp_pct, {})",
                host.join(", ")
            )
        }
    }
}

fn param(key: &str, range: &toml::Table, target: Target, integer: bool) -> anyhow::Result<Param> {
    let number = |field: &str| -> anyhow::Result<Option<f64>> {
        match range.get(field) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(toml::Value::Float(f)) if f.is_finite() => Ok(Some(*f)),
            Some(other) => bail!("[{key}] {field} must be a number, got {other}"),
        }
    };
    if let Some(unknown) = range.keys().find(|k| !["min", "max", "step"].contains(&k.as_str())) {
        bail!("[{key}] has an unknown field {unknown:?} (min, max, step)");
    }
    let min = number("min")?.with_context(|| format!("[{key}] needs min"))?;
    let max = number("max")?.with_context(|| format!("[{key}] needs max"))?;
    if max <= min {
        bail!("[{key}] max ({max}) must be above min ({min})");
    }
    let mut step = number("step")?;
    if let Some(s) = step
        && !(s > 0.0 && s <= max - min)
    {
        bail!("[{key}] step ({s}) must be above 0 and at most max - min");
    }
    if integer {
        if min.fract() != 0.0 || max.fract() != 0.0 {
            bail!("[{key}] is a whole number: min and max must be whole numbers");
        }
        if step.is_some_and(|s| s.fract() != 0.0) {
            bail!("[{key}] is a whole number: step must be a whole number");
        }
        step = Some(step.unwrap_or(1.0));
    }
    if target != Target::Plugin && min <= 0.0 {
        bail!("[{key}] min must be above 0");
    }
    Ok(Param { key: key.to_string(), min, max, step, integer, target })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: &str = r#"{"fast": 10, "slow": 30, "band": 1.5, "mode": "x"}"#;

    #[test]
    fn plugin_host_and_bracket_keys_are_told_apart() {
        let text = "[fast]\nmin = 5\nmax = 20\n[band]\nmin = 0.5\nmax = 2.0\nstep = 0.5\n\
                    [size_pct]\nmin = 1.0\nmax = 4.0\n[sl_pct]\nmin = 1\nmax = 5\nstep = 1\n\
                    [trailing_distance_pct]\nmin = 0.5\nmax = 2.0\n";
        let space = Space::parse(text, DEFAULTS).unwrap();
        let targets: Vec<_> = space.params.iter().map(|p| (p.key.as_str(), p.target)).collect();
        assert_eq!(
            targets,
            [
                ("band", Target::Plugin),
                ("fast", Target::Plugin),
                ("size_pct", Target::Host),
                ("sl_pct", Target::Bracket),
                ("trailing_distance_pct", Target::Host)
            ]
        );
        let fast = &space.params[1];
        assert!(fast.integer, "the plugin's default is an integer");
        assert_eq!((fast.step, fast.levels()), (Some(1.0), Some(16)));
        assert_eq!(space.params[0].levels(), Some(4));
        assert_eq!(space.params[2].levels(), None, "no step: continuous");
        assert_eq!(space.grid_size(), None);
    }

    #[test]
    fn values_snap_onto_the_grid_and_into_the_range() {
        let space = Space::parse("[band]\nmin = 0.5\nmax = 2.0\nstep = 0.5\n", DEFAULTS).unwrap();
        let band = &space.params[0];
        assert_eq!(band.snap(0.74), 0.5);
        assert_eq!(band.snap(0.76), 1.0);
        assert_eq!(band.snap(9.0), 2.0);
        assert_eq!(band.snap(-1.0), 0.5);
        assert_eq!((0..4).map(|i| band.level(i)).collect::<Vec<_>>(), [0.5, 1.0, 1.5, 2.0]);
    }

    #[test]
    fn the_grid_enumerates_every_combination_once() {
        let text = "[fast]\nmin = 5\nmax = 7\n[slow]\nmin = 20\nmax = 40\nstep = 10\n";
        let space = Space::parse(text, DEFAULTS).unwrap();
        assert_eq!(space.grid_size(), Some(9));
        let points: std::collections::BTreeSet<_> = (0..9)
            .map(|i| {
                let p = space.grid_point(i);
                (p["fast"] as i64, p["slow"] as i64)
            })
            .collect();
        assert_eq!(points.len(), 9);
        assert!(points.contains(&(7, 40)) && points.contains(&(5, 20)));
    }

    #[test]
    fn mistakes_name_the_key_and_field() {
        let cases = [
            ("[nope]\nmin = 1\nmax = 2\n", "[nope] is neither"),
            ("[mode]\nmin = 1\nmax = 2\n", "[mode]: the plugin's default is \"x\""),
            ("[fast]\nmin = 5\n", "[fast] needs max"),
            ("[fast]\nmin = 5\nmax = 5\n", "[fast] max (5) must be above min (5)"),
            ("[fast]\nmin = 5.5\nmax = 9\n", "[fast] is a whole number"),
            ("[band]\nmin = 1\nmax = 2\nstep = 0\n", "[band] step (0) must be above 0"),
            ("[band]\nmin = 1\nmax = 2\nstepp = 1\n", "[band] has an unknown field \"stepp\""),
            ("[min_quote_volume_usd]\nmin = 1\nmax = 2\n", "trades the symbols it is given"),
            ("[sl_pct]\nmin = 0\nmax = 2\n", "[sl_pct] min must be above 0"),
            ("fast = 3\n", "[fast] must be a table"),
            ("", "names no key"),
        ];
        for (text, expected) in cases {
            let err = Space::parse(text, DEFAULTS).unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }
}
