//! The Deflated Sharpe Ratio: how likely the chosen strategy's Sharpe ratio is real once the
//! number of trials it was chosen from, its sample length and its non-normal returns are
//! accounted for.
//!
//! David H. Bailey and Marcos López de Prado, "The Deflated Sharpe Ratio: Correcting for
//! Selection Bias, Backtest Overfitting and Non-Normality", Journal of Portfolio Management
//! 40(5), 2014, pp. 94-107.
//!
//! - Probabilistic Sharpe ratio against a benchmark SR*:
//!   `PSR(SR*) = Φ((SR − SR*)·√(T−1) / √(1 − γ3·SR + (γ4−1)/4·SR²))`, with γ3 the skewness
//!   and γ4 the (non-excess, 3 for normal) kurtosis of the T returns.
//! - Expected maximum Sharpe ratio of N zero-skill trials whose Sharpe ratios vary by V:
//!   `SR0 = √V·((1−γ)·Φ⁻¹(1−1/N) + γ·Φ⁻¹(1−1/(N·e)))`, γ the Euler–Mascheroni constant.
//! - `DSR = PSR(SR0)`.
//!
//! Every Sharpe ratio here is per observation (per period of the returns), never annualised:
//! the trials' Sharpe ratios must use the same period as the returns.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// γ in the expected maximum (`core::f64::consts::EGAMMA` is not stable yet).
pub const EULER_MASCHERONI: f64 = 0.577_215_664_901_532_9;

/// Everything the deflated Sharpe ratio was computed from, so a report can show why it is what
/// it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeflatedSharpe {
    /// The chosen strategy's Sharpe ratio per period ([`sharpe_ratio`]).
    pub sharpe: f64,
    /// Skewness of its returns (population moments, γ3).
    pub skew: f64,
    /// Kurtosis of its returns, not the excess (3 for normal returns, γ4).
    pub kurtosis: f64,
    /// Number of returns (T).
    pub n_obs: usize,
    /// Number of trials the strategy was chosen from (N).
    pub trials: usize,
    /// Sample variance (n − 1) of the trials' Sharpe ratios (V).
    pub sr_variance: f64,
    /// The Sharpe ratio the best of `trials` zero-skill trials would show (SR0).
    pub expected_max_sharpe: f64,
    /// Probability that the true Sharpe ratio is above SR0: `PSR(SR0)`.
    pub dsr: f64,
}

/// Mean over the sample standard deviation (n − 1) of per-period returns, without a risk-free
/// rate: the Sharpe ratio [`deflated_sharpe`] uses, for computing the trials' Sharpe ratios
/// the same way. `None` for fewer than 2 returns, a non-finite return or returns that are all
/// equal (no spread, no ratio).
pub fn sharpe_ratio(returns: &[f64]) -> Option<f64> {
    let moments = Moments::of(returns)?;
    Some(moments.sharpe)
}

/// The probabilistic Sharpe ratio: the probability that the true Sharpe ratio exceeds
/// `sr_benchmark`, given the observed `sr` over `n_obs` returns with that `skew` and
/// non-excess `kurtosis` (per-period Sharpe ratios).
///
/// NaN when it is not defined: fewer than 2 observations, a non-finite input, or a
/// non-positive `1 − skew·sr + (kurtosis−1)/4·sr²` (impossible for moments of real data,
/// where kurtosis ≥ skew² + 1; possible for made-up ones). [`deflated_sharpe`] turns that
/// into `None`.
pub fn probabilistic_sharpe(
    sr: f64,
    sr_benchmark: f64,
    n_obs: usize,
    skew: f64,
    kurtosis: f64,
) -> f64 {
    psr(sr, sr_benchmark, n_obs, skew, kurtosis).unwrap_or(f64::NAN)
}

fn psr(sr: f64, sr_benchmark: f64, n_obs: usize, skew: f64, kurtosis: f64) -> Option<f64> {
    if n_obs < 2 || ![sr, sr_benchmark, skew, kurtosis].iter().all(|x| x.is_finite()) {
        return None;
    }
    let radicand = 1.0 - skew * sr + (kurtosis - 1.0) / 4.0 * sr * sr;
    if !(radicand > 0.0 && radicand.is_finite()) {
        return None;
    }
    let z = (sr - sr_benchmark) * ((n_obs - 1) as f64).sqrt() / radicand.sqrt();
    Some(Normal::standard().cdf(z))
}

/// The Sharpe ratio that the best of `trials` independent zero-skill trials is expected to
/// show when their Sharpe ratios vary with variance `sr_variance` (same period unit).
///
/// A single trial (or none) was not chosen from anything: 0, the expectation of one
/// zero-skill Sharpe ratio (the formula itself would give −∞). NaN for a negative or
/// non-finite variance.
pub fn expected_max_sharpe(sr_variance: f64, trials: usize) -> f64 {
    if trials < 2 {
        return 0.0;
    }
    let n = trials as f64;
    let normal = Normal::standard();
    // Both probabilities lie in [0.5, 1) for n ≥ 2: `inverse_cdf` panics only outside [0, 1].
    let z = (1.0 - EULER_MASCHERONI) * normal.inverse_cdf(1.0 - 1.0 / n)
        + EULER_MASCHERONI * normal.inverse_cdf(1.0 - 1.0 / (n * std::f64::consts::E));
    sr_variance.sqrt() * z
}

/// The deflated Sharpe ratio of the strategy whose per-period `returns` are given, chosen from
/// trials whose Sharpe ratios (per period, e.g. from [`sharpe_ratio`]) are `trial_sharpes`,
/// the chosen one among them.
///
/// `None`, never a panic, when it is not defined: fewer than 2 returns, returns with no spread,
/// fewer than 2 trials, a non-finite input, or a PSR denominator that is not a positive real.
/// Trials whose Sharpe ratios are all equal give V = 0, so SR0 = 0 and the DSR is the PSR
/// against 0: they were one strategy, not a selection.
pub fn deflated_sharpe(returns: &[f64], trial_sharpes: &[f64]) -> Option<DeflatedSharpe> {
    let moments = Moments::of(returns)?;
    if trial_sharpes.len() < 2 || !trial_sharpes.iter().all(|s| s.is_finite()) {
        return None;
    }
    let sr_variance = sample_variance(trial_sharpes);
    if !sr_variance.is_finite() {
        return None;
    }
    let expected_max = expected_max_sharpe(sr_variance, trial_sharpes.len());
    let dsr = psr(moments.sharpe, expected_max, returns.len(), moments.skew, moments.kurtosis)?;
    Some(DeflatedSharpe {
        sharpe: moments.sharpe,
        skew: moments.skew,
        kurtosis: moments.kurtosis,
        n_obs: returns.len(),
        trials: trial_sharpes.len(),
        sr_variance,
        expected_max_sharpe: expected_max,
        dsr,
    })
}

/// The moments the PSR needs: the Sharpe ratio with the sample standard deviation (the usual
/// estimator), skewness and kurtosis from population central moments (the paper's γ3 = m3/m2^1.5
/// and γ4 = m4/m2²; scipy's `skew` and `kurtosis(fisher=False)` defaults).
struct Moments {
    sharpe: f64,
    skew: f64,
    kurtosis: f64,
}

impl Moments {
    fn of(returns: &[f64]) -> Option<Self> {
        let first = *returns.first()?;
        if returns.len() < 2 || !returns.iter().all(|r| r.is_finite()) {
            return None;
        }
        // Equal values: the mean's rounding would leave a spread of ~1e-19 and a huge ratio.
        if returns.iter().all(|&r| r == first) {
            return None;
        }
        let n = returns.len() as f64;
        let mean = returns.iter().sum::<f64>() / n;
        let (mut m2, mut m3, mut m4) = (0.0, 0.0, 0.0);
        for r in returns {
            let d = r - mean;
            let d2 = d * d;
            m2 += d2;
            m3 += d2 * d;
            m4 += d2 * d2;
        }
        let sample_sd = (m2 / (n - 1.0)).sqrt();
        let (m2, m3, m4) = (m2 / n, m3 / n, m4 / n);
        let moments =
            Self { sharpe: mean / sample_sd, skew: m3 / m2.powf(1.5), kurtosis: m4 / (m2 * m2) };
        [moments.sharpe, moments.skew, moments.kurtosis]
            .iter()
            .all(|x| x.is_finite())
            .then_some(moments)
    }
}

/// Variance with n − 1 (the unbiased estimate of V[{SR_n}]); the caller ensures n ≥ 2. Equal
/// values give exactly 0, not the residue of their mean's rounding.
fn sample_variance(xs: &[f64]) -> f64 {
    if xs.iter().all(|&x| x == xs[0]) {
        return 0.0;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)
}

#[cfg(test)]
mod tests {
    //! Reference values: scipy 1.x's `norm.cdf` / `norm.ppf` and `skew` / `kurtosis`, from this
    //! script (`python3 -m venv /tmp/ref-venv && /tmp/ref-venv/bin/pip install scipy numpy`,
    //! then run it with `/tmp/ref-venv/bin/python`):
    //!
    //! ```python
    //! import math
    //! import numpy as np
    //! from scipy.stats import kurtosis, norm, skew
    //!
    //! G = 0.5772156649015329  # Euler-Mascheroni
    //!
    //! def emax(v, n):
    //!     return math.sqrt(v) * ((1 - G) * norm.ppf(1 - 1 / n) + G * norm.ppf(1 - 1 / (n * math.e)))
    //!
    //! def psr(sr, sr0, t, g3, g4):
    //!     return norm.cdf((sr - sr0) * math.sqrt(t - 1) / math.sqrt(1 - g3 * sr + (g4 - 1) / 4 * sr**2))
    //!
    //! # The paper's example: annual SR 2.5, 250 days a year, T 1250, skew -3, kurtosis 10, V 1/2 a year.
    //! sr, v = 2.5 / math.sqrt(250), 0.5 / 250
    //! print(f"paper sr0(N=100) {emax(v, 100):.12f}")
    //! print(f"paper dsr(N=100) {psr(sr, emax(v, 100), 1250, -3, 10):.12f}")
    //! print(f"paper dsr(N=46)  {psr(sr, emax(v, 46), 1250, -3, 10):.12f}")
    //! print(f"paper psr(0)     {psr(sr, 0.0, 1250, -3, 10):.12f}")
    //!
    //! # From returns: r_t = 0.004 + 0.01 sin(0.9 t) - 0.02 [t mod 7 == 3], t = 0..59;
    //! # trial Sharpes s_k = 0.01 k - 0.05 + 0.02 sin(k), k = 0..19.
    //! t = np.arange(60)
    //! r = 0.004 + 0.01 * np.sin(0.9 * t) - 0.02 * (t % 7 == 3)
    //! k = np.arange(20)
    //! s = 0.01 * k - 0.05 + 0.02 * np.sin(k)
    //! sr = r.mean() / r.std(ddof=1)
    //! g3, g4 = skew(r), kurtosis(r, fisher=False)
    //! v = s.var(ddof=1)
    //! sr0 = emax(v, len(s))
    //! print(f"returns sharpe {sr:.12f} skew {g3:.12f} kurtosis {g4:.12f}")
    //! print(f"returns sr_variance {v:.12e} sr0 {sr0:.12f} dsr {psr(sr, sr0, len(r), g3, g4):.12f}")
    //! ```
    //!
    //! Its output:
    //!
    //! ```text
    //! paper sr0(N=100) 0.113172001865
    //! paper dsr(N=100) 0.900396834449
    //! paper dsr(N=46)  0.950501706876
    //! paper psr(0)     0.999996859508
    //! returns sharpe 0.150495466706 skew 0.022928052285 kurtosis 1.725056788777
    //! returns sr_variance 3.353616963616e-03 sr0 0.110070799345 dsr 0.621873937806
    //! ```
    use super::*;

    const PAPER_SR: f64 = 2.5 / 15.811_388_300_841_896; // 2.5 / √250: annual to daily
    const PAPER_VARIANCE: f64 = 0.5 / 250.0; // a variance scales with the period, not its root

    fn close(x: f64, expected: f64, tolerance: f64) -> bool {
        (x - expected).abs() < tolerance
    }

    /// The paper's numerical example: a strategy chosen as the best of N = 100 independent
    /// trials whose annualised Sharpe ratios have variance 1/2, with an annualised Sharpe ratio
    /// of 2.5 over five years of daily returns (T = 1250, 250 a year), skewness −3 and kurtosis
    /// 10. The paper prints, to 4 decimals, SR0 = 0.1132 (per day) and DSR = 0.9004, and that
    /// stopping at N = 46 trials would have given DSR = 0.9505. (The paper's own text was not
    /// reachable from here; these printed values are as several independent implementations
    /// quote and test them, and this code reproduces all three.)
    #[test]
    fn reproduces_the_papers_numerical_example_to_its_printed_precision() {
        let sr0 = expected_max_sharpe(PAPER_VARIANCE, 100);
        assert!(close(sr0, 0.1132, 5e-5), "{sr0}");
        let dsr = probabilistic_sharpe(PAPER_SR, sr0, 1250, -3.0, 10.0);
        assert!(close(dsr, 0.9004, 5e-5), "{dsr}");
        let dsr_46 = probabilistic_sharpe(
            PAPER_SR,
            expected_max_sharpe(PAPER_VARIANCE, 46),
            1250,
            -3.0,
            10.0,
        );
        assert!(close(dsr_46, 0.9505, 5e-5), "{dsr_46}");
    }

    #[test]
    fn the_papers_example_matches_scipy_to_1e_6() {
        let sr0 = expected_max_sharpe(PAPER_VARIANCE, 100);
        assert!(close(sr0, 0.113172001865, 1e-6), "{sr0}");
        assert!(close(probabilistic_sharpe(PAPER_SR, sr0, 1250, -3.0, 10.0), 0.900396834449, 1e-6));
        let sr0_46 = expected_max_sharpe(PAPER_VARIANCE, 46);
        assert!(close(
            probabilistic_sharpe(PAPER_SR, sr0_46, 1250, -3.0, 10.0),
            0.950501706876,
            1e-6
        ));
        assert!(close(probabilistic_sharpe(PAPER_SR, 0.0, 1250, -3.0, 10.0), 0.999996859508, 1e-6));
    }

    fn formula_returns() -> Vec<f64> {
        (0u32..60)
            .map(|t| {
                0.004 + 0.01 * (0.9 * f64::from(t)).sin() - if t % 7 == 3 { 0.02 } else { 0.0 }
            })
            .collect()
    }

    fn formula_trial_sharpes() -> Vec<f64> {
        (0u32..20).map(|k| 0.01 * f64::from(k) - 0.05 + 0.02 * f64::from(k).sin()).collect()
    }

    #[test]
    fn deflated_sharpe_from_returns_matches_scipy_to_1e_6() {
        let d = deflated_sharpe(&formula_returns(), &formula_trial_sharpes()).expect("defined");
        assert!(close(d.sharpe, 0.150495466706, 1e-6), "{d:?}");
        assert!(close(d.skew, 0.022928052285, 1e-6), "{d:?}");
        assert!(close(d.kurtosis, 1.725056788777, 1e-6), "{d:?}");
        assert!(close(d.sr_variance, 3.353616963616e-3, 1e-9), "{d:?}");
        assert!(close(d.expected_max_sharpe, 0.110070799345, 1e-6), "{d:?}");
        assert!(close(d.dsr, 0.621873937806, 1e-6), "{d:?}");
        assert_eq!((d.n_obs, d.trials), (60, 20));
    }

    #[test]
    fn more_trials_raise_the_bar_and_lower_the_dsr() {
        assert!(expected_max_sharpe(1.0, 1000) > expected_max_sharpe(1.0, 10));
        let few = probabilistic_sharpe(
            PAPER_SR,
            expected_max_sharpe(PAPER_VARIANCE, 10),
            1250,
            -3.0,
            10.0,
        );
        let many = probabilistic_sharpe(
            PAPER_SR,
            expected_max_sharpe(PAPER_VARIANCE, 1000),
            1250,
            -3.0,
            10.0,
        );
        assert!(few > many, "{few} {many}");
    }

    #[test]
    fn one_trial_sets_no_bar() {
        assert_eq!(expected_max_sharpe(0.3, 1), 0.0);
        assert_eq!(expected_max_sharpe(0.3, 0), 0.0);
    }

    #[test]
    fn a_zero_sharpe_against_zero_is_even_odds() {
        assert!(close(probabilistic_sharpe(0.0, 0.0, 100, 0.0, 3.0), 0.5, 1e-12));
    }

    #[test]
    fn equal_trial_sharpes_are_no_selection_so_the_dsr_is_the_psr_against_zero() {
        let returns = formula_returns();
        let d = deflated_sharpe(&returns, &[0.1, 0.1, 0.1]).expect("defined");
        assert_eq!(d.expected_max_sharpe, 0.0);
        assert_eq!(d.dsr, probabilistic_sharpe(d.sharpe, 0.0, 60, d.skew, d.kurtosis));
    }

    #[test]
    fn undefined_inputs_give_none_not_a_panic() {
        let returns = formula_returns();
        let trials = formula_trial_sharpes();
        assert_eq!(deflated_sharpe(&[], &trials), None);
        assert_eq!(deflated_sharpe(&[0.01], &trials), None);
        assert_eq!(deflated_sharpe(&[0.01; 30], &trials), None, "no spread");
        assert_eq!(deflated_sharpe(&returns, &[0.1]), None, "one trial");
        assert_eq!(deflated_sharpe(&returns, &[]), None);
        let mut bad = returns.clone();
        bad[7] = f64::NAN;
        assert_eq!(deflated_sharpe(&bad, &trials), None);
        bad[7] = f64::INFINITY;
        assert_eq!(deflated_sharpe(&bad, &trials), None);
        assert_eq!(deflated_sharpe(&returns, &[0.1, f64::NAN]), None);
        assert_eq!(deflated_sharpe(&returns, &[0.1, f64::MAX, -f64::MAX]), None, "V overflows");
        assert_eq!(sharpe_ratio(&[0.02, 0.02]), None);
    }

    #[test]
    fn a_negative_psr_radicand_is_nan_not_a_silent_number() {
        // 1 − 3·1 + (1 − 1)/4·1 = −2: moments no real data has (kurtosis < skew² + 1).
        assert!(probabilistic_sharpe(1.0, 0.0, 100, 3.0, 1.0).is_nan());
        assert!(probabilistic_sharpe(0.1, 0.0, 1, 0.0, 3.0).is_nan(), "one observation");
        assert!(probabilistic_sharpe(f64::NAN, 0.0, 100, 0.0, 3.0).is_nan());
    }

    #[test]
    fn serializes_every_piece() {
        let d = deflated_sharpe(&formula_returns(), &formula_trial_sharpes()).expect("defined");
        let json = serde_json::to_value(&d).expect("serializes");
        for key in [
            "sharpe",
            "skew",
            "kurtosis",
            "n_obs",
            "trials",
            "sr_variance",
            "expected_max_sharpe",
            "dsr",
        ] {
            assert!(json.get(key).is_some(), "{key} in {json}");
        }
    }
}
