//! Plugin benchmarks (release): `cargo bench -p spotbot --bench plugins`.
//!
//! - `call/*`: one scan of the example strategy over 1 symbol × 4 timeframes × 200 candles:
//!   Wasm path (fresh store + instantiate + pass data + call + return + checks) vs the same
//!   strategy called natively. `call/overhead` runs the same request through `guest-echo`,
//!   which ignores the candles: instantiate + pass data + call + return, no strategy work.
//! - `symbols_200/*`: the same strategy over 200 symbols, Wasm vs native (and the echo guest).
//! - `load/template`: compile + link + `describe()` of the example plugin, no artifact cache.
//! - `reload/latency`: from a new `.wasm` renamed into the watched folder to the new version
//!   serving (watcher debounce included).

#[path = "../tests/plugin_wasm/mod.rs"]
mod plugin_wasm;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use spotbot::clock::{SharedClock, SystemClock};
use spotbot::config::Config;
use spotbot::plugins::{Limits, NoMarketData, Plugins, Runtime, StandalonePlugin};
use spotbot::store::Store;
use spotbot_sdk::{Strategy, testing};
use strategy_template::Template;

const NOW: i64 = 1_767_225_600_000;

fn calls(c: &mut Criterion) {
    let runtime = Runtime::new(Limits::default(), None).unwrap();
    let plugin = StandalonePlugin::load(&runtime, &plugin_wasm::template_wasm()).unwrap();
    let echo = plugin_wasm::test_guest("guest_echo.wasm")
        .map(|wasm| StandalonePlugin::load(&runtime, &wasm).unwrap());
    if echo.is_none() {
        eprintln!(
            "target/test-guests/guest_echo.wasm missing (cargo xtask plugins): no overhead bench"
        );
    }
    let needs = Template::describe().candles;
    for symbols in [1usize, 200] {
        let request = testing::request(&needs, symbols, "{}", NOW);
        let host_request = request.clone();
        let group_name = if symbols == 1 { "call" } else { "symbols_200" };
        let mut group = c.benchmark_group(group_name);
        if symbols > 1 {
            group.sample_size(20);
        }
        group.bench_function("wasm", |b| {
            b.iter_batched(
                || host_request.clone(),
                |r| plugin.scan(r).unwrap(),
                BatchSize::SmallInput,
            )
        });
        group.bench_function("native", |b| {
            b.iter_batched(
                || request.clone(),
                |r| Template::scan(r).unwrap(),
                BatchSize::SmallInput,
            )
        });
        if let Some(echo) = &echo {
            group.bench_function("overhead", |b| {
                b.iter_batched(
                    || host_request.clone(),
                    |r| echo.scan(r).unwrap(),
                    BatchSize::SmallInput,
                )
            });
        }
        group.finish();
    }
}

fn load(c: &mut Criterion) {
    let runtime = Runtime::new(Limits::default(), None).unwrap();
    let wasm = plugin_wasm::template_wasm();
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    group.bench_function("template", |b| {
        b.iter(|| StandalonePlugin::load(&runtime, &wasm).unwrap())
    });
    group.finish();
}

fn reload(c: &mut Criterion) {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.plugins.dir = dir.path().display().to_string();
    config.server.data_dir = data.path().display().to_string();
    let store = Store::open(data.path()).unwrap();
    let clock: SharedClock = Arc::new(SystemClock);
    let plugins = Plugins::start(
        Arc::new(config),
        store,
        clock,
        Arc::new(NoMarketData),
        spotbot::metrics::Metrics::default(),
    )
    .unwrap();
    // Every iteration deploys new bytes (a trailing custom section carrying a counter), so each
    // reload compiles: no artifact-cache hit flatters the number.
    let base = plugin_wasm::template_wasm();
    let mut counter = 0u64;
    let mut next_version = move || {
        counter += 1;
        let mut bytes = base.clone();
        bytes.extend_from_slice(&[0x00, 14, 5]);
        bytes.extend_from_slice(b"bench");
        bytes.extend_from_slice(&counter.to_le_bytes());
        bytes
    };
    let mut group = c.benchmark_group("reload");
    group.sample_size(10);
    group.bench_function("latency", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let bytes = next_version();
                let before = plugins.get(strategy_template::NAME).map(|p| p.sha256.clone());
                let tmp = dir.path().join(".template.wasm.tmp");
                std::fs::write(&tmp, &bytes).unwrap();
                let started = Instant::now();
                std::fs::rename(&tmp, dir.path().join("template.wasm")).unwrap();
                loop {
                    let now = plugins.get(strategy_template::NAME).map(|p| p.sha256.clone());
                    if now.is_some() && now != before {
                        break;
                    }
                    assert!(started.elapsed() < Duration::from_secs(5), "reload never happened");
                    std::thread::sleep(Duration::from_millis(1));
                }
                total += started.elapsed();
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, calls, load, reload);
criterion_main!(benches);
