//! Native end-to-end tests of the scanner: scans called like the host calls them, with the
//! state carried between scans by applying the state updates like the host does.

use pump_momentum::alert::{metric, names};
use pump_momentum::memory::{self, MAX_WATCHES, Watch};
use pump_momentum::scenarios::{self, Pump, Scenario, symbol_data};
use pump_momentum::series::STEP_MS;
use pump_momentum::{Config, MIN_CLOSED_CANDLES, NAME, PumpMomentum, apply_state};
use spotbot_sdk::{
    Candles, ConfidenceLevel, PluginKind, ScanError, ScanRequest, ScanResponse, ScannerAlert,
    Stage, StateEntry, StateUpdate, Strategy, SymbolData,
};

/// 2026-01-01T00:00:00Z; the paths end here.
const END: i64 = 1_767_225_600_000;
const N: usize = 80;
const IGNITION: usize = 60;
const LIQUID: f64 = scenarios::LIQUID_QUOTE_VOLUME;

fn reference() -> Candles {
    scenarios::reference(END, N)
}

fn request(
    now_ms: i64,
    config: &str,
    symbols: Vec<SymbolData>,
    state: &[StateEntry],
) -> ScanRequest {
    scenarios::request(now_ms, config, symbols, Some(reference()), state.to_vec())
}

fn scan(req: ScanRequest) -> ScanResponse {
    let r = PumpMomentum::scan(req).expect("scan succeeds");
    assert!(r.results.is_empty(), "a scanner never returns results");
    r
}

/// Replays a path like the host sees it: for every candle from `from` on, three scans 0, 5 and
/// 10 minutes after it closed, each with the next candle already forming (its full future
/// values sent, as a stress test of "only closed candles count"). Returns every alert with the
/// index of the newest closed candle at that scan, and the final state.
fn replay(
    paths: &[(&str, &Candles)],
    reference: &Candles,
    config: &str,
    from: usize,
) -> (Vec<(usize, String, ScannerAlert)>, Vec<StateEntry>) {
    let mut state = Vec::new();
    let mut out = Vec::new();
    let len = paths[0].1.len();
    for i in from..len {
        for offset in [0, 5 * 60_000, 10 * 60_000] {
            let now = scenarios::closed_at(paths[0].1, i) + offset;
            let symbols = paths
                .iter()
                .map(|(s, c)| symbol_data(s, scenarios::prefix(c, i + 2), LIQUID))
                .collect();
            let req = scenarios::request(
                now,
                config,
                symbols,
                Some(scenarios::prefix(reference, i + 2)),
                state.clone(),
            );
            let r = scan(req);
            apply_state(&mut state, &r.state_updates);
            out.extend(r.alerts.into_iter().map(|a| (i, a.symbol.clone(), a)));
        }
    }
    (out, state)
}

fn replay_one(
    s: &Scenario,
    config: &str,
) -> (Vec<(usize, Stage)>, Vec<ScannerAlert>, Vec<StateEntry>) {
    let (alerts, state) = replay(&[("PUMPUSDT", &s.candles)], &reference(), config, 40);
    let at = alerts.iter().map(|(i, _, a)| (*i, a.stage)).collect();
    (at, alerts.into_iter().map(|(_, _, a)| a).collect(), state)
}

/// One scan with `candles` fully closed at the end of the path.
fn scan_closed(candles: Candles, config: &str) -> ScanResponse {
    let now = scenarios::closed_at(&candles, candles.len().saturating_sub(1));
    scan(request(now, config, vec![symbol_data("PUMPUSDT", candles, LIQUID)], &[]))
}

fn m(alert: &ScannerAlert, name: &str) -> f64 {
    metric(alert, name).unwrap_or_else(|| panic!("metric {name} missing"))
}

spotbot_sdk::contract_tests! {
    plugin: PumpMomentum,
    config: Config,
    name: NAME,
    kind: PluginKind::Scanner,
    candles: [("15m", 80)],
    needs_reference: true,
    needs_market_context: false,
    default_config: serde_json::json!({
        "enabled": true, "use_universe": true, "watchlist_override": [], "scan_limit_15m": 80,
        "vol_ratio_threshold": 3.0, "candle_return_min_pct": 2.5, "close_strength_min": 0.70,
        "rel_strength_15m_min": 2.0, "rel_strength_1h_min": 4.0, "follow_vol_ratio_min": 1.5,
        "late_entry_atr_mult": 5.0, "min_quote_volume_usd": 200000.0, "stage2_expiry_candles": 3
    }),
}

#[test]
fn bad_config_fails_the_scan_naming_the_key() {
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 2);
    for (json, key) in [
        (r#"{"vol_ratio_threshold": -3}"#, "vol_ratio_threshold"),
        (r#"{"close_strength_min": 2}"#, "close_strength_min"),
        (r#"{"stage2_expiry_candles": 0}"#, "stage2_expiry_candles"),
        (r#"{"scan_limit_15m": 10}"#, "scan_limit_15m"),
        (r#"{"late_entry_atr_mult": null}"#, "late_entry_atr_mult"),
        (r#"{"enabled": 1}"#, "enabled"),
        (r#"{"scan_limit": 80}"#, "scan_limit"),
    ] {
        let req = request(END, json, vec![symbol_data("PUMPUSDT", s.upto(IGNITION), LIQUID)], &[]);
        match PumpMomentum::scan(req) {
            Err(ScanError::BadConfig(msg)) => assert!(msg.contains(key), "{json}: {msg}"),
            other => panic!("{json}: {other:?}"),
        }
    }
}

#[test]
fn missing_reference_fails_the_scan() {
    let syms = vec![symbol_data("PUMPUSDT", scenarios::quiet(END, N), LIQUID)];
    let req = scenarios::request(END, "{}", syms.clone(), None, vec![]);
    assert!(
        matches!(PumpMomentum::scan(req), Err(ScanError::MissingData(m)) if m.contains("reference"))
    );
    let mut req = scenarios::request(END, "{}", syms, Some(reference()), vec![]);
    req.reference.as_mut().unwrap().candles[0].timeframe = "1h".into();
    assert!(matches!(PumpMomentum::scan(req), Err(ScanError::MissingData(_))));
}

#[test]
fn quiet_markets_never_alert() {
    let paths: Vec<(String, Candles)> =
        (0..5).map(|i| (format!("Q{i}USDT"), scenarios::quiet_seeded(i, END, N))).collect();
    let refs: Vec<(&str, &Candles)> = paths.iter().map(|(s, c)| (s.as_str(), c)).collect();
    let (alerts, state) = replay(&refs, &reference(), "{}", 20);
    assert!(alerts.is_empty(), "{alerts:?}");
    assert!(state.is_empty());
}

#[test]
fn pump_gives_watch_on_ignition_then_signal_on_follow_through() {
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 2);
    let (at, alerts, state) = replay_one(&s, "{}");
    assert_eq!(at, vec![(IGNITION, Stage::PumpWatch), (IGNITION + 2, Stage::PumpSignal)]);

    let c = &s.candles;
    let watch = &alerts[0];
    assert_eq!(watch.symbol, "PUMPUSDT");
    assert_eq!(watch.confidence, ConfidenceLevel::Low);
    // The host sends the forming candle too: the price is the last price, i.e. its close.
    assert_eq!(watch.price, c.close[IGNITION + 1]);
    assert_eq!(m(watch, names::IGNITION_OPEN_TIME), s.ignition_open_time as f64);
    assert_eq!(m(watch, names::CANDLE_OPEN_TIME), s.ignition_open_time as f64);
    assert_eq!(m(watch, names::IGNITION_OPEN), c.open[IGNITION]);
    assert_eq!(m(watch, names::IGNITION_HIGH), c.high[IGNITION]);
    assert_eq!(m(watch, names::IGNITION_LOW), c.low[IGNITION]);
    assert_eq!(m(watch, names::IGNITION_CLOSE), c.close[IGNITION]);
    assert_eq!(m(watch, names::IGNITION_VOLUME), c.volume[IGNITION]);
    assert_eq!(m(watch, names::VOLUME), c.volume[IGNITION]);
    assert_eq!(m(watch, names::QUOTE_VOLUME_24H), LIQUID);
    let mean20: f64 = c.volume[IGNITION - 20..IGNITION].iter().sum::<f64>() / 20.0;
    assert!((m(watch, names::VOL_RATIO) - c.volume[IGNITION] / mean20).abs() < 1e-9);
    assert!((m(watch, names::CANDLE_RETURN_PCT) - 3.5).abs() < 1e-9);
    assert!((m(watch, names::CLOSE_STRENGTH) - 0.95).abs() < 1e-9);
    let r = reference();
    let ref_ret = (r.close[IGNITION] - r.open[IGNITION]) / r.open[IGNITION] * 100.0;
    assert!((m(watch, names::REL_STRENGTH_15M) - (3.5 - ref_ret)).abs() < 1e-9);
    let ret_1h = (c.close[IGNITION] / c.close[IGNITION - 4] - 1.0) * 100.0;
    let ref_1h = (r.close[IGNITION] / r.close[IGNITION - 4] - 1.0) * 100.0;
    assert!((m(watch, names::REL_STRENGTH_1H) - (ret_1h - ref_1h)).abs() < 1e-9);
    let atr = m(watch, names::ATR);
    let base = m(watch, names::BASE_PRICE);
    assert!(atr > 0.0 && base > 0.0);
    assert!((m(watch, names::LATE_ATR) - (c.close[IGNITION] - base) / atr).abs() < 1e-9);
    assert!(metric(watch, names::FOLLOW_VOL_RATIO).is_none());
    assert_eq!(watch.metrics.len(), 17);

    let signal = &alerts[1];
    assert_eq!(signal.confidence, ConfidenceLevel::Medium);
    assert_eq!(m(signal, names::IGNITION_OPEN_TIME), s.ignition_open_time as f64);
    assert_eq!(m(signal, names::IGNITION_CLOSE), c.close[IGNITION]);
    assert_eq!(m(signal, names::CANDLE_OPEN_TIME), s.follow_through_open_time.unwrap() as f64);
    assert_eq!(m(signal, names::BASE_PRICE), base);
    assert_eq!(m(signal, names::CANDLES_SINCE_IGNITION), 2.0);
    assert!((m(signal, names::FOLLOW_VOL_RATIO) - c.volume[IGNITION + 2] / mean20).abs() < 1e-9);
    assert!(m(signal, names::REL_STRENGTH_1H) >= 4.0);
    assert!(m(signal, names::LATE_ATR) <= 5.0);
    assert_eq!(signal.metrics.len(), 19);
    // The watch is closed by the signal and the alert marker is gone once newer candles closed.
    assert!(state.is_empty(), "{state:?}");
}

#[test]
fn follow_through_counts_one_to_expiry_candles_after_ignition() {
    for k in 1..=3 {
        let s = scenarios::pump_then_follow_through(END, N, IGNITION, k);
        let (at, _, _) = replay_one(&s, "{}");
        assert_eq!(
            at,
            vec![(IGNITION, Stage::PumpWatch), (IGNITION + k, Stage::PumpSignal)],
            "k={k}"
        );
    }
    // Four candles later is too late with the default expiry of 3 ...
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 4);
    let (at, _, _) = replay_one(&s, "{}");
    assert_eq!(at, vec![(IGNITION, Stage::PumpWatch)]);
    // ... and in time with an expiry of 4, but the hour window then no longer contains the
    // ignition: the follow-through hour must carry the relative strength itself.
    let (at, _, _) = replay_one(&s, r#"{"stage2_expiry_candles": 4}"#);
    assert_eq!(at, vec![(IGNITION, Stage::PumpWatch)]);
    let (at, _, _) = replay_one(&s, r#"{"stage2_expiry_candles": 4, "rel_strength_1h_min": 1.0}"#);
    assert_eq!(at, vec![(IGNITION, Stage::PumpWatch), (IGNITION + 4, Stage::PumpSignal)]);
}

#[test]
fn without_follow_through_the_watch_expires_silently() {
    let s = scenarios::pump_without_follow_through(END, N, IGNITION);
    let mut state = Vec::new();
    let mut alerts = Vec::new();
    for i in IGNITION - 2..N {
        let now = s.closed_at(i) + 60_000;
        let req = request(now, "{}", vec![symbol_data("PUMPUSDT", s.upto(i + 1), LIQUID)], &state);
        let r = scan(req);
        apply_state(&mut state, &r.state_updates);
        alerts.extend(r.alerts.into_iter().map(|a| (i, a.stage)));
        let has_watch = state.iter().any(|e| e.key == "watch:PUMPUSDT");
        // The watch lives from the ignition through the 3rd candle after it, then expires.
        assert_eq!(has_watch, (IGNITION..IGNITION + 3).contains(&i), "i={i} {state:?}");
    }
    assert_eq!(alerts, vec![(IGNITION, Stage::PumpWatch)]);
    assert!(state.is_empty(), "{state:?}");
}

#[test]
fn repeated_scans_within_one_candle_alert_once() {
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 1);
    let mut state = Vec::new();
    for (i, stage) in [(IGNITION, Stage::PumpWatch), (IGNITION + 1, Stage::PumpSignal)] {
        let now = s.closed_at(i);
        let req = |now: i64, state: &[StateEntry]| {
            request(now, "{}", vec![symbol_data("PUMPUSDT", s.upto(i), LIQUID)], state)
        };
        let first = scan(req(now, &state));
        assert_eq!(first.alerts.iter().map(|a| a.stage).collect::<Vec<_>>(), vec![stage]);
        apply_state(&mut state, &first.state_updates);
        let marker = memory::alerted(&state, "PUMPUSDT").unwrap();
        assert_eq!(marker.open_time, s.candles.open_time[i]);
        for later in [1, 5 * 60_000, 14 * 60_000] {
            let again = scan(req(now + later, &state));
            assert!(again.alerts.is_empty(), "i={i} +{later}: {:?}", again.alerts);
            assert!(again.state_updates.is_empty(), "{:?}", again.state_updates);
        }
    }
}

#[test]
fn the_forming_candle_never_counts() {
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 2);
    // The ignition candle is sent complete but has not closed yet: nothing.
    let now = s.closed_at(IGNITION) - 1;
    let r = scan(request(now, "{}", vec![symbol_data("PUMPUSDT", s.upto(IGNITION), LIQUID)], &[]));
    assert!(r.alerts.is_empty() && r.state_updates.is_empty());
    let r =
        scan(request(now + 1, "{}", vec![symbol_data("PUMPUSDT", s.upto(IGNITION), LIQUID)], &[]));
    assert_eq!(r.alerts.len(), 1);
}

#[test]
fn a_late_entry_gives_no_alert() {
    // A 12 % candle out of a quiet market is already > 5 ATR above its base.
    let s = scenarios::pump(END, N, &Pump { ignition_return_pct: 12.0, ..Pump::default() });
    assert!(scan_closed(s.upto(IGNITION), "{}").alerts.is_empty());
    // A looser late-entry limit lets it through, and the alert shows the distance.
    let r = scan_closed(s.upto(IGNITION), r#"{"late_entry_atr_mult": 20}"#);
    let late = m(&r.alerts[0], names::LATE_ATR);
    assert!(late > 5.0 && late <= 20.0, "{late}");

    // Follow-through that runs too far is late as well: watch, but no signal.
    let s = scenarios::pump(END, N, &Pump { follow_return_pct: 8.0, ..Pump::default() });
    let (at, _, _) = replay_one(&s, "{}");
    assert_eq!(at, vec![(IGNITION, Stage::PumpWatch)]);
}

#[test]
fn weak_close_low_volume_or_no_relative_strength_give_no_alert() {
    let weak = Pump { ignition_close_strength: 0.5, ..Pump::default() };
    let thin = Pump { ignition_volume_mult: 2.0, ..Pump::default() };
    let small = Pump { ignition_return_pct: 2.0, ..Pump::default() };
    for shape in [weak, thin, small] {
        let s = scenarios::pump(END, N, &shape);
        assert!(scan_closed(s.upto(IGNITION), "{}").alerts.is_empty(), "{shape:?}");
    }

    // The reference coin rises 2 % in the same candle: only 1.5 points of relative strength.
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 2);
    let mut r = reference();
    r.close[IGNITION] = r.open[IGNITION] * 1.02;
    r.high[IGNITION] = r.close[IGNITION];
    let now = s.closed_at(IGNITION);
    let req = scenarios::request(
        now,
        "{}",
        vec![symbol_data("PUMPUSDT", s.upto(IGNITION), LIQUID)],
        Some(r),
        vec![],
    );
    assert!(scan(req).alerts.is_empty());

    // No reference candle at the ignition time: no relative strength to measure, no alert.
    let req = scenarios::request(
        now,
        "{}",
        vec![symbol_data("PUMPUSDT", s.upto(IGNITION), LIQUID)],
        Some(scenarios::prefix(&reference(), IGNITION)),
        vec![],
    );
    assert!(scan(req).alerts.is_empty());
}

#[test]
fn relative_strength_must_hold_for_the_signal() {
    // The reference rallies over the hour of the follow-through: the pump is the market's.
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 2);
    let mut r = reference();
    for i in IGNITION + 1..=IGNITION + 2 {
        let prev = r.close[i - 1];
        r.open[i] = prev;
        r.close[i] = prev * 1.02;
        r.high[i] = r.close[i];
        r.low[i] = prev;
    }
    let mut state = Vec::new();
    let mut stages = Vec::new();
    for i in IGNITION..IGNITION + 3 {
        let req = scenarios::request(
            s.closed_at(i),
            "{}",
            vec![symbol_data("PUMPUSDT", s.upto(i), LIQUID)],
            Some(r.clone()),
            state.clone(),
        );
        let resp = scan(req);
        apply_state(&mut state, &resp.state_updates);
        stages.extend(resp.alerts.iter().map(|a| a.stage));
    }
    assert_eq!(stages, vec![Stage::PumpWatch]);
}

#[test]
fn illiquid_symbols_are_filtered() {
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 2);
    let now = s.closed_at(IGNITION);
    let thin = |qv: f64, config: &str| {
        let req = request(now, config, vec![symbol_data("PUMPUSDT", s.upto(IGNITION), qv)], &[]);
        scan(req).alerts.len()
    };
    assert_eq!(thin(150_000.0, "{}"), 0);
    assert_eq!(thin(f64::NAN, "{}"), 0);
    assert_eq!(thin(200_000.0, "{}"), 1);
    assert_eq!(thin(150_000.0, r#"{"min_quote_volume_usd": 100000}"#), 1);
}

#[test]
fn minimum_history_is_documented_and_a_skip_not_an_error() {
    // Exactly MIN_CLOSED_CANDLES closed candles with the ignition last: alert.
    let shape = Pump { ignition_index: MIN_CLOSED_CANDLES - 1, ..Pump::default() };
    let s = scenarios::pump(END, MIN_CLOSED_CANDLES, &shape);
    assert_eq!(scan_closed(s.candles.clone(), "{}").alerts.len(), 1);
    // One candle fewer (the oldest dropped): a skip, the scan itself succeeds.
    let mut short = s.candles.clone();
    for col in
        [&mut short.open, &mut short.high, &mut short.low, &mut short.close, &mut short.volume]
    {
        col.remove(0);
    }
    short.open_time.remove(0);
    let r = scan_closed(short, "{}");
    assert!(r.alerts.is_empty() && r.state_updates.is_empty());
}

#[test]
fn long_histories_work_up_to_the_contract_limit() {
    let s = scenarios::pump(END, 1000, &Pump { ignition_index: 990, ..Pump::default() });
    let (alerts, _) = replay(
        &[("PUMPUSDT", &s.candles)],
        &scenarios::reference(END, 1000),
        r#"{"scan_limit_15m": 1000}"#,
        985,
    );
    let at: Vec<(usize, Stage)> = alerts.iter().map(|(i, _, a)| (*i, a.stage)).collect();
    assert_eq!(at, vec![(990, Stage::PumpWatch), (992, Stage::PumpSignal)]);
}

#[test]
fn several_symbols_alert_independently_in_input_order() {
    let a = scenarios::pump_then_follow_through(END, N, IGNITION, 1);
    let b = scenarios::pump(END, N, &Pump { seed: 11, ..Pump::default() });
    let q = scenarios::quiet_seeded(3, END, N);
    let (alerts, state) = replay(
        &[("BUSDT", &b.candles), ("QUSDT", &q), ("AUSDT", &a.candles)],
        &reference(),
        "{}",
        50,
    );
    let got: Vec<(usize, &str, Stage)> =
        alerts.iter().map(|(i, s, a)| (*i, s.as_str(), a.stage)).collect();
    assert_eq!(
        got,
        vec![
            (IGNITION, "BUSDT", Stage::PumpWatch),
            (IGNITION, "AUSDT", Stage::PumpWatch),
            (IGNITION + 1, "AUSDT", Stage::PumpSignal),
            (IGNITION + 2, "BUSDT", Stage::PumpSignal),
        ]
    );
    assert!(state.is_empty());
}

#[test]
fn scans_are_deterministic() {
    let a = scenarios::pump_then_follow_through(END, N, IGNITION, 1);
    let mut state = Vec::new();
    for i in IGNITION..IGNITION + 2 {
        let req = request(
            a.closed_at(i),
            "{}",
            vec![
                symbol_data("AUSDT", a.upto(i), LIQUID),
                symbol_data("QUSDT", scenarios::quiet(END, N), LIQUID),
            ],
            &state,
        );
        let first = scan(req.clone());
        assert_eq!(first, scan(req.clone()));
        assert_eq!(first, scan(req));
        apply_state(&mut state, &first.state_updates);
    }
}

#[test]
fn a_symbol_listed_twice_alerts_once() {
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 1);
    let sym = symbol_data("PUMPUSDT", s.upto(IGNITION), LIQUID);
    let r = scan(request(s.closed_at(IGNITION), "{}", vec![sym.clone(), sym], &[]));
    assert_eq!(r.alerts.len(), 1);
    let keys: Vec<&str> = r
        .state_updates
        .iter()
        .map(|u| match u {
            StateUpdate::Set(e) => e.key.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(keys, ["alerted:PUMPUSDT", "watch:PUMPUSDT"]);
}

#[test]
fn state_of_symbols_no_longer_scanned_is_swept() {
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 1);
    let mut state = Vec::new();
    let first = scan(request(
        s.closed_at(IGNITION),
        "{}",
        vec![symbol_data("PUMPUSDT", s.upto(IGNITION), LIQUID)],
        &state,
    ));
    apply_state(&mut state, &first.state_updates);
    state.push(StateEntry { key: "old_format".into(), value: "x".into() });
    apply_state(&mut state, &[]);
    // Next candle, the symbol is not scanned: its alert marker goes, the watch stays.
    let other = vec![symbol_data("QUSDT", scenarios::quiet(END, N), LIQUID)];
    let r = scan(request(s.closed_at(IGNITION + 1), "{}", other.clone(), &state));
    apply_state(&mut state, &r.state_updates);
    let keys: Vec<&str> = state.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["watch:PUMPUSDT"]);
    // After the expiry window the watch goes too.
    let r = scan(request(s.closed_at(IGNITION + 4), "{}", other, &state));
    apply_state(&mut state, &r.state_updates);
    assert!(state.is_empty(), "{state:?}");
}

#[test]
fn watches_are_capped() {
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 1);
    let now = s.closed_at(IGNITION);
    let watch = Watch {
        open_time: s.ignition_open_time,
        open: 1.0,
        high: 1.1,
        low: 0.9,
        close: 1.05,
        volume: 10.0,
        base: 1.0,
        base_volume: 2.0,
        points: 0,
    };
    let value = serde_json::to_string(&watch).unwrap();
    let mut state: Vec<StateEntry> = (0..MAX_WATCHES)
        .map(|i| StateEntry {
            key: memory::watch_key(&format!("S{i:03}USDT")),
            value: value.clone(),
        })
        .collect();
    apply_state(&mut state, &[]);
    let r =
        scan(request(now, "{}", vec![symbol_data("PUMPUSDT", s.upto(IGNITION), LIQUID)], &state));
    assert_eq!(r.alerts.len(), 1, "still alerted");
    assert!(
        r.state_updates
            .iter()
            .all(|u| !matches!(u, StateUpdate::Set(e) if e.key.starts_with("watch:")))
    );
    // With room for one more it is remembered.
    state.pop();
    let r =
        scan(request(now, "{}", vec![symbol_data("PUMPUSDT", s.upto(IGNITION), LIQUID)], &state));
    assert!(
        r.state_updates
            .iter()
            .any(|u| matches!(u, StateUpdate::Set(e) if e.key == "watch:PUMPUSDT"))
    );
}

/// Garbage of every kind: the scan succeeds (or fails cleanly) and never panics or emits a
/// non-finite number.
#[test]
fn hostile_input_never_panics() {
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 2);
    let good = s.upto(IGNITION);
    let now = s.closed_at(IGNITION);
    let mut variants: Vec<Candles> = Vec::new();
    let edit = |f: &dyn Fn(&mut Candles)| {
        let mut c = good.clone();
        f(&mut c);
        c
    };
    variants.push(edit(&|c| c.close[IGNITION] = f64::NAN));
    variants.push(edit(&|c| c.open[IGNITION] = 0.0));
    variants.push(edit(&|c| c.high[IGNITION] = f64::INFINITY));
    variants.push(edit(&|c| c.low[IGNITION] = -1.0));
    variants.push(edit(&|c| c.volume.iter_mut().for_each(|v| *v = 0.0)));
    variants.push(edit(&|c| c.volume[IGNITION - 3] = f64::NAN));
    variants.push(edit(&|c| {
        // Zero range everywhere.
        for i in 0..c.len() {
            c.open[i] = 1.0;
            c.high[i] = 1.0;
            c.low[i] = 1.0;
            c.close[i] = 1.0;
        }
    }));
    variants.push(edit(&|c| c.close.iter_mut().for_each(|v| *v = f64::NAN)));
    variants.push(edit(&|c| {
        c.volume.pop();
    }));
    variants.push(edit(&|c| c.open_time.reverse()));
    variants.push(edit(&|c| c.open_time[IGNITION - 1] = c.open_time[IGNITION]));
    variants.push(edit(&|c| c.high[IGNITION] = 1e308));
    variants.push(edit(&|c| c.volume[IGNITION] = f64::MAX));
    variants.push(scenarios::prefix(&good, 0));
    variants.push(scenarios::prefix(&good, 5));
    variants.push(Candles { timeframe: "15m".into(), ..scenarios::prefix(&good, 0) });

    let garbage_state = vec![
        StateEntry { key: "alerted:PUMPUSDT".into(), value: "[]".into() },
        StateEntry { key: "watch:PUMPUSDT".into(), value: r#"{"open_time":"x"}"#.into() },
        StateEntry { key: "watch:ZZZ".into(), value: "null".into() },
    ];
    for (n, c) in variants.into_iter().enumerate() {
        for state in [&[][..], &garbage_state[..]] {
            let mut sym = symbol_data("PUMPUSDT", c.clone(), LIQUID);
            if n % 3 == 0 {
                sym.last_price = f64::NAN;
            }
            let r = scan(request(now, "{}", vec![sym], state));
            for a in &r.alerts {
                assert!(
                    a.price.is_finite() && a.metrics.iter().all(|m| m.value.is_finite()),
                    "{a:?}"
                );
            }
        }
    }
    // A symbol without 15m candles, a reference full of NaN, absurd clocks.
    let mut sym = symbol_data("PUMPUSDT", good.clone(), LIQUID);
    sym.candles.clear();
    assert!(scan(request(now, "{}", vec![sym], &garbage_state)).alerts.is_empty());
    let mut r = reference();
    r.close.iter_mut().for_each(|v| *v = f64::NAN);
    let req = scenarios::request(
        now,
        "{}",
        vec![symbol_data("PUMPUSDT", good.clone(), LIQUID)],
        Some(r),
        vec![],
    );
    assert!(scan(req).alerts.is_empty());
    for t in [i64::MIN, -1, 0, i64::MAX] {
        let r = scan(request(
            t,
            "{}",
            vec![symbol_data("PUMPUSDT", good.clone(), LIQUID)],
            &garbage_state,
        ));
        for a in &r.alerts {
            assert!(a.metrics.iter().all(|m| m.value.is_finite()));
        }
    }
    // Empty symbol list, empty everything.
    let r = scan(scenarios::request(
        now,
        "{}",
        vec![],
        Some(scenarios::prefix(&reference(), 0)),
        vec![],
    ));
    assert!(r.alerts.is_empty() && r.state_updates.is_empty());
}

#[test]
fn a_watch_in_state_from_an_older_version_of_the_data_does_not_break_the_scan() {
    // A watch whose ignition is in the future of the data (clock skew): kept, no signal.
    let s = scenarios::pump_then_follow_through(END, N, IGNITION, 2);
    let w = Watch {
        open_time: END + 10 * STEP_MS,
        open: 1.0,
        high: 1.0,
        low: 1.0,
        close: 1.0,
        volume: 1.0,
        base: 1.0,
        base_volume: 1.0,
        points: 0,
    };
    let state = vec![StateEntry {
        key: memory::watch_key("PUMPUSDT"),
        value: serde_json::to_string(&w).unwrap(),
    }];
    let r = scan(request(
        s.closed_at(IGNITION + 2),
        "{}",
        vec![symbol_data("PUMPUSDT", s.upto(IGNITION + 2), LIQUID)],
        &state,
    ));
    assert!(r.alerts.is_empty());
    assert!(r.state_updates.is_empty(), "{:?}", r.state_updates);
}
