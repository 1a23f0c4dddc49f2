//! The two stage rules and the confidence rule, as pure functions of the metrics.
//!
//! - Stage 1, `pump_watch`, on the ignition candle: abnormal volume, a large strong green
//!   candle that beats the reference coin, and not already too far above its base.
//! - Stage 2, `pump_signal`, on a later candle within `stage2_expiry_candles`: volume stays
//!   elevated, price closes above the ignition close, the 1 h relative strength holds, and it is
//!   still not late.
//!
//! `rel_strength_1h` is a stage 2 requirement, not a stage 1 one: on the ignition candle the
//! hour is mostly the quiet time before the move, so requiring it there would delay the early
//! alert by design; once the move has had a candle or more to follow through, the hour window
//! covers it and must clearly beat the reference. On a watch it only adds a confidence point.

use crate::config::Config;
use crate::memory::Watch;
use crate::metrics::{CandleMetrics, late_atr};
use spotbot_sdk::ConfidenceLevel;

/// Outcome of the stage 1 rule on one candle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ignition {
    /// Whether every stage 1 condition holds.
    pub pass: bool,
    /// Close above the pre-ignition EMA(20) in ATR(14) units.
    pub late_atr: f64,
    /// Confidence points (see [`watch_points`]).
    pub points: u32,
}

/// Stage 1 on candle `m`: vol_ratio ≥ `vol_ratio_threshold`, candle_return_pct ≥
/// `candle_return_min_pct`, close_strength ≥ `close_strength_min`, rel_strength_15m ≥
/// `rel_strength_15m_min`, and late_atr = (close − EMA20 of the candle before) / ATR14 ≤
/// `late_entry_atr_mult`. Any `NaN` fails.
pub fn ignition(config: &Config, m: &CandleMetrics) -> Ignition {
    let late = late_atr(m.close, m.base_before, m.atr);
    let pass = m.vol_ratio >= config.vol_ratio_threshold
        && m.candle_return_pct >= config.candle_return_min_pct
        && m.close_strength >= config.close_strength_min
        && m.rel_strength_15m >= config.rel_strength_15m_min
        && late <= config.late_entry_atr_mult
        && m.mean_volume_before.is_finite();
    Ignition { pass, late_atr: late, points: watch_points(config, m) }
}

/// Outcome of the stage 2 rule on one candle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FollowThrough {
    /// Whether every stage 2 condition holds.
    pub pass: bool,
    /// Volume / the mean volume of the 20 candles before the ignition.
    pub follow_vol_ratio: f64,
    /// Close above the pre-ignition EMA(20) in ATR(14) units (ATR at this candle).
    pub late_atr: f64,
    /// Confidence points (see [`signal_points`]).
    pub points: u32,
}

/// Stage 2 on candle `m` (a later closed candle than the watch's ignition):
/// follow_vol_ratio = volume / pre-ignition mean volume ≥ `follow_vol_ratio_min`, close >
/// the ignition candle's close, rel_strength_1h ≥ `rel_strength_1h_min`, and late_atr =
/// (close − pre-ignition EMA20) / ATR14 ≤ `late_entry_atr_mult`. Any `NaN` fails.
pub fn follow_through(config: &Config, watch: &Watch, m: &CandleMetrics) -> FollowThrough {
    let follow_vol_ratio = if watch.base_volume.is_finite() && watch.base_volume > 0.0 {
        m.volume / watch.base_volume
    } else {
        f64::NAN
    };
    let late = late_atr(m.close, watch.base, m.atr);
    let pass = follow_vol_ratio >= config.follow_vol_ratio_min
        && m.close > watch.close
        && m.rel_strength_1h >= config.rel_strength_1h_min
        && late <= config.late_entry_atr_mult;
    let points = signal_points(config, watch, follow_vol_ratio, m.rel_strength_1h, late);
    FollowThrough { pass, follow_vol_ratio, late_atr: late, points }
}

/// Stage 1 confidence points, one each for: vol_ratio ≥ 2 × `vol_ratio_threshold`,
/// candle_return_pct ≥ 2 × `candle_return_min_pct`, rel_strength_15m ≥ 2 ×
/// `rel_strength_15m_min`, rel_strength_1h ≥ `rel_strength_1h_min`.
pub fn watch_points(config: &Config, m: &CandleMetrics) -> u32 {
    [
        m.vol_ratio >= 2.0 * config.vol_ratio_threshold,
        m.candle_return_pct >= 2.0 * config.candle_return_min_pct,
        m.rel_strength_15m >= 2.0 * config.rel_strength_15m_min,
        m.rel_strength_1h >= config.rel_strength_1h_min,
    ]
    .iter()
    .filter(|&&p| p)
    .count() as u32
}

/// Stage 2 confidence points, one each for: follow_vol_ratio ≥ 2 × `follow_vol_ratio_min`,
/// rel_strength_1h ≥ 2 × `rel_strength_1h_min`, late_atr ≤ `late_entry_atr_mult` / 2 (still
/// early in the move), and an ignition with at least 2 points.
pub fn signal_points(
    config: &Config,
    watch: &Watch,
    follow_vol_ratio: f64,
    rel_strength_1h: f64,
    late: f64,
) -> u32 {
    [
        follow_vol_ratio >= 2.0 * config.follow_vol_ratio_min,
        rel_strength_1h >= 2.0 * config.rel_strength_1h_min,
        late <= config.late_entry_atr_mult / 2.0,
        watch.points >= 2,
    ]
    .iter()
    .filter(|&&p| p)
    .count() as u32
}

/// A pump_watch is an unconfirmed early alert: low below 2 points, else medium (never high).
pub fn watch_confidence(points: u32) -> ConfidenceLevel {
    if points >= 2 { ConfidenceLevel::Medium } else { ConfidenceLevel::Low }
}

/// A pump_signal is confirmed: medium below 2 points, else high (never low).
pub fn signal_confidence(points: u32) -> ConfidenceLevel {
    if points >= 2 { ConfidenceLevel::High } else { ConfidenceLevel::Medium }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strong() -> CandleMetrics {
        CandleMetrics {
            open_time: 0,
            open: 100.0,
            high: 104.2,
            low: 99.9,
            close: 104.0,
            volume: 5000.0,
            vol_ratio: 5.0,
            candle_return_pct: 4.0,
            close_strength: 0.95,
            rel_strength_15m: 3.9,
            rel_strength_1h: 3.0,
            atr: 1.3,
            base_before: 100.0,
            mean_volume_before: 1000.0,
        }
    }

    fn watch() -> Watch {
        Watch {
            open_time: 0,
            open: 100.0,
            high: 104.2,
            low: 99.9,
            close: 104.0,
            volume: 5000.0,
            base: 100.0,
            base_volume: 1000.0,
            points: 0,
        }
    }

    #[test]
    fn each_stage1_condition_is_required() {
        let c = Config::default();
        let ok = ignition(&c, &strong());
        assert!(ok.pass);
        assert!((ok.late_atr - 4.0 / 1.3).abs() < 1e-12);
        assert_eq!(ok.points, 0);
        assert_eq!(watch_confidence(ok.points), ConfidenceLevel::Low);
        let tweaks: [fn(&mut CandleMetrics); 7] = [
            |m| m.vol_ratio = 2.9,
            |m| m.candle_return_pct = 2.4,
            |m| m.close_strength = 0.69,
            |m| m.rel_strength_15m = 1.9,
            |m| m.atr = 0.7, // 4 / 0.7 = 5.7 ATR: late
            |m| m.vol_ratio = f64::NAN,
            |m| m.base_before = f64::NAN,
        ];
        for tweak in tweaks {
            let mut m = strong();
            tweak(&mut m);
            assert!(!ignition(&c, &m).pass, "{m:?}");
        }
        // rel_strength_1h is not a stage 1 condition, only a confidence point.
        let mut m = strong();
        m.rel_strength_1h = -10.0;
        assert!(ignition(&c, &m).pass);
    }

    #[test]
    fn watch_points_and_confidence() {
        let c = Config::default();
        let mut m = strong();
        m.vol_ratio = 6.0;
        m.rel_strength_1h = 4.0;
        assert_eq!(watch_points(&c, &m), 2);
        assert_eq!(watch_confidence(2), ConfidenceLevel::Medium);
        m.candle_return_pct = 5.0;
        m.rel_strength_15m = 4.0;
        assert_eq!(watch_points(&c, &m), 4);
        assert_eq!(watch_confidence(4), ConfidenceLevel::Medium);
    }

    #[test]
    fn each_stage2_condition_is_required() {
        let c = Config::default();
        let mut m = strong();
        m.close = 105.0;
        m.volume = 2000.0;
        m.rel_strength_1h = 5.0;
        m.atr = 1.4;
        let ok = follow_through(&c, &watch(), &m);
        assert!(ok.pass);
        assert_eq!(ok.follow_vol_ratio, 2.0);
        assert_eq!(ok.points, 0);
        assert_eq!(signal_confidence(ok.points), ConfidenceLevel::Medium);
        let tweaks: [fn(&mut CandleMetrics); 5] = [
            |m| m.volume = 1400.0,
            |m| m.close = 104.0,
            |m| m.rel_strength_1h = 3.9,
            |m| m.atr = 0.9, // 5 / 0.9 = 5.6 ATR: late
            |m| m.rel_strength_1h = f64::NAN,
        ];
        for tweak in tweaks {
            let mut t = m;
            tweak(&mut t);
            assert!(!follow_through(&c, &watch(), &t).pass, "{t:?}");
        }
        let mut w = watch();
        w.base_volume = 0.0;
        assert!(!follow_through(&c, &w, &m).pass);
    }

    #[test]
    fn signal_points_and_confidence() {
        let c = Config::default();
        let mut w = watch();
        w.points = 2;
        assert_eq!(signal_points(&c, &w, 3.0, 8.0, 2.5), 4);
        assert_eq!(signal_points(&c, &w, 1.0, 1.0, 9.0), 1);
        assert_eq!(signal_points(&c, &w, f64::NAN, f64::NAN, f64::NAN), 1);
        assert_eq!(signal_confidence(1), ConfidenceLevel::Medium);
        assert_eq!(signal_confidence(2), ConfidenceLevel::High);
    }
}
