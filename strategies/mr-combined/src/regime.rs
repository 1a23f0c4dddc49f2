//! Gate 2: the multi-timeframe regime. Mean reversion works when nothing is trending or
//! thrashing: the macro timeframe (1d) must not have just broken out of its range nor lean
//! against the trade, the regime timeframe (4h) must not trend (ADX), and the entry timeframe
//! (1h) must not be in volatile chop (ATR blown up with no net progress). The definitions are
//! the host's market-context ones (`docs/market-context.md`), computed here from the plugin's
//! own candles; the swing tolerance and the trend-now ADX line are this plugin's, derived in
//! its README ("Thresholds").

use spotbot_sdk::indicators::{atr, last, swing_highs, swing_lows};

use crate::data::Bars;
use crate::line::{Line, Side};
use spotbot_sdk::indicators::{efficiency_ratio, median};

/// Wilder ATR period on every timeframe.
pub const ATR_PERIOD: usize = 14;
/// Wilder ADX period on the regime timeframe.
pub const ADX_PERIOD: usize = 14;
/// ADX at or above this is a trend (the host's `ADX_TREND_MIN`, Wilder's classic line): the
/// range gate's median ADX over the window must stay below it, so the range as a whole was
/// trendless.
pub const ADX_TREND_MAX: f64 = 25.0;
/// The regime timeframe's ADX now must stay below this: a strong trend in progress, which
/// runs over the edge. Higher than [`ADX_TREND_MAX`] on purpose: the leg that carries the
/// price from one edge of a range to the other is itself directional for days, and the entry
/// comes at its end (EURUSD 4h, at the steps whose range and other regime lines passed: ADX
/// median 21, 75th percentile 27, 90th 35; 25 refused 31 % of them, 30 refuses 15 %). Above
/// 30 the move is more than a leg (README, "Thresholds").
pub const ADX_STRONG_TREND: f64 = 30.0;
/// The macro dealing range: highest high and lowest low of this many bars ...
pub const MACRO_RANGE_BARS: usize = 50;
/// ... ending this many bars before the last closed bar, so a last close outside it is a
/// fresh break (the host's `RANGE_BARS` / `BREAK_BARS`).
pub const MACRO_BREAK_BARS: usize = 3;
/// Bars on each side of a fractal swing (the host's `SWING_SIDE`).
pub const SWING_SIDE: usize = 2;
/// Two swings closer than this many macro ATR(14) are "equal" (a double top or bottom, the
/// signature of a range), not a higher or lower one: a daily fractal two bars wide is one
/// day's noise, and a phase read from noise blocked buys half the time on real data.
pub const SWING_TOLERANCE_ATR: f64 = 0.5;
/// Volatile chop: entry-timeframe ATR at least this multiple of its median over the last
/// [`CHOP_MEDIAN_BARS`] ATR values ...
pub const CHOP_ATR_RATIO: f64 = 1.5;
/// ATR values the chop median spans, about 8 days of 1h. A fixed span rather than "every
/// candle given", and only values Wilder's smoothing has settled ([`ATR_SETTLE`] candles after
/// its seed): with more history (a larger `scan_limit_1h`, or `spotbot check-bias`'s longer
/// warm-up) the median of every candle given moved, and the same hour decided chop
/// differently in 60 of 300 steps; with the seed's first 100 values in the span, still in 1
/// (ATR 1.49x against 1.51x its median; docs/backtest.md, "Bias checks").
pub const CHOP_MEDIAN_BARS: usize = 185;
/// Candles after the ATR's seed before its values count in the chop median: the seed's
/// weight decays by 13/14 a candle, to below 1e-3 after 100.
pub const ATR_SETTLE: usize = 100;
/// ... and Kaufman's efficiency ratio of the last [`CHOP_ER_BARS`] closes below this.
pub const CHOP_ER_MAX: f64 = 0.3;
pub const CHOP_ER_BARS: usize = 20;

/// The macro phase from swing structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Higher high and higher low.
    Bull,
    /// Lower high and lower low.
    Bear,
    /// Anything else, or fewer than two swings of each kind.
    Range,
}

impl Phase {
    fn as_str(self) -> &'static str {
        match self {
            Phase::Bull => "bull",
            Phase::Bear => "bear",
            Phase::Range => "range",
        }
    }
}

/// The macro read of the last closed bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Macro {
    pub phase: Phase,
    pub range_low: f64,
    pub range_high: f64,
    pub close: f64,
}

impl Macro {
    /// Needs at least `MACRO_RANGE_BARS + MACRO_BREAK_BARS` bars (`None` otherwise).
    pub fn read(bars: &Bars) -> Option<Macro> {
        let n = bars.len();
        let end = n.checked_sub(MACRO_BREAK_BARS)?;
        let start = end.checked_sub(MACRO_RANGE_BARS)?;
        let range_high = bars.high[start..end].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let range_low = bars.low[start..end].iter().copied().fold(f64::INFINITY, f64::min);
        let last_two = |idx: Vec<usize>, col: &[f64]| match idx.as_slice() {
            [.., a, b] => Some((col[*a], col[*b])),
            _ => None,
        };
        let highs = last_two(swing_highs(&bars.high, SWING_SIDE, SWING_SIDE), &bars.high);
        let lows = last_two(swing_lows(&bars.low, SWING_SIDE, SWING_SIDE), &bars.low);
        let tolerance = last(&atr(&bars.high, &bars.low, &bars.close, ATR_PERIOD)).unwrap_or(0.0)
            * SWING_TOLERANCE_ATR;
        let phase = match (highs, lows) {
            (Some((h1, h2)), Some((l1, l2))) if h2 - h1 > tolerance && l2 - l1 > tolerance => {
                Phase::Bull
            }
            (Some((h1, h2)), Some((l1, l2))) if h1 - h2 > tolerance && l1 - l2 > tolerance => {
                Phase::Bear
            }
            _ => Phase::Range,
        };
        Some(Macro { phase, range_low, range_high, close: bars.close[n - 1] })
    }

    /// Consistent with a mean-reversion trade on `side`: the last close is inside the dealing
    /// range (no fresh breakout either way) and the phase does not lean against the trade (no
    /// buying supports of a bear phase, no selling resistances of a bull phase).
    pub fn line(&self, tf: &str, side: Side) -> Line {
        let width = self.range_high - self.range_low;
        let position = if width > 0.0 { (self.close - self.range_low) / width } else { 0.5 };
        let where_ = format!(
            "{tf} close {:.6} at {:.2} of its {MACRO_RANGE_BARS}-bar range {:.6}-{:.6}",
            self.close, position, self.range_low, self.range_high
        );
        let against =
            matches!((self.phase, side), (Phase::Bear, Side::Buy) | (Phase::Bull, Side::Sell));
        let (pass, why) = if self.close > self.range_high {
            (false, "broken out upwards")
        } else if self.close < self.range_low {
            (false, "broken out downwards")
        } else if against {
            (false, "phase against the trade")
        } else {
            (true, "inside")
        };
        Line::new(
            "regime_macro",
            pass,
            format!("{where_} ({why}); phase {} for a {}", self.phase.as_str(), side.as_str()),
        )
    }
}

/// The regime timeframe must not trend strongly: ADX below [`ADX_STRONG_TREND`].
pub fn trend_line(tf: &str, adx: Option<f64>) -> Line {
    match adx {
        Some(a) if a < ADX_STRONG_TREND => {
            Line::new("regime_trend", true, format!("{tf} ADX {a:.1} < {ADX_STRONG_TREND}"))
        }
        Some(a) => Line::new(
            "regime_trend",
            false,
            format!("{tf} ADX {a:.1} >= {ADX_STRONG_TREND} (trend)"),
        ),
        None => Line::new("regime_trend", false, format!("{tf} ADX n/a")),
    }
}

/// The entry timeframe's chop read.
#[derive(Debug, Clone, PartialEq)]
pub struct Chop {
    /// Last ATR over the median of the last [`CHOP_MEDIAN_BARS`] ATR values (0 when the
    /// median is 0).
    pub atr_ratio: f64,
    /// Efficiency ratio of the last [`CHOP_ER_BARS`] closes (0 when flat).
    pub efficiency: f64,
}

impl Chop {
    /// `atr` is the entry timeframe's ATR series; `None` when its last value is undefined.
    pub fn read(bars: &Bars, atr: &[f64]) -> Option<Chop> {
        let now = last(atr)?;
        let recent = &atr[atr.len().saturating_sub(CHOP_MEDIAN_BARS)..];
        let atr_ratio = median(recent).filter(|m| *m > 0.0).map_or(0.0, |m| now / m);
        let efficiency = efficiency_ratio(&bars.close, CHOP_ER_BARS).unwrap_or(0.0);
        Some(Chop { atr_ratio, efficiency })
    }

    pub fn is_chop(&self) -> bool {
        self.atr_ratio >= CHOP_ATR_RATIO && self.efficiency < CHOP_ER_MAX
    }

    /// Fails when the numbers are not finite (an overflow): "no chop" must be measured.
    pub fn line(&self, tf: &str) -> Line {
        if !(self.atr_ratio.is_finite() && self.efficiency.is_finite()) {
            return Line::new("regime_chop", false, format!("{tf} chop n/a"));
        }
        let numbers = format!(
            "{tf} ATR {:.2}x its median (chop >= {CHOP_ATR_RATIO}), efficiency {:.2} (chop < {CHOP_ER_MAX})",
            self.atr_ratio, self.efficiency
        );
        if self.is_chop() {
            Line::new("regime_chop", false, format!("{tf} volatile chop: {numbers}"))
        } else {
            Line::new("regime_chop", true, format!("no chop: {numbers}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(high: Vec<f64>, low: Vec<f64>, close: Vec<f64>) -> Bars {
        Bars {
            timeframe: "1d".into(),
            open: close.clone(),
            volume: vec![1.0; close.len()],
            high,
            low,
            close,
        }
    }

    #[test]
    fn the_chop_median_spans_the_declared_window_whatever_came_before() {
        // The entry candles asked for, less the forming one, hold the seed, the settling and
        // the span: every value in the median has forgotten the seed.
        assert_eq!(CHOP_MEDIAN_BARS, crate::COUNTS[2] as usize - 1 - ATR_PERIOD - ATR_SETTLE);
        assert!((13.0f64 / 14.0).powi(ATR_SETTLE as i32) < 1e-3);
        let flat = bars(vec![101.0; 30], vec![99.0; 30], vec![100.0; 30]);
        // 185 ATR values of 2.0 and the last at 3.0: 1.5x its median, whatever precedes them.
        let mut atr = vec![2.0; CHOP_MEDIAN_BARS - 1];
        atr.push(3.0);
        let given = Chop::read(&flat, &atr).unwrap().atr_ratio;
        let mut longer = vec![50.0; 400];
        longer.extend(&atr);
        assert_eq!(Chop::read(&flat, &longer).unwrap().atr_ratio, given);
        assert_eq!(given, 1.5);
    }

    #[test]
    fn macro_breakout_and_phase() {
        // A flat 10..20 range for 60 bars with alternating swings of equal height.
        let n = 60;
        let high: Vec<f64> = (0..n).map(|i| if i % 6 == 3 { 20.0 } else { 15.0 }).collect();
        let low: Vec<f64> = (0..n).map(|i| if i % 6 == 0 { 10.0 } else { 14.0 }).collect();
        let mut close = vec![14.5; n];
        let m = Macro::read(&bars(high.clone(), low.clone(), close.clone())).unwrap();
        assert_eq!((m.phase, m.range_low, m.range_high), (Phase::Range, 10.0, 20.0));
        assert!(m.line("1d", Side::Buy).pass && m.line("1d", Side::Sell).pass);
        close[n - 1] = 9.0;
        let m = Macro::read(&bars(high.clone(), low.clone(), close.clone())).unwrap();
        let l = m.line("1d", Side::Buy);
        assert!(!l.pass && l.detail.contains("broken out downwards"), "{}", l.detail);
        // Swings rising by 0.06 a cycle, well within half an ATR (about 2.5 here): equal
        // highs and lows, still a range.
        let drift = |col: &[f64], step: f64| -> Vec<f64> {
            col.iter().enumerate().map(|(i, v)| v + i as f64 * step).collect()
        };
        close[n - 1] = 15.0;
        let m = Macro::read(&bars(drift(&high, 0.01), drift(&low, 0.01), close.clone())).unwrap();
        assert_eq!(m.phase, Phase::Range);
        // Rising by 3 a cycle: higher highs and higher lows, bull; a sell leans against it.
        let m =
            Macro::read(&bars(drift(&high, 0.5), drift(&low, 0.5), drift(&close, 0.5))).unwrap();
        assert_eq!(m.phase, Phase::Bull);
        assert!(m.line("1d", Side::Buy).pass);
        assert!(!m.line("1d", Side::Sell).pass);
        assert!(Macro::read(&bars(vec![1.0; 52], vec![1.0; 52], vec![1.0; 52])).is_none());
    }

    #[test]
    fn trend_and_chop_lines() {
        assert!(trend_line("4h", Some(24.9)).pass);
        assert!(trend_line("4h", Some(29.9)).pass);
        assert_eq!(trend_line("4h", Some(38.24)).detail, "4h ADX 38.2 >= 30 (trend)");
        assert!(!trend_line("4h", None).pass);
        let c = Chop { atr_ratio: 2.0, efficiency: 0.1 };
        assert!(c.is_chop() && c.line("1h").detail.starts_with("1h volatile chop"));
        assert!(!Chop { atr_ratio: 2.0, efficiency: 0.5 }.is_chop());
        assert!(!Chop { atr_ratio: 1.2, efficiency: 0.1 }.is_chop());
    }
}
