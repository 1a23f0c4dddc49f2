//! One symbol's scan: housekeeping of its memory, then stage 2 (if a watch is open), then
//! stage 1, all on the newest closed candle only. A pump is reported as it happens, not
//! retroactively: a candle no scan saw as the newest closed one is never alerted.

use crate::alert::{self, SignalExtras};
use crate::config::Config;
use crate::memory::{Alerted, Watch, candles_between};
use crate::metrics::{CandleMetrics, Indicators, candle_metrics};
use crate::series::{self, ByOpenTime, clock_latest_closed};
use crate::stages;
use crate::{MIN_CLOSED_CANDLES, TIMEFRAME};
use spotbot_sdk::{ClosedCandles, ScannerAlert, Stage, SymbolData};

/// What the scan decided for one symbol: at most one alert, and the symbol's memory after it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decision {
    pub alert: Option<ScannerAlert>,
    pub watch: Option<Watch>,
    pub alerted: Option<Alerted>,
    /// Whether a new watch was opened (for the watch cap).
    pub opened_watch: bool,
}

/// Decides one symbol. `watch` / `alerted` are its memory from the state; `may_open_watch`
/// is false once the state holds [`crate::memory::MAX_WATCHES`] watches.
pub fn decide(
    config: &Config,
    data: &SymbolData,
    reference: Option<&ClosedCandles<'_>>,
    now_ms: i64,
    watch: Option<Watch>,
    alerted: Option<Alerted>,
    may_open_watch: bool,
) -> Decision {
    let series = data.candles(TIMEFRAME).and_then(|c| series::closed(c, now_ms));
    let latest = series.map_or_else(|| clock_latest_closed(now_ms), |s| s.last_open_time());
    let expiry = i64::from(config.stage2_expiry_candles);

    // Housekeeping: an alert about an older candle no longer blocks anything; a watch whose
    // follow-through window is over expires.
    let mut d = Decision {
        alert: None,
        watch: watch.filter(|w| candles_between(w.open_time, latest) <= expiry),
        alerted: alerted.filter(|a| a.open_time >= latest),
        opened_watch: false,
    };

    // Per-symbol skips: too little data or not liquid enough means no alert, memory kept.
    let liquid = data.quote_volume_24h >= config.scan.min_quote_volume_usd;
    let Some(series) = series.filter(|s| s.len() >= MIN_CLOSED_CANDLES && liquid) else {
        return d;
    };
    let indicators = Indicators::new(&series);
    let Some(m) = candle_metrics(&series, &indicators, reference, series.len() - 1) else {
        return d;
    };
    let already_alerted = d.alerted.as_ref().is_some_and(|a| a.open_time == m.open_time);
    let price = if data.last_price.is_finite() && data.last_price > 0.0 {
        data.last_price
    } else {
        m.close
    };

    // Stage 2: an open watch looks for follow-through on each newer closed candle.
    if let Some(w) = d.watch.clone() {
        let k = candles_between(w.open_time, m.open_time);
        if k < 1 {
            // The ignition is still the newest closed candle (or the data lags): wait.
            return d;
        }
        let ft = stages::follow_through(config, &w, &m);
        if ft.pass && !already_alerted {
            let extras =
                SignalExtras { follow_vol_ratio: ft.follow_vol_ratio, candles_since_ignition: k };
            let built = alert::build(
                &data.symbol,
                Stage::PumpSignal,
                stages::signal_confidence(ft.points),
                price,
                data.quote_volume_24h,
                &m,
                ft.late_atr,
                &w,
                Some(extras),
            );
            if let Some(a) = built {
                d.alert = Some(a);
                d.watch = None;
                d.alerted = Some(alerted_now(Stage::PumpSignal, &m));
                return d;
            }
        }
        if k < expiry {
            return d;
        }
        // The last candle of the window brought no follow-through: the watch expires, and this
        // candle may start a new pump below.
        d.watch = None;
    }

    // Stage 1: is the newest closed candle an ignition?
    if already_alerted {
        return d;
    }
    let ig = stages::ignition(config, &m);
    if !ig.pass {
        return d;
    }
    let new_watch = Watch {
        open_time: m.open_time,
        open: m.open,
        high: m.high,
        low: m.low,
        close: m.close,
        volume: m.volume,
        base: m.base_before,
        base_volume: m.mean_volume_before,
        points: ig.points,
    };
    let built = alert::build(
        &data.symbol,
        Stage::PumpWatch,
        stages::watch_confidence(ig.points),
        price,
        data.quote_volume_24h,
        &m,
        ig.late_atr,
        &new_watch,
        None,
    );
    if let Some(a) = built {
        d.alert = Some(a);
        d.alerted = Some(alerted_now(Stage::PumpWatch, &m));
        if may_open_watch {
            d.watch = Some(new_watch);
            d.opened_watch = true;
        }
    }
    d
}

fn alerted_now(stage: Stage, m: &CandleMetrics) -> Alerted {
    Alerted { stage: alert::stage_name(stage).to_string(), open_time: m.open_time }
}
