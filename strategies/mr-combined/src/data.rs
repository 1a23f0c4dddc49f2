//! The candles of one role, reduced to closed bars and checked, so the rules never see a
//! still-forming candle, a NaN, a non-positive price or columns of different lengths.
//!
//! Only closed candles count: the host's last candle may still be forming, and a rule that
//! reads it would change its mind within the hour. A candle is closed when
//! `open_time + timeframe ≤ now_ms`.

use spotbot_sdk::testing::timeframe_ms;
use spotbot_sdk::{Candles, ScanError, SymbolData};

/// Closed candles of one role, oldest first, every value finite, prices > 0, high ≥ low,
/// volume ≥ 0, the newest closed less than one timeframe before `now_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub timeframe: String,
    pub open: Vec<f64>,
    pub high: Vec<f64>,
    pub low: Vec<f64>,
    pub close: Vec<f64>,
    pub volume: Vec<f64>,
}

impl Bars {
    pub fn len(&self) -> usize {
        self.close.len()
    }

    pub fn is_empty(&self) -> bool {
        self.close.is_empty()
    }
}

/// Why a role's data can not be used: becomes the `data: ...` skip reason.
pub type Unusable = String;

/// Finds the candles of `timeframe`. Absent altogether is an error of the whole scan (the host
/// must send what the manifest and config ask for); present but unusable is a per-symbol
/// skip, returned as the inner `Err`.
pub fn closed_bars(
    data: &SymbolData,
    timeframe: &str,
    now_ms: i64,
    min_len: usize,
) -> Result<Result<Bars, Unusable>, ScanError> {
    let candles = data.candles(timeframe).ok_or_else(|| {
        ScanError::MissingData(format!("{} {timeframe}: no candles", data.symbol))
    })?;
    Ok(check(candles, timeframe, now_ms, min_len))
}

fn check(c: &Candles, timeframe: &str, now_ms: i64, min_len: usize) -> Result<Bars, Unusable> {
    if !c.is_consistent() {
        return Err(format!("{timeframe} candle columns differ in length"));
    }
    let step = timeframe_ms(timeframe).ok_or_else(|| format!("{timeframe} is not a timeframe"))?;
    if c.open_time.windows(2).any(|w| w[1] <= w[0]) {
        return Err(format!("{timeframe} candles are not in time order"));
    }
    // Closed candles form a prefix: drop the trailing ones that have not closed at `now_ms`.
    let closed = c.open_time.iter().take_while(|&&t| t.saturating_add(step) <= now_ms).count();
    if closed < min_len {
        return Err(format!("{timeframe} has {closed} closed candles, need {min_len}"));
    }
    // The newest closed candle must be the one that closed last before `now_ms`: an older one
    // means the series stopped (an exchange outage, a delisting) and the setup is history.
    let last_close = c.open_time[closed - 1].saturating_add(step);
    if now_ms.saturating_sub(last_close) >= step {
        return Err(format!(
            "{timeframe} candles are stale: the last one closed {} min before now",
            now_ms.saturating_sub(last_close) / 60_000
        ));
    }
    let cut = |col: &[f64]| col[..closed].to_vec();
    let bars = Bars {
        timeframe: timeframe.to_string(),
        open: cut(&c.open),
        high: cut(&c.high),
        low: cut(&c.low),
        close: cut(&c.close),
        volume: cut(&c.volume),
    };
    let prices_ok = [&bars.open, &bars.high, &bars.low, &bars.close]
        .iter()
        .all(|col| col.iter().all(|v| v.is_finite() && *v > 0.0));
    let shape_ok = (0..closed).all(|i| {
        let (h, l) = (bars.high[i], bars.low[i]);
        h >= l && h >= bars.open[i].max(bars.close[i]) && l <= bars.open[i].min(bars.close[i])
    });
    let volume_ok = bars.volume.iter().all(|v| v.is_finite() && *v >= 0.0);
    if !(prices_ok && shape_ok && volume_ok) {
        return Err(format!("{timeframe} has a non-finite, non-positive or inconsistent value"));
    }
    Ok(bars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spotbot_sdk::testing;

    const NOW: i64 = 1_767_225_600_000;

    fn symbol(c: Candles) -> SymbolData {
        SymbolData {
            symbol: "X".into(),
            last_price: 1.0,
            quote_volume_24h: 0.0,
            candles: vec![c],
            market_context: None,
        }
    }

    #[test]
    fn drops_the_forming_candle_and_checks_values() {
        // Ends 30 minutes into the future: the last candle is still forming at NOW.
        let c = testing::candles(1, "1h", 10, 100.0, 0.0, NOW + 1_800_000);
        let bars = closed_bars(&symbol(c.clone()), "1h", NOW, 9).unwrap().unwrap();
        assert_eq!(bars.len(), 9);
        assert_eq!(bars.close[8], c.close[8]);
        assert!(closed_bars(&symbol(c.clone()), "1h", NOW, 10).unwrap().is_err());
        assert!(matches!(
            closed_bars(&symbol(c.clone()), "4h", NOW, 1),
            Err(ScanError::MissingData(_))
        ));

        let mut nan = c.clone();
        nan.low[3] = f64::NAN;
        assert!(closed_bars(&symbol(nan), "1h", NOW, 1).unwrap().is_err());
        let mut short = c.clone();
        short.volume.pop();
        assert!(closed_bars(&symbol(short), "1h", NOW, 1).unwrap().is_err());
        let mut unordered = c.clone();
        unordered.open_time.swap(0, 1);
        assert!(closed_bars(&symbol(unordered), "1h", NOW, 1).unwrap().is_err());

        // Ending two hours before now: stale.
        let old = testing::candles(1, "1h", 10, 100.0, 0.0, NOW - 2 * 3_600_000);
        let err = closed_bars(&symbol(old), "1h", NOW, 1).unwrap().unwrap_err();
        assert!(err.contains("stale"), "{err}");
        let fresh = testing::candles(1, "1h", 10, 100.0, 0.0, NOW - 3_599_999);
        assert!(closed_bars(&symbol(fresh), "1h", NOW, 1).unwrap().is_ok());
    }
}
