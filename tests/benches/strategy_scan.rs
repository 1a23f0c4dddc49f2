//! Strategy scan benchmarks (release): `cargo bench -p spotbot-tests --bench strategy_scan`.
//!
//! Needs `plugins/mr_combined.wasm` and `plugins/pump_momentum.wasm` (`cargo xtask plugins`).
//! Every input is built before timing, like the host's cached candles; what is timed is what a
//! scan does after its candles are in memory.
//!
//! - `mr_scan_200_wasm`: an MR Combined scan of 200 symbols: per symbol the host's market
//!   context (`spotbot::market::context::analyze`, 1d/4h, 200 candles each, + the plugin
//!   record), the symbol's candles (1d×120, 4h×200, 1h×200) copied into the request, then the
//!   Wasm call through `StandalonePlugin` (fresh instance, data passed in, response checks).
//! - `mr_scan_200_native`: the same with the strategy's native `scan` (the host and the SDK
//!   share the contract's types, so the request is the same).
//! - The split of the Wasm scan: `mr_context_200` (the 200 analyses alone),
//!   `mr_assemble_200` (copying the cached candles and contexts into a host request),
//!   `mr_call_200_wasm` /
//!   `mr_call_200_native` (the plugin call alone on a ready request), and `mr_call_200_echo`:
//!   the same request through `guest-echo` (`target/test-guests/`, also from `cargo xtask
//!   plugins`), which ignores the candles — the Wasm call's own cost (instantiate, move 5 MB
//!   of candles in, return) without strategy work.
//! - `pump_scan_300_wasm` / `pump_scan_300_native`: a Pump Momentum scan of 300 symbols × 80
//!   15m candles plus the reference, with the state a previous scan left (so follow-through is
//!   judged too), request copied from memory then scanned. (No echo variant: `guest-echo`
//!   answers one JSON result per symbol, more work than the scanner's few alerts, so it is no
//!   floor there.)
//!
//! `STRATEGY_SCAN_AB=<file.wasm>` replaces criterion by a paired comparison of the MR call
//! through `plugins/mr_combined.wasm` and through another build of it (e.g. other guest
//! flags), see [`paired_mr_calls`].
//!
//! After criterion, when run by `cargo bench`, each full scan is also timed
//! `STRATEGY_SCAN_RUNS` times (default 40, 0 skips it) and p50 / p95 / max are printed, and
//! the phases of the full MR scans (contexts, request, call) are timed inside the same runs,
//! so the split adds up to the whole.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, SamplingMode, criterion_group, criterion_main};
use mr_combined::MrCombined;
use mr_combined::scenarios as mr;
use pump_momentum::scenarios::{self as pump, Pump};
use pump_momentum::{PumpMomentum, apply_state};
use spotbot::market::context::analyze;
use spotbot::plugins::model as host;
use spotbot::plugins::{Limits, Runtime, StandalonePlugin};
use spotbot_sdk::{self as sdk, Strategy, testing};
use spotbot_tests::contract::{built_plugin, workspace_root};

/// 2026-01-01T00:00:00Z, on every candle grid.
const NOW: i64 = 1_767_225_600_000;
const MR_SYMBOLS: usize = 200;
/// Candles per timeframe the host reads for one market context (`CONTEXT_CANDLES`).
const CONTEXT_CANDLES: usize = 200;
const PUMP_SYMBOLS: usize = 300;
const PUMP_CANDLES: usize = 80;

/// One symbol of the MR universe as the host has it in memory.
struct MrSymbol {
    name: String,
    /// 1d × 200 and 4h × 200: the market context's input.
    htf: host::Candles,
    mtf: host::Candles,
    /// The plugin's candles (1d × 120, 4h × 200, 1h × 200).
    data: sdk::SymbolData,
}

fn last_n(c: &sdk::Candles, n: usize) -> sdk::Candles {
    let from = c.len().saturating_sub(n);
    sdk::Candles {
        timeframe: c.timeframe.clone(),
        open_time: c.open_time[from..].to_vec(),
        open: c.open[from..].to_vec(),
        high: c.high[from..].to_vec(),
        low: c.low[from..].to_vec(),
        close: c.close[from..].to_vec(),
        volume: c.volume[from..].to_vec(),
    }
}

/// 200 symbols: 9 in 10 are the SDK's random walks (different seeds and drifts), 1 in 10 a
/// scripted MR scenario (range bounce, range rejection, strong trend, volatile chop), so the
/// scan takes some symbols through every gate, as a universe with a few ranging coins does.
/// A random walk's 1d/4h series are the context's 200 candles and the plugin gets the newest
/// 120/200 of the same series; a scenario has 122 days of history, so its context reads the
/// 1d candles it has (121) and 200 × 4h.
fn mr_universe() -> Vec<MrSymbol> {
    let needs = MrCombined::describe().candles;
    (0..MR_SYMBOLS)
        .map(|i| {
            let name = format!("SYM{i}USDT");
            let seed = i as u64 + 1;
            let drift = 0.0005 * ((i % 5) as f64 - 2.0);
            let (htf, mtf, data) = if i % 10 == 9 {
                let path = match (i / 10) % 4 {
                    0 => mr::range_bounce_buy(NOW),
                    1 => mr::range_rejection_sell(NOW),
                    2 => mr::strong_trend(NOW),
                    _ => mr::volatile_chop(NOW),
                };
                let data = mr::default_symbol_data(&name, &path, None);
                let day = testing::aggregate(&path, "1d");
                let h4 = last_n(&testing::aggregate(&path, "4h"), CONTEXT_CANDLES);
                (day, h4, data)
            } else {
                let series = |k: u64, tf: &str, n: usize| {
                    testing::candles(seed * 31 + k, tf, n, 100.0, drift, NOW)
                };
                let day = series(0, "1d", CONTEXT_CANDLES);
                let h4 = series(1, "4h", CONTEXT_CANDLES);
                let h1 = series(2, "1h", needs[2].count as usize);
                let candles = vec![last_n(&day, needs[0].count as usize), h4.clone(), h1];
                let data = sdk::SymbolData {
                    symbol: name.clone(),
                    last_price: *candles[2].close.last().unwrap(),
                    quote_volume_24h: 5_000_000.0,
                    candles,
                    market_context: None,
                };
                (day, h4, data)
            };
            MrSymbol { name, htf, mtf, data }
        })
        .collect()
}

fn context(s: &MrSymbol) -> host::MarketContext {
    host::MarketContext::from(&analyze(&s.name, "1d", "4h", &s.htf, &s.mtf, NOW / 1000))
}

/// The request of an MR scan: contexts computed, cached candles copied in.
fn mr_request(universe: &[MrSymbol], config: &str) -> host::ScanRequest {
    let symbols = universe
        .iter()
        .map(|s| {
            let mut d = s.data.clone();
            d.market_context = Some(context(s));
            d
        })
        .collect();
    mr::request(NOW, config, symbols)
}

/// The request of a Pump Momentum scan of 300 symbols at the close of candle 79, with the
/// state the scan at the close of candle 78 left: 1 in 20 symbols ignites at the newest
/// candle (pump_watch), 1 in 20 ignited two candles ago and follows through now (pump_signal),
/// 1 in 20 ignited earlier without follow-through (a watch that expires), the rest are quiet.
fn pump_request(config: &str) -> sdk::ScanRequest {
    let last = PUMP_CANDLES - 1;
    let paths: Vec<(String, sdk::Candles)> = (0..PUMP_SYMBOLS)
        .map(|i| {
            let seed = 1000 + i as u64;
            let shape = |ignition_index, follow_through_after| Pump {
                ignition_index,
                follow_through_after,
                seed,
                ..Pump::default()
            };
            let candles = match i % 20 {
                0 => pump::pump(NOW, PUMP_CANDLES, &shape(last, None)).candles,
                1 => pump::pump(NOW, PUMP_CANDLES, &shape(last - 2, Some(2))).candles,
                2 => pump::pump(NOW, PUMP_CANDLES, &shape(last - 3, None)).candles,
                _ => pump::quiet_seeded(seed, NOW, PUMP_CANDLES),
            };
            (format!("P{i}USDT"), candles)
        })
        .collect();
    let reference = pump::reference(NOW, PUMP_CANDLES);
    let at = |index: usize, state: Vec<sdk::StateEntry>| {
        let symbols = paths
            .iter()
            .map(|(s, c)| {
                pump::symbol_data(s, pump::prefix(c, index + 1), pump::LIQUID_QUOTE_VOLUME)
            })
            .collect();
        pump::request(
            pump::closed_at(&reference, index),
            config,
            symbols,
            Some(pump::prefix(&reference, index + 1)),
            state,
        )
    };
    let mut state = Vec::new();
    for index in [last - 3, last - 2, last - 1] {
        let r = PumpMomentum::scan(at(index, state.clone())).expect("the warm-up scan succeeds");
        apply_state(&mut state, &r.state_updates);
    }
    at(last, state)
}

fn summary_mr(r: &host::ScanResponse) -> String {
    let mut gates: BTreeMap<String, usize> = BTreeMap::new();
    for res in &r.results {
        let gate = match res.direction {
            host::Direction::Skip => {
                res.reason.as_deref().unwrap_or("").split(':').next().unwrap_or("").to_string()
            }
            d => format!("{d:?}").to_lowercase(),
        };
        *gates.entry(gate).or_default() += 1;
    }
    format!("{gates:?}")
}

fn percentiles(label: &str, runs: usize, mut f: impl FnMut()) {
    for _ in 0..3 {
        f();
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{label:<22} {runs} runs: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        ms(at(0.5)),
        ms(at(0.95)),
        ms(times[times.len() - 1])
    );
}

/// Times the three phases of a full MR scan back to back, `runs` times (after 3 unrecorded
/// runs), and prints the median of each phase and of their sum.
fn mr_split(label: &str, runs: usize, mut scan: impl FnMut() -> [Duration; 3]) {
    for _ in 0..3 {
        scan();
    }
    let samples: Vec<[Duration; 3]> = (0..runs).map(|_| scan()).collect();
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1e3
    };
    let phase = |k: usize| median(samples.iter().map(|s| s[k]).collect());
    let total = median(samples.iter().map(|s| s.iter().sum()).collect());
    println!(
        "{label:<22} medians: context {:.2} ms, request {:.2} ms, call {:.2} ms; total {total:.2} ms",
        phase(0),
        phase(1),
        phase(2),
    );
}

fn scans(c: &mut Criterion) {
    let runtime = Runtime::new(Limits::default(), None).expect("the Wasm runtime starts");
    let mr_plugin = StandalonePlugin::load(&runtime, &built_plugin("mr_combined.wasm"))
        .expect("mr_combined.wasm loads");
    let pump_plugin = StandalonePlugin::load(&runtime, &built_plugin("pump_momentum.wasm"))
        .expect("pump_momentum.wasm loads");
    let echo_path = workspace_root().join("target/test-guests/guest_echo.wasm");
    let echo = std::fs::read(&echo_path)
        .ok()
        .map(|wasm| StandalonePlugin::load(&runtime, &wasm).expect("guest_echo.wasm loads"));
    if echo.is_none() {
        println!("{} missing (cargo xtask plugins): no mr_call_200_echo", echo_path.display());
    }
    let mr_config = mr_plugin.manifest.default_config.clone();
    let pump_config = pump_plugin.manifest.default_config.clone();

    let universe = mr_universe();
    let ready = mr_request(&universe, &mr_config);
    let check = mr_plugin.scan(ready.clone()).expect("the MR scan succeeds");
    assert_eq!(check.results.len(), MR_SYMBOLS);
    let pump_ready = pump_request(&pump_config);
    let pump_check = pump_plugin.scan(pump_ready.clone()).expect("the pump scan succeeds");
    let stages = pump_check.alerts.iter().fold(BTreeMap::<String, usize>::new(), |mut m, a| {
        *m.entry(format!("{:?}", a.stage)).or_default() += 1;
        m
    });
    let bytes = |r: &host::ScanRequest| -> usize {
        r.symbols.iter().chain(&r.reference).flat_map(|s| &s.candles).map(|c| c.len() * 48).sum()
    };
    println!(
        "mr_combined: {MR_SYMBOLS} symbols, {:.1} MB of candles, results {}",
        bytes(&ready) as f64 / 1e6,
        summary_mr(&check)
    );
    println!(
        "pump_momentum: {PUMP_SYMBOLS} symbols + reference, {:.1} MB of candles, {} state \
         entries, alerts {stages:?}",
        bytes(&pump_ready) as f64 / 1e6,
        pump_ready.state.len(),
    );

    if let Ok(other) = std::env::var("STRATEGY_SCAN_AB") {
        paired_mr_calls(&runtime, &mr_plugin, &other, &ready, &check);
        return;
    }

    let mut g = c.benchmark_group("strategy_scan");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6));

    g.bench_function("mr_scan_200_wasm", |b| {
        b.iter(|| mr_plugin.scan(mr_request(&universe, &mr_config)).unwrap())
    });
    g.bench_function("mr_scan_200_native", |b| {
        b.iter(|| MrCombined::scan(mr_request(&universe, &mr_config)).unwrap())
    });
    g.bench_function("mr_context_200", |b| {
        b.iter(|| universe.iter().map(context).collect::<Vec<_>>())
    });
    let contexts: Vec<host::MarketContext> = universe.iter().map(context).collect();
    g.bench_function("mr_assemble_200", |b| {
        b.iter(|| {
            let symbols: Vec<host::SymbolData> = universe
                .iter()
                .zip(&contexts)
                .map(|(s, ctx)| {
                    let mut d = s.data.clone();
                    d.market_context = Some(ctx.clone());
                    d
                })
                .collect();
            black_box(symbols)
        })
    });
    g.bench_function("mr_call_200_wasm", |b| {
        b.iter_batched(|| ready.clone(), |r| mr_plugin.scan(r).unwrap(), BatchSize::LargeInput)
    });
    if let Some(echo) = &echo {
        g.bench_function("mr_call_200_echo", |b| {
            b.iter_batched(|| ready.clone(), |r| echo.scan(r).unwrap(), BatchSize::LargeInput)
        });
    }
    g.bench_function("mr_call_200_native", |b| {
        b.iter_batched(|| ready.clone(), |r| MrCombined::scan(r).unwrap(), BatchSize::LargeInput)
    });
    g.bench_function("pump_scan_300_wasm", |b| {
        b.iter(|| pump_plugin.scan(pump_ready.clone()).unwrap())
    });
    g.bench_function("pump_scan_300_native", |b| {
        b.iter(|| PumpMomentum::scan(pump_ready.clone()).unwrap())
    });
    g.finish();

    let runs: usize =
        std::env::var("STRATEGY_SCAN_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    // Only under `cargo bench` (criterion's `--bench`), not when `cargo test` smoke-runs it.
    if runs > 0 && std::env::args().any(|a| a == "--bench") {
        println!("\nPer-scan latency (each run timed alone):");
        percentiles("mr_scan_200_wasm", runs, || {
            black_box(mr_plugin.scan(mr_request(&universe, &mr_config)).unwrap());
        });
        percentiles("mr_scan_200_native", runs, || {
            black_box(MrCombined::scan(mr_request(&universe, &mr_config)).unwrap());
        });
        println!("\nSplit of one full MR scan (phases timed inside the same run):");
        mr_split("mr_scan_200_wasm", runs, || {
            let t0 = Instant::now();
            let contexts: Vec<host::MarketContext> = universe.iter().map(context).collect();
            let t1 = Instant::now();
            let symbols = universe
                .iter()
                .zip(contexts)
                .map(|(s, ctx)| {
                    let mut d = s.data.clone();
                    d.market_context = Some(ctx);
                    d
                })
                .collect();
            let request = host::ScanRequest {
                now_ms: NOW,
                config: mr_config.clone(),
                symbols,
                reference: None,
                state: Vec::new(),
            };
            let t2 = Instant::now();
            black_box(mr_plugin.scan(request).unwrap());
            [t1 - t0, t2 - t1, t2.elapsed()]
        });
        mr_split("mr_scan_200_native", runs, || {
            let t0 = Instant::now();
            let contexts: Vec<host::MarketContext> = universe.iter().map(context).collect();
            let t1 = Instant::now();
            let symbols = universe
                .iter()
                .zip(&contexts)
                .map(|(s, ctx)| {
                    let mut d = s.data.clone();
                    d.market_context = Some(ctx.clone());
                    d
                })
                .collect();
            let request = mr::request(NOW, &mr_config, symbols);
            let t2 = Instant::now();
            black_box(MrCombined::scan(request).unwrap());
            [t1 - t0, t2 - t1, t2.elapsed()]
        });
        println!();
        percentiles("pump_scan_300_wasm", runs, || {
            black_box(pump_plugin.scan(pump_ready.clone()).unwrap());
        });
        percentiles("pump_scan_300_native", runs, || {
            black_box(PumpMomentum::scan(pump_ready.clone()).unwrap());
        });
    }
}

/// `STRATEGY_SCAN_AB=<other mr_combined.wasm>`: instead of criterion, times the MR call of
/// `plugins/mr_combined.wasm` (A), of the other build (B) and of the native scan, alternating
/// A and B on the same request `STRATEGY_SCAN_AB_RUNS` times (default 80), and prints their
/// medians and the median of the paired B/A ratios. On the shared VM the speed of the same
/// code drifts by up to 1.6x over seconds; pairing the calls cancels most of that drift.
fn paired_mr_calls(
    runtime: &std::sync::Arc<Runtime>,
    a: &StandalonePlugin,
    other: &str,
    ready: &host::ScanRequest,
    a_response: &host::ScanResponse,
) {
    let wasm = std::fs::read(other).unwrap_or_else(|e| panic!("{other}: {e}"));
    let b = StandalonePlugin::load(runtime, &wasm).expect("the B build loads");
    let b_response = b.scan(ready.clone()).expect("the B scan succeeds");
    assert_eq!(format!("{b_response:?}"), format!("{a_response:?}"), "A and B disagree");
    let runs: usize =
        std::env::var("STRATEGY_SCAN_AB_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(80);
    let time = |f: &dyn Fn(host::ScanRequest)| {
        let request = ready.clone();
        let t = Instant::now();
        f(request);
        t.elapsed().as_secs_f64() * 1e3
    };
    let call_a = || time(&|r| drop(black_box(a.scan(r).unwrap())));
    let call_b = || time(&|r| drop(black_box(b.scan(r).unwrap())));
    let mut samples = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for i in 0..runs {
        let (ta, tb) = if i % 2 == 0 {
            let ta = call_a();
            (ta, call_b())
        } else {
            let tb = call_b();
            (call_a(), tb)
        };
        let tn = time(&|r| drop(black_box(MrCombined::scan(r).unwrap())));
        for (k, v) in [ta, tb, tn, tb / ta].into_iter().enumerate() {
            samples[k].push(v);
        }
    }
    let [a, b, native, ratio] = samples.map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    });
    println!(
        "mr_call_200 paired, {runs} runs: A {a:.2} ms, B {b:.2} ms, native {native:.2} ms \
         (medians); B/A {ratio:.3} (median of the paired ratios)"
    );
}

criterion_group!(benches, scans);
criterion_main!(benches);
