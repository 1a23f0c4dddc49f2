//! Price-action building blocks shared by both timeframes: fractal swings, the latest break of
//! structure, medians and Kaufman's efficiency ratio. Pure functions over candle columns.

use serde::{Deserialize, Serialize};
use spotbot_sdk::indicators::{swing_highs, swing_lows};
use utoipa::ToSchema;

/// Bars on each side of a fractal swing (a swing high is strictly above the 2 highs before and
/// the 2 highs after it).
pub const SWING_SIDE: usize = 2;

/// A close beyond the broken swing by at least this many ATR (on the break bar or any close
/// after it) makes the break `confirmed`; less is a `quick` break.
pub const BOS_CONFIRM_ATR: f64 = 0.25;

/// A break of structure older than this many bars no longer gives a trend direction.
pub const BOS_MAX_AGE_BARS: usize = 50;

/// Up or down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
}

impl Direction {
    /// +1 for up, −1 for down: distances "in the direction" are `sign × (a − b)`.
    pub fn sign(self) -> f64 {
        match self {
            Direction::Up => 1.0,
            Direction::Down => -1.0,
        }
    }
}

/// A direction as the context reports it (`mtf.trend_direction`, `mtf.compression_bias`):
/// up, down or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MarketDirection {
    Up,
    Down,
    None,
}

impl MarketDirection {
    /// The spec's spelling, as plugins receive it (`wit/strategy.wit` keeps a string).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Up => "up",
            Self::Down => "down",
            Self::None => "none",
        }
    }
}

impl From<Option<Direction>> for MarketDirection {
    fn from(direction: Option<Direction>) -> Self {
        match direction {
            Some(Direction::Up) => Self::Up,
            Some(Direction::Down) => Self::Down,
            None => Self::None,
        }
    }
}

/// Confirmed swing highs and lows (indices, oldest first).
pub struct Swings {
    pub highs: Vec<usize>,
    pub lows: Vec<usize>,
}

pub fn swings(high: &[f64], low: &[f64]) -> Swings {
    Swings {
        highs: swing_highs(high, SWING_SIDE, SWING_SIDE),
        lows: swing_lows(low, SWING_SIDE, SWING_SIDE),
    }
}

/// Swing structure from the last two swing highs and lows: higher high and higher low is up,
/// lower high and lower low is down, anything else (or fewer than two of each) is no structure.
pub fn structure(high: &[f64], low: &[f64], swings: &Swings) -> Option<Direction> {
    let last_two = |idx: &[usize], col: &[f64]| match idx {
        [.., a, b] => Some((col[*a], col[*b])),
        _ => None,
    };
    let (h1, h2) = last_two(&swings.highs, high)?;
    let (l1, l2) = last_two(&swings.lows, low)?;
    if h2 > h1 && l2 > l1 {
        Some(Direction::Up)
    } else if h2 < h1 && l2 < l1 {
        Some(Direction::Down)
    } else {
        None
    }
}

/// A break of structure: a close beyond the most recent not-yet-broken swing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bos {
    pub direction: Direction,
    /// The bar whose close broke the swing.
    pub index: usize,
    /// The broken swing's price.
    pub level: f64,
    /// Whether some close from the break on went `BOS_CONFIRM_ATR` × ATR beyond the level.
    pub confirmed: bool,
}

/// The latest break of structure, walking the bars in order. A swing becomes known
/// `SWING_SIDE` bars after it formed; from then on it is the active level on its side until a
/// newer swing replaces it or a close breaks it (each swing is broken once). `atr` is the ATR
/// series used to measure the confirmation margin at the break bar.
pub fn latest_bos(
    high: &[f64],
    low: &[f64],
    close: &[f64],
    atr: &[f64],
    swings: &Swings,
) -> Option<Bos> {
    let (mut next_high, mut next_low) = (0, 0);
    let (mut active_high, mut active_low): (Option<f64>, Option<f64>) = (None, None);
    let mut latest: Option<(Direction, usize, f64)> = None;
    for (i, &c) in close.iter().enumerate() {
        while next_high < swings.highs.len() && swings.highs[next_high] + SWING_SIDE < i {
            active_high = Some(high[swings.highs[next_high]]);
            next_high += 1;
        }
        while next_low < swings.lows.len() && swings.lows[next_low] + SWING_SIDE < i {
            active_low = Some(low[swings.lows[next_low]]);
            next_low += 1;
        }
        if let Some(level) = active_high.filter(|l| c > *l) {
            latest = Some((Direction::Up, i, level));
            active_high = None;
        }
        if let Some(level) = active_low.filter(|l| c < *l) {
            latest = Some((Direction::Down, i, level));
            active_low = None;
        }
    }
    let (direction, index, level) = latest?;
    let margin = atr.get(index).copied().filter(|a| a.is_finite()).unwrap_or(0.0) * BOS_CONFIRM_ATR;
    let best =
        close[index..].iter().map(|c| direction.sign() * (c - level)).fold(f64::MIN, f64::max);
    Some(Bos { direction, index, level, confirmed: best >= margin })
}

/// Rounds for the `detail` objects (keeps the JSON readable, never used in a rule).
pub fn r(v: f64) -> f64 {
    if v.is_finite() { (v * 1e6).round() / 1e6 } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_above_the_last_swing_high_is_an_up_break() {
        // Swing high 5.0 at index 2, known from bar 5; bar 6 closes at 5.5.
        let high = [1.0, 2.0, 5.0, 3.0, 2.5, 2.6, 6.0];
        let low = [0.0, 1.0, 4.0, 2.0, 1.5, 1.6, 5.0];
        let close = [0.5, 1.5, 4.5, 2.5, 2.0, 2.1, 5.5];
        let atr = [1.0; 7];
        let s = swings(&high, &low);
        assert_eq!(s.highs, vec![2]);
        let bos = latest_bos(&high, &low, &close, &atr, &s).unwrap();
        assert_eq!(
            (bos.direction, bos.index, bos.level, bos.confirmed),
            (Direction::Up, 6, 5.0, true)
        );
        // Only 0.1 beyond with an ATR of 1: a quick break.
        let close = [0.5, 1.5, 4.5, 2.5, 2.0, 2.1, 5.1];
        assert!(!latest_bos(&high, &low, &close, &atr, &s).unwrap().confirmed);
    }
}
