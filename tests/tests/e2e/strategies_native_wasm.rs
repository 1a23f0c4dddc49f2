//! Differential test of the two strategy plugins: the same request through the native library
//! (`mr_combined::MrCombined::scan`, `pump_momentum::PumpMomentum::scan`) and through the Wasm
//! component the service loads (`plugins/*.wasm` from `cargo xtask plugins`, run by
//! `spotbot::plugins::StandalonePlugin` with the default limits and the host's response
//! checks) must give the same response, field by field, floats bit for bit
//! (`spotbot_tests::contract::ResponseView`). Each case also checks that its scenario really
//! produces what it claims (a buy, a regime skip, a pump_watch then a pump_signal), so the
//! equality is never the trivial one of two empty answers.

use std::sync::OnceLock;

use mr_combined::MrCombined;
use mr_combined::scenarios as mr;
use pump_momentum::scenarios::{self as pump, Pump};
use pump_momentum::{PumpMomentum, apply_state};
use serde_json::json;
use spotbot::market::context::analyze;
use spotbot::plugins::model::MarketContext as HostContext;
use spotbot::plugins::{Limits, PluginError, Runtime, StandalonePlugin};
use spotbot_sdk::{
    Candles, PriorityDecision, ScanError, ScanRequest, ScanResponse, StateEntry, Strategy,
    SymbolData, testing,
};
use spotbot_tests::contract::{
    ErrorView, ResponseView, ResultView, built_plugin, view, view_error,
};

/// 2026-01-01T00:00:00Z: on the 4h and 1d grids.
const NOW: i64 = 1_767_225_600_000;
const HOUR: i64 = 3_600_000;

struct Plugins {
    mr: StandalonePlugin,
    pump: StandalonePlugin,
}

/// Both components, compiled once per test binary.
fn plugins() -> &'static Plugins {
    static PLUGINS: OnceLock<Plugins> = OnceLock::new();
    PLUGINS.get_or_init(|| {
        let runtime = Runtime::new(Limits::default(), None).expect("the Wasm runtime starts");
        let load = |file: &str| {
            StandalonePlugin::load(&runtime, &built_plugin(file))
                .unwrap_or_else(|e| panic!("{file} does not load: {e}"))
        };
        Plugins { mr: load("mr_combined.wasm"), pump: load("pump_momentum.wasm") }
    })
}

type Outcome = Result<ResponseView, ErrorView>;

fn native_outcome(r: Result<ScanResponse, ScanError>) -> Outcome {
    r.as_ref().map(view).map_err(view_error)
}

/// Runs `request` through the Wasm component. A plugin error is an outcome to compare; any
/// other failure (trap, deadline, a response the host refuses) fails the test.
fn wasm_outcome(plugin: &StandalonePlugin, label: &str, request: &ScanRequest) -> Outcome {
    match plugin.scan(request.clone()) {
        Ok(r) => Ok(view(&r)),
        Err(PluginError::Plugin(e)) => Err(view_error(&e)),
        Err(other) => panic!("{label}: the Wasm scan failed in the host: {other}"),
    }
}

/// Asserts equal outcomes, pointing at the first differing result, alert or update.
fn assert_same(label: &str, native: &Outcome, wasm: &Outcome) {
    if native == wasm {
        return;
    }
    if let (Ok(n), Ok(w)) = (native, wasm) {
        for (i, (a, b)) in n.results.iter().zip(&w.results).enumerate() {
            assert_eq!(a, b, "{label}: result {i} differs (left native, right Wasm)");
        }
        for (i, (a, b)) in n.alerts.iter().zip(&w.alerts).enumerate() {
            assert_eq!(a, b, "{label}: alert {i} differs (left native, right Wasm)");
        }
        for (i, (a, b)) in n.state_updates.iter().zip(&w.state_updates).enumerate() {
            assert_eq!(a, b, "{label}: state update {i} differs (left native, right Wasm)");
        }
    }
    assert_eq!(native, wasm, "{label}: native (left) and Wasm (right) differ");
}

/// The MR Combined scan of `request` on both sides; the (equal) response.
fn mr_both(label: &str, request: &ScanRequest) -> Outcome {
    let native = native_outcome(MrCombined::scan(request.clone()));
    let wasm = wasm_outcome(&plugins().mr, label, request);
    assert_same(label, &native, &wasm);
    native
}

fn mr_results(label: &str, request: &ScanRequest) -> Vec<ResultView> {
    let r = mr_both(label, request).unwrap_or_else(|e| panic!("{label}: scan failed: {e:?}"));
    assert_eq!(r.results.len(), request.symbols.len(), "{label}");
    assert!(r.alerts.is_empty() && r.state_updates.is_empty(), "{label}");
    r.results
}

fn mr_one(label: &str, now_ms: i64, config: &str, symbol: SymbolData) -> ResultView {
    mr_results(label, &mr::request(now_ms, config, vec![symbol])).remove(0)
}

fn mr_data(symbol: &str, one_hour: &Candles, decision: Option<PriorityDecision>) -> SymbolData {
    mr::default_symbol_data(symbol, one_hour, decision.map(mr::market_context))
}

fn reason(r: &ResultView) -> &str {
    r.reason.as_deref().unwrap_or("")
}

#[test]
fn manifests_match() {
    let p = plugins();
    for (native, wasm) in
        [(MrCombined::describe(), &p.mr.manifest), (PumpMomentum::describe(), &p.pump.manifest)]
    {
        // A difference here usually means plugins/ is older than the source: `cargo xtask plugins`.
        assert_eq!(wasm.name, native.name);
        assert_eq!(wasm.version, native.version, "{}", native.name);
        assert_eq!(wasm.description, native.description, "{}", native.name);
        assert_eq!(wasm.default_config, native.default_config, "{}", native.name);
        assert_eq!(
            (wasm.needs_reference, wasm.needs_market_context),
            (native.needs_reference, native.needs_market_context),
            "{}",
            native.name
        );
        let needs = |n: &[spotbot_sdk::CandleNeed]| {
            n.iter().map(|c| (c.timeframe.clone(), c.count)).collect::<Vec<_>>()
        };
        let wasm_needs: Vec<_> =
            wasm.candles.iter().map(|c| (c.timeframe.clone(), c.count)).collect();
        assert_eq!(wasm_needs, needs(&native.candles), "{}", native.name);
    }
}

#[test]
fn mr_combined_scenarios_match() {
    let buy = mr::range_bounce_buy(NOW);
    let sell = mr::range_rejection_sell(NOW);
    let standby = Some(PriorityDecision::Standby);

    let r = mr_one("buy, standby", NOW, "{}", mr_data("BTCUSDT", &buy, standby));
    assert_eq!(r.direction, "buy", "{r:#?}");
    assert!(reason(&r).starts_with("buy at support 95"), "{}", reason(&r));
    assert!(r.tier.is_some() && r.sl_pct.0 > 0.0 && r.tp_pct.0 > 0.0 && r.tp1_pct.is_some());
    let default_sl = r.sl_pct;

    let long = Some(PriorityDecision::TradeLong);
    let r = mr_one("buy, trade_long", NOW, "{}", mr_data("BTCUSDT", &buy, long));
    assert_eq!(r.direction, "buy", "{r:#?}");

    let r = mr_one("sell, standby", NOW, "{}", mr_data("ETHUSDT", &sell, standby));
    assert_eq!(r.direction, "sell", "{r:#?}");
    let short = Some(PriorityDecision::TradeShort);
    let r = mr_one("sell, trade_short", NOW, "{}", mr_data("ETHUSDT", &sell, short));
    assert_eq!(r.direction, "sell", "{r:#?}");

    let trend = mr::strong_trend(NOW);
    let r = mr_one("strong trend", NOW, "{}", mr_data("SOLUSDT", &trend, standby));
    assert_eq!(r.direction, "skip");
    assert!(reason(&r).starts_with("regime"), "{}", reason(&r));

    let chop = mr::volatile_chop(NOW);
    let r = mr_one("volatile chop", NOW, "{}", mr_data("BNBUSDT", &chop, standby));
    assert_eq!(r.direction, "skip");
    assert!(reason(&r).starts_with("regime: 1h volatile chop"), "{}", reason(&r));

    // News windows: one wrapping midnight covers NOW (00:00 UTC); at 13:45 the other one does.
    let news = json!({ "news_blackout_windows_utc": ["13:30-14:30", "23:30-00:30"] }).to_string();
    let r = mr_one("news window at 00:00", NOW, &news, mr_data("BTCUSDT", &buy, standby));
    assert_eq!(r.direction, "skip");
    assert!(reason(&r).starts_with("news_blackout: 23:30-00:30 UTC"), "{}", reason(&r));
    let later = NOW + 13 * HOUR + 45 * 60_000;
    let data = mr_data("BTCUSDT", &mr::range_bounce_buy(later), standby);
    let r = mr_one("news window at 13:45", later, &news, data);
    assert!(reason(&r).starts_with("news_blackout: 13:30-14:30 UTC"), "{}", reason(&r));

    // Every threshold that shapes a signal away from its default: still a buy, other numbers.
    let tuned = json!({
        "sl_atr_multiplier": 2.0, "tp2_atr_multiplier": 0.5,
        "tp1_ratio": 0.5, "tp2_ratio": 0.3, "tp3_ratio": 0.2, "min_rr": 2.0,
        "range_min_atr_multiplier": 4.0, "zone_proximity_atr_min": 0.2,
        "zone_proximity_atr_max": 0.6, "vol_increase_min": 1.1,
        "news_blackout_windows_utc": ["12:00-13:00"],
    })
    .to_string();
    let r = mr_one("non-default thresholds", NOW, &tuned, mr_data("BTCUSDT", &buy, standby));
    assert_eq!(r.direction, "buy", "{r:#?}");
    assert_ne!(r.sl_pct, default_sl, "the tuned stop distance was not used");
    // Thresholds that stop the same setup at each later gate.
    for (config, expected) in [
        (json!({"range_min_atr_multiplier": 9.5}), "range: "),
        (json!({"zone_proximity_atr_min": 0.1, "zone_proximity_atr_max": 0.2}), "entry: "),
        (json!({"vol_increase_min": 2.0}), "entry: "),
        (json!({"min_rr": 5.0}), "min_rr: "),
    ] {
        let label = format!("thresholds {config}");
        let r = mr_one(&label, NOW, &config.to_string(), mr_data("BTCUSDT", &buy, standby));
        assert_eq!(r.direction, "skip", "{label}");
        assert!(reason(&r).starts_with(expected), "{label}: {}", reason(&r));
    }

    // The market-context override, the last gate.
    for decision in [
        Some(PriorityDecision::NoTrade),
        Some(PriorityDecision::WatchRegimeShift),
        Some(PriorityDecision::TradeShort),
        None,
    ] {
        let mut d = mr_data("BTCUSDT", &buy, decision);
        if let Some(c) = d.market_context.as_mut().filter(|_| decision.is_some()) {
            c.no_trade_reason = "volatile_chop".into();
        }
        let label = format!("buy blocked by {decision:?}");
        let r = mr_one(&label, NOW, "{}", d);
        assert_eq!(r.direction, "skip", "{label}");
        assert!(reason(&r).starts_with("market_context: "), "{label}: {}", reason(&r));
        assert_eq!((r.passed, r.total), (11, 12), "{label}");
    }

    // All of them in one request, in one instance.
    let batch = vec![
        mr_data("BUYUSDT", &buy, standby),
        mr_data("SELLUSDT", &sell, short),
        mr_data("TRENDUSDT", &trend, long),
        mr_data("CHOPUSDT", &chop, standby),
        mr_data("NOCTXUSDT", &buy, None),
    ];
    let results = mr_results("five scenarios in one scan", &mr::request(NOW, "{}", batch));
    let directions: Vec<_> = results.iter().map(|r| r.direction).collect();
    assert_eq!(directions, ["buy", "sell", "skip", "skip", "skip"]);
}

/// The host's context for a symbol's 1d and 4h candles, as the SDK record.
fn analyzed_context(d: &SymbolData) -> spotbot_sdk::MarketContext {
    let (htf, mtf) = (&d.candles[0], &d.candles[1]);
    assert_eq!((htf.timeframe.as_str(), mtf.timeframe.as_str()), ("1d", "4h"));
    let context = analyze(&d.symbol, "1d", "4h", htf, mtf, NOW / 1000);
    HostContext::from(&context)
}

#[test]
fn context_json_round_trips_every_case_in_snake_case() {
    use spotbot::plugins::model::{
        BosMode, LiquidityProfile, MacroPhase, PriorityDecision as D, RangePosition, Regime,
        TrendAge,
    };
    let phases = [MacroPhase::Bull, MacroPhase::Bear, MacroPhase::Range];
    let positions = [
        RangePosition::Low,
        RangePosition::Mid,
        RangePosition::High,
        RangePosition::JustBrokenUp,
        RangePosition::JustBrokenDown,
        RangePosition::Unknown,
    ];
    let profiles = [
        LiquidityProfile::Clean,
        LiquidityProfile::EqualHighs,
        LiquidityProfile::EqualLows,
        LiquidityProfile::Void,
    ];
    let regimes = [
        Regime::Trend,
        Regime::Compression,
        Regime::Sideway,
        Regime::VolatileChop,
        Regime::Transition,
        Regime::Unknown,
    ];
    let bos = [BosMode::Confirmed, BosMode::Quick, BosMode::None];
    let ages = [TrendAge::Fresh, TrendAge::Extended, TrendAge::None];
    let decisions = [D::TradeLong, D::TradeShort, D::Standby, D::NoTrade, D::WatchRegimeShift];
    for i in 0..6 {
        let context = HostContext {
            htf_tf: "1d".into(),
            mtf_tf: "4h".into(),
            macro_phase: phases[i % phases.len()],
            range_position: positions[i % positions.len()],
            liquidity_profile: profiles[i % profiles.len()],
            range_high: 105.0 + i as f64,
            range_low: 95.0 - i as f64,
            regime: regimes[i % regimes.len()],
            trend_direction: ["up", "down", "none"][i % 3].into(),
            bos_mode: bos[i % bos.len()],
            trend_age: ages[i % ages.len()],
            compression_bias: ["none", "up"][i % 2].into(),
            volatile_chop: i % 2 == 0,
            atr: 1.25 * i as f64,
            priority_decision: decisions[i % decisions.len()],
            no_trade_reason: ["", "compression"][i % 2].into(),
            timestamp: NOW / 1000 + i as i64,
        };
        // One type for the host, the SDK and the API: every case in the API's snake_case,
        // and back to the same record.
        let json = serde_json::to_value(&context).unwrap();
        let cases = ["macro_phase", "range_position", "liquidity_profile", "regime"];
        for key in cases.into_iter().chain(["bos_mode", "trend_age", "priority_decision"]) {
            let case = json[key].as_str().unwrap();
            assert!(case.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{key}: {case}");
        }
        assert_eq!(serde_json::from_value::<HostContext>(json).unwrap(), context);
    }
}

#[test]
fn mr_combined_random_batch_matches() {
    let needs = MrCombined::describe().candles;
    let mut request = testing::request(&needs, 20, "{}", NOW);
    for (i, s) in request.symbols.iter_mut().enumerate() {
        s.market_context = match i % 4 {
            0 => None,
            1 => Some(analyzed_context(s)),
            2 => Some(mr::market_context(PriorityDecision::Standby)),
            _ => Some(mr::market_context(PriorityDecision::TradeShort)),
        };
    }
    // Also a few symbols the strategy takes all the way to a signal, so the batch is not only
    // early skips of random walks.
    request.symbols.push(mr_data("BUYUSDT", &mr::range_bounce_buy(NOW), None));
    let mut buy = mr_data("BUY2USDT", &mr::range_bounce_buy(NOW), None);
    buy.market_context = Some(analyzed_context(&buy));
    request.symbols.push(buy);
    request.symbols.push(mr_data(
        "SELLUSDT",
        &mr::range_rejection_sell(NOW),
        Some(PriorityDecision::Standby),
    ));

    let results = mr_results("20 random walks + 3 scenarios", &request);
    for (r, s) in results.iter().zip(&request.symbols) {
        assert_eq!(r.symbol, s.symbol);
    }
    // The random walks reach different gates (not one trivial answer repeated).
    let gates: std::collections::BTreeSet<&str> =
        results[..20].iter().map(|r| reason(r).split(':').next().unwrap_or("")).collect();
    assert!(gates.len() >= 2, "every random walk stopped at the same gate: {gates:?}");
    assert!(results[..20].iter().any(|r| r.total > 1), "{results:#?}");
    assert_eq!(results[22].direction, "sell");
}

#[test]
fn mr_combined_errors_match() {
    let buy = mr::range_bounce_buy(NOW);
    let data = mr_data("BTCUSDT", &buy, Some(PriorityDecision::Standby));
    for config in [
        r#"{"tp3_ratio": 0.3}"#,
        r#"{"unknown_key": 1}"#,
        r#"{"news_blackout_windows_utc": ["10:00-10:00"]}"#,
        "not json",
    ] {
        let label = format!("config {config}");
        let outcome = mr_both(&label, &mr::request(NOW, config, vec![data.clone()]));
        assert!(matches!(&outcome, Err(("bad_config", _))), "{label}: {outcome:?}");
    }
    let mut short = data.clone();
    short.candles.remove(1);
    let outcome = mr_both("no 4h candles", &mr::request(NOW, "{}", vec![short]));
    assert!(matches!(&outcome, Err(("missing_data", m)) if m.contains("4h")), "{outcome:?}");
}

// ---------------------------------------------------------------------------------------------
// Pump Momentum: a sequence of scans, the state carried on each side separately

const N: usize = 80;
const LIQUID: f64 = pump::LIQUID_QUOTE_VOLUME;

/// One alert of a replay: (index of the newest closed candle, symbol, stage).
type Seen = (usize, String, &'static str);

/// Replays `paths` candle by candle from index `from`, like the scheduler sees them: two scans
/// per candle (0 and 5 minutes after it closed, the next candle already forming), each sent to
/// both sides with that side's own state, which is then updated from that side's response.
/// Asserts equal responses and equal states at every step; returns the alerts and, per step,
/// the state keys.
fn pump_replay(
    config: &str,
    paths: &[(&str, &Candles)],
    from: usize,
) -> (Vec<Seen>, Vec<(usize, Vec<String>)>) {
    let reference = pump::reference(NOW, N);
    let mut native_state: Vec<StateEntry> = Vec::new();
    let mut wasm_state: Vec<StateEntry> = Vec::new();
    let mut seen = Vec::new();
    let mut keys = Vec::new();
    for i in from..N {
        for offset in [0, 5 * 60_000] {
            let label = format!("{config} candle {i} +{}m", offset / 60_000);
            let now = pump::closed_at(&reference, i) + offset;
            let symbols: Vec<SymbolData> = paths
                .iter()
                .map(|(s, c)| pump::symbol_data(s, pump::prefix(c, i + 2), LIQUID))
                .collect();
            let request = |state: &[StateEntry]| {
                pump::request(
                    now,
                    config,
                    symbols.clone(),
                    Some(pump::prefix(&reference, i + 2)),
                    state.to_vec(),
                )
            };
            let native = PumpMomentum::scan(request(&native_state));
            let native_view = native_outcome(native.clone());
            let wasm = match plugins().pump.scan(request(&wasm_state)) {
                Ok(r) => r,
                Err(e) => panic!("{label}: the Wasm scan failed: {e}"),
            };
            assert_same(&label, &native_view, &Ok(view(&wasm)));
            let native = native.expect("the native scan succeeds");
            apply_state(&mut native_state, &native.state_updates);
            apply_state(&mut wasm_state, &wasm.state_updates);
            assert_eq!(native_state, wasm_state, "{label}: the states differ");
            let view = native_view.expect("checked above");
            seen.extend(view.alerts.into_iter().map(|a| (i, a.symbol, a.stage)));
            keys.push((i, native_state.iter().map(|e| e.key.clone()).collect()));
        }
    }
    (seen, keys)
}

fn has_key(keys: &[(usize, Vec<String>)], i: usize, key: &str) -> bool {
    keys.iter().filter(|(at, _)| *at == i).all(|(_, k)| k.iter().any(|x| x == key))
}

#[test]
fn pump_momentum_sequence_matches() {
    let follow = pump::pump_then_follow_through(NOW, N, 60, 2);
    let fade = pump::pump(
        NOW,
        N,
        &Pump { ignition_index: 56, follow_through_after: None, seed: 11, ..Pump::default() },
    );
    let quiet = pump::quiet_seeded(3, NOW, N);
    let paths = [("PUMPUSDT", &follow.candles), ("FADEUSDT", &fade.candles), ("CALMUSDT", &quiet)];
    let (seen, keys) = pump_replay("{}", &paths, 50);
    let s = |i: usize, sym: &str, stage: &'static str| (i, sym.to_string(), stage);
    // Ignition → pump_watch; follow-through two candles later → pump_signal; the fading pump
    // only watches, the quiet symbol never alerts.
    assert_eq!(
        seen,
        [
            s(56, "FADEUSDT", "pump_watch"),
            s(60, "PUMPUSDT", "pump_watch"),
            s(62, "PUMPUSDT", "pump_signal")
        ]
    );
    // The fading pump's watch lives through the 3rd candle after its ignition, then expires.
    assert!(has_key(&keys, 56, "watch:FADEUSDT") && has_key(&keys, 58, "watch:FADEUSDT"));
    assert!(!keys.iter().any(|(i, k)| *i >= 59 && k.iter().any(|x| x == "watch:FADEUSDT")));
    assert!(has_key(&keys, 60, "watch:PUMPUSDT"));
}

#[test]
fn pump_momentum_sequence_with_other_config_matches() {
    let follow = pump::pump_then_follow_through(NOW, N, 60, 4);
    let quiet = pump::quiet(NOW, N);
    let paths = [("PUMPUSDT", &follow.candles), ("CALMUSDT", &quiet)];
    let config = r#"{"stage2_expiry_candles": 4, "rel_strength_1h_min": 1.0}"#;
    let (seen, _) = pump_replay(config, &paths, 55);
    let stages: Vec<_> = seen.iter().map(|(i, sym, st)| (*i, sym.as_str(), *st)).collect();
    assert_eq!(stages, [(60, "PUMPUSDT", "pump_watch"), (64, "PUMPUSDT", "pump_signal")]);
    // With the default expiry of 3 candles the same path only watches: the config is read.
    let (seen, _) = pump_replay(r#"{"rel_strength_1h_min": 1.0}"#, &paths, 55);
    assert_eq!(seen.len(), 1, "{seen:?}");
}
