//! The indicators of the last closed candle, the bracket of each side and the checks.
//!
//! A buy bets that a stretched price returns to its mean: the close at the lower Bollinger
//! band, RSI oversold, a ranging market (low ADX, where stretches do revert), a volume spike
//! and a bullish reversal candle, and a target (the middle band) worth the stop. A sell (on
//! spot: take profit on the coin held) is the stretch on the other side: the close at the
//! upper band with RSI overbought.

use spotbot_sdk::indicators::{self as ind, last_finite};
use spotbot_sdk::sides::{Oscillators, Side};
use spotbot_sdk::{Checklist, ClosedCandles};

use crate::config::Config;

/// Buy checks; the sell side has [`SELL_CHECKS`].
pub const BUY_CHECKS: u32 = 6;
pub const SELL_CHECKS: u32 = 2;
/// Buy checks that must pass whatever `min_passed` says: the setup itself, and a target worth
/// the risk.
pub const BUY_MUST_HAVE: [&str; 2] = ["at_lower_band", "reward_risk"];

/// The last closed candle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candle {
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
}

/// The stretch the checks measure: the last candle and where it sits against the bands, with
/// the SDK's [`Oscillators`] beside them. `None` where a value does not exist (too little
/// history) or is not finite (bad data), and a check reading it fails.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub candle: Option<Candle>,
    pub bb_lower: Option<f64>,
    pub bb_mid: Option<f64>,
    pub bb_upper: Option<f64>,
    /// RSI (oversold, overbought), ADX (a range), the volume spike and ATR (the stop's pad).
    pub osc: Oscillators,
}

impl Snapshot {
    /// The bands, the last candle and the oscillators over all the closed candles.
    pub fn compute(bars: ClosedCandles<'_>, config: &Config) -> Snapshot {
        let ClosedCandles { open, high, low, close, .. } = bars;
        let bands = ind::bollinger(close, config.bb_period as usize, config.bb_deviations);
        let candle = match (open.last(), high.last(), low.last(), close.last()) {
            (Some(&open), Some(&high), Some(&low), Some(&close)) => {
                Some(Candle { open, high, low, close })
            }
            _ => None,
        };
        Snapshot {
            candle: candle
                .filter(|c| [c.open, c.high, c.low, c.close].iter().all(|v| v.is_finite())),
            bb_lower: last_finite(&bands.lower),
            bb_mid: last_finite(&bands.middle),
            bb_upper: last_finite(&bands.upper),
            osc: Oscillators::compute(bars),
        }
    }

    /// The side whose checklist a skip shows: sell above the middle band, else buy.
    pub fn leaning(&self) -> Side {
        match (self.candle, self.bb_mid) {
            (Some(c), Some(mid)) if c.close > mid => Side::Sell,
            _ => Side::Buy,
        }
    }
}

/// Stop and target of an entry at `price`, percent of the price; positive when on the right
/// side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bracket {
    pub sl_pct: f64,
    pub tp_pct: f64,
}

impl Bracket {
    /// Target the middle band; stop `sl_atr_multiplier` ATR beyond the band the trade leans
    /// on, or beyond the entry when the entry is already past the band (so the stop is never
    /// on the wrong side of the entry).
    pub fn compute(side: Side, s: &Snapshot, config: &Config, price: f64) -> Option<Bracket> {
        let (mid, atr) = (s.bb_mid?, s.osc.atr?);
        let pad = config.sl_atr_multiplier * atr;
        let pct = |d: f64| d / price * 100.0;
        let b = match side {
            Side::Buy => Bracket {
                sl_pct: pct(price - (s.bb_lower?.min(price) - pad)),
                tp_pct: pct(mid - price),
            },
            Side::Sell => Bracket {
                sl_pct: pct(s.bb_upper?.max(price) + pad - price),
                tp_pct: pct(price - mid),
            },
        };
        (b.sl_pct.is_finite() && b.tp_pct.is_finite() && price > 0.0).then_some(b)
    }

    /// Reward/risk; 0 unless both distances are positive.
    pub fn rr(&self) -> f64 {
        if self.sl_pct > 0.0 && self.tp_pct > 0.0 { self.tp_pct / self.sl_pct } else { 0.0 }
    }
}

/// The six buy checks, in reading order.
pub fn buy_checklist(s: &Snapshot, config: &Config, bracket: Option<Bracket>) -> Checklist {
    let mut c = Checklist::new();
    let tol = config.band_tolerance_pct;
    match s.candle.zip(s.bb_lower) {
        Some((k, lower)) => c.check(
            "at_lower_band",
            k.close <= lower * (1.0 + tol / 100.0),
            format!("close {:.6} <= lower band {lower:.6} + {tol}%", k.close),
        ),
        None => c.check("at_lower_band", false, "n/a"),
    };
    c.check_value(
        "rsi_oversold",
        s.osc.rsi,
        |r| r <= config.rsi_oversold,
        |r| format!("RSI {r:.1} <= {:.1}", config.rsi_oversold),
    );
    c.check_value(
        "adx_ranging",
        s.osc.adx,
        |a| a < config.adx_max,
        |a| format!("ADX {a:.1} < {:.1}", config.adx_max),
    );
    s.osc.check_volume(&mut c, "volume_spike", config.vol_ratio_min);
    match s.candle {
        Some(k) => {
            let range = k.high - k.low;
            let position = if range > 0.0 { (k.close - k.low) / range } else { 0.0 };
            c.check(
                "bullish_reversal",
                k.close > k.open && position >= config.reversal_close_position,
                format!(
                    "open {:.6} close {:.6}, close at {position:.2} of the candle's range (>= {})",
                    k.open, k.close, config.reversal_close_position
                ),
            )
        }
        None => c.check("bullish_reversal", false, "n/a"),
    };
    match bracket {
        Some(b) => c.check(
            "reward_risk",
            b.rr() >= config.min_rr,
            format!(
                "rr {:.2} = target {:.3}% (middle band) / stop {:.3}% >= {}",
                b.rr(),
                b.tp_pct,
                b.sl_pct,
                config.min_rr
            ),
        ),
        None => c.check("reward_risk", false, "n/a"),
    };
    c
}

/// The two sell checks.
pub fn sell_checklist(s: &Snapshot, config: &Config) -> Checklist {
    let mut c = Checklist::new();
    let tol = config.band_tolerance_pct;
    match s.candle.zip(s.bb_upper) {
        Some((k, upper)) => c.check(
            "at_upper_band",
            k.close >= upper * (1.0 - tol / 100.0),
            format!("close {:.6} >= upper band {upper:.6} - {tol}%", k.close),
        ),
        None => c.check("at_upper_band", false, "n/a"),
    };
    c.check_value(
        "rsi_overbought",
        s.osc.rsi,
        |r| r >= config.rsi_overbought,
        |r| format!("RSI {r:.1} >= {:.1}", config.rsi_overbought),
    );
    c
}

/// The rule of a side (the SDK's [`Side`]) that makes its checklist a signal.
pub trait SideRule {
    /// Whether this side's checklist makes a signal.
    fn qualifies(self, list: &Checklist, config: &Config) -> bool;

    /// Why this side's checklist is no signal: its score, its rule and the failing lines with
    /// their values.
    fn shortfall(self, list: &Checklist, config: &Config) -> String;
}

/// The rule as `(must-haves, min_passed)` for [`Checklist::qualifies`]: a buy needs
/// [`BUY_MUST_HAVE`] and `min_passed` lines, a sell every line.
fn rule(side: Side, config: &Config) -> (&'static [&'static str], u32) {
    match side {
        Side::Buy => (&BUY_MUST_HAVE, config.min_passed),
        Side::Sell => (&[], SELL_CHECKS),
    }
}

impl SideRule for Side {
    fn qualifies(self, list: &Checklist, config: &Config) -> bool {
        let (must_have, min_passed) = rule(self, config);
        list.qualifies(must_have, min_passed)
    }

    fn shortfall(self, list: &Checklist, config: &Config) -> String {
        let (must_have, min_passed) = rule(self, config);
        list.shortfall(self.as_str(), must_have, min_passed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oversold() -> Snapshot {
        Snapshot {
            candle: Some(Candle { open: 94.0, high: 94.6, low: 93.5, close: 94.4 }),
            bb_lower: Some(94.5),
            bb_mid: Some(99.0),
            bb_upper: Some(103.5),
            osc: Oscillators {
                rsi: Some(24.0),
                adx: Some(18.0),
                vol_ratio: Some(2.0),
                atr: Some(1.0),
            },
        }
    }

    #[test]
    fn an_oversold_reversal_passes_every_buy_check() {
        let config = Config::default();
        let s = oversold();
        let b = Bracket::compute(Side::Buy, &s, &config, 94.4).unwrap();
        // Stop one ATR under the close (already under the band), target the middle band.
        assert!((b.sl_pct - 1.0 / 94.4 * 100.0).abs() < 1e-12, "{b:?}");
        assert!((b.tp_pct - 4.6 / 94.4 * 100.0).abs() < 1e-12, "{b:?}");
        let buy = buy_checklist(&s, &config, Some(b));
        assert_eq!((buy.passed(), buy.total()), (BUY_CHECKS, BUY_CHECKS), "{buy:?}");
        assert!(Side::Buy.qualifies(&buy, &config));
        let sell = sell_checklist(&s, &config);
        assert_eq!((sell.passed(), sell.total()), (0, SELL_CHECKS));
        assert_eq!(s.leaning(), Side::Buy);
    }

    #[test]
    fn must_haves_gate_the_buy() {
        let config = Config::default();
        // The stop (band − ATR) is further than the target: rr < 2 fails a must-have.
        let s = Snapshot { bb_mid: Some(95.5), ..oversold() };
        let b = Bracket::compute(Side::Buy, &s, &config, 94.4).unwrap();
        let buy = buy_checklist(&s, &config, Some(b));
        assert_eq!(buy.passed(), 5);
        assert!(!Side::Buy.qualifies(&buy, &config), "{buy:?}");
        // Bearish candle and no spike, but at the band with a good target: 4 of 6.
        let s = oversold();
        let s = Snapshot {
            candle: Some(Candle { open: 95.0, high: 95.1, low: 94.0, close: 94.4 }),
            osc: Oscillators { vol_ratio: Some(1.0), ..s.osc },
            ..s
        };
        let b = Bracket::compute(Side::Buy, &s, &config, 94.4);
        let buy = buy_checklist(&s, &config, b);
        assert_eq!(buy.passed(), 4);
        assert!(!Side::Buy.qualifies(&buy, &config));
        assert!(Side::Buy.qualifies(&buy, &Config { min_passed: 4, ..Config::default() }));
    }

    #[test]
    fn the_sell_mirrors_at_the_upper_band() {
        let config = Config::default();
        let s = oversold();
        let s = Snapshot {
            candle: Some(Candle { open: 104.0, high: 104.2, low: 103.2, close: 103.4 }),
            osc: Oscillators { rsi: Some(76.0), ..s.osc },
            ..s
        };
        assert_eq!(s.leaning(), Side::Sell);
        let sell = sell_checklist(&s, &config);
        assert!(Side::Sell.qualifies(&sell, &config), "{sell:?}");
        let b = Bracket::compute(Side::Sell, &s, &config, 103.4).unwrap();
        assert!((b.sl_pct - 1.1 / 103.4 * 100.0).abs() < 1e-12, "above the band: {b:?}");
        assert!((b.tp_pct - 4.4 / 103.4 * 100.0).abs() < 1e-12, "{b:?}");
    }

    #[test]
    fn missing_values_fail_their_lines() {
        let none = Snapshot {
            candle: None,
            bb_lower: None,
            bb_mid: None,
            bb_upper: None,
            osc: Oscillators::default(),
        };
        let config = Config::default();
        assert_eq!(Bracket::compute(Side::Buy, &none, &config, 1.0), None);
        let buy = buy_checklist(&none, &config, None);
        assert_eq!((buy.passed(), buy.total()), (0, BUY_CHECKS));
        assert!(buy.checks().iter().all(|c| c.detail == "n/a"));
        assert!(!Side::Sell.qualifies(&sell_checklist(&none, &config), &config));
    }
}
