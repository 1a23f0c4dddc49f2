//! Random walks with a real series' calendar, volume and volatility: the same market without
//! its structure.

use super::rows::Row;

/// Price steps per hour of a walk: its highs and lows come from a path, not from the close.
const SUBSTEPS: usize = 12;

/// Standard deviation of the close-to-close log returns.
fn log_return_sd(rows: &[Row]) -> f64 {
    let returns: Vec<f64> = rows.windows(2).map(|w| (w[1].close / w[0].close).ln()).collect();
    let n = returns.len().max(1) as f64;
    let mean = returns.iter().sum::<f64>() / n;
    (returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt()
}

/// A Gaussian random walk with `like`'s timestamps, volume column, first open and hourly
/// log-return volatility: the same calendar and activity without the market's structure.
pub fn random_walk(like: &[Row], seed: u64) -> Vec<Row> {
    let open = like.first().map_or(1.0, |r| r.open);
    walk(like, open, log_return_sd(like), seed)
}

/// A Gaussian random walk on `calendar`'s timestamps and volume column, from `open`, with
/// `candle_sd` as the standard deviation of its candle-to-candle log returns. Each candle is
/// [`SUBSTEPS`] steps, so highs and lows are those of a path. Deterministic in `seed`
/// (splitmix64 and Box–Muller, no RNG crate).
pub fn walk(calendar: &[Row], open: f64, candle_sd: f64, seed: u64) -> Vec<Row> {
    let step_sd = candle_sd / (SUBSTEPS as f64).sqrt();
    // splitmix64: the state advances by a fixed odd step and each output is its hash; the
    // seed is hashed into the start so two seeds do not walk the same sequence shifted.
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut state = mix(seed ^ 0x5EED_5EED_5EED_5EED);
    let mut uniform = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        // In (0, 1]: the logarithm below never sees 0.
        ((mix(state) >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    };
    let mut price = open;
    let mut out = Vec::with_capacity(calendar.len());
    for candle in calendar {
        let open = price;
        let (mut high, mut low) = (open, open);
        for _ in 0..SUBSTEPS {
            let normal =
                (-2.0 * uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * uniform()).cos();
            price *= (normal * step_sd).exp();
            high = high.max(price);
            low = low.min(price);
        }
        let round = |p: f64| (p * 1e6).round() / 1e6;
        out.push(Row {
            time: candle.time.clone(),
            open: round(open),
            high: round(high),
            low: round(low),
            close: round(price),
            volume: candle.volume,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(time: &str, close: f64) -> Row {
        Row { time: time.into(), open: close, high: close, low: close, close, volume: 7.0 }
    }

    #[test]
    fn random_walk_keeps_calendar_volume_and_volatility() {
        // A zigzag with 1 % hourly moves.
        let like: Vec<Row> = (0..4000)
            .map(|i| row(&format!("t{i}"), if i % 2 == 0 { 100.0 } else { 101.0 }))
            .collect();
        let walk = random_walk(&like, 1);
        assert_eq!(walk.len(), like.len());
        assert!(walk.iter().zip(&like).all(|(w, l)| w.time == l.time && w.volume == 7.0));
        assert!(walk.iter().all(|w| w.low <= w.open.min(w.close) && w.high >= w.open.max(w.close)));
        let (want, got) = (log_return_sd(&like), log_return_sd(&walk));
        assert!((got / want - 1.0).abs() < 0.1, "sd {got} vs {want}");
        assert_eq!(random_walk(&like, 1), walk, "deterministic");
        // Another seed is another path, not the same one shifted by a few draws.
        let other = random_walk(&like, 3);
        let shifted = (0..8).any(|k| other[k..].iter().zip(&walk).all(|(a, b)| a.close == b.close));
        assert!(!shifted);
    }
}
