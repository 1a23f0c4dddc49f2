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
    run_against(config, spec, Served::AsLive, progress).await
}

/// [`run`] with the reference replay served `reference` (a planted leak in the tests).
async fn run_against(
    config: &Config,
    spec: &BiasSpec,
    reference: Served,
    progress: &mut Progress,
) -> anyhow::Result<BiasReport> {
    let backtest = &spec.backtest;
    check(config, backtest)?;
    let started = Instant::now();
    let from = backtest.from_ms;
    let reference = Session::start(config, &backtest.plugin, from, reference).await?;
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
            session.scan_clock.set(super::session::datetime(t));
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use spotbot_sdk::indicators::sma;

    use super::*;
    use crate::market::Timeframe;

    const HOUR: i64 = 3_600_000;
    /// 2025-01-01T00:00:00Z.
    const JAN_1: i64 = 1_735_689_600_000;

    /// Whether the benchmark guest `sma_cross` (SMA(10) crossing above SMA(30) on closed 1h
    /// candles) buys at `t`: its rule, on the candles closed by then.
    fn crosses_at(c: &crate::plugins::model::Candles, t: i64) -> bool {
        let closed = c.open_time.partition_point(|open| open + HOUR <= t);
        let close = &c.close[..closed];
        let (fast, slow) = (sma(close, 10), sma(close, 30));
        closed > 30 && fast[closed - 2] < slow[closed - 2] && fast[closed - 1] > slow[closed - 1]
    }

    /// The planted look-ahead: every scan of the reference replay served one candle ahead
    /// (the candle opening at the scan's time as if closed, and the next one forming).
    /// `sma_cross` takes the newest `slow + 2` candles of a window and keeps those closed at
    /// its own time: served ahead, it drops two and is left one candle short of a cross, so
    /// the leaked replay never buys. The check must name the first step where the decisions
    /// part: the first honest cross.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_planted_look_ahead_is_caught_at_the_first_step_it_changes() {
        let plugin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../target/test-guests/guest_sma_cross.wasm");
        assert!(plugin.exists(), "{} is missing: run `cargo xtask plugins`", plugin.display());
        let (data, candles) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let end = JAN_1 + 40 * 24 * HOUR;
        let c = spotbot_sdk::testing::candles(21, "1h", 40 * 24, 100.0, 0.0, end);
        let file = crate::backtest::history::csv_file(candles.path(), "ETHUSDT", Timeframe::H1);
        std::fs::write(file, crate::backtest::history::to_csv(&c)).unwrap();
        let mut config = Config::default();
        config.server.data_dir = data.path().display().to_string();
        let from = JAN_1 + 5 * 24 * HOUR;
        let spec = BiasSpec {
            backtest: Spec {
                plugin,
                symbols: vec!["ETHUSDT".into()],
                from_ms: from,
                to_ms: from + 20 * 24 * HOUR,
                candles: Some(candles.path().to_path_buf()),
            },
            max_steps: 200,
        };
        let mut hidden = Progress::hidden();
        let report =
            run_against(&config, &spec, Served::OneCandleAhead, &mut hidden).await.unwrap();
        assert!(!report.look_ahead.passed, "{}", report.summary());
        let first = report.look_ahead.first.clone().unwrap();
        let expected = (0..200).map(|k| from + k * HOUR).find(|t| crosses_at(&c, *t)).unwrap();
        assert_eq!(first.at, iso(expected), "{}", report.summary());
        assert_eq!(
            (first.symbol.as_str(), first.disagreement.item.as_str()),
            ("ETHUSDT", "checklist:sma_cross_up")
        );
        // Served honestly, the same plugin and candles pass.
        let honest = run(&config, &spec, &mut hidden).await.unwrap();
        assert!(honest.passed(), "{}", honest.summary());
    }
}
