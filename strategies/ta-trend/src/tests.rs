//! Native tests of the whole plugin: manifest and config, the scripted paths, robustness and
//! determinism. The check logic has its own unit tests in `checks.rs`.

use serde_json::json;
use spotbot_sdk::sides::testing::{self as kit, NOW, assert_result, names, request};
use spotbot_sdk::testing::{self, contract, symbol_data};
use spotbot_sdk::{Candles, Direction, ScanError, ScanResult, Strategy};

use crate::scenarios::{self, downtrend, range, uptrend};
use crate::{CANDLES, TaTrend};

/// One symbol's result, checked like every result of the plugin.
fn one(candles: Candles, config: &str) -> ScanResult {
    kit::one::<TaTrend>("BTCUSDT", candles, config)
}

fn bad_config(config: &str) -> String {
    match TaTrend::scan(request(config, vec![symbol_data("BTCUSDT", vec![uptrend(NOW)])])) {
        Err(ScanError::BadConfig(why)) => why,
        other => panic!("{config}: {other:?}"),
    }
}

spotbot_sdk::one_timeframe_contract_tests! {
    plugin: TaTrend,
    name: "ta_trend",
    candles: ("1h", CANDLES),
    default_config: json!({
        "enabled": true, "use_universe": false, "watchlist_override": [],
        "min_quote_volume_usd": 1_000_000.0, "timeframes": ["1h"], "size_pct": 1.0,
        "max_trades_per_day": 2, "trailing_enabled": true, "trailing_trigger_pct": 2.0,
        "trailing_distance_pct": 1.0, "risk_normal": 1.0,
        "ema_fast": 20, "ema_slow": 50, "adx_min": 25.0, "rsi_min": 50.0, "rsi_max": 70.0,
        "vol_ratio_min": 1.0, "min_passed": 5, "sl_atr_multiplier": 2.0, "reward_risk": 2.0,
    }),
}

#[test]
fn a_clean_uptrend_is_a_buy_with_every_check_passing() {
    let r = one(uptrend(NOW), "{}");
    assert_eq!(r.direction, Direction::Buy, "{r:#?}");
    assert_eq!(
        names(&r),
        vec![
            ("ema_fast_above_slow", true),
            ("close_above_slow_ema", true),
            ("adx_trending", true),
            ("macd_hist_positive_rising", true),
            ("rsi_healthy", true),
            ("volume", true),
        ]
    );
    assert_eq!((r.passed, r.total), (6, 6));
    assert_eq!(r.buy_signals, Some(6));
    assert!(r.sell_signals.unwrap() < 5);
    // Stop from ATR, target from the reward/risk ratio; the service's scores for 6/6 and rr 2.
    let c = uptrend(NOW);
    let atr = spotbot_sdk::indicators::atr(&c.high, &c.low, &c.close, 14);
    let expected_sl = 2.0 * atr.last().unwrap() / c.close.last().unwrap() * 100.0;
    assert!((r.sl_pct - expected_sl).abs() < 1e-9, "{} vs {expected_sl}", r.sl_pct);
    assert!((r.tp_pct - 2.0 * r.sl_pct).abs() < 1e-12);
    assert_eq!((r.ev, r.confidence), (Some(80.0), Some(10)));
    assert_eq!(r.price, *c.close.last().unwrap());
    assert!(r.rsi.is_some() && r.macd_hist.unwrap() > 0.0 && r.adx.unwrap() >= 25.0);
    assert!(r.reason.as_deref().unwrap().starts_with("uptrend on 1h: 6/6"), "{r:#?}");
}

#[test]
fn a_downtrend_is_a_sell_that_exits() {
    let r = one(downtrend(NOW), "{}");
    assert_eq!(r.direction, Direction::Sell, "{r:#?}");
    assert_eq!(r.passed, 6, "{r:#?}");
    assert_eq!(r.checklist[0].name, "ema_fast_below_slow");
    assert!(r.reason.as_deref().unwrap().contains("exit"), "{r:#?}");
    assert!(r.sl_pct > 0.0 && (r.tp_pct - 2.0 * r.sl_pct).abs() < 1e-12);
    assert_eq!((r.ev, r.confidence), (Some(80.0), Some(10)), "passes the confirm gates");
}

#[test]
fn a_range_is_a_skip_naming_what_failed() {
    let r = one(range(NOW), "{}");
    assert_eq!(r.direction, Direction::Skip, "{r:#?}");
    let reason = r.reason.as_deref().unwrap();
    assert!(reason.starts_with("no buy: ") || reason.starts_with("no sell: "), "{reason}");
    let failed: Vec<&str> =
        r.checklist.iter().filter(|c| !c.pass).map(|c| c.name.as_str()).collect();
    assert!(!failed.is_empty());
    for name in failed {
        assert!(reason.contains(name), "{name} missing from {reason}");
    }
    assert_eq!((r.sl_pct, r.tp_pct), (0.0, 0.0), "a skip carries no bracket");
}

#[test]
fn stricter_thresholds_turn_the_uptrend_into_a_skip() {
    let r = one(uptrend(NOW), r#"{"rsi_max": 60.0, "vol_ratio_min": 5.0}"#);
    assert_eq!(r.direction, Direction::Skip, "{r:#?}");
    assert_eq!(r.passed, 4);
    assert!(r.reason.as_deref().unwrap().contains("rsi_healthy (RSI"), "{r:#?}");
    let r = one(uptrend(NOW), r#"{"rsi_max": 60.0, "vol_ratio_min": 5.0, "min_passed": 4}"#);
    assert_eq!(r.direction, Direction::Buy, "min_passed is honoured: {r:#?}");
    // 4 of 6 is confidence 7: the service's confirm gate (>= 8) will refuse it.
    assert_eq!(r.confidence, Some(7));
}

#[test]
fn a_bad_config_is_a_bad_config_error() {
    assert!(bad_config(r#"{"ema_slow": 10}"#).starts_with("ema_slow"));
    assert!(bad_config(r#"{"min_passed": 9}"#).starts_with("min_passed"));
    assert!(bad_config(r#"{"scan_limit": 80}"#).contains("scan_limit"));
    // The host's canary validates a section with the effective config and no symbols.
    assert!(TaTrend::scan(request(&TaTrend::describe().default_config, vec![])).is_ok());
}

#[test]
fn the_timeframe_follows_the_config() {
    let c = testing::aggregate(&uptrend(NOW), "4h");
    let r = one(c.clone(), r#"{"timeframes": ["4h"]}"#);
    assert!(r.reason.as_deref().unwrap().starts_with("uptrend on 4h"), "{r:#?}");
    let err = TaTrend::scan(request("{}", vec![symbol_data("X", vec![c])])).unwrap_err();
    assert!(matches!(err, ScanError::MissingData(m) if m.contains("1h")));
}

#[test]
fn only_closed_candles_count() {
    // The host's forming candle (open at NOW, a crash so far) changes nothing.
    let mut c = uptrend(NOW + 3_600_000);
    let n = c.len();
    c.close[n - 1] = c.open[n - 1] * 0.5;
    c.low[n - 1] = c.close[n - 1];
    c.volume[n - 1] = 1.0;
    let forming = one(c, "{}");
    assert_eq!(forming.direction, Direction::Buy, "{forming:#?}");
    // Stale: the newest candle closed more than a candle ago.
    let stale = one(uptrend(NOW - 2 * 3_600_000), "{}");
    assert!(stale.reason.as_deref().unwrap().contains("stale"), "{stale:#?}");
}

#[test]
fn broken_data_never_panics_and_never_signals() {
    let good = uptrend(NOW);
    let mut cases: Vec<Candles> = Vec::new();
    let mut empty = good.clone();
    for col in [&mut empty.open, &mut empty.high, &mut empty.low, &mut empty.close] {
        col.clear();
    }
    empty.volume.clear();
    empty.open_time.clear();
    cases.push(empty);
    let mut ragged = good.clone();
    ragged.volume.pop();
    cases.push(ragged);
    let mut nan = good.clone();
    let n = nan.len();
    nan.close[n - 1] = f64::NAN;
    nan.high[n - 3] = f64::INFINITY;
    cases.push(nan);
    let mut zero = good.clone();
    zero.close.iter_mut().for_each(|c| *c = 0.0);
    cases.push(zero);
    let mut odd_tf = good.clone();
    odd_tf.timeframe = "1h".into();
    odd_tf.open_time.reverse();
    cases.push(odd_tf);
    for c in cases {
        let mut data = symbol_data("X", vec![c]);
        data.last_price = f64::NAN;
        let r = TaTrend::scan(request("{}", vec![data])).unwrap();
        let res = &r.results[0];
        assert_result::<TaTrend>(res);
        assert_eq!(res.direction, Direction::Skip, "{res:#?}");
    }
}

#[test]
fn scans_keep_no_state_and_the_scenarios_outlast_the_manifest() {
    let r = TaTrend::scan(contract::request::<TaTrend>(contract::SYMBOLS, "{}")).unwrap();
    assert!(r.alerts.is_empty() && r.state_updates.is_empty());
    assert!(scenarios::CANDLES as u32 > CANDLES);
}

#[test]
fn every_bad_value_names_its_key() {
    let cases = [
        (r#"{"timeframes": []}"#, "timeframes"),
        (r#"{"timeframes": ["1h", "4h"]}"#, "timeframes"),
        (r#"{"timeframes": ["soon"]}"#, "timeframes"),
        (r#"{"ema_fast": 1}"#, "ema_fast"),
        (r#"{"ema_slow": 20}"#, "ema_slow"),
        (r#"{"ema_slow": 101}"#, "ema_slow"),
        (r#"{"adx_min": 101.0}"#, "adx_min"),
        (r#"{"rsi_min": -1.0}"#, "rsi_min"),
        (r#"{"rsi_min": 60.0, "rsi_max": 55.0}"#, "rsi_max"),
        (r#"{"vol_ratio_min": -0.5}"#, "vol_ratio_min"),
        (r#"{"sl_atr_multiplier": 0.0}"#, "sl_atr_multiplier"),
        (r#"{"reward_risk": -2.0}"#, "reward_risk"),
        (r#"{"min_passed": 0}"#, "min_passed"),
        (r#"{"min_passed": 7}"#, "min_passed"),
        (r#"{"no_such_key": 1}"#, "no_such_key"),
        (r#"{"adx_min": "high"}"#, "invalid type"),
        ("not json", "expected"),
    ];
    for (json, key) in cases {
        contract::refused::<TaTrend>(json, key);
    }
}
