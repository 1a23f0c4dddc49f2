//! Walk-forward windows: the run's steps cut into an in-sample part, where a window's
//! parameters are chosen, followed by an out-of-sample part, where they are only measured.
//!
//! With `n` windows and an in-sample share `f`, the steps are cut into units of one
//! out-of-sample length `u`: a rolling window's in-sample part is `f / (1 − f)` units long and
//! slides by one unit; an anchored window's in-sample part starts at the first step and grows
//! by one unit. The out-of-sample parts follow one another without gap or overlap, so
//! stitched together they cover the run after the first in-sample part, each step once. A
//! window's last in-sample step is the step before its first out-of-sample one: no step is
//! both (a replay's last step only closes what is open).

use anyhow::bail;
use serde::Serialize;

use super::super::replay::Span;

/// How the in-sample part moves from one window to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Walk {
    /// Always from the first step: each window learns from all the history before it.
    Anchored,
    /// A fixed length sliding forward: each window learns from recent history only.
    Rolling,
}

/// One walk-forward window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub in_sample: Span,
    pub out_of_sample: Span,
}

/// The windows over the steps `from_ms`, `from_ms + step_ms`, … up to `to_ms`.
pub fn windows(
    from_ms: i64,
    to_ms: i64,
    step_ms: i64,
    count: usize,
    in_sample_pct: f64,
    walk: Walk,
) -> anyhow::Result<Vec<Window>> {
    if count == 0 {
        bail!("--windows must be at least 1");
    }
    if !(in_sample_pct > 0.0 && in_sample_pct < 100.0) {
        bail!("--in-sample must be a percent between 0 and 100, got {in_sample_pct}");
    }
    let steps = (to_ms - from_ms) / step_ms.max(1) + 1;
    let ratio = in_sample_pct / (100.0 - in_sample_pct);
    let unit = (steps as f64 / (count as f64 + ratio)).floor() as i64;
    let in_sample_steps = (unit as f64 * ratio).floor() as i64;
    // Two steps at least on each side: a replay needs a step to act and one to close.
    if unit < 2 || in_sample_steps < 2 {
        bail!(
            "{steps} steps are too few for {count} window(s) with {in_sample_pct} % in sample: \
             widen --from/--to or ask for fewer windows"
        );
    }
    let at = |step: i64| from_ms + step * step_ms;
    let mut out = Vec::with_capacity(count);
    for k in 0..count as i64 {
        let oos_first = in_sample_steps + k * unit;
        let is_first = match walk {
            Walk::Anchored => 0,
            Walk::Rolling => k * unit,
        };
        out.push(Window {
            in_sample: Span { from_ms: at(is_first), to_ms: at(oos_first - 1) },
            out_of_sample: Span { from_ms: at(oos_first), to_ms: at(oos_first + unit - 1) },
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;

    fn steps(span: Span) -> std::ops::RangeInclusive<i64> {
        span.from_ms / H..=span.to_ms / H
    }

    #[test]
    fn out_of_sample_never_overlaps_in_sample_or_another_window() {
        for walk in [Walk::Anchored, Walk::Rolling] {
            for (count, pct) in [(1, 75.0), (4, 75.0), (5, 60.0), (3, 90.0)] {
                let ws = windows(0, 999 * H, H, count, pct, walk).unwrap();
                assert_eq!(ws.len(), count);
                let mut covered = std::collections::BTreeSet::new();
                for w in &ws {
                    let (is, oos) = (steps(w.in_sample), steps(w.out_of_sample));
                    assert!(is.end() < oos.start(), "{walk:?} {w:?}");
                    for s in oos.clone() {
                        assert!(covered.insert(s), "step {s} out of sample twice");
                    }
                    assert!(*oos.end() <= 999);
                }
                // Out-of-sample parts are contiguous.
                let all: Vec<_> = covered.into_iter().collect();
                assert!(all.windows(2).all(|p| p[1] == p[0] + 1));
            }
        }
    }

    #[test]
    fn rolling_slides_and_anchored_grows() {
        let rolling = windows(0, 99 * H, H, 4, 60.0, Walk::Rolling).unwrap();
        let anchored = windows(0, 99 * H, H, 4, 60.0, Walk::Anchored).unwrap();
        // 100 steps, 4 windows, ratio 1.5: unit 18, in-sample 27.
        assert_eq!(steps(rolling[0].in_sample), 0..=26);
        assert_eq!(steps(rolling[0].out_of_sample), 27..=44);
        assert_eq!(steps(rolling[3].in_sample), 54..=80);
        assert_eq!(steps(rolling[3].out_of_sample), 81..=98);
        assert_eq!(steps(anchored[3].in_sample), 0..=80);
        assert_eq!(anchored[3].out_of_sample, rolling[3].out_of_sample);
    }

    #[test]
    fn too_few_steps_or_bad_arguments_are_refused() {
        assert!(windows(0, 5 * H, H, 4, 75.0, Walk::Rolling).is_err());
        assert!(windows(0, 99 * H, H, 0, 75.0, Walk::Rolling).is_err());
        assert!(windows(0, 99 * H, H, 2, 100.0, Walk::Rolling).is_err());
        assert!(windows(0, 99 * H, H, 2, 0.0, Walk::Rolling).is_err());
    }
}
