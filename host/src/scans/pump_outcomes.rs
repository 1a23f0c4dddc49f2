//! Outcome evaluation of stored pump alerts (spec: "Outcome evaluation (separate tooling)"):
//! what the price did 1 h, 4 h and 24 h after each alert. Run by `spotbot pump-outcomes`, by
//! `POST /api/pump-momentum/outcomes` and by the hourly `pump_outcomes` job.
//!
//! Measured on the exchange's 15m candles from the one containing the alert:
//! - `price_Nh_after`: the close of the candle containing alert time + N h, once that candle
//!   has closed;
//! - `mfe_Nh_pct` / `mae_Nh_pct`: the highest high / lowest low of the candles that opened
//!   before alert time + N h, relative to the alert price, percent;
//! - at 24 h: `reached_5pct`, `reached_10pct` (the 24 h MFE reached +5 % / +10 %) and
//!   `reversed` (a low below the ignition candle's open, i.e. the whole pump given back).
//!
//! An alert is revisited until its 24 h window has passed; then its outcome is complete.

use serde::Serialize;
use utoipa::ToSchema;

use super::pump::{PumpAlert, PumpOutcome};
use super::{ScanError, Scans};
use crate::exchange::{Exchange, Kline};
use crate::store::tables;
use rust_decimal::prelude::ToPrimitive;

const MINUTE: i64 = 60_000;
const CANDLE: i64 = 15 * MINUTE;
const HOUR: i64 = 60 * MINUTE;
/// Alerts evaluated per run at most (oldest unfinished first on the next run).
const MAX_PER_RUN: usize = 500;

/// What one evaluation run did.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct OutcomeReport {
    pub ok: bool,
    /// Alerts whose outcome changed.
    pub updated: usize,
    /// Alerts whose outcome is now complete (24 h passed).
    pub completed: usize,
    /// `SYMBOL #id: why` for alerts that could not be evaluated (retried next run).
    pub errors: Vec<String>,
}

impl Scans {
    /// Evaluates every stored alert that is at least an hour old and not complete yet.
    pub async fn pump_outcomes(&self) -> Result<OutcomeReport, ScanError> {
        let p = &self.parts;
        let exchange = p.exchange.clone().ok_or_else(|| {
            ScanError::Universe("outcomes need an exchange client for candles".into())
        })?;
        let now = p.clock.now_ms();
        let open = p.store.read(|r| {
            r.newest_matching(tables::PUMP_ALERTS, MAX_PER_RUN, |_, a: &PumpAlert| {
                !a.outcome.is_complete() && now - a.timestamp_signal >= HOUR
            })
        })?;
        let mut report = OutcomeReport { ok: true, ..Default::default() };
        for (id, alert) in open {
            match evaluate(exchange.as_ref(), &alert, now).await {
                Ok(outcome) if outcome != alert.outcome => {
                    report.completed += usize::from(outcome.is_complete());
                    let updated = PumpAlert { id, outcome, ..alert };
                    p.store.write(|w| w.replace(tables::PUMP_ALERTS, id, &updated))?;
                    report.updated += 1;
                }
                Ok(_) => {}
                Err(err) => report.errors.push(format!("{} #{id}: {err}", alert.symbol)),
            }
        }
        Ok(report)
    }
}

/// The outcome of one alert at `now` from its 15m candles.
async fn evaluate(
    exchange: &dyn Exchange,
    alert: &PumpAlert,
    now: i64,
) -> Result<PumpOutcome, String> {
    let t = alert.timestamp_signal;
    let first_open = t - t.rem_euclid(CANDLE);
    let end = (t + 24 * HOUR).min(now);
    let limit = u32::try_from((end - first_open) / CANDLE + 1).unwrap_or(1).clamp(1, 1000);
    let klines = exchange
        .klines(&alert.symbol, "15m", limit, Some(end))
        .await
        .map_err(|e| format!("15m klines: {e}"))?;
    let candles: Vec<Candle> =
        klines.iter().filter(|k| k.open_time >= first_open).filter_map(Candle::of).collect();
    Ok(outcome_of(alert, &candles, now))
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Candle {
    open_time: i64,
    high: f64,
    low: f64,
    close: f64,
}

impl Candle {
    fn of(k: &Kline) -> Option<Candle> {
        Some(Candle {
            open_time: k.open_time,
            high: k.high.0.to_f64()?,
            low: k.low.0.to_f64()?,
            close: k.close.0.to_f64()?,
        })
    }
}

fn outcome_of(alert: &PumpAlert, candles: &[Candle], now: i64) -> PumpOutcome {
    let t = alert.timestamp_signal;
    let price = alert.price;
    // Percent to 4 decimals: enough for a report, and stable to compare.
    let pct = |v: f64| ((v / price - 1.0) * 1e6).round() / 1e4;
    let mut outcome = alert.outcome.clone();
    let window = |hours: i64| -> Option<(f64, f64, f64)> {
        let until = t + hours * HOUR;
        // The candle containing `until` must have closed.
        let last = candles.iter().find(|c| c.open_time <= until && until < c.open_time + CANDLE)?;
        if last.open_time + CANDLE > now {
            return None;
        }
        let within = candles.iter().filter(|c| c.open_time < until);
        let high = within.clone().map(|c| c.high).fold(f64::MIN, f64::max);
        let low = within.map(|c| c.low).fold(f64::MAX, f64::min);
        Some((last.close, pct(high), pct(low)))
    };
    if price > 0.0 {
        if let Some((close, mfe, mae)) = window(1) {
            (outcome.price_1h_after, outcome.mfe_1h_pct, outcome.mae_1h_pct) =
                (Some(close), Some(mfe), Some(mae.min(0.0)));
        }
        if let Some((close, mfe, mae)) = window(4) {
            (outcome.price_4h_after, outcome.mfe_4h_pct, outcome.mae_4h_pct) =
                (Some(close), Some(mfe), Some(mae.min(0.0)));
        }
        if let Some((close, mfe, mae)) = window(24) {
            (outcome.price_24h_after, outcome.mfe_24h_pct, outcome.mae_24h_pct) =
                (Some(close), Some(mfe), Some(mae.min(0.0)));
            outcome.reached_5pct = Some(mfe >= 5.0);
            outcome.reached_10pct = Some(mfe >= 10.0);
            let lowest = price * (1.0 + mae / 100.0);
            outcome.reversed = alert.ignition.as_ref().map(|i| lowest < i.open);
        }
    }
    outcome.evaluated_at = Some(now);
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::model::{ConfidenceLevel, Stage};
    use crate::scans::IgnitionCandle;

    fn alert(t: i64) -> PumpAlert {
        PumpAlert {
            id: 1,
            symbol: "SOLUSDT".into(),
            stage: Stage::PumpWatch,
            confidence: ConfidenceLevel::Medium,
            timestamp_signal: t,
            price: 100.0,
            volume: None,
            atr: None,
            rel_strength_15m: None,
            rel_strength_1h: None,
            ignition: Some(IgnitionCandle {
                open_time: t - CANDLE,
                open: 96.0,
                high: 100.5,
                low: 95.5,
                close: 100.0,
                volume: 1.0,
            }),
            metrics: Default::default(),
            plugin_version: "1.0.0".into(),
            notified: true,
            outcome: PumpOutcome::default(),
        }
    }

    /// 15m candles from `t`: price rises 0.5 per candle for 4 h, then falls 1 per candle.
    fn path(t: i64, n: i64) -> Vec<Candle> {
        (0..n)
            .map(|i| {
                let close =
                    if i < 16 { 100.0 + 0.5 * (i + 1) as f64 } else { 108.0 - (i - 15) as f64 };
                Candle { open_time: t + i * CANDLE, high: close + 0.25, low: close - 0.75, close }
            })
            .collect()
    }

    #[test]
    fn windows_fill_as_time_passes() {
        let t = 1_700_000_100_000 - 1_700_000_100_000 % CANDLE;
        let a = alert(t);
        let early = outcome_of(&a, &path(t, 4), t + HOUR);
        assert_eq!(early.price_1h_after, None, "the candle containing t+1h is still open");
        let one = outcome_of(&a, &path(t, 5), t + HOUR + CANDLE);
        assert_eq!(one.price_1h_after, Some(102.5), "close of the candle containing t+1h");
        assert_eq!(one.mfe_1h_pct, Some(2.25), "highest high of the first 4 candles");
        assert_eq!(one.mae_1h_pct, Some(-0.25));
        assert!(one.price_4h_after.is_none() && !one.is_complete());

        let day = outcome_of(&a, &path(t, 97), t + 25 * HOUR);
        assert!(day.is_complete());
        assert_eq!(day.mfe_4h_pct, Some(8.25));
        assert_eq!(day.reached_5pct, Some(true));
        assert_eq!(day.reached_10pct, Some(false));
        assert_eq!(day.reversed, Some(true), "it fell below the ignition open of 96");
        assert_eq!(day.price_24h_after, Some(108.0 - 81.0));
    }
}
