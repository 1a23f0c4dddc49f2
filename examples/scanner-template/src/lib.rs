//! `scanner_template`: 15m volume spikes. A small, complete scanner plugin (an example of the
//! SDK, not a trading edge); `cargo xtask new-strategy <name> --scanner` copies it, every name
//! replaced, as the start of a new one.
//!
//! On the last closed 15m candle of each symbol it looks for a volume spike (volume / mean of
//! the 20 candles before at least `vol_ratio_min`) on a green candle that rose at least
//! `min_change_pct`, in a symbol with at least `min_quote_volume` of 24 h volume. Such a candle
//! is a `pump_watch` alert, with confidence `high` when the spike reaches `high_vol_ratio` and
//! `medium` otherwise. The plugin remembers when it last alerted each symbol (plugin state) and
//! stays quiet for a cooldown.
//!
//! A scanner returns alerts only, never results: it never leads to a trade.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use spotbot_sdk::indicators as ind;
use spotbot_sdk::{
    CandleNeed, ConfidenceLevel, Manifest, Metric, PluginKind, ScanError, ScanRequest,
    ScanResponse, ScannerAlert, Stage, StateEntry, Strategy, SymbolData, config, export_strategy,
    set_state, state_value,
};

/// The plugin name: `[strategy.scanner_template]` in the config,
/// `/api/strategies/scanner_template/scan` in the API.
pub const NAME: &str = "scanner_template";

/// The one timeframe the scanner reads, and its length in milliseconds.
pub const TIMEFRAME: &str = "15m";
const TIMEFRAME_MS: i64 = 15 * 60_000;

/// Candles asked for per symbol.
pub const CANDLES: u32 = 100;

/// Candles before the one under test that make the volume baseline.
pub const LOOKBACK: usize = 20;

/// The configuration, `[strategy.scanner_template]`. Every key is optional; the manifest
/// publishes the defaults (`default_config_json`), which makes them the keys the service
/// accepts, and `config::parse` refuses any other key.
///
/// The scheduler's switch and the symbols a scan reads come from the service's defaults until
/// the scanner declares them: embed the SDK's group (and add `scan: ScanKeys::default()` to
/// `Default`) to publish `enabled`, `use_universe`, `watchlist_override` and
/// `min_quote_volume_usd`:
///
/// ```ignore
/// #[serde(flatten)]
/// pub scan: spotbot_sdk::config::ScanKeys,
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Volume / mean volume of the 20 candles before must be at least this.
    pub vol_ratio_min: f64,
    /// A spike at least this large is `high` confidence, a smaller one `medium`.
    pub high_vol_ratio: f64,
    /// The candle must close at least this many percent above its open.
    pub min_change_pct: f64,
    /// 24 h quote volume must be at least this (quote currency).
    pub min_quote_volume: f64,
    /// No new alert for a symbol within this many minutes of the previous one.
    pub cooldown_minutes: i64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            vol_ratio_min: 3.0,
            high_vol_ratio: 6.0,
            min_change_pct: 1.0,
            min_quote_volume: 1_000_000.0,
            cooldown_minutes: 60,
        }
    }
}

impl Config {
    /// Parses the request's config and judges its values; the service runs a scan of no
    /// symbols to validate a config section, so a refusal here names the bad key to the user.
    pub fn parse(text: &str) -> Result<Config, ScanError> {
        let c: Config = config::parse(text)?;
        let bad = |message: String| Err(ScanError::BadConfig(message));
        if !(c.vol_ratio_min.is_finite() && c.vol_ratio_min > 0.0) {
            return bad(format!("vol_ratio_min must be > 0, got {}", c.vol_ratio_min));
        }
        if !(c.high_vol_ratio.is_finite() && c.high_vol_ratio >= c.vol_ratio_min) {
            return bad(format!(
                "high_vol_ratio must be >= vol_ratio_min, got {}",
                c.high_vol_ratio
            ));
        }
        if !(c.min_change_pct.is_finite() && c.min_change_pct >= 0.0) {
            return bad(format!("min_change_pct must be >= 0, got {}", c.min_change_pct));
        }
        if !(c.min_quote_volume.is_finite() && c.min_quote_volume >= 0.0) {
            return bad(format!("min_quote_volume must be >= 0, got {}", c.min_quote_volume));
        }
        if c.cooldown_minutes < 0 {
            return bad(format!("cooldown_minutes must be >= 0, got {}", c.cooldown_minutes));
        }
        Ok(c)
    }
}

/// The default config as JSON, published in the manifest: every field of [`Config`] with its
/// default.
pub fn default_config_json() -> String {
    serde_json::to_string(&Config::default()).expect("the config serializes")
}

/// The scanner. `Strategy` is the SDK trait generated from the WIT contract; a scanner
/// implements it too and says `PluginKind::Scanner` in its manifest.
pub struct ScannerTemplate;

impl Strategy for ScannerTemplate {
    fn describe() -> Manifest {
        Manifest {
            name: NAME.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            kind: PluginKind::Scanner,
            description: "Example: 15m volume spikes on a strong green candle".to_string(),
            candles: vec![CandleNeed { timeframe: TIMEFRAME.to_string(), count: CANDLES }],
            needs_reference: false,
            needs_market_context: false,
            default_config: default_config_json(),
        }
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let config = Config::parse(&request.config)?;
        let mut scanned = BTreeSet::new();
        let mut alerts = Vec::new();
        let mut state_updates = Vec::new();
        for data in &request.symbols {
            // A symbol listed twice is scanned once: at most one alert per symbol.
            if !scanned.insert(data.symbol.as_str()) {
                continue;
            }
            if let Some(alert) = evaluate(&config, data, request.now_ms, &request.state)? {
                state_updates.push(set_state(alert_key(&data.symbol), request.now_ms.to_string()));
                alerts.push(alert);
            }
        }
        Ok(ScanResponse { results: Vec::new(), alerts, state_updates })
    }
}

export_strategy!(ScannerTemplate);

/// The state key holding the time (epoch ms) of the last alert for a symbol.
pub fn alert_key(symbol: &str) -> String {
    format!("last_alert:{symbol}")
}

/// Evaluates one symbol: an alert, or `None` when its last closed candle is no spike (or the
/// history is too short). Missing candles are an error of the whole scan (the host must send
/// what the manifest asks for).
pub fn evaluate(
    config: &Config,
    data: &SymbolData,
    now_ms: i64,
    state: &[StateEntry],
) -> Result<Option<ScannerAlert>, ScanError> {
    let candles = data.require_candles(TIMEFRAME, 1)?;
    // The exchange's last candle may still be forming: only closed candles count.
    let closed = candles.open_time.iter().take_while(|&&t| t + TIMEFRAME_MS <= now_ms).count();
    if closed <= LOOKBACK || !candles.is_consistent() {
        return Ok(None);
    }
    let k = closed - 1;
    let vol_ratio = ind::volume_ratio(&candles.volume[..closed], LOOKBACK)[k];
    let (open, close) = (candles.open[k], candles.close[k]);
    let change_pct = if open > 0.0 { (close - open) / open * 100.0 } else { 0.0 };

    let last_alert =
        state_value(state, &alert_key(&data.symbol)).and_then(|v| v.parse::<i64>().ok());
    let cooled = last_alert.is_none_or(|t| now_ms - t >= config.cooldown_minutes * 60_000);
    let liquid = data.quote_volume_24h >= config.min_quote_volume;
    let spike = vol_ratio.is_finite() && vol_ratio >= config.vol_ratio_min;
    if !(cooled && liquid && spike && change_pct >= config.min_change_pct) {
        return Ok(None);
    }
    let confidence = if vol_ratio >= config.high_vol_ratio {
        ConfidenceLevel::High
    } else {
        ConfidenceLevel::Medium
    };
    let metric = |name: &str, value: f64| Metric { name: name.to_string(), value };
    Ok(Some(ScannerAlert {
        symbol: data.symbol.clone(),
        stage: Stage::PumpWatch,
        confidence,
        price: data.last_price,
        metrics: vec![
            metric("vol_ratio", vol_ratio),
            metric("change_pct", change_pct),
            metric("quote_volume_24h", data.quote_volume_24h),
        ],
    }))
}

#[cfg(test)]
mod tests {
    //! Two kinds of tests. The contract tests check what the service relies on whatever the
    //! logic decides (a valid manifest and config, alerts only for requested symbols and never
    //! results, determinism, the cooldown memory), so they keep passing while you change
    //! `evaluate()`; most of them come from the SDK (`contract_tests!`, `testing::contract`),
    //! with the pinned default config: edit that pin when you change a key or a default. The
    //! `example_*` test pins today's logic on hand-made data: adapt it (or replace it with
    //! your own) when you change it.

    use super::*;
    use spotbot_sdk::testing::{apply_state, contract};
    use spotbot_sdk::{StateUpdate, testing};

    const NOW: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
    const MINUTE: i64 = 60_000;

    fn request(symbols: usize, config: &str) -> ScanRequest {
        testing::request(&ScannerTemplate::describe().candles, symbols, config, NOW)
    }

    /// A varied batch ending at `now_ms` (the same market whatever `now_ms`): random walks,
    /// plus two spikes (one illiquid), a short history and a symbol listed twice.
    fn batch(now_ms: i64) -> ScanRequest {
        let mut req = testing::request(&ScannerTemplate::describe().candles, 24, "{}", now_ms);
        spike(&mut req.symbols[0]);
        spike(&mut req.symbols[1]);
        req.symbols[1].quote_volume_24h = 10.0;
        for c in &mut req.symbols[2].candles {
            *c = testing::candles(3, &c.timeframe, 5, 100.0, 0.0, now_ms);
        }
        let twice = req.symbols[0].clone();
        req.symbols.push(twice);
        req
    }

    fn scan(req: &ScanRequest) -> ScanResponse {
        ScannerTemplate::scan(req.clone()).unwrap()
    }

    /// Today's textbook case on any timeframes: the last candle rises 3 % on 8x the volume.
    fn spike(data: &mut SymbolData) {
        for c in &mut data.candles {
            let n = c.len();
            if n < 2 {
                continue;
            }
            let open = c.close[n - 2];
            c.open[n - 1] = open;
            c.close[n - 1] = open * 1.03;
            c.high[n - 1] = open * 1.031;
            c.low[n - 1] = open * 0.999;
            c.volume[n - 1] = 8.0 * c.volume[..n - 1].iter().sum::<f64>() / (n - 1) as f64;
        }
        data.last_price = data.candles[0].close.last().copied().unwrap_or(data.last_price);
    }

    // ---- Contract tests: they hold whatever evaluate() decides. ----

    spotbot_sdk::contract_tests! {
        plugin: ScannerTemplate,
        config: Config,
        name: NAME,
        kind: PluginKind::Scanner,
        candles: [(TIMEFRAME, CANDLES)],
        needs_reference: false,
        needs_market_context: false,
        default_config: serde_json::json!({
            "vol_ratio_min": 3.0, "high_vol_ratio": 6.0, "min_change_pct": 1.0,
            "min_quote_volume": 1_000_000.0, "cooldown_minutes": 60,
        }),
    }

    #[test]
    fn the_batch_is_answered_like_the_contract_says() {
        contract::answers::<ScannerTemplate>(&batch(NOW), |_| {});
    }

    #[test]
    fn too_little_history_is_quiet_and_a_missing_timeframe_an_error() {
        let mut req = request(1, "{}");
        spike(&mut req.symbols[0]);
        for c in &mut req.symbols[0].candles {
            *c = testing::candles(1, &c.timeframe, 3, 100.0, 0.0, NOW);
        }
        assert!(scan(&req).alerts.is_empty());
        contract::missing_timeframe_fails::<ScannerTemplate>();
    }

    #[test]
    fn state_records_the_alerts_and_the_cooldown_survives_a_round_trip() {
        let first = scan(&batch(NOW));
        let expected: Vec<StateUpdate> =
            first.alerts.iter().map(|a| set_state(alert_key(&a.symbol), NOW.to_string())).collect();
        assert_eq!(first.state_updates, expected, "one record per alert, at the scan's time");

        // The same market a minute later, with the persisted state: no alert repeats.
        let mut state = Vec::new();
        apply_state(&mut state, &first.state_updates);
        let mut later = batch(NOW + MINUTE);
        later.state = state.clone();
        let second = scan(&later);
        for alert in &second.alerts {
            assert!(first.alerts.iter().all(|a| a.symbol != alert.symbol), "{alert:?} again");
        }
        assert_eq!(second.state_updates.len(), second.alerts.len());

        // Once the cooldown is over, the same market gives the same alerts again.
        let cooldown = Config::default().cooldown_minutes * MINUTE;
        let mut after = batch(NOW + cooldown);
        after.state = state;
        let symbols =
            |r: &ScanResponse| r.alerts.iter().map(|a| a.symbol.clone()).collect::<Vec<_>>();
        assert_eq!(symbols(&scan(&after)), symbols(&first));
    }

    // ---- Example of today's logic: adapt or replace it when you change evaluate(). ----

    #[test]
    fn example_volume_spike_alerts_then_cools_down() {
        let mut req = request(1, "{}");
        spike(&mut req.symbols[0]);
        let r = scan(&req);
        assert_eq!(r.alerts.len(), 1, "{r:?}");
        let alert = &r.alerts[0];
        assert_eq!((alert.stage, alert.confidence), (Stage::PumpWatch, ConfidenceLevel::High));
        let vol_ratio = alert.metrics.iter().find(|m| m.name == "vol_ratio").unwrap().value;
        assert!(vol_ratio > 6.0, "{alert:?}");

        // Ten minutes later with the persisted state: quiet.
        apply_state(&mut req.state, &r.state_updates);
        req.now_ms = NOW + 10 * MINUTE;
        assert!(scan(&req).alerts.is_empty());

        // Without liquidity, or with a higher bar, no alert; nonsense values are refused.
        let mut illiquid = request(1, "{}");
        spike(&mut illiquid.symbols[0]);
        illiquid.symbols[0].quote_volume_24h = 10.0;
        assert!(scan(&illiquid).alerts.is_empty());
        let mut strict = request(1, r#"{"vol_ratio_min": 20.0, "high_vol_ratio": 30.0}"#);
        spike(&mut strict.symbols[0]);
        assert!(scan(&strict).alerts.is_empty());
        let e = ScannerTemplate::scan(request(0, r#"{"vol_ratio_min": -1}"#)).unwrap_err();
        assert!(matches!(&e, ScanError::BadConfig(m) if m.contains("vol_ratio_min")), "{e:?}");
    }
}
