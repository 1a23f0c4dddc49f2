//! The tier of a signal: three optional quality checks, evaluated only once every required
//! gate passed. They never block a trade; they grade it, and the host sizes the position by
//! the tier's risk multiplier (`risk_normal` / `risk_aplus` / `risk_aplusplus`).
//!
//! | quality checks passed | tier |
//! |---|---|
//! | 3 | `A++` |
//! | 2 | `A+` |
//! | 0–1 | `normal` |
//!
//! With 12 required lines and 3 quality lines a signal passes at least 12 of 15 (80 %), so the
//! host's confidence, round(10 × passed / total), is at least 8 for every signal.

use crate::line::{Line, Side};

/// A strong level: the edge the trade leans on was touched at least this often.
pub const QUALITY_TOUCHES: usize = 3;
/// Strong participation: volume ratio at least this multiple of `vol_increase_min`.
pub const QUALITY_VOLUME_FACTOR: f64 = 1.5;
/// Stretched: entry-timeframe RSI at most this for a buy ...
pub const QUALITY_RSI_BUY_MAX: f64 = 40.0;
/// ... at least this for a sell.
pub const QUALITY_RSI_SELL_MIN: f64 = 60.0;

/// The three quality lines.
pub fn lines(
    side: Side,
    touches: usize,
    vol_ratio: Option<f64>,
    vol_min: f64,
    rsi: Option<f64>,
) -> Vec<Line> {
    let touches_line = Line::new(
        "quality_touches",
        touches >= QUALITY_TOUCHES,
        format!("{} touched {touches} times (strong >= {QUALITY_TOUCHES})", side.edge()),
    );
    let strong_volume = QUALITY_VOLUME_FACTOR * vol_min;
    let volume_line = match vol_ratio {
        Some(r) => Line::new(
            "quality_volume",
            r >= strong_volume,
            format!("volume {r:.2}x (strong >= {strong_volume:.2}x)"),
        ),
        None => Line::new("quality_volume", false, "volume n/a"),
    };
    let rsi_line = match (rsi, side) {
        (Some(r), Side::Buy) => Line::new(
            "quality_rsi",
            r <= QUALITY_RSI_BUY_MAX,
            format!("RSI {r:.1} (stretched <= {QUALITY_RSI_BUY_MAX})"),
        ),
        (Some(r), Side::Sell) => Line::new(
            "quality_rsi",
            r >= QUALITY_RSI_SELL_MIN,
            format!("RSI {r:.1} (stretched >= {QUALITY_RSI_SELL_MIN})"),
        ),
        (None, _) => Line::new("quality_rsi", false, "RSI n/a"),
    };
    vec![touches_line, volume_line, rsi_line]
}

/// The tier label from the quality lines.
pub fn tier(quality: &[Line]) -> &'static str {
    match quality.iter().filter(|l| l.pass).count() {
        n if n >= 3 => "A++",
        2 => "A+",
        _ => "normal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers() {
        let all = lines(Side::Buy, 3, Some(1.8), 1.2, Some(40.0));
        assert!(all.iter().all(|l| l.pass), "{all:?}");
        assert_eq!(tier(&all), "A++");
        assert_eq!(tier(&lines(Side::Buy, 3, Some(1.79), 1.2, Some(35.0))), "A+");
        assert_eq!(tier(&lines(Side::Buy, 2, Some(1.79), 1.2, Some(35.0))), "normal");
        assert_eq!(tier(&lines(Side::Sell, 2, None, 1.2, None)), "normal");
        assert_eq!(tier(&lines(Side::Sell, 5, Some(3.0), 1.2, Some(60.0))), "A++");
        assert_eq!(tier(&lines(Side::Sell, 5, Some(3.0), 1.2, Some(59.9))), "A+");
    }
}
