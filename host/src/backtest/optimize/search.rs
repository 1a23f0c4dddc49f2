//! The search of one window: batches of points from the sampler, each batch's trials replayed
//! in parallel (rayon, one trial per worker, each with its own plugin instance and simulator),
//! told back in order; then the best point replayed out of sample.

use std::time::Instant;

use rayon::prelude::*;

use super::super::progress::Progress;
use super::super::replay::Span;
use super::objective::{Constraints, Objective};
use super::sampler::{Method, Sampler};
use super::space::Point;
use super::trial::{Bench, Outcome, replay};
use super::windows::Window;

/// How a run searches.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub method: Method,
    pub objective: Objective,
    pub constraints: Constraints,
    pub trials: usize,
    pub seed: u64,
    /// Points asked for before any is told back: fixed, so a seed gives the same trials on
    /// any number of cores.
    pub batch: usize,
}

/// One trial of a window's search.
#[derive(Debug, Clone)]
pub struct Trial {
    pub number: usize,
    pub point: Point,
    pub score: Option<f64>,
    /// `Err`: the plugin refused the point (a config it does not accept) or the replay failed.
    pub outcome: Result<Outcome, String>,
}

/// A window's search and its out-of-sample replay.
#[derive(Debug, Clone)]
pub struct Searched {
    pub window: Window,
    pub trials: Vec<Trial>,
    /// Index into `trials` of the chosen point (`None`: no trial was feasible).
    pub best: Option<usize>,
    pub out_of_sample: Option<Outcome>,
}

/// What searches a window: the worker pool, the runtime the replays run on, what the trials
/// share and how to search.
pub struct Searcher<'a> {
    pub pool: rayon::ThreadPool,
    pub runtime: tokio::runtime::Handle,
    pub bench: Bench<'a>,
    pub plan: Plan,
}

impl Searcher<'_> {
    /// Runs the trials of `points` over `span` on the pool's workers, in the points' order.
    fn run_batch(&self, points: &[Point], span: Span) -> Vec<Result<Outcome, String>> {
        self.pool.install(|| {
            points
                .par_iter()
                .map(|point| {
                    let trial = replay(&self.bench, point, span);
                    self.runtime.block_on(trial).map_err(|e| format!("{e:#}"))
                })
                .collect()
        })
    }

    /// Searches `window` (number `number` of `of`), then replays the best point out of
    /// sample. `started`: when the run's first trial started (for the speed and the ETA).
    pub fn search_window(
        &self,
        window: Window,
        (number, of): (usize, usize),
        progress: &mut Progress,
        started: Instant,
    ) -> anyhow::Result<Searched> {
        let plan = &self.plan;
        let seed = plan.seed.wrapping_add(number as u64);
        let mut sampler = Sampler::new(plan.method, self.bench.space, seed)?;
        let mut trials: Vec<Trial> = Vec::with_capacity(plan.trials);
        while trials.len() < plan.trials {
            let want = plan.batch.min(plan.trials - trials.len());
            let points = sampler.ask(want)?;
            if points.is_empty() {
                break;
            }
            // A point asked for again (TPE over few levels does) is not replayed again: the
            // replay is deterministic, so its outcome is the earlier one's.
            let mut fresh: Vec<Point> = Vec::new();
            for p in &points {
                if !trials.iter().any(|t| &t.point == p) && !fresh.contains(p) {
                    fresh.push(p.clone());
                }
            }
            let replayed: Vec<(Point, Result<Outcome, String>)> =
                fresh.iter().cloned().zip(self.run_batch(&fresh, window.in_sample)).collect();
            for point in points {
                let earlier = trials.iter().find(|t| t.point == point).map(|t| &t.outcome);
                let outcome = match earlier {
                    Some(outcome) => outcome.clone(),
                    None => replayed
                        .iter()
                        .find(|(p, _)| *p == point)
                        .map(|(_, o)| o.clone())
                        .unwrap_or_else(|| Err("the trial was not run".into())),
                };
                let score = outcome
                    .as_ref()
                    .ok()
                    .and_then(|o| o.metrics.score(plan.objective, &plan.constraints));
                sampler.tell(&point, score)?;
                trials.push(Trial { number: trials.len(), point, score, outcome });
            }
            let done = number * plan.trials + trials.len();
            progress.update(done, &status(&trials, plan, (number, of), done, started));
        }
        let best = best_trial(&trials);
        let out_of_sample = match best {
            Some(i) => {
                let trial = replay(&self.bench, &trials[i].point, window.out_of_sample);
                Some(self.runtime.block_on(trial)?)
            }
            None => None,
        };
        Ok(Searched { window, trials, best, out_of_sample })
    }
}

/// The feasible trial with the highest score (the first of equals).
pub fn best_trial(trials: &[Trial]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, t) in trials.iter().enumerate() {
        if let Some(s) = t.score
            && best.is_none_or(|(_, b)| s > b)
        {
            best = Some((i, s));
        }
    }
    best.map(|(i, _)| i)
}

/// The progress line: where the run stands, the best so far, the speed and what is left.
fn status(
    trials: &[Trial],
    plan: &Plan,
    (number, of): (usize, usize),
    done: usize,
    started: Instant,
) -> String {
    let best = best_trial(trials)
        .and_then(|i| trials[i].score)
        .map_or("none feasible yet".to_string(), |s| format!("best {s:.3}"));
    let elapsed = started.elapsed().as_secs_f64();
    let rate = done as f64 / elapsed.max(1e-9);
    let left = (of * plan.trials).saturating_sub(done) as f64 / rate.max(1e-9);
    format!(
        "window {}/{of} · trial {}/{} · {best} · {rate:.1} trials/s · ETA {left:.0} s",
        number + 1,
        trials.len(),
        plan.trials
    )
}
