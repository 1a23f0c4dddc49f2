//! `spotbot check-bias`: proves, over a stretch of history, that a plugin's decisions are the
//! ones it would have made live.
//!
//! The plugin's scans are replayed three times from the same first step, each in a session of
//! its own (own plugin instance, own state), on the same history:
//!
//! 1. **as live** ([`Served::AsLive`]): what a backtest serves, the reference;
//! 2. **known only** ([`Served::KnownOnly`]): each scan served from a copy of the history cut
//!    to what was known at its time. A decision that differs from the reference saw something
//!    of the future (**look-ahead**);
//! 3. **more warm-up** ([`Served::MoreWarmup`]): every window [`MORE_WARMUP`] times longer
//!    than the plugin asked for. A decision that differs depends on how much history preceded
//!    it, not only on what the plugin declared it needs (**recursive dependence**: an
//!    average seeded on too few candles, as Freqtrade's `recursive-analysis` finds).
//!
//! Each check names the first step, symbol and checklist item that differ. Decisions are
//! compared, not texts ([`decision`]). Nothing is traded: only the scans run.
//!
//! The host serves a scan nothing after its time by construction (`super::market`); the
//! look-ahead check is the proof for each plugin's own data needs (timeframes, reference
//! symbol, market context), and the guard for every later change of the host.

pub mod decision;
pub mod report;

use std::collections::BTreeMap;
use std::time::Instant;

pub use report::{BiasReport, Check, Difference};

use super::Spec;
use super::history::{History, iso};
use super::market::Served;
use super::progress::Progress;
use super::replay::{Prepared, prepare, steps_between};
use super::session::Session;
use super::setup::check;
use crate::config::Config;
use decision::{Decision, first_disagreement};

/// How many times longer the windows of the "more warm-up" replay are.
pub const MORE_WARMUP: u32 = 3;

/// What to check.
#[derive(Debug, Clone)]
pub struct BiasSpec {
    /// The plugin, symbols, span and candles, as for a backtest.
    pub backtest: Spec,
    /// At most this many steps from the first are replayed (the rest of the span is left
    /// out); it bounds the time of a check.
    pub max_steps: usize,
}

/// The decisions of one replay: per step, per symbol, the decision or the scan's error.
type Decisions = Vec<(i64, BTreeMap<String, Result<Decision, String>>)>;

/// Runs the three replays of `spec` and compares them.
pub async fn run(
    config: &Config,
    spec: &BiasSpec,
    progress: &mut Progress,
) -> anyhow::Result<BiasReport> {
    let backtest = &spec.backtest;
    check(config, backtest)?;
    let started = Instant::now();
    let from = backtest.from_ms;
    let reference = Session::start(config, &backtest.plugin, from, Served::AsLive).await?;
    let prepared = prepare(backtest, &reference, MORE_WARMUP, progress).await?;
    let finest = prepared.finest();
    let (t0, last) = steps_between(finest, backtest.from_ms, backtest.to_ms)?;
    let steps: Vec<i64> = (0..)
        .map(|i| t0 + i * finest.duration_ms())
        .take_while(|t| *t < last)
        .take(spec.max_steps)
        .collect();
    progress.note(&format!(
        "check-bias {}: {} step(s) of {finest} from {}, three replays",
        reference.name,
        steps.len(),
        iso(t0)
    ));
    progress.start(3 * steps.len());
    let as_live = replay(&reference, &prepared, backtest, &steps, (0, progress)).await?;
    let mut others = Vec::new();
    for (n, served) in [Served::KnownOnly, Served::MoreWarmup(MORE_WARMUP)].into_iter().enumerate()
    {
        let session = Session::start(config, &backtest.plugin, from, served).await?;
        others.push(replay(&session, &prepared, backtest, &steps, (n + 1, progress)).await?);
    }
    progress.finish();
    let [known_only, more_warmup] = <[Decisions; 2]>::try_from(others)
        .map_err(|_| anyhow::anyhow!("the replays did not all run"))?;
    Ok(BiasReport {
        replayed: reference.replayed(
            &backtest.symbols,
            finest,
            steps.first().map(|t| iso(*t)).unwrap_or_default(),
            steps.last().map(|t| iso(*t)).unwrap_or_default(),
        ),
        steps: steps.len(),
        look_ahead: compare(&as_live, &known_only),
        recursive: compare(&as_live, &more_warmup),
        more_warmup_times: MORE_WARMUP,
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// Scans every step in order with `session` (its `n`th replay of three, for the progress).
async fn replay(
    session: &Session,
    prepared: &Prepared,
    spec: &Spec,
    steps: &[i64],
    (n, progress): (usize, &mut Progress),
) -> anyhow::Result<Decisions> {
    let history: &History = prepared.history();
    session.market.load(prepared.shared_history(), prepared.finest());
    let mut out = Vec::with_capacity(steps.len());
    for (i, &t) in steps.iter().enumerate() {
        let open: Vec<String> = spec
            .symbols
            .iter()
            .filter(|s| {
                let candles = history.get(s, prepared.finest());
                candles.is_some_and(|c| c.open_time.binary_search(&t).is_ok())
            })
            .cloned()
            .collect();
        let mut decided = BTreeMap::new();
        if !open.is_empty() {
            session.scan_clock.set(super::replay::datetime(t));
            let outcome =
                session.plugins.scan_on_this_thread(&session.name, Some(open.clone())).await;
            match outcome {
                Ok(outcome) => {
                    for result in &outcome.results {
                        decided.insert(result.symbol.clone(), Ok(Decision::of(result)));
                    }
                }
                Err(err) => {
                    for symbol in open {
                        decided.insert(symbol, Err(err.to_string()));
                    }
                }
            }
        }
        out.push((t, decided));
        progress.update(n * steps.len() + i + 1, &format!("replay {} of 3 · {}", n + 1, iso(t)));
    }
    Ok(out)
}

/// Compares `other`'s decisions with the reference's, step by step.
fn compare(reference: &Decisions, other: &Decisions) -> Check {
    let mut check = Check::default();
    for ((t, ours), (_, theirs)) in reference.iter().zip(other) {
        check.steps_compared += 1;
        let mut differs = false;
        for (symbol, decided) in ours {
            let disagreement = match (decided, theirs.get(symbol)) {
                (Ok(a), Some(Ok(b))) => first_disagreement(a, b),
                (a, b) => {
                    let show = |d: Option<&Result<Decision, String>>| match d {
                        Some(Ok(d)) => format!("{:?}", d.direction),
                        Some(Err(e)) => format!("error: {e}"),
                        None => "no result".to_string(),
                    };
                    let (a, b) = (show(Some(a)), show(b));
                    (a != b).then(|| decision::Disagreement {
                        item: "scan".into(),
                        reference: a,
                        other: b,
                    })
                }
            };
            if let Some(d) = disagreement {
                differs = true;
                if check.first.is_none() {
                    check.first =
                        Some(Difference { at: iso(*t), symbol: symbol.clone(), disagreement: d });
                }
            }
        }
        check.differing_steps += usize::from(differs);
    }
    check.passed = check.first.is_none();
    check
}
