//! The account's equity, its high-water mark, the drawdown and the open positions' unrealised
//! pnl, set whenever the drawdown watch measures them (the scheduler's `drawdown_check` every
//! minute, or `GET /api/protection`). A measurement needs the exchange's balances and prices,
//! which a scrape must never spend request weight on, so the gauges show the last measurement
//! and `spotbot_equity_measured_timestamp_seconds` says when it was taken.

use chrono::{DateTime, Utc};
use metrics::Recorder;

use super::{EquityReading, Metrics};

const EQUITY: &str = "spotbot_equity";
const HIGH_WATER_MARK: &str = "spotbot_equity_high_water_mark";
const DRAWDOWN: &str = "spotbot_drawdown_ratio";
const UNREALISED: &str = "spotbot_unrealised_pnl";
const MEASURED: &str = "spotbot_equity_measured_timestamp_seconds";

pub(super) fn describe(recorder: &impl Recorder) {
    let gauges = [
        (
            EQUITY,
            "Quote balance plus open positions at market, in the quote asset (last measurement)",
        ),
        (HIGH_WATER_MARK, "Highest equity since the first measurement or the last resume"),
        (DRAWDOWN, "Fall of equity below its high-water mark, 0 to 1 (0.15 is 15 %)"),
        (UNREALISED, "Pnl of the open positions at their last prices, before exit fees"),
        (MEASURED, "Unix time of the last equity measurement"),
    ];
    for (name, help) in gauges {
        recorder.describe_gauge(name.into(), None, help.into());
    }
}

/// Sets the gauges from a successful measurement (a failed one leaves the last values and
/// their timestamp: the caller records only what it measured).
pub(super) fn record(metrics: &Metrics, reading: EquityReading, at: DateTime<Utc>) {
    metrics.gauge(EQUITY, vec![]).set(reading.equity);
    if let Some(mark) = reading.high_water_mark {
        metrics.gauge(HIGH_WATER_MARK, vec![]).set(mark);
    }
    if let Some(pct) = reading.drawdown_pct {
        metrics.gauge(DRAWDOWN, vec![]).set(pct / 100.0);
    }
    metrics.gauge(UNREALISED, vec![]).set(reading.unrealised_pnl);
    metrics.gauge(MEASURED, vec![]).set(at.timestamp_millis() as f64 / 1000.0);
}
