//! `pump_momentum`: the Pump Momentum scanner of spotbot.
//!
//! Detects abnormal 15m momentum on spot symbols: a volume explosion on a large, strong green
//! candle that beats the reference coin (`pump_watch`, the early alert), then follow-through
//! within a few candles (`pump_signal`, the confirmed alert), and stays quiet when the move is
//! already too far extended (late entry). It is a scanner: it returns alerts, never results,
//! and never leads to a trade. The rules are in [`stages`], the README has the full contract.
//!
//! Modules, one job each: [`config`] (keys, defaults, validation), [`series`] (the closed
//! candles), [`metrics`] (the numbers of one candle), [`stages`] (stage and confidence rules),
//! [`alert`] (the alert record), [`memory`] (plugin state), [`evaluate`] (one symbol's flow),
//! [`scenarios`] (scripted candle paths for tests).

pub mod alert;
pub mod config;
pub mod evaluate;
pub mod memory;
pub mod metrics;
pub mod scenarios;
pub mod series;
pub mod stages;

pub use config::{Config, default_config_json};

use spotbot_sdk::{
    CandleNeed, Manifest, PluginKind, ScanError, ScanRequest, ScanResponse, Strategy,
    export_strategy,
};
use std::collections::BTreeSet;

/// The plugin name: `[strategy.pump_momentum]`, `/api/strategies/pump_momentum/scan`.
pub const NAME: &str = "pump_momentum";
/// The one timeframe the scanner reads.
pub const TIMEFRAME: &str = "15m";
/// Fewest closed 15m candles a symbol needs to be evaluated: the 20 candles before the
/// candle under test (volume baseline, EMA(20) base; ATR(14) fits inside) plus that candle.
/// Shorter data is a per-symbol skip (no alert), not an error.
pub const MIN_CLOSED_CANDLES: usize = metrics::VOLUME_LOOKBACK + 1;

/// The scanner. `Strategy` is the SDK trait generated from the WIT contract.
pub struct PumpMomentum;

impl Strategy for PumpMomentum {
    fn describe() -> Manifest {
        Manifest {
            name: NAME.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            kind: PluginKind::Scanner,
            description: "Pump Momentum scanner: 15m volume expansion, strong candle, relative \
                          strength vs the reference coin, follow-through, late-entry filter"
                .to_string(),
            candles: vec![CandleNeed {
                timeframe: TIMEFRAME.to_string(),
                count: Config::default().scan_limit_15m,
            }],
            needs_reference: true,
            needs_market_context: false,
            default_config: default_config_json(),
        }
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let config = Config::parse(&request.config)?;
        let reference_candles =
            request.reference.as_ref().and_then(|r| r.candles(TIMEFRAME)).ok_or_else(|| {
                ScanError::MissingData(format!("reference symbol: no {TIMEFRAME} candles"))
            })?;
        // An unusable reference (inconsistent, unordered, stale) is none: no relative
        // strength, hence no alert, but no failed scan either.
        let reference = series::closed(reference_candles, request.now_ms);

        let state = &request.state;
        let mut watches = memory::watch_count(state);
        let mut scanned = BTreeSet::new();
        let mut alerts = Vec::new();
        let mut state_updates = Vec::new();
        for data in &request.symbols {
            // A symbol listed twice is scanned once (no double alert, no conflicting updates).
            if !scanned.insert(data.symbol.clone()) {
                continue;
            }
            let d = evaluate::decide(
                &config,
                data,
                reference.as_ref(),
                request.now_ms,
                memory::watch(state, &data.symbol),
                memory::alerted(state, &data.symbol),
                watches < memory::MAX_WATCHES,
            );
            if d.opened_watch {
                watches += 1;
            }
            state_updates.extend(memory::updates_for(
                state,
                &data.symbol,
                d.watch.as_ref(),
                d.alerted.as_ref(),
            ));
            alerts.extend(d.alert);
        }
        state_updates.extend(memory::sweep(
            state,
            &scanned,
            request.now_ms,
            config.stage2_expiry_candles,
        ));
        Ok(ScanResponse { results: Vec::new(), alerts, state_updates })
    }
}

export_strategy!(PumpMomentum);

/// Applies state updates the way the host does (the SDK's helper, re-exported for the tests
/// here and in the host that carry state between scans).
pub use spotbot_sdk::testing::apply_state;
