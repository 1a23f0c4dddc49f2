//! The candles of one role, reduced to closed bars and checked, so the rules never see a
//! still-forming candle, a NaN, a non-positive price or columns of different lengths.
//!
//! Only closed candles count: the host's last candle may still be forming, and a rule that
//! reads it would change its mind within the hour. A candle is closed when
//! `open_time + timeframe ≤ now_ms`.

use spotbot_sdk::{ScanError, SymbolData};

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
/// skip, returned as the inner `Err`. The SDK's closed-candle rule
/// ([`SymbolData::closed_candles`]: consistent columns, a known timeframe, increasing open
/// times, at least `min_len` closed candles, the newest fresh) plus its value checks
/// ([`spotbot_sdk::ClosedCandles::check_values`]), copied into owned [`Bars`].
pub fn closed_bars(
    data: &SymbolData,
    timeframe: &str,
    now_ms: i64,
    min_len: usize,
) -> Result<Result<Bars, Unusable>, ScanError> {
    let closed = data.closed_candles(timeframe, now_ms, min_len)?;
    Ok(closed.and_then(|c| c.check_values()).map(|c| Bars {
        timeframe: c.timeframe.to_string(),
        open: c.open.to_vec(),
        high: c.high.to_vec(),
        low: c.low.to_vec(),
        close: c.close.to_vec(),
        volume: c.volume.to_vec(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spotbot_sdk::{Candles, testing};

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
