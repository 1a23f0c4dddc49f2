//! Two small statistics the SDK does not have (it has the TA-Lib indicators; these are not
//! TA-Lib functions). Same definitions as the host's market context
//! (`host/src/market/context/structure.rs`), so "volatile chop" means the same thing in both.

/// The median of the finite values (`None` when there are none).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len().is_multiple_of(2) { (v[m - 1] + v[m]) / 2.0 } else { v[m] })
}

/// Kaufman's efficiency ratio over the last `period` changes: |net change| / sum of |changes|;
/// 1 for a straight line, near 0 for back-and-forth. `None` when too short or flat.
pub fn efficiency_ratio(close: &[f64], period: usize) -> Option<f64> {
    if period == 0 || close.len() <= period {
        return None;
    }
    let w = &close[close.len() - 1 - period..];
    let path: f64 = w.windows(2).map(|p| (p[1] - p[0]).abs()).sum();
    (path > 0.0).then(|| (w[period] - w[0]).abs() / path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_efficiency_ratio() {
        assert_eq!(median(&[3.0, f64::NAN, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(median(&[]), None);
        assert_eq!(efficiency_ratio(&[1.0, 2.0, 3.0], 2), Some(1.0));
        assert_eq!(efficiency_ratio(&[1.0, 2.0, 1.0], 2), Some(0.0));
        assert_eq!(efficiency_ratio(&[1.0, 1.0, 1.0], 2), None);
        assert_eq!(efficiency_ratio(&[1.0, 2.0], 2), None);
    }
}
