//! Native tests of the whole plugin: manifest and config, the scripted paths, robustness and
//! determinism. The checks and brackets have their own unit tests in `checks.rs`.

use serde_json::json;
use spotbot_sdk::sides::testing::{self as kit, NOW, assert_result, names, request};
use spotbot_sdk::testing::{contract, symbol_data};
use spotbot_sdk::{Candles, Direction, ScanError, ScanResult, Strategy};

use crate::scenarios::{overbought_spike, oversold_bounce, quiet_range};
use crate::{CANDLES, TaMeanRevert};

/// One symbol's result, checked like every result of the plugin.
fn one(candles: Candles, config: &str) -> ScanResult {
    kit::one::<TaMeanRevert>("SOLUSDT", candles, config)
}

spotbot_sdk::one_timeframe_contract_tests! {
    plugin: TaMeanRevert,
    name: "ta_mean_revert",
    candles: ("1h", CANDLES),
    default_config: json!({
        "enabled": true, "use_universe": false, "watchlist_override": [],
        "min_quote_volume_usd": 1_000_000.0, "timeframes": ["1h"], "size_pct": 1.0,
        "max_trades_per_day": 2, "trailing_enabled": true, "trailing_trigger_pct": 2.0,
        "trailing_distance_pct": 1.0, "risk_normal": 1.0,
        "bb_period": 20, "bb_deviations": 2.0, "band_tolerance_pct": 0.5, "rsi_oversold": 30.0,
        "rsi_overbought": 70.0, "adx_max": 25.0, "vol_ratio_min": 1.5,
        "reversal_close_position": 0.5, "min_passed": 5, "sl_atr_multiplier": 1.0,
        "min_rr": 2.0,
    }),
}

#[test]
fn an_oversold_bounce_in_a_range_is_a_buy_targeting_the_middle_band() {
    let r = one(oversold_bounce(NOW), "{}");
    assert_eq!(r.direction, Direction::Buy, "{r:#?}");
    assert_eq!(
        names(&r),
        vec![
            ("at_lower_band", true),
            ("rsi_oversold", true),
            ("adx_ranging", true),
            ("volume_spike", true),
            ("bullish_reversal", true),
            ("reward_risk", true),
        ]
    );
    assert_eq!((r.buy_signals, r.sell_signals), (Some(6), Some(0)));
    let (mid, lower, price) = (r.bb_mid.unwrap(), r.bb_lower.unwrap(), r.price);
    assert!((r.tp_pct - (mid - price) / price * 100.0).abs() < 1e-9, "TP is the middle band");
    let atr = r.sl_pct / 100.0 * price - (price - lower.min(price));
    assert!(atr > 0.0, "the stop sits an ATR under the band or the entry: {r:#?}");
    assert!(r.tp_pct / r.sl_pct >= 2.0);
    assert_eq!(r.confidence, Some(10));
    assert!(r.ev.unwrap() > 25.0, "passes the confirm gates: {r:#?}");
    assert!(r.reason.as_deref().unwrap().starts_with("oversold at the lower band"), "{r:#?}");
}

#[test]
fn an_overbought_stall_at_the_upper_band_is_a_sell() {
    let r = one(overbought_spike(NOW), "{}");
    assert_eq!(r.direction, Direction::Sell, "{r:#?}");
    assert_eq!(names(&r), vec![("at_upper_band", true), ("rsi_overbought", true)]);
    assert!(r.reason.as_deref().unwrap().contains("take profit"), "{r:#?}");
    assert_eq!(r.confidence, Some(10));
    assert!(r.ev.unwrap() > 25.0, "{r:#?}");
}

#[test]
fn a_quiet_range_is_a_skip_naming_what_failed() {
    let r = one(quiet_range(NOW), "{}");
    assert_eq!(r.direction, Direction::Skip, "{r:#?}");
    let reason = r.reason.as_deref().unwrap();
    assert!(reason.starts_with("no buy: ") || reason.starts_with("no sell: "), "{reason}");
    for c in r.checklist.iter().filter(|c| !c.pass) {
        assert!(reason.contains(&c.name), "{} missing from {reason}", c.name);
    }
}

#[test]
fn a_trend_down_is_no_bounce_to_buy() {
    // A straight slide: RSI oversold at the band, but ADX shows a trend and the candle is red.
    let mut c = quiet_range(NOW);
    let n = c.len();
    for i in n - 40..n {
        let f = 1.0 - 0.006 * (i + 41 - n) as f64;
        for col in [&mut c.open, &mut c.high, &mut c.low, &mut c.close] {
            col[i] *= f;
        }
        c.open[i] = c.open[i].max(c.close[i]);
        c.high[i] = c.high[i].max(c.open[i]);
    }
    let r = one(c, "{}");
    assert_eq!(r.direction, Direction::Skip, "{r:#?}");
    assert!(!r.checklist.iter().find(|c| c.name == "adx_ranging").unwrap().pass, "{r:#?}");
}

#[test]
fn thresholds_come_from_the_config() {
    let r = one(oversold_bounce(NOW), r#"{"rsi_oversold": 10.0, "vol_ratio_min": 9.0}"#);
    assert_eq!(r.direction, Direction::Skip, "{r:#?}");
    let reason = r.reason.as_deref().unwrap();
    assert!(reason.starts_with("no buy: 4/6 checks passed, need 5"), "{reason}");
    assert!(reason.contains("rsi_oversold (RSI") && reason.contains("volume_spike"), "{reason}");
    let r = one(oversold_bounce(NOW), r#"{"min_rr": 50.0}"#);
    assert_eq!(r.direction, Direction::Skip, "reward_risk is a must-have: {r:#?}");
}

#[test]
fn a_bad_config_is_a_bad_config_error() {
    for (config, key) in [(r#"{"bb_period": 0}"#, "bb_period"), (r#"{"nope": 1}"#, "nope")] {
        let req = request(config, vec![symbol_data("X", vec![oversold_bounce(NOW)])]);
        match TaMeanRevert::scan(req) {
            Err(ScanError::BadConfig(why)) => assert!(why.contains(key), "{why}"),
            other => panic!("{config}: {other:?}"),
        }
    }
    let defaults = TaMeanRevert::describe().default_config;
    assert!(TaMeanRevert::scan(request(&defaults, vec![])).is_ok());
}

#[test]
fn only_closed_fresh_candles_count() {
    // The host's forming candle (opened at NOW, a fresh slide so far) is ignored.
    let mut c = oversold_bounce(NOW);
    let last = *c.close.last().unwrap();
    c.open_time.push(NOW);
    c.open.push(last);
    c.high.push(last);
    c.low.push(last * 0.9);
    c.close.push(last * 0.9);
    c.volume.push(1.0);
    assert_eq!(one(c, "{}").direction, Direction::Buy);
    let stale = one(oversold_bounce(NOW - 3 * 3_600_000), "{}");
    assert!(stale.reason.as_deref().unwrap().contains("stale"), "{stale:#?}");
    let err = TaMeanRevert::scan(request(
        r#"{"timeframes": ["4h"]}"#,
        vec![symbol_data("X", vec![oversold_bounce(NOW)])],
    ))
    .unwrap_err();
    assert!(matches!(err, ScanError::MissingData(m) if m.contains("4h")));
}

#[test]
fn broken_data_never_panics_and_never_signals() {
    let good = oversold_bounce(NOW);
    let n = good.len();
    let mut cases = Vec::new();
    let mut short = good.clone();
    for col in [&mut short.open, &mut short.high, &mut short.low, &mut short.close] {
        col.drain(..n - 3);
    }
    short.volume.drain(..n - 3);
    short.open_time.drain(..n - 3);
    cases.push(short);
    let mut ragged = good.clone();
    ragged.open.pop();
    cases.push(ragged);
    let mut nan = good.clone();
    nan.open[n - 1] = f64::NAN;
    nan.volume[n - 2] = f64::INFINITY;
    cases.push(nan);
    let mut flat = good.clone();
    for col in [&mut flat.open, &mut flat.high, &mut flat.low, &mut flat.close] {
        col.iter_mut().for_each(|v| *v = 0.0);
    }
    cases.push(flat);
    let mut unknown = good;
    unknown.timeframe = "1h".into();
    unknown.open_time.iter_mut().for_each(|t| *t = i64::MAX);
    cases.push(unknown);
    for c in cases {
        let mut data = symbol_data("X", vec![c]);
        data.last_price = -1.0;
        let r = TaMeanRevert::scan(request("{}", vec![data])).unwrap();
        assert_result::<TaMeanRevert>(&r.results[0]);
        assert_eq!(r.results[0].direction, Direction::Skip, "{:#?}", r.results[0]);
    }
}

#[test]
fn every_bad_value_names_its_key() {
    let cases = [
        (r#"{"timeframes": ["1h", "4h"]}"#, "timeframes"),
        (r#"{"bb_period": 1}"#, "bb_period"),
        (r#"{"bb_period": 101}"#, "bb_period"),
        (r#"{"bb_deviations": 0.0}"#, "bb_deviations"),
        (r#"{"band_tolerance_pct": -0.1}"#, "band_tolerance_pct"),
        (r#"{"rsi_oversold": 101.0}"#, "rsi_oversold"),
        (r#"{"rsi_oversold": 40.0, "rsi_overbought": 35.0}"#, "rsi_overbought"),
        (r#"{"adx_max": -1.0}"#, "adx_max"),
        (r#"{"vol_ratio_min": -1.0}"#, "vol_ratio_min"),
        (r#"{"reversal_close_position": 1.5}"#, "reversal_close_position"),
        (r#"{"min_passed": 0}"#, "min_passed"),
        (r#"{"min_passed": 7}"#, "min_passed"),
        (r#"{"sl_atr_multiplier": 0.0}"#, "sl_atr_multiplier"),
        (r#"{"min_rr": -1.0}"#, "min_rr"),
        (r#"{"ema_fast": 20}"#, "ema_fast"),
    ];
    for (json, key) in cases {
        contract::refused::<TaMeanRevert>(json, key);
    }
}
