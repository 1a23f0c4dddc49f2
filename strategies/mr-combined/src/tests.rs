//! Native tests of the whole plugin: manifest, config, the scripted scenarios through every
//! gate, robustness and determinism. The rule modules have their own unit tests.

use serde_json::{Value, json};
use spotbot_sdk::indicators::{atr, last};
use spotbot_sdk::testing::{self, contract};
use spotbot_sdk::{
    Candles, Check, Direction, PluginKind, PriorityDecision, ScanError, ScanResponse, ScanResult,
    Strategy, SymbolData,
};

use crate::scenarios::{self, RESISTANCE, SUPPORT, market_context, symbol_data};
use crate::{COUNTS, Config, MrCombined, NAME};

/// 2026-01-01T00:00:00Z, on the 4h and 1d grids.
const NOW: i64 = 1_767_225_600_000;
const HOUR: i64 = 3_600_000;

fn data(one_hour: &Candles, decision: Option<PriorityDecision>) -> SymbolData {
    scenarios::default_symbol_data("BTCUSDT", one_hour, decision.map(market_context))
}

fn scan_at(now_ms: i64, config: &str, symbols: Vec<SymbolData>) -> Result<ScanResponse, ScanError> {
    MrCombined::scan(scenarios::request(now_ms, config, symbols))
}

fn one(symbol: SymbolData, config: &str) -> ScanResult {
    let mut r = scan_at(NOW, config, vec![symbol]).unwrap();
    assert_eq!(r.results.len(), 1);
    let res = r.results.remove(0);
    assert_host_valid(&res);
    res
}

fn standby() -> Option<PriorityDecision> {
    Some(PriorityDecision::Standby)
}

fn line<'a>(r: &'a ScanResult, name: &str) -> &'a Check {
    r.checklist.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no line {name}: {r:#?}"))
}

fn reason(r: &ScanResult) -> &str {
    r.reason.as_deref().unwrap_or("")
}

fn close_to(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// The contract's checks of a result plus the fields this plugin promises on every result.
fn assert_host_valid(r: &ScanResult) {
    contract::result(r, NAME);
    assert!(r.ask_coo);
    assert!(r.ev.is_none() && r.confidence.is_none(), "the host computes ev and confidence");
    match r.direction {
        Direction::Skip => assert!(r.tier.is_none() && r.reason.is_some()),
        _ => {
            assert!(r.tier.is_some() && r.reason.is_some());
            // The host's confidence round(10 × passed / total) must reach its gate of 8.
            let confidence = (10.0 * f64::from(r.passed) / f64::from(r.total)).round();
            assert!(confidence >= 8.0, "{r:#?}");
        }
    }
}

/// ATR(14) of the 4h candles of a request built at `NOW` (all closed).
fn regime_atr(d: &SymbolData) -> f64 {
    let h4 = &d.candles[1];
    assert_eq!(h4.timeframe, "4h");
    last(&atr(&h4.high, &h4.low, &h4.close, 14)).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Manifest and config

spotbot_sdk::contract_tests! {
    plugin: MrCombined,
    config: Config,
    name: "mr_combined",
    kind: PluginKind::Strategy,
    candles: [("1d", 120), ("4h", 200), ("1h", 300)],
    needs_reference: false,
    needs_market_context: true,
    default_config: json!({
        "enabled": true, "use_universe": false, "timeframes": ["1d", "4h", "1h"],
        "size_pct": 1.0, "max_trades_per_day": 2, "trailing_enabled": true,
        "trailing_trigger_pct": 2.0, "trailing_distance_pct": 1.0,
        "risk_normal": 1.0, "risk_aplus": 1.5, "risk_aplusplus": 2.0,
        "sl_atr_multiplier": 1.5, "tp2_atr_multiplier": 0.75,
        "tp1_ratio": 0.40, "tp2_ratio": 0.40, "tp3_ratio": 0.20, "min_rr": 2.5,
        "range_min_atr_multiplier": 3.0, "zone_proximity_atr_min": 0.3,
        "zone_proximity_atr_max": 0.5, "vol_increase_min": 1.2, "news_blackout_windows_utc": [],
    }),
    each_result: assert_host_valid,
}

#[test]
fn every_config_error_names_its_key() {
    let cases: &[(Value, &str)] = &[
        (json!({"size_pct": 0.0}), "size_pct"),
        (json!({"size_pct": 150.0}), "size_pct"),
        (json!({"timeframes": ["1d", "4h"]}), "timeframes"),
        (json!({"timeframes": ["1d", "4h", "7h"]}), "timeframes"),
        (json!({"timeframes": ["1h", "4h", "1d"]}), "timeframes"),
        (json!({"timeframes": ["1d", "1d", "1h"]}), "timeframes"),
        (json!({"trailing_trigger_pct": 0.0}), "trailing_trigger_pct"),
        (json!({"trailing_distance_pct": 0.0}), "trailing_distance_pct"),
        (json!({"trailing_distance_pct": 101.0}), "trailing_distance_pct"),
        (json!({"risk_normal": 0.0}), "risk_normal"),
        (json!({"risk_aplus": -1.0}), "risk_aplus"),
        (json!({"risk_aplusplus": 0.0}), "risk_aplusplus"),
        (json!({"sl_atr_multiplier": 0.0}), "sl_atr_multiplier"),
        (json!({"tp2_atr_multiplier": -0.5}), "tp2_atr_multiplier"),
        (json!({"min_rr": 0.0}), "min_rr"),
        (json!({"range_min_atr_multiplier": 0.0}), "range_min_atr_multiplier"),
        (json!({"vol_increase_min": 0.0}), "vol_increase_min"),
        (json!({"tp1_ratio": -0.1, "tp2_ratio": 0.9}), "tp1_ratio"),
        (json!({"tp2_ratio": -0.1, "tp1_ratio": 0.9}), "tp2_ratio"),
        (json!({"tp3_ratio": -0.2, "tp1_ratio": 0.8}), "tp3_ratio"),
        (json!({"tp1_ratio": 0.5}), "tp3_ratio"),
        (json!({"zone_proximity_atr_min": -0.1}), "zone_proximity_atr_min"),
        (json!({"zone_proximity_atr_min": 0.6}), "zone_proximity_atr_min"),
        (json!({"news_blackout_windows_utc": ["25:00-26:00"]}), "news_blackout_windows_utc"),
        (json!({"news_blackout_windows_utc": ["13:30"]}), "news_blackout_windows_utc"),
        (json!({"news_blackout_windows_utc": ["10:00-10:00"]}), "news_blackout_windows_utc"),
        (json!({"unknown_key": 1}), "unknown_key"),
        (json!({"size_pct": "one"}), "size_pct"),
        (json!({"max_trades_per_day": -1}), "max_trades_per_day"),
    ];
    for (config, key) in cases {
        let err = scan_at(NOW, &config.to_string(), vec![]).unwrap_err();
        match &err {
            ScanError::BadConfig(_) => {}
            other => panic!("{config}: {other:?}"),
        }
        if let ScanError::BadConfig(msg) = err {
            assert!(msg.starts_with(&format!("{key}: ")), "{config}: {msg}");
        }
    }
    // Within the tolerance of the ratio sum, and a window wrapping midnight: fine.
    let ok = json!({"tp3_ratio": 0.2000005, "news_blackout_windows_utc": ["23:30-00:30"]});
    assert!(scan_at(NOW, &ok.to_string(), vec![]).is_ok());
    let err = scan_at(NOW, "[1, 2]", vec![]).unwrap_err();
    assert!(matches!(err, ScanError::BadConfig(_)), "{err:?}");
}

// ---------------------------------------------------------------------------------------------
// The scenarios

#[test]
fn range_bounce_buys_with_hand_computed_targets() {
    let c = scenarios::range_bounce_buy(NOW);
    let d = data(&c, standby());
    let r = one(d.clone(), "{}");
    assert_eq!(r.direction, Direction::Buy, "{r:#?}");
    assert!(reason(&r).starts_with("buy at support 95"), "{}", reason(&r));

    // By hand: S = 95, R = 105 (the scenario's exact edges), A = ATR(14) of the 4h candles,
    // p = last close; SL = S − 1.5 A, TP1 = midline, TP2 = R − 0.75 A, TP3 = R.
    let (s, res, a, p) = (SUPPORT, RESISTANCE, regime_atr(&d), *c.close.last().unwrap());
    assert_eq!(r.price, p);
    assert_eq!(
        (r.range_support, r.range_resistance, r.range_midline),
        (Some(s), Some(res), Some(100.0))
    );
    assert!(
        close_to((p - s) / a, scenarios::BOUNCE_PROXIMITY_ATR, 0.01),
        "proximity {}",
        (p - s) / a
    );
    let pct = |level: f64| (level - p) / p * 100.0;
    let (sl_pct, tp1, tp2, tp3) =
        ((p - (s - 1.5 * a)) / p * 100.0, pct(100.0), pct(res - 0.75 * a), pct(res));
    let tp = 0.4 * tp1 + 0.4 * tp2 + 0.2 * tp3;
    assert!(close_to(r.sl_pct, sl_pct, 1e-9), "{} vs {sl_pct}", r.sl_pct);
    assert!(close_to(r.tp1_pct.unwrap(), tp1, 1e-9));
    assert!(close_to(r.tp2_pct.unwrap(), tp2, 1e-9));
    assert!(close_to(r.tp_pct, tp, 1e-9));
    assert!(r.tp_pct / r.sl_pct >= 2.5);
    assert!(line(&r, "min_rr").pass);

    // Every required line passes, in gate order; then the three quality lines.
    let names: Vec<&str> = r.checklist.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "news_blackout",
            "regime_macro",
            "regime_trend",
            "regime_chop",
            "range_width",
            "range_adx",
            "range_touches",
            "entry_reversal",
            "entry_proximity",
            "entry_volume",
            "min_rr",
            "market_context",
            "quality_touches",
            "quality_volume",
            "quality_rsi",
        ]
    );
    assert!(r.checklist[..12].iter().all(|c| c.pass), "{r:#?}");
    assert!(r.adx.unwrap() < 25.0 && close_to(r.vol_ratio.unwrap(), 1.6, 1e-9) && r.rsi.is_some());
    assert_eq!(r.tier.as_deref(), Some("A+"));

    // A trade_long context allows the buy too.
    assert_eq!(one(data(&c, Some(PriorityDecision::TradeLong)), "{}").direction, Direction::Buy);
}

#[test]
fn range_rejection_sells_at_resistance() {
    let c = scenarios::range_rejection_sell(NOW);
    let d = data(&c, standby());
    let r = one(d.clone(), "{}");
    assert_eq!(r.direction, Direction::Sell, "{r:#?}");
    let (a, p) = (regime_atr(&d), *c.close.last().unwrap());
    assert!(close_to((RESISTANCE - p) / a, scenarios::BOUNCE_PROXIMITY_ATR, 0.01));
    // Mirrored: SL above resistance, targets below.
    assert!(close_to(r.sl_pct, ((RESISTANCE + 1.5 * a) - p) / p * 100.0, 1e-9));
    assert!(close_to(r.tp1_pct.unwrap(), (p - 100.0) / p * 100.0, 1e-9));
    assert!(close_to(r.tp2_pct.unwrap(), (p - (SUPPORT + 0.75 * a)) / p * 100.0, 1e-9));
    assert_eq!(r.tier.as_deref(), Some("A+"));
    assert_eq!(one(data(&c, Some(PriorityDecision::TradeShort)), "{}").direction, Direction::Sell);
    let blocked = one(data(&c, Some(PriorityDecision::TradeLong)), "{}");
    assert_eq!(blocked.direction, Direction::Skip);
    assert!(
        reason(&blocked).starts_with("market_context: trade_long blocks a sell"),
        "{}",
        reason(&blocked)
    );
}

#[test]
fn strong_trend_skips_at_the_regime_gate() {
    let r = one(data(&scenarios::strong_trend(NOW), standby()), "{}");
    assert_eq!(r.direction, Direction::Skip);
    assert!(reason(&r).starts_with("regime: "), "{}", reason(&r));
    assert!(r.adx.unwrap() >= 25.0);
    assert!(!line(&r, "regime_trend").pass);
    assert!(line(&r, "regime_trend").detail.contains("(trend)"));
    // Nothing after the failing gate was evaluated.
    assert_eq!(r.checklist.last().unwrap().name, "regime_chop");
    assert_eq!(r.total, 4);
}

#[test]
fn volatile_chop_skips_at_the_regime_gate() {
    let r = one(data(&scenarios::volatile_chop(NOW), standby()), "{}");
    assert_eq!(r.direction, Direction::Skip);
    assert!(reason(&r).starts_with("regime: 1h volatile chop"), "{}", reason(&r));
    assert!(line(&r, "regime_macro").pass && line(&r, "regime_trend").pass);
    assert!(!line(&r, "regime_chop").pass);
}

#[test]
fn news_blackout_covering_now_skips() {
    let d = data(&scenarios::range_bounce_buy(NOW), standby());
    let config = |w: &str| json!({ "news_blackout_windows_utc": ["13:30-14:30", w] }).to_string();
    // NOW is 00:00 UTC: a window wrapping midnight covers it.
    let r = one(d.clone(), &config("23:30-00:30"));
    assert_eq!(r.direction, Direction::Skip);
    assert_eq!(reason(&r), "news_blackout: 23:30-00:30 UTC covers now (00:00 UTC)");
    assert_eq!((r.passed, r.total), (0, 1));
    let r = one(d.clone(), &config("00:00-00:01"));
    assert!(reason(&r).starts_with("news_blackout: 00:00-00:01 UTC"), "{}", reason(&r));
    // 13:45 UTC: the first window.
    let later = scenarios::range_bounce_buy(NOW + 13 * HOUR + 45 * 60_000);
    let mut r = scan_at(
        NOW + 13 * HOUR + 45 * 60_000,
        &config("23:30-00:30"),
        vec![data(&later, standby())],
    )
    .unwrap();
    assert!(reason(&r.results.remove(0)).starts_with("news_blackout: 13:30-14:30 UTC"));
    // Windows that do not cover now do not block.
    assert_eq!(one(d, &config("00:01-23:59")).direction, Direction::Buy);
}

#[test]
fn the_market_context_overrides() {
    let c = scenarios::range_bounce_buy(NOW);
    let cases: [(Option<PriorityDecision>, &str, &str); 4] = [
        (
            Some(PriorityDecision::NoTrade),
            "volatile_chop",
            "market_context: no_trade (volatile_chop) blocks",
        ),
        (Some(PriorityDecision::WatchRegimeShift), "", "market_context: watch_regime_shift blocks"),
        (Some(PriorityDecision::TradeShort), "", "market_context: trade_short blocks a buy"),
        (None, "", "market_context: missing"),
    ];
    for (decision, no_trade_reason, expected) in cases {
        let mut d = data(&c, decision);
        if let Some(ctx) = d.market_context.as_mut() {
            ctx.no_trade_reason = no_trade_reason.to_string();
        }
        let r = one(d, "{}");
        assert_eq!(r.direction, Direction::Skip, "{decision:?}");
        assert!(reason(&r).starts_with(expected), "{decision:?}: {}", reason(&r));
        // Every earlier gate was evaluated and passed; the override is the last line.
        assert_eq!((r.passed, r.total), (11, 12), "{decision:?}");
        assert!(!r.checklist.last().unwrap().pass);
        // The targets were computed and are shown.
        assert!(r.sl_pct > 0.0 && r.tp_pct > 0.0);
    }
}

#[test]
fn each_later_gate_fails_with_its_name() {
    let d = data(&scenarios::range_bounce_buy(NOW), standby());
    let cases = [
        (json!({"range_min_atr_multiplier": 9.5}), "range: 4h range 95"),
        (json!({"zone_proximity_atr_min": 0.1, "zone_proximity_atr_max": 0.2}), "entry: price"),
        (json!({"vol_increase_min": 2.0}), "entry: 1h turn volume 1.60x"),
        (json!({"min_rr": 5.0}), "min_rr: rr"),
    ];
    for (config, expected) in cases {
        let r = one(d.clone(), &config.to_string());
        assert_eq!(r.direction, Direction::Skip, "{config}");
        assert!(reason(&r).starts_with(expected), "{config}: {}", reason(&r));
    }
}

#[test]
fn tiers_follow_the_quality_checks() {
    let c = scenarios::range_bounce_buy(NOW);
    let tier = |c: &Candles, config: &str| one(data(c, standby()), config).tier;
    // Base: support touched 3 times and RSI stretched, volume 1.6x < 1.8x: A+.
    assert_eq!(tier(&c, "{}").as_deref(), Some("A+"));
    // A stronger volume spike: A++.
    let mut strong = c.clone();
    *strong.volume.last_mut().unwrap() *= 2.0;
    assert_eq!(tier(&strong, "{}").as_deref(), Some("A++"));
    // The same via config: strong volume = 1.5 × vol_increase_min = 1.5 ≤ 1.6.
    assert_eq!(tier(&c, r#"{"vol_increase_min": 1.0}"#).as_deref(), Some("A++"));
    // A flat approach instead of a slide (RSI not stretched) and ordinary volume: normal.
    let mut flat = c.clone();
    let n = flat.len();
    for i in n - 20..n - 4 {
        let level = SUPPORT + 0.3 + if i % 2 == 0 { 0.02 } else { -0.02 };
        flat.open[i] = flat.close[i - 1];
        flat.close[i] = level;
        flat.high[i] = flat.open[i].max(level) + 0.01;
        flat.low[i] = flat.open[i].min(level) - 0.01;
    }
    flat.open[n - 4] = flat.close[n - 5];
    flat.high[n - 4] = flat.high[n - 4].max(flat.open[n - 4]);
    let r = one(data(&flat, standby()), "{}");
    assert_eq!(r.direction, Direction::Buy, "{r:#?}");
    assert!(!line(&r, "quality_rsi").pass, "{r:#?}");
    assert_eq!(r.tier.as_deref(), Some("normal"), "{r:#?}");
}

// ---------------------------------------------------------------------------------------------
// Data handling

#[test]
fn timeframes_are_read_by_role_from_the_config() {
    let c = scenarios::range_bounce_buy(NOW);
    let tfs: Vec<String> = ["1d", "8h", "1h"].map(String::from).to_vec();
    let config = json!({ "timeframes": tfs }).to_string();
    // Data built for the configured roles: read without error (8h bars are a different range).
    let d =
        symbol_data("BTCUSDT", &c, &tfs, &COUNTS, Some(market_context(PriorityDecision::Standby)));
    let r = one(d, &config);
    assert!(line(&r, "news_blackout").pass);
    assert!(r.checklist.iter().any(|l| l.detail.contains("8h")), "{r:#?}");
    // Data for the default roles does not have 8h: an error naming it.
    let err = scan_at(NOW, &config, vec![data(&c, standby())]).unwrap_err();
    assert!(matches!(&err, ScanError::MissingData(m) if m.contains("8h")), "{err:?}");
}

#[test]
fn only_closed_candles_count() {
    let c = scenarios::range_bounce_buy(NOW);
    // Half an hour before NOW the reversal candle is still forming: no reversal yet.
    let r = scan_at(NOW - HOUR / 2, "{}", vec![data(&c, standby())]).unwrap().results.remove(0);
    assert_eq!(r.direction, Direction::Skip, "{r:#?}");
    assert!(reason(&r).starts_with("entry: "), "{}", reason(&r));
    // A forming candle after the reversal (opening at NOW, seen at NOW + 30 min) is ignored,
    // even a bearish one with a huge volume; the last price stays where it was.
    let mut more = c.clone();
    let p = *c.close.last().unwrap();
    more.open_time.push(NOW);
    more.open.push(p + 0.05);
    more.high.push(p + 0.06);
    more.low.push(p - 0.01);
    more.close.push(p);
    more.volume.push(50_000.0);
    let r = scan_at(NOW + HOUR / 2, "{}", vec![data(&more, standby())]).unwrap().results.remove(0);
    assert_eq!(r.direction, Direction::Buy, "{r:#?}");
    assert!(close_to(r.vol_ratio.unwrap(), 1.6, 1e-9));
}

#[test]
fn stale_candles_skip() {
    // Three hours after the data ends: the 1h series stopped.
    let d = data(&scenarios::range_bounce_buy(NOW), standby());
    let r = scan_at(NOW + 3 * HOUR, "{}", vec![d]).unwrap().results.remove(0);
    assert_host_valid(&r);
    assert!(reason(&r).starts_with("data: 1h candles are stale"), "{}", reason(&r));
}

#[test]
fn a_missing_timeframe_is_an_error_of_the_scan() {
    let mut d = data(&scenarios::range_bounce_buy(NOW), standby());
    d.candles.retain(|c| c.timeframe != "4h");
    let err = scan_at(NOW, "{}", vec![d]).unwrap_err();
    assert!(matches!(&err, ScanError::MissingData(m) if m.contains("BTCUSDT 4h")), "{err:?}");
}

#[test]
fn broken_or_short_input_skips_and_never_panics() {
    let base = data(&scenarios::range_bounce_buy(NOW), standby());
    let mut variants: Vec<(&str, SymbolData)> = Vec::new();
    for role in 0..3 {
        let edit = |f: &dyn Fn(&mut Candles)| {
            let mut d = base.clone();
            f(&mut d.candles[role]);
            d
        };
        variants.push((
            "empty",
            edit(&|c| {
                for col in [&mut c.open, &mut c.high, &mut c.low, &mut c.close, &mut c.volume] {
                    col.clear();
                }
                c.open_time.clear();
            }),
        ));
        variants.push((
            "short",
            edit(&|c| {
                let n = c.len();
                for col in [&mut c.open, &mut c.high, &mut c.low, &mut c.close, &mut c.volume] {
                    col.drain(..n - 10);
                }
                c.open_time.drain(..n - 10);
            }),
        ));
        for bad in [f64::NAN, f64::INFINITY, -1.0, 0.0] {
            variants.push(("close", edit(&|c| *c.close.last_mut().unwrap() = bad)));
            variants.push(("high", edit(&|c| c.high[5] = bad)));
            variants.push(("low", edit(&|c| c.low[7] = bad)));
            variants.push(("open", edit(&|c| c.open[0] = bad)));
        }
        variants.push(("volume", edit(&|c| c.volume[3] = f64::NAN)));
        variants.push(("volume", edit(&|c| c.volume[3] = -5.0)));
        variants.push((
            "columns",
            edit(&|c| {
                c.high.pop();
            }),
        ));
        variants.push(("order", edit(&|c| c.open_time.swap(1, 2))));
    }
    for bad in [f64::NAN, 0.0, -1.0, f64::INFINITY] {
        let mut d = base.clone();
        d.last_price = bad;
        variants.push(("price", d));
    }
    for (what, d) in variants {
        let r = one(d, "{}");
        assert_eq!(r.direction, Direction::Skip, "{what}");
        assert!(reason(&r).starts_with("data: "), "{what}: {}", reason(&r));
    }

    // Extreme but valid numbers: never a non-finite field.
    let mut huge = base.clone();
    for c in &mut huge.candles {
        for v in c.volume.iter_mut() {
            *v *= 1e300;
        }
        for col in [&mut c.open, &mut c.high, &mut c.low, &mut c.close] {
            for v in col.iter_mut() {
                *v *= 1e300;
            }
        }
    }
    huge.last_price *= 1e300;
    one(huge, "{}");
    let mut tiny = base;
    for c in &mut tiny.candles {
        for col in [&mut c.open, &mut c.high, &mut c.low, &mut c.close] {
            for v in col.iter_mut() {
                *v *= 1e-300;
            }
        }
    }
    tiny.last_price *= 1e-300;
    one(tiny, "{}");
}

#[test]
fn random_walks_give_valid_results() {
    let needs = MrCombined::describe().candles;
    let mut req = testing::request(&needs, 12, "{}", NOW);
    for (i, s) in req.symbols.iter_mut().enumerate() {
        s.market_context = Some(market_context(PriorityDecision::Standby));
        if i % 3 == 0 {
            s.market_context = None;
        }
    }
    let r = MrCombined::scan(req).unwrap();
    assert_eq!(r.results.len(), 12);
    for (i, res) in r.results.iter().enumerate() {
        assert_eq!(res.symbol, format!("SYM{i}USDT"));
        assert_host_valid(res);
    }
}

#[test]
fn same_input_same_output() {
    let a = data(&scenarios::range_bounce_buy(NOW), standby());
    let mut b = data(&scenarios::volatile_chop(NOW), standby());
    b.symbol = "ETHUSDT".into();
    let first = scan_at(NOW, "{}", vec![a.clone(), b.clone()]).unwrap();
    let again = scan_at(NOW, "{}", vec![a.clone(), b.clone()]).unwrap();
    assert_eq!(first, again);
    // Each symbol's result depends only on its own data.
    let swapped = scan_at(NOW, "{}", vec![b, a]).unwrap();
    assert_eq!(first.results[0], swapped.results[1]);
    assert_eq!(first.results[1], swapped.results[0]);
    assert!(first.state_updates.is_empty() && first.alerts.is_empty());
    // The scenarios themselves are deterministic.
    assert_eq!(scenarios::range_bounce_buy(NOW), scenarios::range_bounce_buy(NOW));
}

#[test]
fn scenarios_hold_at_any_time_of_day() {
    for hours in [1, 2, 3, 4, 8, 12, 20, 24 * 7 + 4] {
        let now = NOW + hours * HOUR;
        let run =
            |c: Candles| scan_at(now, "{}", vec![data(&c, standby())]).unwrap().results.remove(0);
        assert_eq!(run(scenarios::range_bounce_buy(now)).direction, Direction::Buy, "+{hours}h");
        assert_eq!(
            run(scenarios::range_rejection_sell(now)).direction,
            Direction::Sell,
            "+{hours}h"
        );
        assert!(reason(&run(scenarios::strong_trend(now))).starts_with("regime: "), "+{hours}h");
        assert!(
            reason(&run(scenarios::volatile_chop(now))).starts_with("regime: 1h volatile chop")
        );
    }
}

#[test]
fn scenario_shapes() {
    let c = scenarios::range_bounce_buy(NOW);
    assert_eq!(c.len(), scenarios::HOURS);
    assert!(c.is_consistent());
    assert_eq!(*c.open_time.last().unwrap(), NOW - HOUR);
    assert!(c.low.iter().all(|&l| l >= SUPPORT) && c.high.iter().all(|&h| h <= RESISTANCE));
    let d = data(&c, None);
    assert_eq!(d.candles.iter().map(|c| c.len()).collect::<Vec<_>>(), vec![120, 200, 300]);
    assert_eq!(d.last_price, *c.close.last().unwrap());
}
