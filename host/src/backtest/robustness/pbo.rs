//! The Probability of Backtest Overfitting (PBO) by Combinatorially Symmetric Cross-Validation
//! (CSCV): how often the configuration that looks best in sample is below the median out of
//! sample.
//!
//! David H. Bailey, Jonathan M. Borwein, Marcos López de Prado and Qiji Jim Zhu, "The
//! Probability of Backtest Overfitting", Journal of Computational Finance 20(4), 2017,
//! pp. 39-69.
//!
//! The T × N matrix of per-period returns (T periods, N trials) is cut by rows into S groups of
//! equal size. For each of the C(S, S/2) ways to choose S/2 groups as the in-sample (IS) set,
//! the other groups being out of sample (OOS):
//! - n* = the trial with the best IS performance;
//! - ω̄ = (rank of n*'s OOS performance among the N trials) / (N + 1), rank 1 the worst;
//! - λ = ln(ω̄ / (1 − ω̄)).
//!
//! `PBO = share of combinations with λ ≤ 0`: the IS winner did no better than the OOS median.
//!
//! Performance is the Sharpe ratio of the rows: their mean over their sample standard
//! deviation (n − 1), per period. Rows with no spread (a trial that never traded, all zeros)
//! have no Sharpe ratio; they count as 0, as good as a flat strategy, in both IS and OOS.

use serde::Serialize;

/// The number of groups callers use unless told otherwise: the paper's S = 16, C(16, 8) =
/// 12 870 combinations.
pub const DEFAULT_GROUPS: usize = 16;

/// More groups than this are refused: C(20, 10) = 184 756 combinations already, and each more
/// pair of groups multiplies the work by about 4.
pub const MAX_GROUPS: usize = 20;

/// The CSCV results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pbo {
    /// Share of combinations whose IS-best trial is at or below the OOS median (λ ≤ 0).
    pub pbo: f64,
    /// Share of combinations whose IS-best trial has a negative OOS Sharpe ratio.
    pub probability_of_loss: f64,
    /// λ of each combination, in the lexicographic order of the chosen IS groups
    /// ({0,1,…}, {0,1,…,S/2}, …; Python's `itertools.combinations` order).
    pub logits: Vec<f64>,
    /// The IS-best trial's (IS, OOS) Sharpe ratio per combination, same order: the paper's
    /// performance-degradation scatter.
    pub degradation: Vec<Degradation>,
    /// S.
    pub groups: usize,
    /// N.
    pub trials: usize,
    /// Rows in the groups: T rounded down to a multiple of S.
    pub rows_used: usize,
    /// The last T mod S rows, left out so that the groups have equal sizes as the paper requires.
    pub rows_dropped: usize,
}

/// One point of the performance-degradation plot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Degradation {
    pub in_sample: f64,
    pub out_of_sample: f64,
}

/// Why the matrix or the number of groups cannot be cross-validated; each names its field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PboError {
    #[error("trials: at least 2 trials are needed to rank one against the others, got {0}")]
    TooFewTrials(usize),
    #[error(
        "trials: trial {trial} has {rows} rows and trial 0 has {expected}; every trial must cover the same periods"
    )]
    UnequalRows { trial: usize, rows: usize, expected: usize },
    #[error("trials: trial {trial} has a non-finite value at row {row}")]
    NonFinite { trial: usize, row: usize },
    #[error("groups: must be even and at least 2 (half of them in sample, half out), got {0}")]
    GroupsNotEven(usize),
    #[error("groups: at most {MAX_GROUPS} (C(20, 10) = 184756 combinations), got {0}")]
    TooManyGroups(usize),
    #[error(
        "groups: {groups} groups need at least {groups} rows, one per group; the trials have {rows}"
    )]
    MoreGroupsThanRows { groups: usize, rows: usize },
    #[error(
        "groups: {groups} groups of {rows} rows leave {half} rows in each half; a standard deviation needs 2"
    )]
    HalfTooShort { groups: usize, rows: usize, half: usize },
}

/// The PBO of `trials`, one `Vec` per trial (the matrix's N columns), each the trial's T
/// per-period returns in time order, cut into `groups` groups (S: even, 2..=20, at most T).
pub fn probability_of_backtest_overfitting(
    trials: &[Vec<f64>],
    groups: usize,
) -> Result<Pbo, PboError> {
    let rows = validate(trials, groups)?;
    let rows_per_group = rows / groups;
    let rows_used = rows_per_group * groups;
    // summaries[trial][group]: each combination only merges S of these per trial.
    let summaries: Vec<Vec<Summary>> = trials
        .iter()
        .map(|trial| trial[..rows_used].chunks(rows_per_group).map(Summary::of).collect())
        .collect();

    let n = trials.len();
    let (mut logits, mut degradation) = (Vec::new(), Vec::new());
    let mut losses = 0usize;
    let (mut is_perf, mut oos_perf) = (vec![0.0; n], vec![0.0; n]);
    let mut in_sample = vec![false; groups];
    let mut chosen: Vec<usize> = (0..groups / 2).collect();
    loop {
        in_sample.iter_mut().for_each(|g| *g = false);
        chosen.iter().for_each(|&g| in_sample[g] = true);
        for (trial, by_group) in summaries.iter().enumerate() {
            let (is, oos) = split(by_group, &in_sample);
            is_perf[trial] = is.sharpe();
            oos_perf[trial] = oos.sharpe();
        }
        let best = first_argmax(&is_perf);
        let rank = average_rank(&oos_perf, oos_perf[best]);
        // ω̄ = rank / (N + 1), so ω̄ / (1 − ω̄) = rank / (N + 1 − rank); rank is in [1, N].
        logits.push((rank / (n as f64 + 1.0 - rank)).ln());
        losses += usize::from(oos_perf[best] < 0.0);
        degradation.push(Degradation { in_sample: is_perf[best], out_of_sample: oos_perf[best] });
        if !next_combination(&mut chosen, groups) {
            break;
        }
    }

    let combinations = logits.len() as f64;
    Ok(Pbo {
        pbo: logits.iter().filter(|&&l| l <= 0.0).count() as f64 / combinations,
        probability_of_loss: losses as f64 / combinations,
        logits,
        degradation,
        groups,
        trials: n,
        rows_used,
        rows_dropped: rows - rows_used,
    })
}

/// Checks the matrix and S; returns T.
fn validate(trials: &[Vec<f64>], groups: usize) -> Result<usize, PboError> {
    if trials.len() < 2 {
        return Err(PboError::TooFewTrials(trials.len()));
    }
    let rows = trials[0].len();
    for (trial, values) in trials.iter().enumerate() {
        if values.len() != rows {
            return Err(PboError::UnequalRows { trial, rows: values.len(), expected: rows });
        }
        if let Some(row) = values.iter().position(|v| !v.is_finite()) {
            return Err(PboError::NonFinite { trial, row });
        }
    }
    if groups < 2 || !groups.is_multiple_of(2) {
        return Err(PboError::GroupsNotEven(groups));
    }
    if groups > MAX_GROUPS {
        return Err(PboError::TooManyGroups(groups));
    }
    if groups > rows {
        return Err(PboError::MoreGroupsThanRows { groups, rows });
    }
    let half = rows / groups * (groups / 2);
    if half < 2 {
        return Err(PboError::HalfTooShort { groups, rows, half });
    }
    Ok(rows)
}

/// A trial's (IS, OOS) summaries for one choice of IS groups.
fn split(by_group: &[Summary], in_sample: &[bool]) -> (Summary, Summary) {
    let (mut is, mut oos) = (Summary::EMPTY, Summary::EMPTY);
    for (summary, &inside) in by_group.iter().zip(in_sample) {
        if inside {
            is = is.merge(summary);
        } else {
            oos = oos.merge(summary);
        }
    }
    (is, oos)
}

/// The first index of the largest value: ties go to the lowest trial index.
fn first_argmax(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
}

/// The 1-based rank of `value` among `values` (1 the lowest), ties sharing their average rank.
fn average_rank(values: &[f64], value: f64) -> f64 {
    let below = values.iter().filter(|&&v| v < value).count();
    let equal = values.iter().filter(|&&v| v == value).count();
    below as f64 + (equal as f64 + 1.0) / 2.0
}

/// Moves `chosen` (a strictly increasing k-subset of 0..n) to the next one in lexicographic
/// order; false after the last.
fn next_combination(chosen: &mut [usize], n: usize) -> bool {
    let k = chosen.len();
    let Some(i) = (0..k).rev().find(|&i| chosen[i] < n - k + i) else {
        return false;
    };
    chosen[i] += 1;
    for j in i + 1..k {
        chosen[j] = chosen[j - 1] + 1;
    }
    true
}

/// Count, mean, sum of squared deviations and range of some rows: merged exactly (Chan, Golub
/// and LeVeque's pairwise update) so a combination costs S merges per trial, not T rows.
#[derive(Debug, Clone, Copy)]
struct Summary {
    count: usize,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl Summary {
    const EMPTY: Self =
        Self { count: 0, mean: 0.0, m2: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY };

    fn of(rows: &[f64]) -> Self {
        let count = rows.len();
        let mean = rows.iter().sum::<f64>() / count as f64;
        Self {
            count,
            mean,
            m2: rows.iter().map(|r| (r - mean) * (r - mean)).sum(),
            min: rows.iter().copied().fold(f64::INFINITY, f64::min),
            max: rows.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }

    fn merge(self, other: &Self) -> Self {
        if self.count == 0 {
            return *other;
        }
        let count = self.count + other.count;
        let (a, b, n) = (self.count as f64, other.count as f64, count as f64);
        let delta = other.mean - self.mean;
        Self {
            count,
            mean: self.mean + delta * b / n,
            m2: self.m2 + other.m2 + delta * delta * a * b / n,
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// Mean over sample standard deviation; 0 where undefined (no spread, which the range tells
    /// exactly where `m2` would be a rounding residue, or an overflow).
    fn sharpe(&self) -> f64 {
        if self.count < 2 || self.min == self.max {
            return 0.0;
        }
        let ratio = self.mean / (self.m2 / (self.count - 1) as f64).sqrt();
        if ratio.is_finite() { ratio } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    //! Reference values: CSCV written out directly over numpy and scipy's `rankdata`, from this
    //! script (`python3 -m venv /tmp/ref-venv && /tmp/ref-venv/bin/pip install scipy numpy`,
    //! then run it with `/tmp/ref-venv/bin/python`):
    //!
    //! ```python
    //! import itertools, math
    //! import numpy as np
    //! from scipy.stats import rankdata
    //!
    //! def sharpe(x):  # sample standard deviation; a constant column (no spread) counts as 0
    //!     return 0.0 if x.max() == x.min() else x.mean() / x.std(ddof=1)
    //!
    //! def cscv(m, groups):  # m: T rows x N trials
    //!     rows = m.shape[0] // groups * groups          # the remainder rows at the end are dropped
    //!     parts = np.split(np.arange(rows), groups)
    //!     n = m.shape[1]
    //!     logits, loss, pairs = [], 0, []
    //!     for chosen in itertools.combinations(range(groups), groups // 2):
    //!         is_rows = np.concatenate([parts[g] for g in chosen])
    //!         oos_rows = np.concatenate([parts[g] for g in range(groups) if g not in chosen])
    //!         is_perf = np.array([sharpe(m[is_rows, j]) for j in range(n)])
    //!         oos_perf = np.array([sharpe(m[oos_rows, j]) for j in range(n)])
    //!         best = int(np.argmax(is_perf))            # first index on ties
    //!         w = rankdata(oos_perf, method="average")[best] / (n + 1)
    //!         logits.append(math.log(w / (1 - w)))
    //!         loss += oos_perf[best] < 0
    //!         pairs.append((is_perf[best], oos_perf[best]))
    //!     c = len(logits)
    //!     return sum(l <= 0 for l in logits) / c, logits, loss / c, pairs
    //!
    //! # m[t][n] = 0.01 sin(0.7 t (n + 1) + n) + 0.001 n, T rows, 5 trials; "tied": trial 3 repeats trial 1.
    //! def matrix(t_rows, tied=False):
    //!     m = np.array([[0.01 * math.sin(0.7 * t * (n + 1) + n) + 0.001 * n for n in range(5)]
    //!                   for t in range(t_rows)])
    //!     if tied:
    //!         m[:, 3] = m[:, 1]
    //!     return m
    //!
    //! for t_rows, groups, tied in ((16, 4, False), (16, 8, False), (18, 4, False), (16, 4, True)):
    //!     pbo, logits, loss, pairs = cscv(matrix(t_rows, tied), groups)
    //!     print(f"T={t_rows} S={groups} tied={tied}: pbo {pbo:.12f} loss {loss:.12f} combinations {len(logits)}")
    //!     print(f"  sum logits {sum(logits):.12f} sum IS {sum(p[0] for p in pairs):.12f} sum OOS {sum(p[1] for p in pairs):.12f}")
    //!     if groups == 4:
    //!         print("  logits", ", ".join(f"{l:.12f}" for l in logits))
    //!         print("  pairs", ", ".join(f"({a:.12f}, {b:.12f})" for a, b in pairs))
    //! ```
    //!
    //! Its output:
    //!
    //! ```text
    //! T=16 S=4 tied=False: pbo 0.500000000000 loss 0.166666666667 combinations 6
    //!   sum logits 0.916290731874 sum IS 3.591829156997 sum OOS 1.700879203628
    //!   logits 1.609437912434, -1.609437912434, 0.693147180560, -0.693147180560, -0.693147180560, 1.609437912434
    //!   pairs (0.435348490669, 0.551340538377), (0.754379806505, -0.357477629278), (0.589302237739, 0.395023497767), (0.581758563359, 0.274783185607), (0.679699520348, 0.401861120486), (0.551340538377, 0.435348490669)
    //! T=16 S=8 tied=False: pbo 0.714285714286 loss 0.357142857143 combinations 70
    //!   sum logits -37.216499010681 sum IS 45.853278762465 sum OOS 10.123434004197
    //! T=18 S=4 tied=False: (the same lines as T=16 S=4: its last 2 rows are dropped)
    //! T=16 S=4 tied=True: pbo 0.333333333333 loss 0.166666666667 combinations 6
    //!   sum logits 4.828313737302 sum IS 3.405094091404 sum OOS 2.015398255760
    //!   logits 1.609437912434, -1.609437912434, 1.609437912434, 1.609437912434, 0.000000000000, 1.609437912434
    //!   pairs (0.435348490669, 0.551340538377), (0.754379806505, -0.357477629278), (0.589302237739, 0.395023497767), (0.395023497767, 0.589302237739), (0.679699520348, 0.401861120486), (0.551340538377, 0.435348490669)
    //! ```
    use super::*;

    const TOLERANCE: f64 = 1e-6;
    /// The logits Python prints as ±1.609437912434 and ±0.693147180560: with N = 5, λ is
    /// ln(rank / (6 − rank)), so rank 5 gives ln 5, rank 4 ln 2, rank 2 −ln 2, rank 1 −ln 5.
    const LN_5: f64 = 1.609_437_912_434_100_3;
    const LN_2: f64 = std::f64::consts::LN_2;

    /// The script's matrix, one `Vec` per trial.
    fn formula_trials(rows: u32, tied: bool) -> Vec<Vec<f64>> {
        let mut trials: Vec<Vec<f64>> = (0u32..5)
            .map(|n| {
                let n = f64::from(n);
                (0..rows)
                    .map(|t| 0.01 * (0.7 * f64::from(t) * (n + 1.0) + n).sin() + 0.001 * n)
                    .collect()
            })
            .collect();
        if tied {
            trials[3] = trials[1].clone();
        }
        trials
    }

    fn assert_close(actual: &[f64], expected: &[f64]) {
        assert_eq!(actual.len(), expected.len());
        for (a, e) in actual.iter().zip(expected) {
            assert!((a - e).abs() < TOLERANCE, "{actual:?} != {expected:?}");
        }
    }

    fn sums(p: &Pbo) -> [f64; 3] {
        [
            p.logits.iter().sum(),
            p.degradation.iter().map(|d| d.in_sample).sum(),
            p.degradation.iter().map(|d| d.out_of_sample).sum(),
        ]
    }

    fn pairs(p: &Pbo) -> Vec<f64> {
        p.degradation.iter().flat_map(|d| [d.in_sample, d.out_of_sample]).collect()
    }

    #[test]
    fn four_groups_match_the_python_cscv_to_1e_6() {
        let p = probability_of_backtest_overfitting(&formula_trials(16, false), 4).expect("valid");
        assert!((p.pbo - 0.5).abs() < TOLERANCE);
        assert!((p.probability_of_loss - 0.166666666667).abs() < TOLERANCE);
        assert_close(&p.logits, &[LN_5, -LN_5, LN_2, -LN_2, -LN_2, LN_5]);
        assert_close(
            &pairs(&p),
            &[
                0.435348490669,
                0.551340538377,
                0.754379806505,
                -0.357477629278,
                0.589302237739,
                0.395023497767,
                0.581758563359,
                0.274783185607,
                0.679699520348,
                0.401861120486,
                0.551340538377,
                0.435348490669,
            ],
        );
        assert_close(&sums(&p), &[0.916290731874, 3.591829156997, 1.700879203628]);
        assert_eq!((p.groups, p.trials, p.rows_used, p.rows_dropped), (4, 5, 16, 0));
    }

    #[test]
    fn eight_groups_match_the_python_cscv_to_1e_6() {
        let p = probability_of_backtest_overfitting(&formula_trials(16, false), 8).expect("valid");
        assert_eq!(p.logits.len(), 70);
        assert!((p.pbo - 0.714285714286).abs() < TOLERANCE);
        assert!((p.probability_of_loss - 0.357142857143).abs() < TOLERANCE);
        assert_close(&sums(&p), &[-37.216499010681, 45.853278762465, 10.123434004197]);
    }

    #[test]
    fn rows_past_a_multiple_of_the_groups_are_dropped_from_the_end() {
        let p = probability_of_backtest_overfitting(&formula_trials(18, false), 4).expect("valid");
        assert_eq!((p.rows_used, p.rows_dropped), (16, 2));
        let first_16 =
            probability_of_backtest_overfitting(&formula_trials(16, false), 4).expect("valid");
        assert_eq!(p.logits, first_16.logits);
        assert_eq!(p.degradation, first_16.degradation);
    }

    #[test]
    fn tied_trials_take_the_lowest_index_in_sample_and_share_their_rank_out_of_sample() {
        let p = probability_of_backtest_overfitting(&formula_trials(16, true), 4).expect("valid");
        assert!((p.pbo - 0.333333333333).abs() < TOLERANCE);
        assert!((p.probability_of_loss - 0.166666666667).abs() < TOLERANCE);
        assert_close(&p.logits, &[LN_5, -LN_5, LN_5, LN_5, 0.0, LN_5]);
        assert_close(&sums(&p), &[4.828313737302, 3.405094091404, 2.015398255760]);
    }

    /// A wave every trial shares, with no spread of its own in any half.
    fn wave(rows: u32) -> Vec<f64> {
        (0..rows).map(|t| 0.01 * (1.3 * f64::from(t)).sin()).collect()
    }

    #[test]
    fn a_trial_better_everywhere_gives_a_pbo_of_zero() {
        // Trial j = the wave + j·0.002: the same spread, so the highest mean wins in every half.
        let trials: Vec<Vec<f64>> = (0u32..4)
            .map(|j| wave(32).iter().map(|w| w + 0.002 * f64::from(j)).collect())
            .collect();
        let p = probability_of_backtest_overfitting(&trials, 8).expect("valid");
        assert_eq!(p.pbo, 0.0);
        assert!(p.logits.iter().all(|&l| (l - 4f64.ln()).abs() < 1e-12), "rank N of N: ln(4/1)");
        assert_eq!(p.probability_of_loss, 0.0);
    }

    #[test]
    fn an_in_sample_winner_that_always_loses_out_of_sample_gives_a_pbo_of_one() {
        // 4 groups of 8 rows, trial j gains 0.02 a period in group j only: the IS winner is a
        // trial whose good group is in sample, so out of sample it has only the wave, below the
        // two trials whose good group is out of sample.
        let trials: Vec<Vec<f64>> = (0usize..4)
            .map(|j| {
                let w = wave(32);
                w.iter().enumerate().map(|(t, w)| w + if t / 8 == j { 0.02 } else { 0.0 }).collect()
            })
            .collect();
        let p = probability_of_backtest_overfitting(&trials, 4).expect("valid");
        assert_eq!(p.pbo, 1.0);
        assert!(p.logits.iter().all(|&l| l < 0.0), "{:?}", p.logits);
        assert!(p.degradation.iter().all(|d| d.in_sample > d.out_of_sample));
    }

    #[test]
    fn a_trial_with_no_spread_counts_as_a_zero_sharpe() {
        assert_eq!(Summary::of(&[0.01; 8]).sharpe(), 0.0);
        assert_eq!(Summary::of(&[0.01; 4]).merge(&Summary::of(&[0.01; 4])).sharpe(), 0.0);
        // A constant gain has no Sharpe ratio (0), so a positive one beats it in every half.
        let trials = vec![vec![0.01; 16], wave(16).iter().map(|w| w + 0.005).collect()];
        let p = probability_of_backtest_overfitting(&trials, 4).expect("valid");
        assert!(p.degradation.iter().all(|d| d.in_sample > 0.0 && d.in_sample.is_finite()));
        assert!(p.logits.iter().all(|&l| (l - 2f64.ln()).abs() < 1e-12), "{:?}", p.logits);
    }

    #[test]
    fn the_default_sixteen_groups_run_all_12870_combinations() {
        let trials: Vec<Vec<f64>> = (0u32..3)
            .map(|j| {
                (0u32..64)
                    .map(|t| 0.01 * (0.3 * f64::from(t * (j + 1)) + f64::from(j)).sin())
                    .collect()
            })
            .collect();
        let p = probability_of_backtest_overfitting(&trials, DEFAULT_GROUPS).expect("valid");
        assert_eq!((p.logits.len(), p.degradation.len()), (12_870, 12_870));
        assert!((0.0..=1.0).contains(&p.pbo));
    }

    #[test]
    fn invalid_inputs_are_errors_that_name_their_field() {
        let ok = formula_trials(16, false);
        let cases: Vec<(Vec<Vec<f64>>, usize, PboError)> = vec![
            (ok[..1].to_vec(), 4, PboError::TooFewTrials(1)),
            (vec![], 4, PboError::TooFewTrials(0)),
            (
                vec![ok[0].clone(), ok[1][..15].to_vec()],
                4,
                PboError::UnequalRows { trial: 1, rows: 15, expected: 16 },
            ),
            (ok.clone(), 3, PboError::GroupsNotEven(3)),
            (ok.clone(), 0, PboError::GroupsNotEven(0)),
            (ok.clone(), 22, PboError::TooManyGroups(22)),
            (formula_trials(6, false), 8, PboError::MoreGroupsThanRows { groups: 8, rows: 6 }),
            (formula_trials(3, false), 2, PboError::HalfTooShort { groups: 2, rows: 3, half: 1 }),
        ];
        for (trials, groups, expected) in cases {
            let error = probability_of_backtest_overfitting(&trials, groups).expect_err("invalid");
            assert_eq!(error, expected);
            let field =
                if matches!(expected, PboError::TooFewTrials(_) | PboError::UnequalRows { .. }) {
                    "trials: "
                } else {
                    "groups: "
                };
            assert!(error.to_string().starts_with(field), "{error}");
        }
        let mut nan = ok.clone();
        nan[2][5] = f64::NAN;
        assert_eq!(
            probability_of_backtest_overfitting(&nan, 4),
            Err(PboError::NonFinite { trial: 2, row: 5 })
        );
    }

    #[test]
    fn combinations_come_in_lexicographic_order() {
        let mut chosen = vec![0, 1];
        let mut seen = vec![chosen.clone()];
        while next_combination(&mut chosen, 4) {
            seen.push(chosen.clone());
        }
        assert_eq!(seen, [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]);
    }
}
