//! The random mode (`POST /sim/mutation`, `Sim::set_mutation`): every answer of a request that
//! ran on the chosen REST paths is damaged with probability `share`, by a kind and with a seed
//! drawn from one seeded generator. The same seed and the same sequence of requests give the
//! same damages, so a run that found a bug runs again. A fault armed for a request wins over
//! the random mode; WebSocket traffic is never damaged.

use super::FaultKind;
use super::damage::Damage;
use fastrand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the random mode damages answers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MutationConfig {
    /// The share of answers damaged, from 0 (none) to 1 (all).
    pub share: f64,
    /// Seeds the generator every draw comes from.
    #[serde(default)]
    pub seed: u64,
    /// The kinds drawn from, equally likely (default: all of them).
    #[serde(default = "all_damages")]
    pub damages: Vec<Damage>,
    /// The exact paths whose answers may be damaged (e.g. `/api/v3/order`, `/exchange`);
    /// `None`: every REST path of both exchanges (never the admin API).
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// How long `slow` holds an answer back (default 2000 ms).
    #[serde(default)]
    pub slow_ms: Option<u64>,
    /// The Retry-After of `rate_limited` and `banned` (default 1 and 2 s).
    #[serde(default)]
    pub retry_after: Option<u64>,
}

fn all_damages() -> Vec<Damage> {
    Damage::ALL.to_vec()
}

impl MutationConfig {
    /// Damages `share` of every REST answer with any kind, drawn from `seed`.
    pub fn new(share: f64, seed: u64) -> Self {
        Self { share, seed, damages: all_damages(), paths: None, slow_ms: None, retry_after: None }
    }

    /// Why the settings cannot be used, if they cannot.
    fn problem(&self) -> Option<&'static str> {
        if !(0.0..=1.0).contains(&self.share) {
            Some("share must be a number from 0 to 1")
        } else if self.damages.is_empty() {
            Some("damages must name at least one kind (leave it out for all)")
        } else if self.paths.as_ref().is_some_and(Vec::is_empty) {
            Some("paths must name at least one path (leave it out for every path)")
        } else {
            None
        }
    }

    fn covers(&self, path: &str) -> bool {
        self.paths.as_ref().is_none_or(|paths| paths.iter().any(|p| p == path))
    }
}

/// What the random mode did since it was last set.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct MutationStats {
    /// Answers on the covered paths.
    pub seen: u64,
    /// Answers damaged.
    pub damaged: u64,
    /// Answers damaged, per kind.
    pub by_kind: BTreeMap<Damage, u64>,
}

/// The random mode's settings (None: off) and counts, as `GET /sim/mutation` shows them.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MutationStatus {
    pub config: Option<MutationConfig>,
    pub stats: MutationStats,
}

/// The random mode of one simulator: its settings with their generator, and its counts (kept
/// after it is turned off, until it is set again).
#[derive(Debug, Default)]
pub(crate) struct Mutation {
    active: Option<(MutationConfig, Rng)>,
    stats: MutationStats,
}

impl Mutation {
    /// Turns the mode on with `config` (counts and generator start afresh) or off with None.
    pub(crate) fn set(&mut self, config: Option<MutationConfig>) -> Result<(), &'static str> {
        match config {
            Some(config) => {
                if let Some(problem) = config.problem() {
                    return Err(problem);
                }
                let rng = Rng::with_seed(config.seed);
                self.active = Some((config, rng));
                self.stats = MutationStats::default();
            }
            None => self.active = None,
        }
        Ok(())
    }

    pub(crate) fn status(&self) -> MutationStatus {
        MutationStatus {
            config: self.active.as_ref().map(|(config, _)| config.clone()),
            stats: self.stats.clone(),
        }
    }

    /// The damage for the answer of a request on `path` that ran, if the draw says so. Every
    /// covered answer takes one draw, a damaged one two more (kind, seed), so the sequence of
    /// damages depends only on the seed and the sequence of requests.
    pub(crate) fn draw(&mut self, path: &str) -> Option<FaultKind> {
        let (config, rng) = self.active.as_mut().filter(|(config, _)| config.covers(path))?;
        self.stats.seen += 1;
        if rng.f64() >= config.share {
            return None;
        }
        let damage = config.damages[rng.usize(..config.damages.len())];
        let seed = rng.u64(..);
        self.stats.damaged += 1;
        *self.stats.by_kind.entry(damage).or_default() += 1;
        Some(FaultKind::Damage {
            damage,
            seed,
            ms: config.slow_ms.filter(|_| damage.takes_ms()),
            retry_after: config.retry_after.filter(|_| damage.takes_retry_after()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(mutation: &mut Mutation, n: usize) -> Vec<Option<Damage>> {
        (0..n)
            .map(|_| match mutation.draw("/api/v3/order") {
                Some(FaultKind::Damage { damage, .. }) => Some(damage),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn one_seed_draws_one_sequence_and_the_share_bounds_it() {
        let mut a = Mutation::default();
        let mut b = Mutation::default();
        a.set(Some(MutationConfig::new(0.5, 7))).expect("valid");
        b.set(Some(MutationConfig::new(0.5, 7))).expect("valid");
        let first = kinds(&mut a, 200);
        assert_eq!(first, kinds(&mut b, 200));
        let damaged = first.iter().flatten().count();
        assert!((60..140).contains(&damaged), "about half: {damaged}");
        assert_eq!(a.status().stats.seen, 200);
        assert_eq!(a.status().stats.damaged, damaged as u64);

        b.set(Some(MutationConfig::new(0.5, 8))).expect("valid");
        assert_ne!(first, kinds(&mut b, 200), "another seed, another sequence");
    }

    #[test]
    fn all_none_and_only_the_covered_paths() {
        let mut m = Mutation::default();
        m.set(Some(MutationConfig::new(1.0, 1))).expect("valid");
        assert!(kinds(&mut m, 50).iter().all(Option::is_some));
        m.set(Some(MutationConfig::new(0.0, 1))).expect("valid");
        assert!(kinds(&mut m, 50).iter().all(Option::is_none));
        assert_eq!(m.status().stats.seen, 50, "counts start afresh");

        let only_info =
            MutationConfig { paths: Some(vec!["/info".into()]), ..MutationConfig::new(1.0, 1) };
        m.set(Some(only_info)).expect("valid");
        assert!(m.draw("/api/v3/order").is_none());
        assert!(m.draw("/info").is_some());
        assert_eq!(m.status().stats.seen, 1);

        m.set(None).expect("off");
        assert!(m.draw("/info").is_none());
        assert_eq!(m.status().config, None);
        assert_eq!(m.status().stats.damaged, 1, "counts stay readable when off");
    }

    #[test]
    fn knobs_reach_only_the_kinds_that_read_them_and_bad_settings_are_refused() {
        let mut m = Mutation::default();
        let config = MutationConfig {
            damages: vec![Damage::Slow, Damage::Banned, Damage::Truncated],
            slow_ms: Some(10),
            retry_after: Some(5),
            ..MutationConfig::new(1.0, 3)
        };
        m.set(Some(config)).expect("valid");
        for _ in 0..30 {
            match m.draw("/exchange") {
                Some(FaultKind::Damage { damage: Damage::Slow, ms, retry_after, .. }) => {
                    assert_eq!((ms, retry_after), (Some(10), None))
                }
                Some(FaultKind::Damage { damage: Damage::Banned, ms, retry_after, .. }) => {
                    assert_eq!((ms, retry_after), (None, Some(5)))
                }
                Some(FaultKind::Damage { ms, retry_after, .. }) => {
                    assert_eq!((ms, retry_after), (None, None))
                }
                other => panic!("not a damage: {other:?}"),
            }
        }
        for bad in [
            MutationConfig::new(1.5, 0),
            MutationConfig::new(f64::NAN, 0),
            MutationConfig { damages: vec![], ..MutationConfig::new(0.5, 0) },
            MutationConfig { paths: Some(vec![]), ..MutationConfig::new(0.5, 0) },
        ] {
            assert!(m.set(Some(bad)).is_err());
        }
        assert!(m.status().config.is_some(), "a refused setting leaves the old one");
    }
}
