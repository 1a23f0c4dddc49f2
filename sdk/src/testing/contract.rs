//! The contract tests every plugin owes the host, written once: [`contract_tests!`] expands
//! them into a crate's tests, the functions here do the checking.
//!
//! They hold whatever a strategy's logic decides: a valid manifest, the default config
//! published in full (and pinned, so a changed key or default is a deliberate edit), configs
//! accepted and refused the way the host's canary sees it, and random walks answered with
//! results (or alerts) the host accepts, deterministically. What a strategy promises beyond
//! that (its scenarios, its reasons) stays in its own tests; a per-result check of its own can
//! ride along on the random walks (`each_result`).
//!
//! [`contract_tests!`]: crate::contract_tests

use std::collections::BTreeSet;
use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Direction, PluginKind, ScanError, ScanRequest, ScanResponse, ScanResult, Strategy};

/// 2026-01-01T00:00:00Z: the clock of the contract's synthetic requests.
pub const NOW: i64 = 1_767_225_600_000;

/// Random-walk symbols of the contract's batch.
pub const SYMBOLS: usize = 30;

/// The timeframes the host can fetch (`candle-need.timeframe`, docs/strategies.md).
pub const TIMEFRAMES: [&str; 14] =
    ["1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1d", "3d", "1w"];

/// What a crate says its manifest is; [`manifest`] checks the rest of the host's rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected<'a> {
    pub name: &'a str,
    /// The crate's `CARGO_PKG_VERSION`.
    pub version: &'a str,
    pub kind: PluginKind,
    /// `(timeframe, count)` of every candle need, in order.
    pub candles: &'a [(&'a str, u32)],
    pub needs_reference: bool,
    pub needs_market_context: bool,
}

/// The manifest is `expected` and follows the host's rules: the name `[a-z][a-z0-9_]{0,63}`,
/// a `MAJOR.MINOR.PATCH` version, 1 to 8 candle needs of known, distinct timeframes with
/// counts 1..=1000, and a default config that is a JSON object.
pub fn manifest<S: Strategy>(expected: &Expected<'_>) {
    let m = S::describe();
    let name = m.name.as_str();
    assert_eq!(name, expected.name);
    let mut chars = name.chars();
    assert!(chars.next().is_some_and(|c| c.is_ascii_lowercase()), "{name}");
    assert!(chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'), "{name}");
    assert!(name.len() <= 64, "{name}");
    assert_eq!(m.version, expected.version);
    assert_eq!(m.version.split('.').filter(|p| p.parse::<u64>().is_ok()).count(), 3);
    assert_eq!(m.kind, expected.kind);
    let needs: Vec<(&str, u32)> =
        m.candles.iter().map(|n| (n.timeframe.as_str(), n.count)).collect();
    assert_eq!(needs, expected.candles);
    assert!(!needs.is_empty() && needs.len() <= 8, "{needs:?}");
    for (i, (tf, count)) in needs.iter().enumerate() {
        assert!(TIMEFRAMES.contains(tf), "{tf}");
        assert!((1..=1000).contains(count), "{tf}: {count}");
        assert!(needs[..i].iter().all(|(other, _)| other != tf), "{tf} twice");
    }
    assert_eq!(
        (m.needs_reference, m.needs_market_context),
        (expected.needs_reference, expected.needs_market_context)
    );
    let config: Value = serde_json::from_str(&m.default_config).expect("default config is JSON");
    assert!(config.is_object(), "{config}");
}

/// The manifest publishes `C::default()` in full (`serde_json::to_string`), its JSON is
/// `pinned` (every key, value and number kind: `1.0` is not `1`), and it reads back as
/// `C::default()`, as does an empty config, through [`crate::config::parse`].
pub fn default_config<S, C>(pinned: &Value)
where
    S: Strategy,
    C: Serialize + DeserializeOwned + Default + PartialEq + Debug,
{
    let published = S::describe().default_config;
    assert_eq!(published, serde_json::to_string(&C::default()).unwrap(), "publish every key");
    let value: Value = serde_json::from_str(&published).unwrap();
    assert_eq!(
        &value, pinned,
        "the published keys and defaults changed: the config's `Default` (left) no longer \
         matches the `default_config: json!(...)` pin of `contract_tests!` in this plugin's \
         src/lib.rs (right). If the change is meant, copy the left value into the pin: operators' \
         [strategy.<name>] sections are read against these keys"
    );
    assert_eq!(crate::config::parse::<C>(&published), Ok(C::default()));
    assert_eq!(crate::config::parse::<C>("{}"), Ok(C::default()));
}

/// A request the host could send `S`: `symbols` random walks with the candles the manifest
/// asks for (ending at [`NOW`], all closed), the reference when the manifest asks for one,
/// `config`, no state.
pub fn request<S: Strategy>(symbols: usize, config: &str) -> ScanRequest {
    let m = S::describe();
    let mut request = super::request(&m.candles, symbols, config, NOW);
    if m.needs_reference {
        request.reference = Some(super::symbol("REFUSDT", 997, &m.candles, 0.0, NOW));
    }
    request
}

/// Configs the way the host's canary judges them: `{}` and the published default pass (a scan
/// of no symbols answers nothing), an unknown key and a value of the wrong type for any key
/// are a [`ScanError::BadConfig`] naming the key.
pub fn configs<S: Strategy>() {
    for config in ["{}".to_string(), S::describe().default_config] {
        let r = S::scan(request::<S>(0, &config)).unwrap_or_else(|e| panic!("{config}: {e:?}"));
        assert!(r.results.is_empty() && r.alerts.is_empty(), "{r:?}");
    }
    refused::<S>(r#"{"no_such_key": 1}"#, "no_such_key");
    let defaults: Value = serde_json::from_str(&S::describe().default_config).unwrap();
    for key in defaults.as_object().into_iter().flat_map(|m| m.keys()) {
        refused::<S>(&format!(r#"{{"{key}": {{"not": "a value"}}}}"#), key);
    }
}

/// A scan of one random walk under `config` fails with a [`ScanError::BadConfig`] whose text
/// names `key`; returns the text.
pub fn refused<S: Strategy>(config: &str, key: &str) -> String {
    match S::scan(request::<S>(1, config)) {
        Err(ScanError::BadConfig(why)) if why.contains(key) => why,
        other => panic!("{config}: expected bad-config naming {key}, got {other:?}"),
    }
}

/// The host's checks of a result of plugin `name` ([`super::validate_result`], the bot's
/// name, `passed` the count of passing lines, a tier the signal flow knows: `normal`, `A+`,
/// `A++`) and the SDK's conventions: a skip says why, a signal carries a bracket (both
/// `sl_pct` and `tp_pct` > 0).
pub fn result(r: &ScanResult, name: &str) {
    super::validate_result(r).unwrap_or_else(|why| panic!("{why}: {r:#?}"));
    assert_eq!(r.bot, name, "{r:#?}");
    assert_eq!(r.passed as usize, r.checklist.iter().filter(|c| c.pass).count(), "{r:#?}");
    let tiers = ["normal", "A+", "A++"];
    assert!(r.tier.as_deref().is_none_or(|t| tiers.contains(&t)), "{r:#?}");
    if r.direction == Direction::Skip {
        assert!(!r.reason.as_deref().unwrap_or_default().trim().is_empty(), "{r:#?}");
    } else {
        assert!(r.sl_pct > 0.0 && r.tp_pct > 0.0, "a signal needs a bracket: {r:#?}");
    }
}

/// For a strategy that makes its signals with [`ScanResult::with_signal`]: a signal carries the
/// service's ev and confidence (what the confirm gates will judge), a skip carries neither and
/// no bracket.
pub fn scored_like_the_service(r: &ScanResult) {
    if r.direction == Direction::Skip {
        assert!(r.ev.is_none() && r.confidence.is_none(), "{r:#?}");
        assert_eq!((r.sl_pct, r.tp_pct), (0.0, 0.0), "a skip carries no bracket: {r:#?}");
    } else {
        let (passed, total) = (r.passed as usize, r.total as usize);
        let (ev, confidence) = crate::scoring::scores_of(passed, total, r.sl_pct, r.tp_pct);
        assert_eq!((r.ev, r.confidence), (Some(ev), Some(confidence)), "{r:#?}");
    }
}

/// [`SYMBOLS`] random walks (from [`request`]) [`answers`] like the contract says.
pub fn random_walks<S: Strategy>(each: impl Fn(&ScanResult)) {
    answers::<S>(&request::<S>(SYMBOLS, "{}"), each);
}

/// `request`, scanned twice: the same answer both times, and one the host accepts. A strategy
/// answers each symbol once, in order, with a [`result`] (then `each`, the crate's own check)
/// and no alert; a scanner answers no result and at most one alert per requested symbol, with
/// finite numbers.
pub fn answers<S: Strategy>(request: &ScanRequest, each: impl Fn(&ScanResult)) {
    let response = S::scan(request.clone()).unwrap();
    assert_eq!(response, S::scan(request.clone()).unwrap(), "scans are deterministic");
    let m = S::describe();
    let asked: Vec<&str> = request.symbols.iter().map(|s| s.symbol.as_str()).collect();
    match m.kind {
        PluginKind::Strategy => {
            let answered: Vec<&str> = response.results.iter().map(|r| r.symbol.as_str()).collect();
            assert_eq!(answered, asked, "one result per symbol, in order");
            assert!(response.alerts.is_empty(), "a strategy returns results, not alerts");
            for r in &response.results {
                result(r, &m.name);
                each(r);
            }
        }
        PluginKind::Scanner => alerts(&response, &asked),
    }
}

/// A scanner's response: no result (a scanner that returns one fails its scan), alerts only
/// for requested symbols, at most one each, with finite price and metrics.
fn alerts(response: &ScanResponse, asked: &[&str]) {
    assert!(response.results.is_empty(), "a scanner returns alerts only");
    let mut alerted = BTreeSet::new();
    for alert in &response.alerts {
        assert!(asked.contains(&alert.symbol.as_str()), "{alert:?}");
        assert!(alerted.insert(alert.symbol.as_str()), "two alerts for {}", alert.symbol);
        assert!(alert.price.is_finite() && alert.price >= 0.0, "{alert:?}");
        assert!(alert.metrics.iter().all(|m| m.value.is_finite()), "{alert:?}");
    }
}

/// For every candle need of the manifest: a symbol without that timeframe fails the whole
/// scan with a [`ScanError::MissingData`] naming it (the host must send what the manifest
/// asks for). For a plugin that treats a missing series as an error, not as a per-symbol skip.
pub fn missing_timeframe_fails<S: Strategy>() {
    for need in S::describe().candles {
        let mut request = request::<S>(1, "{}");
        request.symbols[0].candles.retain(|c| c.timeframe != need.timeframe);
        let e = S::scan(request).unwrap_err();
        let named = matches!(&e, ScanError::MissingData(m) if m.contains(&need.timeframe));
        assert!(named, "{}: {e:?}", need.timeframe);
    }
}

/// Expands into the contract's `#[test]` functions for a plugin crate, checked by
/// [`spotbot_sdk::testing::contract`](crate::testing::contract): the manifest, the pinned
/// default config, configs accepted and refused, and random walks. Put it in the crate's test
/// module; `each_result` (optional) runs the crate's own check on every random-walk result.
///
/// ```ignore
/// #[cfg(test)]
/// mod contract {
///     use serde_json::json;
///     use spotbot_sdk::PluginKind::Strategy;
///
///     spotbot_sdk::contract_tests! {
///         plugin: crate::MyStrategy,
///         config: crate::Config,
///         name: "my_strategy",
///         kind: Strategy,
///         candles: [("1h", 200)],
///         needs_reference: false,
///         needs_market_context: false,
///         default_config: json!({"rsi_max": 40.0, "min_passed": 5}),
///     }
/// }
/// ```
#[macro_export]
macro_rules! contract_tests {
    (
        plugin: $plugin:ty,
        config: $config:ty,
        name: $name:expr,
        kind: $kind:expr,
        candles: [$(($tf:expr, $count:expr)),* $(,)?],
        needs_reference: $reference:expr,
        needs_market_context: $context:expr,
        default_config: $default:expr
        $(, each_result: $each:expr)? $(,)?
    ) => {
        #[test]
        fn contract_manifest_is_valid() {
            $crate::testing::contract::manifest::<$plugin>(&$crate::testing::contract::Expected {
                name: $name,
                version: env!("CARGO_PKG_VERSION"),
                kind: $kind,
                candles: &[$(($tf, $count)),*],
                needs_reference: $reference,
                needs_market_context: $context,
            });
        }

        #[test]
        fn contract_default_config_is_published_in_full_and_pinned() {
            $crate::testing::contract::default_config::<$plugin, $config>(&$default);
        }

        #[test]
        fn contract_configs_are_judged_like_the_hosts_canary() {
            $crate::testing::contract::configs::<$plugin>();
        }

        #[test]
        fn contract_random_walks_answer_validly_and_deterministically() {
            #[allow(unused_variables)]
            let each = |r: &$crate::ScanResult| {};
            $(let each = $each;)?
            $crate::testing::contract::random_walks::<$plugin>(each);
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CandleNeed, Manifest, ScanResult};

    /// A strategy that skips every symbol, with one config key.
    struct Skipper;

    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
    #[serde(default)]
    struct Config {
        threshold: f64,
    }

    impl Default for Config {
        fn default() -> Self {
            Config { threshold: 1.5 }
        }
    }

    impl Strategy for Skipper {
        fn describe() -> Manifest {
            Manifest::new("skipper", "0.1.0", PluginKind::Strategy, "skips")
                .with_candles("1h", 50)
                .with_default_config(&Config::default())
        }

        fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
            crate::config::parse::<Config>(&request.config)?;
            request.evaluate_each(|s| {
                s.require_candles("1h", 1)?;
                let r = ScanResult::new(&s.symbol, "skipper", Direction::Skip, s.last_price);
                Ok(r.with_reason("never"))
            })
        }
    }

    crate::contract_tests! {
        plugin: Skipper,
        config: Config,
        name: "skipper",
        kind: PluginKind::Strategy,
        candles: [("1h", 50)],
        needs_reference: false,
        needs_market_context: false,
        default_config: serde_json::json!({"threshold": 1.5}),
        each_result: |r: &ScanResult| assert_eq!(r.reason.as_deref(), Some("never")),
    }

    #[test]
    fn a_missing_timeframe_is_checked_per_need() {
        missing_timeframe_fails::<Skipper>();
        let needs = [CandleNeed { timeframe: "1h".into(), count: 50 }];
        assert_eq!(request::<Skipper>(2, "{}").symbols[1].candles.len(), needs.len());
    }

    #[test]
    #[should_panic(expected = "the published keys and defaults changed")]
    fn a_changed_default_fails_the_pin() {
        default_config::<Skipper, Config>(&serde_json::json!({"threshold": 1}));
    }
}
