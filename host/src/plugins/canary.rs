//! The canary: before a loaded version serves, the host scans it once on a synthetic request
//! built from its manifest. A build that traps, runs out its deadline or answers something
//! invalid on every scan must not replace the version that works.
//!
//! The request is deterministic: three symbols (`CANARY1USDT`..`CANARY3USDT`, see
//! [`SYMBOLS`]) whose candles come from the SDK's generator seeded by the symbol name, so
//! their prices never depend on the time (only the open times follow the load time's grid);
//! the manifest's candle needs as the effective config adjusts them; the reference symbol's
//! synthetic data when the manifest asks; a market context computed by the host's own
//! analysis from the symbol's synthetic 1d and 4h candles when the manifest asks; the
//! effective config; the plugin's persisted state (empty when it has none). Nothing the canary
//! returns is persisted.
//!
//! Verdicts:
//! - `bad-config`: the file is refused with the plugin's reason (on every load: the config is
//!   the operator's, whatever version serves);
//! - another `scan-error` (`missing-data`, `failed`): the plugin judged the synthetic data,
//!   which is its right; the version loads;
//! - the deadline: refused, on a first load too. A plugin that runs out its deadline on
//!   three symbols would hold a call slot for the whole deadline on every scan (and scans
//!   of the other plugins wait for slots): it must not serve at all;
//! - a trap, the memory or stack cap, a result over the cap or an invalid response: a
//!   version that would **replace** a serving one is refused and the previous one keeps
//!   serving; a first load serves (there is nothing better to serve, and such a call fails
//!   at once) and the row shows the failed canary.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::model::{CandleNeed, Manifest, ScanError, ScanRequest, StateEntry, SymbolData};
use super::runtime::{Compiled, Runtime};
use super::{LoadError, PluginError, SyntheticMarket, needs, run_scan};
use crate::market::context;

/// The symbols of every canary request.
pub const SYMBOLS: [&str; 3] = ["CANARY1USDT", "CANARY2USDT", "CANARY3USDT"];

/// Candles per timeframe behind a synthetic market context (the market area analyses a fixed
/// count; 200 is what its cache reads).
const CONTEXT_CANDLES: u32 = 200;

/// What the canary request needs besides the manifest and the config.
pub struct CanaryInputs<'a> {
    /// `[market] reference_symbol`, the name of the reference data when the manifest asks.
    pub reference_symbol: &'a str,
    /// The persisted state of a plugin, by name.
    pub state: &'a dyn Fn(&str) -> Vec<StateEntry>,
}

/// How the canary scan of the serving version went (shown in `GET /api/strategies`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CanaryReport {
    /// When the version was loaded and the canary ran (RFC 3339).
    #[schema(value_type = String, format = DateTime)]
    pub at: DateTime<Utc>,
    /// Wall time of the canary scan, milliseconds.
    pub duration_ms: f64,
    /// `ok`; `plugin_error` when the plugin refused the synthetic data (accepted); or the
    /// failure's code (`plugin_trapped`, `plugin_deadline_exceeded`, ...) on a first load.
    pub outcome: String,
    /// The error, when the outcome is not `ok`.
    pub detail: Option<String>,
}

impl CanaryReport {
    /// Whether the scan failed in a way that refuses a replacement (not `ok`, and not the
    /// plugin's own judgement of the synthetic data).
    pub fn failed(&self) -> bool {
        self.outcome != "ok" && self.outcome != "plugin_error"
    }
}

/// The canary's decision.
pub enum Verdict {
    Serve(CanaryReport),
    Refuse(LoadError),
}

/// The synthetic request for `manifest` with the effective `config` (JSON object as text), or
/// the sentence naming a host-read config key (`timeframes`, `scan_limit_*`) that is wrong.
pub fn request(
    manifest: &Manifest,
    config: &str,
    state: Vec<StateEntry>,
    reference_symbol: &str,
    now_ms: i64,
) -> Result<ScanRequest, String> {
    let parsed: serde_json::Value = serde_json::from_str(config).unwrap_or_default();
    let needs = needs::effective(&manifest.candles, &parsed)?;
    let symbol = |name: &str| {
        let mut data = SyntheticMarket::symbol(name, &needs, now_ms);
        if manifest.needs_market_context {
            data.market_context = Some(market_context(name, now_ms));
        }
        data
    };
    Ok(ScanRequest {
        now_ms,
        config: config.to_string(),
        symbols: SYMBOLS.iter().map(|s| symbol(s)).collect(),
        reference: manifest
            .needs_reference
            .then(|| SyntheticMarket::symbol(reference_symbol, &needs, now_ms)),
        state,
    })
}

/// The context the market area would compute from the symbol's synthetic 1d and 4h candles.
fn market_context(symbol: &str, now_ms: i64) -> super::model::MarketContext {
    let frames = [
        CandleNeed { timeframe: "1d".into(), count: CONTEXT_CANDLES },
        CandleNeed { timeframe: context::DEFAULT_MTF.into(), count: CONTEXT_CANDLES },
    ];
    let SymbolData { candles, .. } = SyntheticMarket::symbol(symbol, &frames, now_ms);
    let analysed = context::analyze(
        symbol,
        "1d",
        context::DEFAULT_MTF,
        &candles[0],
        &candles[1],
        now_ms.div_euclid(1000),
    );
    (&analysed).into()
}

/// Runs the canary scan of a freshly loaded version. `replacing`: a version of this file
/// serves now and would be replaced.
pub fn run(
    runtime: &Runtime,
    compiled: &Compiled,
    manifest: &Manifest,
    config: &str,
    inputs: &CanaryInputs<'_>,
    replacing: bool,
    now: DateTime<Utc>,
) -> Verdict {
    let bad_config = |reason: String| {
        Verdict::Refuse(LoadError::ConfigSection(format!("[strategy.{}]: {reason}", manifest.name)))
    };
    let state = (inputs.state)(&manifest.name);
    let now_ms = now.timestamp_millis();
    let request = match request(manifest, config, state, inputs.reference_symbol, now_ms) {
        Ok(request) => request,
        Err(reason) => return bad_config(reason),
    };
    let started = std::time::Instant::now();
    let (result, log) = run_scan(runtime, compiled, manifest, request);
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    log.emit(&manifest.name, "canary");
    let report = |outcome: &str, detail: Option<String>| CanaryReport {
        at: now,
        duration_ms,
        outcome: outcome.to_string(),
        detail,
    };
    match result {
        Ok(_) => Verdict::Serve(report("ok", None)),
        Err(PluginError::Plugin(ScanError::BadConfig(reason))) => bad_config(reason),
        Err(err @ PluginError::Plugin(_)) => {
            Verdict::Serve(report(err.code(), Some(err.to_string())))
        }
        Err(err) if replacing || matches!(err, PluginError::Deadline(_)) => {
            Verdict::Refuse(LoadError::Canary(format!(
                "{err} (synthetic request: {} at now_ms {now_ms})",
                SYMBOLS.join(", ")
            )))
        }
        Err(err) => {
            let name = &manifest.name;
            tracing::warn!(name, %err, "the canary of a first load failed; it serves anyway");
            Verdict::Serve(report(err.code(), Some(err.to_string())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::model::PluginKind;

    fn manifest(reference: bool, context: bool) -> Manifest {
        Manifest {
            name: "probe".into(),
            version: "1.0.0".into(),
            kind: PluginKind::Strategy,
            description: String::new(),
            candles: vec![
                CandleNeed { timeframe: "1h".into(), count: 50 },
                CandleNeed { timeframe: "4h".into(), count: 20 },
            ],
            needs_reference: reference,
            needs_market_context: context,
            default_config: "{}".into(),
        }
    }

    #[test]
    fn the_request_is_deterministic_and_follows_the_manifest_and_config() {
        let now = 1_767_225_600_000 + 5 * 60_000;
        let state = vec![StateEntry { key: "k".to_string(), value: "v".to_string() }];
        let a = request(&manifest(true, true), "{}", state.clone(), "BTCUSDT", now).unwrap();
        let b = request(&manifest(true, true), "{}", state.clone(), "BTCUSDT", now).unwrap();
        assert_eq!(a, b, "same inputs, same request");
        let names: Vec<&str> = a.symbols.iter().map(|s| s.symbol.as_str()).collect();
        assert_eq!(names, SYMBOLS);
        assert_eq!((a.now_ms, a.state.clone()), (now, state));
        let first = &a.symbols[0];
        let shape: Vec<(&str, usize)> =
            first.candles.iter().map(|c| (c.timeframe.as_str(), c.len())).collect();
        assert_eq!(shape, [("1h", 50), ("4h", 20)]);
        assert!(first.market_context.is_some());
        assert_ne!(a.symbols[0].candles, a.symbols[1].candles, "each symbol walks its own path");
        assert_eq!(a.reference.as_ref().map(|r| r.symbol.as_str()), Some("BTCUSDT"));
        // Prices do not depend on the time, only the candle grid does.
        let later = request(&manifest(true, true), "{}", vec![], "BTCUSDT", now + 86_400_000);
        let later = later.unwrap();
        assert_eq!(later.symbols[0].candles[0].close, first.candles[0].close);
        assert_ne!(later.symbols[0].candles[0].open_time, first.candles[0].open_time);

        let plain = request(&manifest(false, false), "{}", vec![], "BTCUSDT", now).unwrap();
        assert!(plain.reference.is_none() && plain.symbols[0].market_context.is_none());
        let adjusted =
            request(&manifest(false, false), r#"{"scan_limit_4h": 7}"#, vec![], "X", now);
        assert_eq!(adjusted.unwrap().symbols[0].candles[1].len(), 7);
        let bad = request(&manifest(false, false), r#"{"timeframes": ["1h"]}"#, vec![], "X", now);
        assert!(bad.unwrap_err().contains("timeframes"));
    }
}
