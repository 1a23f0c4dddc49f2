//! Builds the `scanner-alert` records. The host stores the metrics as the PumpAlert's ignition
//! candle data, price, volume, ATR and relative-strength fields, so the names are fixed (and
//! listed in the README).
//!
//! The unprefixed metrics describe the candle the alert is about (the ignition candle for a
//! pump_watch, the follow-through candle for a pump_signal); the `ignition_*` metrics always
//! describe the ignition candle.

use crate::memory::Watch;
use crate::metrics::CandleMetrics;
use spotbot_sdk::{ConfidenceLevel, Metric, ScannerAlert, Stage};

/// Metric names, in the order they appear in every alert.
pub mod names {
    pub const VOL_RATIO: &str = "vol_ratio";
    pub const CANDLE_RETURN_PCT: &str = "candle_return_pct";
    pub const CLOSE_STRENGTH: &str = "close_strength";
    pub const REL_STRENGTH_15M: &str = "rel_strength_15m";
    pub const REL_STRENGTH_1H: &str = "rel_strength_1h";
    pub const ATR: &str = "atr";
    pub const VOLUME: &str = "volume";
    pub const QUOTE_VOLUME_24H: &str = "quote_volume_24h";
    pub const LATE_ATR: &str = "late_atr";
    pub const BASE_PRICE: &str = "base_price";
    pub const CANDLE_OPEN_TIME: &str = "candle_open_time";
    pub const IGNITION_OPEN_TIME: &str = "ignition_open_time";
    pub const IGNITION_OPEN: &str = "ignition_open";
    pub const IGNITION_HIGH: &str = "ignition_high";
    pub const IGNITION_LOW: &str = "ignition_low";
    pub const IGNITION_CLOSE: &str = "ignition_close";
    pub const IGNITION_VOLUME: &str = "ignition_volume";
    /// pump_signal only.
    pub const FOLLOW_VOL_RATIO: &str = "follow_vol_ratio";
    /// pump_signal only.
    pub const CANDLES_SINCE_IGNITION: &str = "candles_since_ignition";
}

/// What a pump_signal adds to the metrics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignalExtras {
    pub follow_vol_ratio: f64,
    pub candles_since_ignition: i64,
}

/// The alert about candle `m` of `symbol`, or `None` if any number is not finite (the host
/// refuses non-finite metrics; a candle we can not describe completely is not alerted).
#[allow(clippy::too_many_arguments)]
pub fn build(
    symbol: &str,
    stage: Stage,
    confidence: ConfidenceLevel,
    price: f64,
    quote_volume_24h: f64,
    m: &CandleMetrics,
    late_atr: f64,
    ignition: &Watch,
    extras: Option<SignalExtras>,
) -> Option<ScannerAlert> {
    use names::*;
    let mut metrics = vec![
        (VOL_RATIO, m.vol_ratio),
        (CANDLE_RETURN_PCT, m.candle_return_pct),
        (CLOSE_STRENGTH, m.close_strength),
        (REL_STRENGTH_15M, m.rel_strength_15m),
        (REL_STRENGTH_1H, m.rel_strength_1h),
        (ATR, m.atr),
        (VOLUME, m.volume),
        (QUOTE_VOLUME_24H, quote_volume_24h),
        (LATE_ATR, late_atr),
        (BASE_PRICE, ignition.base),
        (CANDLE_OPEN_TIME, m.open_time as f64),
        (IGNITION_OPEN_TIME, ignition.open_time as f64),
        (IGNITION_OPEN, ignition.open),
        (IGNITION_HIGH, ignition.high),
        (IGNITION_LOW, ignition.low),
        (IGNITION_CLOSE, ignition.close),
        (IGNITION_VOLUME, ignition.volume),
    ];
    if let Some(x) = extras {
        metrics.push((FOLLOW_VOL_RATIO, x.follow_vol_ratio));
        metrics.push((CANDLES_SINCE_IGNITION, x.candles_since_ignition as f64));
    }
    if !price.is_finite() || price < 0.0 || metrics.iter().any(|(_, v)| !v.is_finite()) {
        return None;
    }
    Some(ScannerAlert {
        symbol: symbol.to_string(),
        stage,
        confidence,
        price,
        metrics: metrics
            .into_iter()
            .map(|(name, value)| Metric { name: name.to_string(), value })
            .collect(),
    })
}

/// The value of metric `name` of an alert (for tests and readers of alerts).
pub fn metric(alert: &ScannerAlert, name: &str) -> Option<f64> {
    alert.metrics.iter().find(|m| m.name == name).map(|m| m.value)
}

/// The wire name of a stage, as the API and the state show it.
pub fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::PumpWatch => "pump_watch",
        Stage::PumpSignal => "pump_signal",
    }
}
