//! What the scanner remembers between scans, in the plugin state (`scan-request.state` in,
//! `scan-response.state-updates` out). Two small JSON values per symbol at most:
//!
//! - `watch:<SYMBOL>`: an open pump_watch, i.e. the ignition candle waiting for follow-through.
//!   Removed on pump_signal, or once `stage2_expiry_candles` closed candles passed without one.
//! - `alerted:<SYMBOL>`: the stage and candle of the symbol's last alert, so that the host's
//!   scans every 5 minutes within one 15m candle alert once. Removed once a newer candle closed.
//!
//! Any other key, or a value that does not parse, is removed. State stays bounded: at most one
//! entry of each kind per symbol, at most [`MAX_WATCHES`] watches, and entries of symbols that
//! are no longer scanned are swept by the clock.

use crate::series::{STEP_MS, clock_latest_closed};
use serde::{Deserialize, Serialize};
use spotbot_sdk::{StateEntry, StateUpdate, set_state};
use std::collections::BTreeSet;

/// Key prefix of an open watch.
pub const WATCH_PREFIX: &str = "watch:";
/// Key prefix of the last alert of a symbol.
pub const ALERTED_PREFIX: &str = "alerted:";
/// Most watches kept at once (a watch is ~250 bytes; the host allows 64 KiB of state). A new
/// pump_watch beyond this is still alerted but not remembered, so it can not become a signal.
pub const MAX_WATCHES: usize = 100;

/// An open pump_watch: the ignition candle and the baselines measured just before it.
///
/// Prices are stored as decimal strings (Rust's shortest round-trip form) rather than JSON
/// numbers: serde_json's default number parser may be one ulp off, which would make the
/// signal's `ignition_*` metrics differ from the candle and rewrite an unchanged watch on
/// every scan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// Ignition candle open time, epoch ms.
    pub open_time: i64,
    #[serde(with = "exact")]
    pub open: f64,
    #[serde(with = "exact")]
    pub high: f64,
    #[serde(with = "exact")]
    pub low: f64,
    #[serde(with = "exact")]
    pub close: f64,
    #[serde(with = "exact")]
    pub volume: f64,
    /// EMA(20) of the candle before the ignition: the base of the late-entry distance.
    #[serde(with = "exact")]
    pub base: f64,
    /// Mean volume of the 20 candles before the ignition: the follow-through volume baseline.
    #[serde(with = "exact")]
    pub base_volume: f64,
    /// Confidence points of the ignition (see `stages::watch_points`).
    pub points: u32,
}

/// The last alert of a symbol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alerted {
    /// `pump_watch` or `pump_signal`.
    pub stage: String,
    /// Open time of the candle the alert was about, epoch ms.
    pub open_time: i64,
}

/// f64 as a decimal string that parses back to the identical value.
mod exact {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(D::Error::custom)
    }
}

pub fn watch_key(symbol: &str) -> String {
    format!("{WATCH_PREFIX}{symbol}")
}

pub fn alerted_key(symbol: &str) -> String {
    format!("{ALERTED_PREFIX}{symbol}")
}

/// The raw value of `key` (the last one if the host sent a key twice).
fn raw<'a>(state: &'a [StateEntry], key: &str) -> Option<&'a str> {
    state.iter().rev().find(|e| e.key == key).map(|e| e.value.as_str())
}

/// The symbol's open watch; `None` when absent or unreadable.
pub fn watch(state: &[StateEntry], symbol: &str) -> Option<Watch> {
    raw(state, &watch_key(symbol)).and_then(|v| serde_json::from_str(v).ok())
}

/// The symbol's last alert; `None` when absent or unreadable.
pub fn alerted(state: &[StateEntry], symbol: &str) -> Option<Alerted> {
    raw(state, &alerted_key(symbol)).and_then(|v| serde_json::from_str(v).ok())
}

/// Number of readable watches in the state.
pub fn watch_count(state: &[StateEntry]) -> usize {
    let keys: BTreeSet<&str> = state
        .iter()
        .filter(|e| e.key.starts_with(WATCH_PREFIX))
        .filter(|e| serde_json::from_str::<Watch>(&e.value).is_ok())
        .map(|e| e.key.as_str())
        .collect();
    keys.len()
}

/// Closed candles from the candle that opened at `from` to the one that opened at `to`
/// (0: the same candle; negative if `to` is older).
pub fn candles_between(from: i64, to: i64) -> i64 {
    to.saturating_sub(from).div_euclid(STEP_MS)
}

/// The updates that turn the symbol's stored entries into `watch` / `alerted` (nothing when
/// unchanged), in key order.
pub fn updates_for(
    state: &[StateEntry],
    symbol: &str,
    watch: Option<&Watch>,
    alerted: Option<&Alerted>,
) -> Vec<StateUpdate> {
    let mut out = Vec::new();
    let desired_alerted = alerted.and_then(|a| serde_json::to_string(a).ok());
    let desired_watch = watch.and_then(|w| serde_json::to_string(w).ok());
    for (key, desired) in
        [(alerted_key(symbol), desired_alerted), (watch_key(symbol), desired_watch)]
    {
        let current = raw(state, &key);
        match desired {
            Some(value) if current != Some(value.as_str()) => out.push(set_state(key, value)),
            None if state.iter().any(|e| e.key == key) => out.push(StateUpdate::Remove(key)),
            _ => {}
        }
    }
    out
}

/// Removals for entries of symbols not scanned now (`scanned`), judged by the clock: a watch
/// whose expiry passed, an alert about a candle older than the newest closed one, an
/// unreadable value or a key this plugin does not write. In key order.
pub fn sweep(
    state: &[StateEntry],
    scanned: &BTreeSet<String>,
    now_ms: i64,
    expiry_candles: u32,
) -> Vec<StateUpdate> {
    let latest = clock_latest_closed(now_ms);
    let keys: BTreeSet<&str> = state.iter().map(|e| e.key.as_str()).collect();
    let mut out = Vec::new();
    for key in keys {
        let value = raw(state, key).unwrap_or_default();
        let keep = if let Some(symbol) = key.strip_prefix(WATCH_PREFIX) {
            scanned.contains(symbol)
                || serde_json::from_str::<Watch>(value).is_ok_and(|w| {
                    candles_between(w.open_time, latest) <= i64::from(expiry_candles)
                })
        } else if let Some(symbol) = key.strip_prefix(ALERTED_PREFIX) {
            scanned.contains(symbol)
                || serde_json::from_str::<Alerted>(value).is_ok_and(|a| a.open_time >= latest)
        } else {
            false
        };
        if !keep {
            out.push(StateUpdate::Remove(key.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, value: &str) -> StateEntry {
        StateEntry { key: key.into(), value: value.into() }
    }

    fn watch_at(open_time: i64) -> Watch {
        Watch {
            open_time,
            open: 1.0,
            high: 1.1,
            low: 0.99,
            close: 1.08,
            volume: 5.0,
            base: 1.0,
            base_volume: 1.0,
            points: 1,
        }
    }

    #[test]
    fn values_round_trip_and_bad_values_read_as_absent() {
        let w = watch_at(42 * STEP_MS);
        let state = vec![
            entry("alerted:AUSDT", "{oops"),
            entry("watch:AUSDT", &serde_json::to_string(&w).unwrap()),
        ];
        assert_eq!(watch(&state, "AUSDT"), Some(w.clone()));
        assert_eq!(alerted(&state, "AUSDT"), None);
        assert_eq!(watch(&state, "BUSDT"), None);
        assert_eq!(watch_count(&state), 1);
        // Unchanged watch: no update; the unreadable alert entry is removed.
        let u = updates_for(&state, "AUSDT", Some(&w), None);
        assert_eq!(u, vec![StateUpdate::Remove("alerted:AUSDT".into())]);
        let a = Alerted { stage: "pump_watch".into(), open_time: 1 };
        let u = updates_for(&state, "AUSDT", None, Some(&a));
        assert_eq!(
            u,
            vec![
                set_state("alerted:AUSDT", r#"{"stage":"pump_watch","open_time":1}"#),
                StateUpdate::Remove("watch:AUSDT".into())
            ]
        );
    }

    #[test]
    fn prices_round_trip_exactly() {
        let mut w = watch_at(0);
        w.close = 103.53044389104613;
        w.base = 0.1 + 0.2;
        w.volume = 3.2e-9;
        let json = serde_json::to_string(&w).unwrap();
        assert!(json.contains(r#""close":"103.53044389104613""#), "{json}");
        assert_eq!(serde_json::from_str::<Watch>(&json).unwrap(), w);
        assert!(
            serde_json::from_str::<Watch>(&json.replace("\"103.53044389104613\"", "1")).is_err()
        );
    }

    #[test]
    fn sweep_removes_what_the_clock_says_is_over() {
        let now = 100 * STEP_MS + 60_000; // newest closed candle opened at 99 * STEP
        let w = |t: i64| serde_json::to_string(&watch_at(t * STEP_MS)).unwrap();
        let a = |t: i64| format!(r#"{{"stage":"pump_watch","open_time":{}}}"#, t * STEP_MS);
        let state = vec![
            entry("alerted:AUSDT", &a(99)),
            entry("alerted:BUSDT", &a(98)),
            entry("alerted:SCANNED", &a(1)),
            entry("junk", "1"),
            entry("watch:AUSDT", &w(96)),
            entry("watch:BUSDT", &w(95)),
            entry("watch:CUSDT", "not json"),
            entry("watch:SCANNED", &w(1)),
        ];
        let scanned = BTreeSet::from(["SCANNED".to_string()]);
        let removed: Vec<String> = sweep(&state, &scanned, now, 3)
            .into_iter()
            .map(|u| match u {
                StateUpdate::Remove(k) => k,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(removed, ["alerted:BUSDT", "junk", "watch:BUSDT", "watch:CUSDT"]);
    }

    #[test]
    fn candles_between_counts_closed_steps() {
        assert_eq!(candles_between(0, 3 * STEP_MS), 3);
        assert_eq!(candles_between(3 * STEP_MS, 0), -3);
        assert_eq!(candles_between(i64::MIN, i64::MAX), i64::MAX / STEP_MS);
    }
}
