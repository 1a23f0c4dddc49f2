//! The gauges a one-timeframe checklist usually reads beside its own indicators: momentum
//! (RSI), trend strength (ADX), volatility for the stop (ATR) and the last candle's volume
//! against its mean. Computed once here, with the same periods, so two strategies that read
//! them can not drift apart on a period or on which candles count.

use crate::indicators::{self as ind, last_finite};
use crate::{Checklist, ClosedCandles, ScanResult};

/// RSI, ADX, ATR and volume ratio of the last closed candle, each `None` when it does not
/// exist (too little history) or is not a finite number (bad input data): a check that reads a
/// missing value fails.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Oscillators {
    /// RSI([`Oscillators::RSI_PERIOD`]).
    pub rsi: Option<f64>,
    /// ADX([`Oscillators::ADX_PERIOD`]).
    pub adx: Option<f64>,
    /// The last volume over the mean of the [`Oscillators::VOLUME_PERIOD`] before it.
    pub vol_ratio: Option<f64>,
    /// ATR([`Oscillators::ATR_PERIOD`]), in price units.
    pub atr: Option<f64>,
}

impl Oscillators {
    /// Periods of the Wilder-type gauges (TA-Lib's classic values).
    pub const RSI_PERIOD: usize = 14;
    pub const ADX_PERIOD: usize = 14;
    pub const ATR_PERIOD: usize = 14;
    /// Candles of the volume mean the last candle is compared with.
    pub const VOLUME_PERIOD: usize = 20;

    /// Every gauge over all the closed candles (Wilder-type indicators remember history, so
    /// the window is the manifest's fixed count).
    pub fn compute(bars: ClosedCandles<'_>) -> Oscillators {
        let ClosedCandles { high, low, close, volume, .. } = bars;
        Oscillators {
            rsi: last_finite(&ind::rsi(close, Self::RSI_PERIOD)),
            adx: last_finite(&ind::adx(high, low, close, Self::ADX_PERIOD)),
            vol_ratio: last_finite(&ind::volume_ratio(volume, Self::VOLUME_PERIOD)),
            atr: last_finite(&ind::atr(high, low, close, Self::ATR_PERIOD)),
        }
    }

    /// Adds the volume line `name`: the ratio at least `min`, worded the same in every strategy
    /// (`volume 1.30x the 20-candle mean >= 1.00x`).
    pub fn check_volume(&self, list: &mut Checklist, name: &str, min: f64) -> bool {
        list.check_value(
            name,
            self.vol_ratio,
            |v| v >= min,
            |v| format!("volume {v:.2}x the {}-candle mean >= {min:.2}x", Self::VOLUME_PERIOD),
        )
    }

    /// Shows the gauges the result has fields for (`rsi`, `adx`, `vol_ratio`; ATR has none:
    /// it shows in the stop).
    pub fn report(&self, result: &mut ScanResult) {
        result.rsi = self.rsi;
        result.adx = self.adx;
        result.vol_ratio = self.vol_ratio;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, contract::NOW};

    #[test]
    fn each_gauge_is_the_last_finite_value_of_its_indicator() {
        let c = testing::candles(3, "1h", 60, 100.0, 0.001, NOW);
        let g = Oscillators::compute(c.closed(NOW, 1).unwrap());
        let atr = ind::atr(&c.high, &c.low, &c.close, 14);
        assert_eq!(g.atr, atr.last().copied());
        assert!(g.rsi.is_some() && g.adx.is_some() && g.vol_ratio.is_some(), "{g:?}");
        let mut r = ScanResult::new("X", "x", crate::Direction::Skip, 1.0);
        g.report(&mut r);
        assert_eq!((r.rsi, r.adx, r.vol_ratio), (g.rsi, g.adx, g.vol_ratio));
        let mut list = Checklist::new();
        let spike = Oscillators { vol_ratio: Some(1.3), ..g };
        assert!(spike.check_volume(&mut list, "volume", 1.0));
        assert_eq!(list.checks()[0].detail, "volume 1.30x the 20-candle mean >= 1.00x");
    }

    #[test]
    fn too_little_history_is_none_not_nan() {
        let c = testing::candles(3, "1h", 10, 100.0, 0.0, NOW);
        assert_eq!(Oscillators::compute(c.closed(NOW, 1).unwrap()), Oscillators::default());
    }
}
