//! The indicators of the last closed candle and the six checks of each side.
//!
//! A buy checks that an uptrend is in place and still has fuel; a sell (on spot: exit the coin
//! held) checks the mirror image, that the trend has turned down. The first two checks of a
//! side are its must-haves: without the EMA order and the close on the right side of the slow
//! EMA there is no trend to follow, whatever the oscillators say.

use spotbot_sdk::indicators::{self as ind, last_finite, nth_last};
use spotbot_sdk::sides::{Oscillators, Side};
use spotbot_sdk::{Checklist, ClosedCandles};

use crate::config::Config;

/// Checks per side.
pub const CHECKS: u32 = 6;
/// Periods of MACD (fast EMA, slow EMA, signal; TA-Lib's classic values).
pub const MACD: (usize, usize, usize) = (12, 26, 9);

/// The trend's values the checks read beside the SDK's [`Oscillators`], each `None` when it
/// does not exist (too little history) or is not a finite number (bad input data): a missing
/// value fails its check.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub close: Option<f64>,
    pub ema_fast: Option<f64>,
    pub ema_slow: Option<f64>,
    pub macd_hist: Option<f64>,
    pub macd_hist_prev: Option<f64>,
    /// RSI, ADX, volume ratio and ATR (the stop's unit).
    pub osc: Oscillators,
}

impl Snapshot {
    /// The EMAs, MACD and the oscillators over all the closed candles (the window is the
    /// manifest's fixed count, so EMA seeds and Wilder-type values are reproducible).
    pub fn compute(bars: ClosedCandles<'_>, config: &Config) -> Snapshot {
        let close = bars.close;
        let hist = ind::macd(close, MACD.0, MACD.1, MACD.2).hist;
        Snapshot {
            close: last_finite(close),
            ema_fast: last_finite(&ind::ema(close, config.ema_fast as usize)),
            ema_slow: last_finite(&ind::ema(close, config.ema_slow as usize)),
            macd_hist: last_finite(&hist),
            macd_hist_prev: nth_last(&hist, 1).filter(|v| v.is_finite()),
            osc: Oscillators::compute(bars),
        }
    }

    /// The side the EMAs lean to: the side whose checklist a skip shows.
    pub fn leaning(&self) -> Side {
        match (self.ema_fast, self.ema_slow) {
            (Some(fast), Some(slow)) if fast < slow => Side::Sell,
            _ => Side::Buy,
        }
    }
}

/// The checks of a side (the SDK's [`Side`]): their lines, their must-haves and their rule.
pub trait SideChecks {
    /// The must-have lines of this side, the first two of its checklist: without the EMA
    /// order and the close on the right side of the slow EMA there is no trend to follow.
    fn must_have(self) -> [&'static str; 2];

    /// Whether this side's checklist makes a signal: its must-haves pass and at least
    /// `min_passed` lines do.
    fn qualifies(self, list: &Checklist, min_passed: u32) -> bool;

    /// Why this side's checklist is not a signal: its score and the failing lines with their
    /// values.
    fn shortfall(self, list: &Checklist, min_passed: u32) -> String;

    /// The six checks of this side, must-haves first.
    fn checklist(self, s: &Snapshot, config: &Config) -> Checklist;
}

impl SideChecks for Side {
    fn must_have(self) -> [&'static str; 2] {
        match self {
            Side::Buy => ["ema_fast_above_slow", "close_above_slow_ema"],
            Side::Sell => ["ema_fast_below_slow", "close_below_slow_ema"],
        }
    }

    fn qualifies(self, list: &Checklist, min_passed: u32) -> bool {
        list.qualifies(&self.must_have(), min_passed)
    }

    fn shortfall(self, list: &Checklist, min_passed: u32) -> String {
        list.shortfall(self.as_str(), &self.must_have(), min_passed)
    }

    fn checklist(self, s: &Snapshot, config: &Config) -> Checklist {
        let buy = self == Side::Buy;
        let (fast_n, slow_n) = (config.ema_fast, config.ema_slow);
        let [ema_name, close_name] = self.must_have();
        let mut c = Checklist::new();
        let op = if buy { ">" } else { "<" };
        match s.ema_fast.zip(s.ema_slow) {
            Some((fast, slow)) => c.check(
                ema_name,
                if buy { fast > slow } else { fast < slow },
                format!("EMA{fast_n} {fast:.6} {op} EMA{slow_n} {slow:.6}"),
            ),
            None => c.check(ema_name, false, "n/a"),
        };
        match s.close.zip(s.ema_slow) {
            Some((close, slow)) => c.check(
                close_name,
                if buy { close > slow } else { close < slow },
                format!("close {close:.6} {op} EMA{slow_n} {slow:.6}"),
            ),
            None => c.check(close_name, false, "n/a"),
        };
        c.check_value(
            "adx_trending",
            s.osc.adx,
            |a| a >= config.adx_min,
            |a| format!("ADX {a:.1} >= {:.1}", config.adx_min),
        );
        let name = if buy { "macd_hist_positive_rising" } else { "macd_hist_negative_falling" };
        match s.macd_hist.zip(s.macd_hist_prev) {
            Some((h, prev)) => c.check(
                name,
                if buy { h > 0.0 && h > prev } else { h < 0.0 && h < prev },
                format!("MACD histogram {h:.6} (previous {prev:.6})"),
            ),
            None => c.check(name, false, "n/a"),
        };
        // A sell mirrors the buy band around 50: weak momentum, not yet capitulation.
        let (lo, hi) = if buy {
            (config.rsi_min, config.rsi_max)
        } else {
            (100.0 - config.rsi_max, 100.0 - config.rsi_min)
        };
        c.check_value(
            if buy { "rsi_healthy" } else { "rsi_weak" },
            s.osc.rsi,
            |r| (lo..=hi).contains(&r),
            |r| format!("RSI {r:.1} in {lo:.1}..={hi:.1}"),
        );
        s.osc.check_volume(&mut c, "volume", config.vol_ratio_min);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        Snapshot {
            close: Some(105.0),
            ema_fast: Some(104.0),
            ema_slow: Some(100.0),
            macd_hist: Some(0.5),
            macd_hist_prev: Some(0.4),
            osc: Oscillators {
                rsi: Some(62.0),
                adx: Some(30.0),
                vol_ratio: Some(1.3),
                atr: Some(1.0),
            },
        }
    }

    /// [`snapshot`] with RSI at `rsi`.
    fn with_rsi(rsi: f64) -> Snapshot {
        let s = snapshot();
        Snapshot { osc: Oscillators { rsi: Some(rsi), ..s.osc }, ..s }
    }

    #[test]
    fn a_healthy_uptrend_passes_every_buy_check_and_no_sell_check() {
        let config = Config::default();
        let buy = Side::Buy.checklist(&snapshot(), &config);
        assert_eq!((buy.passed(), buy.total()), (CHECKS, CHECKS), "{buy:?}");
        assert!(Side::Buy.qualifies(&buy, 5));
        let sell = Side::Sell.checklist(&snapshot(), &config);
        assert_eq!(sell.passed(), 2, "only ADX and volume: {sell:?}");
        assert!(!Side::Sell.qualifies(&sell, 1), "the must-haves fail");
        assert_eq!(snapshot().leaning(), Side::Buy);
    }

    #[test]
    fn must_haves_gate_and_missing_values_fail() {
        let config = Config::default();
        let below = Snapshot { close: Some(99.0), ..snapshot() };
        let buy = Side::Buy.checklist(&below, &config);
        assert_eq!(buy.passed(), 5);
        assert!(!Side::Buy.qualifies(&buy, 5), "close under the slow EMA is never a buy");
        let why = Side::Buy.shortfall(&buy, 5);
        assert!(
            why.starts_with(
                "no buy: 5/6 checks passed, need 5 including ema_fast_above_slow and \
                 close_above_slow_ema; failed: "
            ),
            "{why}"
        );
        assert!(why.contains("close_above_slow_ema (close 99.000000 > EMA50"), "{why}");

        let empty = Snapshot {
            close: None,
            ema_fast: None,
            ema_slow: None,
            macd_hist: None,
            macd_hist_prev: None,
            osc: Oscillators::default(),
        };
        let buy = Side::Buy.checklist(&empty, &config);
        assert_eq!((buy.passed(), buy.total()), (0, CHECKS));
        assert!(buy.checks().iter().all(|c| c.detail == "n/a"));
        assert_eq!(empty.leaning(), Side::Buy);
    }

    #[test]
    fn rsi_band_mirrors_for_a_sell() {
        let config = Config::default();
        let weak = with_rsi(35.0);
        let sell = Side::Sell.checklist(&weak, &config);
        assert!(sell.passed_named("rsi_weak"), "{sell:?}");
        let crashed = with_rsi(25.0);
        assert!(!Side::Sell.checklist(&crashed, &config).passed_named("rsi_weak"));
        let hot = with_rsi(75.0);
        assert!(!Side::Buy.checklist(&hot, &config).passed_named("rsi_healthy"));
    }
}
