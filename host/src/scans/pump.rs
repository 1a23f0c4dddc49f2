//! Pump Momentum: the alert scan (`GET|POST /api/pump-momentum/scan`) and the stored alert
//! history (`GET /api/pump-momentum/signals[/{symbol}]`). An alert is an observation: it is
//! stored and sent to the boss, never traded.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{ScanError, Scans};
use crate::messenger::templates;
use crate::plugins::model::{ConfidenceLevel, ScannerAlert, Stage};
use crate::store::tables;

/// The Pump Momentum plugin's name.
pub const PUMP_MOMENTUM: &str = "pump_momentum";

/// The candle that ignited the move, as the plugin measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct IgnitionCandle {
    /// Open time, epoch ms.
    pub open_time: i64,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
    pub volume: f64,
}

/// What the price did after an alert (`spotbot pump-outcomes`, or the `pump_outcomes` job).
/// Percentages are relative to the alert price; a field stays empty until its window has
/// passed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PumpOutcome {
    pub price_1h_after: Option<f64>,
    pub price_4h_after: Option<f64>,
    pub price_24h_after: Option<f64>,
    /// Maximum favourable excursion (highest high) within 1 h / 4 h / 24 h, percent.
    pub mfe_1h_pct: Option<f64>,
    pub mfe_4h_pct: Option<f64>,
    pub mfe_24h_pct: Option<f64>,
    /// Maximum adverse excursion (lowest low) within 1 h / 4 h / 24 h, percent (<= 0).
    pub mae_1h_pct: Option<f64>,
    pub mae_4h_pct: Option<f64>,
    pub mae_24h_pct: Option<f64>,
    /// The high reached +5 % / +10 % within 24 h.
    pub reached_5pct: Option<bool>,
    pub reached_10pct: Option<bool>,
    /// Within 24 h the price fell back below the ignition candle's open (the pump reversed).
    pub reversed: Option<bool>,
    /// When the outcome was last evaluated, epoch ms; complete once the 24 h fields are set.
    pub evaluated_at: Option<i64>,
}

impl PumpOutcome {
    pub fn is_complete(&self) -> bool {
        self.price_24h_after.is_some()
    }
}

/// One stored alert (the spec's PumpAlert).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PumpAlert {
    /// Sequence number in the alert history.
    pub id: u64,
    pub symbol: String,
    pub stage: Stage,
    pub confidence: ConfidenceLevel,
    /// When the scan raised it, epoch ms.
    pub timestamp_signal: i64,
    /// Price at the alert.
    pub price: f64,
    /// Volume of the ignition candle, base asset.
    pub volume: Option<f64>,
    /// ATR(14) of the 15m candles at the alert.
    pub atr: Option<f64>,
    /// Return minus the reference coin's over the last 15m candle / hour, percentage points.
    pub rel_strength_15m: Option<f64>,
    pub rel_strength_1h: Option<f64>,
    pub ignition: Option<IgnitionCandle>,
    /// Every metric the plugin reported, by its name.
    pub metrics: BTreeMap<String, f64>,
    /// The plugin version that raised it.
    pub plugin_version: String,
    /// The messenger notification went out.
    pub notified: bool,
    pub outcome: PumpOutcome,
}

impl PumpAlert {
    fn of(alert: &ScannerAlert, now_ms: i64, plugin_version: &str) -> Self {
        let metrics: BTreeMap<String, f64> =
            alert.metrics.iter().map(|m| (m.name.clone(), m.value)).collect();
        let m = |name: &str| metrics.get(name).copied();
        let ignition = (|| {
            Some(IgnitionCandle {
                open_time: m("ignition_open_time")? as i64,
                open: m("ignition_open")?,
                high: m("ignition_high")?,
                low: m("ignition_low")?,
                close: m("ignition_close")?,
                volume: m("ignition_volume")?,
            })
        })();
        PumpAlert {
            id: 0,
            symbol: alert.symbol.clone(),
            stage: alert.stage,
            confidence: alert.confidence,
            timestamp_signal: now_ms,
            price: alert.price,
            volume: m("volume").or(m("ignition_volume")),
            atr: m("atr"),
            rel_strength_15m: m("rel_strength_15m"),
            rel_strength_1h: m("rel_strength_1h"),
            ignition,
            plugin_version: plugin_version.to_string(),
            notified: false,
            outcome: PumpOutcome::default(),
            metrics,
        }
    }

    fn note(&self) -> templates::PumpAlertNote {
        templates::PumpAlertNote {
            symbol: self.symbol.clone(),
            stage: stage_name(self.stage).to_string(),
            confidence: confidence_name(self.confidence).to_string(),
            price: self.price,
            vol_ratio: self.metrics.get("vol_ratio").copied(),
            candle_return_pct: self.metrics.get("candle_return_pct").copied(),
            rel_strength_15m: self.rel_strength_15m,
            rel_strength_1h: self.rel_strength_1h,
        }
    }
}

pub fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::PumpWatch => "pump_watch",
        Stage::PumpSignal => "pump_signal",
    }
}

fn confidence_name(c: ConfidenceLevel) -> &'static str {
    match c {
        ConfidenceLevel::Low => "low",
        ConfidenceLevel::Medium => "medium",
        ConfidenceLevel::High => "high",
    }
}

/// One alert of a scan answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PumpScanRow {
    pub symbol: String,
    pub stage: Stage,
}

/// The answer of a pump scan.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PumpScan {
    pub ok: bool,
    /// Alerts raised by this scan.
    pub count: usize,
    pub signals: Vec<PumpScanRow>,
    /// `SYMBOL: why` for each alert whose notification failed (the alert is stored anyway).
    pub notify_errors: Vec<String>,
    /// Symbols scanned.
    pub scanned: usize,
}

/// Filters of the alert history.
#[derive(Debug, Clone, Default)]
pub struct AlertFilter {
    pub symbol: Option<String>,
    pub stage: Option<Stage>,
    pub confidence: Option<ConfidenceLevel>,
    /// Only alerts at or after this time, epoch ms.
    pub since_ms: Option<i64>,
    pub limit: usize,
}

impl AlertFilter {
    fn keeps(&self, a: &PumpAlert) -> bool {
        self.symbol.as_ref().is_none_or(|s| *s == a.symbol)
            && self.stage.is_none_or(|s| s == a.stage)
            && self.confidence.is_none_or(|c| c == a.confidence)
            && self.since_ms.is_none_or(|t| a.timestamp_signal >= t)
    }
}

impl Scans {
    /// Runs the Pump Momentum plugin over its universe (or `watchlist_override`, or the
    /// watchlist), stores every alert and sends each to the boss.
    pub async fn pump_scan(&self, agent: &str) -> Result<PumpScan, ScanError> {
        let p = &self.parts;
        let keys = p.plugins.strategy_keys(PUMP_MOMENTUM);
        let symbols = self.symbols_for(&keys).await?;
        let scanned = symbols.len();
        let (alerts, version) = if symbols.is_empty() {
            (Vec::new(), String::new())
        } else {
            let outcome = p.plugins.scan(PUMP_MOMENTUM, Some(symbols)).await?;
            (outcome.alerts, outcome.version)
        };
        let now = p.clock.now_ms();
        let mut answer = PumpScan {
            ok: true,
            count: 0,
            signals: Vec::new(),
            notify_errors: Vec::new(),
            scanned,
        };
        for alert in &alerts {
            let mut record = PumpAlert::of(alert, now, &version);
            record.id = p.store.write(|w| w.append(tables::PUMP_ALERTS, &record))?;
            match p.messenger.send(&templates::pump_alert(&record.note())).await {
                Ok(_) => {
                    record.notified = true;
                    p.store.write(|w| w.replace(tables::PUMP_ALERTS, record.id, &record))?;
                }
                Err(err) => answer.notify_errors.push(format!("{}: {err}", record.symbol)),
            }
            answer.signals.push(PumpScanRow { symbol: record.symbol.clone(), stage: record.stage });
        }
        answer.count = answer.signals.len();
        let status = if answer.notify_errors.is_empty() { "ok" } else { "error" };
        p.dashboard.record(
            agent,
            &format!("pump scan: {scanned} symbols, {} alerts", answer.count),
            status,
        );
        Ok(answer)
    }

    /// Stored alerts, newest first, that pass `filter`.
    pub fn pump_alerts(&self, filter: &AlertFilter) -> Result<Vec<PumpAlert>, ScanError> {
        let rows = self.parts.store.read(|r| {
            r.newest_matching(tables::PUMP_ALERTS, filter.limit, |_, a: &PumpAlert| filter.keeps(a))
        })?;
        Ok(rows
            .into_iter()
            .map(|(id, mut a)| {
                a.id = id;
                a
            })
            .collect())
    }
}
