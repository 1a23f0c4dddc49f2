//! The medium-timeframe read: ATR, ADX/DI, Bollinger width, the latest break of structure and
//! from those the regime, trend direction, BOS mode, trend age and compression bias.

use serde_json::json;
use spotbot_sdk::indicators::{atr, bb_width, bollinger, dmi, efficiency_ratio, last, median};

use super::structure::{BOS_MAX_AGE_BARS, Direction, MarketDirection, latest_bos, r, swings};
use super::{ADX_PERIOD, ATR_PERIOD, MtfContext};
use spotbot_sdk::{BosMode, Candles, Regime, TrendAge};

/// Bollinger bands: 20 bars, 2 standard deviations (TA-Lib defaults).
pub const BB_PERIOD: usize = 20;
pub const BB_DEVIATIONS: f64 = 2.0;
/// ADX at or above this is a trending market.
pub const ADX_TREND_MIN: f64 = 25.0;
/// ADX below this is a market without directional strength (needed for compression and chop).
pub const ADX_WEAK_MAX: f64 = 20.0;
/// Compression: Bollinger width at most this fraction of its median over the candles given.
pub const COMPRESSION_BBW_RATIO: f64 = 0.6;
/// Volatile chop: ATR at least this multiple of its median over the candles given ...
pub const CHOP_ATR_RATIO: f64 = 1.5;
/// ... with Kaufman's efficiency ratio over `CHOP_ER_BARS` closes below this (no net progress).
pub const CHOP_ER_MAX: f64 = 0.3;
pub const CHOP_ER_BARS: usize = 20;
/// Trend age: fresh while the close is less than this many ATR beyond the broken swing.
pub const FRESH_MAX_ATR: f64 = 5.0;
/// Compression bias: the close in the top (bottom) `BIAS_ZONE` of the last `BB_PERIOD` bars'
/// high–low range leans up (down).
pub const BIAS_ZONE: f64 = 0.4;

/// The MTF read plus the trend direction as a type, for the priority levels.
pub struct MtfRead {
    pub context: MtfContext,
    pub direction: Option<Direction>,
}

pub fn analyze(c: &Candles) -> MtfRead {
    let (high, low, close) = (&c.high[..], &c.low[..], &c.close[..]);
    let n = close.len();
    let price = close[n - 1];
    let atr_series = atr(high, low, close, ATR_PERIOD);
    let atr_val = last(&atr_series).unwrap_or(0.0);
    let atr_ratio = median(&atr_series).filter(|m| *m > 0.0).map_or(0.0, |m| atr_val / m);
    let dm = dmi(high, low, close, ADX_PERIOD);
    let (adx, plus_di, minus_di) = (
        last(&dm.adx).unwrap_or(0.0),
        last(&dm.plus_di).unwrap_or(0.0),
        last(&dm.minus_di).unwrap_or(0.0),
    );
    let bbw = bb_width(&bollinger(close, BB_PERIOD, BB_DEVIATIONS));
    let bbw_val = last(&bbw).unwrap_or(0.0);
    let bbw_ratio = median(&bbw).filter(|m| *m > 0.0).map_or(1.0, |m| bbw_val / m);
    let er = efficiency_ratio(close, CHOP_ER_BARS).unwrap_or(0.0);

    let sw = swings(high, low);
    let bos = latest_bos(high, low, close, &atr_series, &sw)
        .filter(|b| n - 1 - b.index <= BOS_MAX_AGE_BARS);
    let direction = bos.map(|b| b.direction);
    let age_atr = bos.map(|b| b.direction.sign() * (price - b.level) / atr_val);
    let bos_mode = match bos {
        Some(b) if b.confirmed => BosMode::Confirmed,
        Some(_) => BosMode::Quick,
        None => BosMode::None,
    };
    let trend_age = match age_atr {
        Some(a) if a < FRESH_MAX_ATR => TrendAge::Fresh,
        Some(_) => TrendAge::Extended,
        None => TrendAge::None,
    };

    let volatile_chop = atr_ratio >= CHOP_ATR_RATIO && adx < ADX_WEAK_MAX && er < CHOP_ER_MAX;
    let compressed = bbw_ratio <= COMPRESSION_BBW_RATIO && adx < ADX_WEAK_MAX;
    let di_agrees = match direction {
        Some(Direction::Up) => plus_di > minus_di,
        Some(Direction::Down) => minus_di > plus_di,
        None => false,
    };
    let regime = if volatile_chop {
        Regime::VolatileChop
    } else if compressed {
        Regime::Compression
    } else if adx >= ADX_TREND_MIN && di_agrees {
        Regime::Trend
    } else if direction.is_some() || adx >= ADX_TREND_MIN {
        Regime::Transition
    } else {
        Regime::Sideway
    };

    let recent = n.saturating_sub(BB_PERIOD)..n;
    let hi = high[recent.clone()].iter().copied().fold(f64::MIN, f64::max);
    let lo = low[recent].iter().copied().fold(f64::MAX, f64::min);
    let squeeze_fraction = if hi > lo { (price - lo) / (hi - lo) } else { 0.5 };
    let compression_bias = match regime {
        Regime::Compression if squeeze_fraction >= 1.0 - BIAS_ZONE => MarketDirection::Up,
        Regime::Compression if squeeze_fraction <= BIAS_ZONE => MarketDirection::Down,
        _ => MarketDirection::None,
    };

    let detail = json!({
        "candles": n,
        "close": r(price),
        "atr": r(atr_val),
        "atr_ratio": r(atr_ratio),
        "adx": r(adx),
        "plus_di": r(plus_di),
        "minus_di": r(minus_di),
        "bb_width": r(bbw_val),
        "bb_width_ratio": r(bbw_ratio),
        "efficiency_ratio": r(er),
        "bos_level": bos.map(|b| r(b.level)),
        "bos_bars_ago": bos.map(|b| n - 1 - b.index),
        "trend_age_atr": age_atr.map(r),
        "squeeze_fraction": r(squeeze_fraction),
    });
    let context = MtfContext {
        regime,
        trend_direction: direction.into(),
        bos_mode,
        trend_age,
        compression_bias,
        volatile_chop,
        atr_val,
        detail,
    };
    MtfRead { context, direction }
}
