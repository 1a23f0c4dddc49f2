//! Which points a search tries: the Tree-structured Parzen Estimator (the `tpe` crate: one
//! estimator per key, as Optuna's default independent TPE), uniform random draws, or the whole
//! grid in order.
//!
//! Points are asked for in batches that run in parallel and are told back in the batch's
//! order, so what a seed gives does not depend on how many cores ran the trials or which
//! trial finished first.

use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;

use super::space::{Param, Point, Space};

/// The search method of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    Tpe,
    Random,
    Grid,
}

/// Trials drawn at random before TPE models the results (Optuna's `n_startup_trials`).
pub const STARTUP_TRIALS: usize = 10;

/// One search.
pub struct Sampler {
    method: Method,
    space: Space,
    rng: StdRng,
    /// One estimator per key, in the space's order (TPE only).
    estimators: Vec<tpe::TpeOptimizer>,
    /// Points asked for so far.
    asked: usize,
}

impl Sampler {
    pub fn new(method: Method, space: &Space, seed: u64) -> anyhow::Result<Self> {
        let mut estimators = Vec::new();
        if method == Method::Tpe {
            for p in &space.params {
                let (low, high) = tpe_range(p);
                let range = tpe::range(low, high)
                    .map_err(|e| anyhow::anyhow!("[{}]: cannot search this range: {e}", p.key))?;
                estimators.push(tpe::TpeOptimizer::new(tpe::parzen_estimator(), range));
            }
        }
        if method == Method::Grid && space.grid_size().is_none() {
            anyhow::bail!("a grid needs a step for every key (or fewer than 2^64 points)");
        }
        Ok(Sampler {
            method,
            space: space.clone(),
            rng: StdRng::seed_from_u64(seed),
            estimators,
            asked: 0,
        })
    }

    /// The next `n` points (fewer once a grid is exhausted).
    pub fn ask(&mut self, n: usize) -> anyhow::Result<Vec<Point>> {
        let mut points = Vec::with_capacity(n);
        for _ in 0..n {
            let point = match self.method {
                Method::Grid => {
                    if self.asked >= self.space.grid_size().unwrap_or(0) {
                        break;
                    }
                    self.space.grid_point(self.asked)
                }
                Method::Tpe if self.asked >= STARTUP_TRIALS => self.tpe_point()?,
                Method::Tpe | Method::Random => self.random_point(),
            };
            self.asked += 1;
            points.push(point);
        }
        Ok(points)
    }

    /// Tells the search what `point` scored (`None`: infeasible, the worst).
    pub fn tell(&mut self, point: &Point, score: Option<f64>) -> anyhow::Result<()> {
        // The estimators minimise; an infeasible point ranks below every feasible one.
        let value = score.filter(|s| s.is_finite()).map_or(f64::INFINITY, |s| -s);
        for (p, estimator) in self.space.params.iter().zip(&mut self.estimators) {
            let x = point.get(&p.key).copied().unwrap_or(f64::NAN);
            estimator
                .tell(tpe_coordinate(p, x), value)
                .map_err(|e| anyhow::anyhow!("[{}]: {e}", p.key))?;
        }
        Ok(())
    }

    fn random_point(&mut self) -> Point {
        use rand::RngExt;
        let mut point = Point::new();
        for p in &self.space.params {
            let value = match p.levels() {
                Some(levels) => p.level(self.rng.random_range(0..levels)),
                None => p.snap(self.rng.random_range(p.min..=p.max)),
            };
            point.insert(p.key.clone(), value);
        }
        point
    }

    fn tpe_point(&mut self) -> anyhow::Result<Point> {
        let mut point = Point::new();
        for (p, estimator) in self.space.params.iter().zip(&mut self.estimators) {
            let x =
                estimator.ask(&mut self.rng).map_err(|e| anyhow::anyhow!("[{}]: {e}", p.key))?;
            let value = match p.levels() {
                Some(levels) => p.level((x.round().max(0.0) as usize).min(levels - 1)),
                None => p.snap(x),
            };
            point.insert(p.key.clone(), value);
        }
        Ok(point)
    }
}

/// The estimator's range of a key: its levels' indices (each level the middle of a unit
/// interval), or its values when it has no step.
fn tpe_range(p: &Param) -> (f64, f64) {
    match p.levels() {
        Some(levels) => (-0.5, levels as f64 - 0.5),
        None => (p.min, p.max),
    }
}

/// The estimator's coordinate of a key's value (the inverse of [`Sampler::tpe_point`]'s).
fn tpe_coordinate(p: &Param, value: f64) -> f64 {
    let (low, high) = tpe_range(p);
    let x = match (p.levels(), p.step) {
        (Some(_), Some(step)) => ((value - p.min) / step).round(),
        _ => value,
    };
    // Kept inside the half-open range the estimator accepts.
    x.clamp(low, high - (high - low) * 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> Space {
        let text = "[fast]\nmin = 2\nmax = 40\n[band]\nmin = 0.0\nmax = 4.0\n";
        Space::parse(text, r#"{"fast": 10, "band": 1.0}"#).unwrap()
    }

    /// A bowl with its best point at fast = 17, band = 2.5.
    fn score(p: &Point) -> f64 {
        -((p["fast"] - 17.0).powi(2) / 100.0 + (p["band"] - 2.5).powi(2))
    }

    fn search(method: Method, seed: u64, trials: usize) -> Vec<(Point, f64)> {
        let mut sampler = Sampler::new(method, &space(), seed).unwrap();
        let mut seen = Vec::new();
        while seen.len() < trials {
            let batch = sampler.ask(4).unwrap();
            if batch.is_empty() {
                break;
            }
            for point in batch {
                let s = score(&point);
                sampler.tell(&point, Some(s)).unwrap();
                seen.push((point, s));
            }
        }
        seen
    }

    #[test]
    fn the_same_seed_asks_for_the_same_points() {
        assert_eq!(search(Method::Tpe, 7, 40), search(Method::Tpe, 7, 40));
        assert_ne!(search(Method::Tpe, 7, 40), search(Method::Tpe, 8, 40));
    }

    #[test]
    fn tpe_finds_the_bowls_bottom_better_than_random_draws() {
        let best = |method| {
            (0..5)
                .map(|seed| {
                    let trials = search(method, seed, 60);
                    trials.iter().map(|(_, s)| *s).fold(f64::MIN, f64::max)
                })
                .sum::<f64>()
                / 5.0
        };
        let (tpe, random) = (best(Method::Tpe), best(Method::Random));
        assert!(tpe > random, "tpe {tpe} random {random}");
        assert!(tpe > -0.05, "tpe's best is near the bottom: {tpe}");
    }

    #[test]
    fn values_stay_on_the_grid_and_in_range() {
        for (point, _) in search(Method::Tpe, 3, 60) {
            let fast = point["fast"];
            assert!(fast.fract() == 0.0 && (2.0..=40.0).contains(&fast), "{fast}");
            assert!((0.0..=4.0).contains(&point["band"]));
        }
    }

    #[test]
    fn a_grid_visits_each_point_once_then_stops() {
        let text = "[fast]\nmin = 2\nmax = 4\n[band]\nmin = 1.0\nmax = 2.0\nstep = 0.5\n";
        let space = Space::parse(text, r#"{"fast": 10, "band": 1.0}"#).unwrap();
        let mut sampler = Sampler::new(Method::Grid, &space, 0).unwrap();
        let first = sampler.ask(5).unwrap();
        let rest = sampler.ask(5).unwrap();
        assert_eq!((first.len(), rest.len()), (5, 4));
        assert!(sampler.ask(5).unwrap().is_empty());
        let all: std::collections::BTreeSet<String> =
            first.iter().chain(&rest).map(|p| format!("{p:?}")).collect();
        assert_eq!(all.len(), 9);
    }

    #[test]
    fn an_infeasible_trial_is_told_as_the_worst() {
        let mut sampler = Sampler::new(Method::Tpe, &space(), 1).unwrap();
        let point = sampler.ask(1).unwrap().remove(0);
        sampler.tell(&point, None).unwrap();
        sampler.tell(&point, Some(f64::NAN)).unwrap();
    }
}
