//! One hand-built candle series per priority level, plus checks that every field only takes
//! the spec's allowed values.

use super::*;

/// Candles whose mid price follows straight lines between `(bar, price)` waypoints. Each bar
/// is `mid ± half` high/low, opens a little against and closes a little with the move, so a
/// turning point of the path is a strict fractal swing.
fn path(points: &[(usize, f64)], half: f64) -> Candles {
    let mut mids = Vec::new();
    for w in points.windows(2) {
        let ((a, pa), (b, pb)) = (w[0], w[1]);
        for i in a..b {
            mids.push(pa + (pb - pa) * (i - a) as f64 / (b - a) as f64);
        }
    }
    let last = points[points.len() - 1].1;
    mids.push(last);
    bars(&mids, |_| half)
}

/// Bars around the given mids with a per-bar half-range.
fn bars(mids: &[f64], half: impl Fn(usize) -> f64) -> Candles {
    let mut c = Candles {
        timeframe: "4h".into(),
        open_time: vec![],
        open: vec![],
        high: vec![],
        low: vec![],
        close: vec![],
        volume: vec![],
    };
    for (i, &m) in mids.iter().enumerate() {
        let h = half(i);
        let prev = if i == 0 { m } else { mids[i - 1] };
        let lean = if m >= prev { 0.5 * h } else { -0.5 * h };
        c.open_time.push(i as i64 * 14_400_000);
        c.open.push(m - lean);
        c.close.push(m + lean);
        c.high.push(m + h);
        c.low.push(m - h);
        c.volume.push(1000.0);
    }
    c
}

/// A staircase: legs of `up` bars rising `step` each, then `down` bars falling `step` each,
/// repeated `legs` times from `start`; `sign` −1 mirrors it into a falling staircase.
fn staircase(start: f64, legs: usize, up: usize, down: usize, step: f64, sign: f64) -> Candles {
    let mut points = vec![(0, start)];
    let (mut bar, mut price) = (0, start);
    for _ in 0..legs {
        bar += up;
        price += sign * step * up as f64;
        points.push((bar, price));
        bar += down;
        price -= sign * step * down as f64;
        points.push((bar, price));
    }
    path(&points, step)
}

/// Back and forth between `low` and `high` every `period` bars, for `bars` bars, ending at `end`.
fn oscillation(low: f64, high: f64, period: usize, bars: usize, end: f64) -> Vec<(usize, f64)> {
    let mut points = vec![(0, low)];
    let mut bar = 0;
    let mut top = true;
    while bar + period < bars {
        bar += period;
        points.push((bar, if top { high } else { low }));
        top = !top;
    }
    points.push((bars, end));
    points
}

fn run(htf: &Candles, mtf: &Candles) -> MarketContext {
    let c = analyze("BTCUSDT", "1d", "4h", htf, mtf, 1_700_000_000);
    assert_allowed(&c);
    c
}

fn level(c: &MarketContext) -> u64 {
    c.mtf.detail["priority_level"].as_u64().unwrap()
}

fn bull_htf() -> Candles {
    staircase(100.0, 14, 6, 3, 1.0, 1.0)
}

/// Every field is one of the spec's values, every number finite, the JSON shape complete.
fn assert_allowed(c: &MarketContext) {
    const TF: [&str; 6] = ["15m", "30m", "1h", "4h", "1d", "1w"];
    assert!(TF.contains(&c.htf_tf.as_str()) && TF.contains(&c.mtf_tf.as_str()));
    assert!(
        c.htf.range_high.is_finite() && c.htf.range_low.is_finite() && c.mtf.atr_val.is_finite()
    );
    assert!(c.htf.detail.is_object() && c.mtf.detail.is_object());
    assert_eq!(c.mtf.volatile_chop, c.mtf.regime == Regime::VolatileChop);
    assert_eq!(
        c.no_trade_reason.is_empty(),
        c.priority_decision != PriorityDecision::NoTrade,
        "a reason exactly for no_trade"
    );
    assert!(["", REASON_VOLATILE_CHOP, REASON_COMPRESSION].contains(&c.no_trade_reason.as_str()));
    if c.mtf.regime != Regime::Compression {
        assert_eq!(c.mtf.compression_bias, MarketDirection::None);
    }
    if c.mtf.bos_mode == BosMode::None {
        assert_eq!(
            (c.mtf.trend_age, c.mtf.trend_direction),
            (TrendAge::None, MarketDirection::None)
        );
    }
    let v = serde_json::to_value(c).unwrap();
    let allowed: [(&str, &[&str]); 7] = [
        ("/htf/macro_phase", &["bull", "bear", "range"]),
        (
            "/htf/range_position",
            &["low", "mid", "high", "just_broken_up", "just_broken_down", "unknown"],
        ),
        ("/htf/liquidity_profile", &["clean", "equal_highs", "equal_lows", "void"]),
        (
            "/mtf/regime",
            &["trend", "compression", "sideway", "volatile_chop", "transition", "unknown"],
        ),
        ("/mtf/bos_mode", &["confirmed", "quick", "none"]),
        ("/mtf/trend_age", &["fresh", "extended", "none"]),
        (
            "/priority_decision",
            &["trade_long", "trade_short", "standby", "no_trade", "watch_regime_shift"],
        ),
    ];
    for (pointer, values) in allowed {
        let got = v.pointer(pointer).and_then(|x| x.as_str()).unwrap();
        assert!(values.contains(&got), "{pointer} = {got}");
    }
    for key in ["symbol", "htf_tf", "mtf_tf", "no_trade_reason", "timestamp", "htf", "mtf"] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    for key in ["volatile_chop", "atr_val", "trend_direction", "compression_bias", "detail"] {
        assert!(v["mtf"].get(key).is_some(), "missing mtf.{key}");
    }
    for key in ["range_high", "range_low", "detail"] {
        assert!(v["htf"].get(key).is_some(), "missing htf.{key}");
    }
}

#[test]
fn htf_follows_the_spec_table() {
    let pairs =
        [("15m", "1h"), ("30m", "4h"), ("1h", "4h"), ("4h", "1d"), ("1d", "1d"), ("1w", "1w")];
    for (mtf, htf) in pairs {
        assert_eq!(htf_for(mtf), Some(htf));
    }
    assert_eq!(htf_for("2h"), None);
    assert_eq!(htf_for(DEFAULT_MTF), Some("1d"));
}

#[test]
fn level_1_too_few_candles_is_standby_with_unknown_fields() {
    let short = staircase(100.0, 3, 6, 3, 1.0, 1.0);
    let c = run(&bull_htf(), &short);
    assert_eq!((c.priority_decision, level(&c)), (PriorityDecision::Standby, 1));
    assert_eq!(c.mtf.regime, Regime::Unknown);
    assert_eq!(c.htf.range_position, RangePosition::Unknown);
    assert_eq!((c.mtf.bos_mode, c.mtf.trend_age), (BosMode::None, TrendAge::None));
    assert_eq!(c.no_trade_reason, "");
    // Flat candles (ATR 0) are not analysable either.
    let flat = path(&[(0, 100.0), (80, 100.0)], 0.0);
    assert_eq!(level(&run(&flat, &bull_htf())), 1);
}

#[test]
fn level_2_high_atr_without_structure_is_no_trade_volatile_chop() {
    // 70 calm bars, then 20 wide bars swinging ±4 around 100 with no net progress.
    let mut mids: Vec<f64> = (0..70).map(|i| 100.0 + if i % 2 == 0 { 0.3 } else { -0.3 }).collect();
    mids.extend((0..20).map(|i| 100.0 + if i % 2 == 0 { 3.0 } else { -3.0 }));
    let mtf = bars(&mids, |i| if i < 70 { 0.4 } else { 2.5 });
    let c = run(&bull_htf(), &mtf);
    assert_eq!(c.priority_decision, PriorityDecision::NoTrade, "{:#}", c.mtf.detail);
    assert_eq!((level(&c), c.no_trade_reason.as_str()), (2, REASON_VOLATILE_CHOP));
    assert_eq!(c.mtf.regime, Regime::VolatileChop);
    assert!(c.mtf.volatile_chop);
}

#[test]
fn level_3_squeezed_bands_and_weak_adx_is_no_trade_compression() {
    // Wide swings 90..110, then a tight squeeze 99.5..100.5 ending near its top.
    let mut points = oscillation(90.0, 110.0, 5, 60, 100.0);
    points.extend(
        oscillation(99.5, 100.5, 2, 40, 100.5).into_iter().skip(1).map(|(b, p)| (b + 60, p)),
    );
    let mtf = path(&points, 0.3);
    let c = run(&bull_htf(), &mtf);
    assert_eq!(c.priority_decision, PriorityDecision::NoTrade, "{:#}", c.mtf.detail);
    assert_eq!((level(&c), c.no_trade_reason.as_str()), (3, REASON_COMPRESSION));
    assert_eq!(c.mtf.regime, Regime::Compression);
    assert_eq!(c.mtf.compression_bias, MarketDirection::Up);
    assert!(!c.mtf.volatile_chop);
    // The squeeze's last break was down under a bull HTF: level 3 comes before the conflict.
    assert_eq!(c.mtf.trend_direction, MarketDirection::Down);
}

#[test]
fn level_4_bull_htf_with_falling_mtf_is_watch_regime_shift() {
    let mtf = staircase(200.0, 10, 6, 3, 1.0, -1.0);
    let c = run(&bull_htf(), &mtf);
    assert_eq!(c.htf.macro_phase, MacroPhase::Bull);
    assert_eq!(c.mtf.trend_direction, MarketDirection::Down, "{:#}", c.mtf.detail);
    assert_eq!((c.priority_decision, level(&c)), (PriorityDecision::WatchRegimeShift, 4));
    assert_eq!(c.no_trade_reason, "");
}

#[test]
fn level_5_middle_of_an_htf_range_is_standby() {
    let htf = path(&oscillation(90.0, 110.0, 8, 100, 100.0), 1.0);
    let mtf = staircase(100.0, 10, 6, 3, 1.0, 1.0);
    let c = run(&htf, &mtf);
    assert_eq!(c.htf.macro_phase, MacroPhase::Range, "{:#}", c.htf.detail);
    assert_eq!(c.htf.range_position, RangePosition::Mid);
    assert_eq!(c.htf.liquidity_profile, LiquidityProfile::EqualHighs);
    assert_eq!((c.priority_decision, level(&c)), (PriorityDecision::Standby, 5));
}

#[test]
fn level_6_aligned_fresh_confirmed_trend_trades_long_and_short() {
    let mtf = staircase(100.0, 10, 6, 3, 1.0, 1.0);
    let c = run(&bull_htf(), &mtf);
    assert_eq!(
        (c.mtf.regime, c.mtf.bos_mode, c.mtf.trend_age),
        (Regime::Trend, BosMode::Confirmed, TrendAge::Fresh),
        "{:#}",
        c.mtf.detail
    );
    assert_eq!(c.mtf.trend_direction, MarketDirection::Up);
    assert_eq!((c.priority_decision, level(&c)), (PriorityDecision::TradeLong, 6));
    assert!(c.mtf.atr_val > 0.0);

    let bear_htf = staircase(300.0, 14, 6, 3, 1.0, -1.0);
    let mtf = staircase(200.0, 10, 6, 3, 1.0, -1.0);
    let c = run(&bear_htf, &mtf);
    assert_eq!(c.htf.macro_phase, MacroPhase::Bear);
    assert_eq!((c.priority_decision, level(&c)), (PriorityDecision::TradeShort, 6));
}

#[test]
fn level_7_extended_trend_is_standby() {
    // The last leg runs 20 bars past the break: far more than 5 ATR.
    let mut points = vec![(0, 100.0)];
    let (mut bar, mut price) = (0, 100.0);
    for _ in 0..8 {
        points.extend([(bar + 6, price + 6.0), (bar + 9, price + 3.0)]);
        bar += 9;
        price += 3.0;
    }
    points.push((bar + 25, price + 25.0));
    let mtf = path(&points, 1.0);
    let c = run(&bull_htf(), &mtf);
    assert_eq!(
        (c.mtf.regime, c.mtf.trend_age),
        (Regime::Trend, TrendAge::Extended),
        "{:#}",
        c.mtf.detail
    );
    assert_eq!((c.priority_decision, level(&c)), (PriorityDecision::Standby, 7));
}

#[test]
fn plugin_record_carries_the_same_values() {
    let c = run(&bull_htf(), &staircase(100.0, 10, 6, 3, 1.0, 1.0));
    let p = model::MarketContext::from(&c);
    assert_eq!(
        (p.regime, p.priority_decision, p.atr),
        (c.mtf.regime, c.priority_decision, c.mtf.atr_val)
    );
    assert_eq!(
        (p.range_high, p.timestamp, p.htf_tf.as_str()),
        (c.htf.range_high, 1_700_000_000, "1d")
    );
}

#[test]
fn many_shapes_only_produce_allowed_values() {
    // Property-style sweep: staircases, ranges and squeezes of many sizes, on both layers.
    let mut shapes = Vec::new();
    for (up, down) in [(3, 2), (5, 4), (6, 3), (4, 4), (8, 2)] {
        for sign in [1.0, -1.0] {
            shapes.push(staircase(500.0, 12, up, down, 1.5, sign));
        }
    }
    for period in [2, 3, 7, 11] {
        shapes.push(path(&oscillation(80.0, 120.0, period, 90, 85.0), 1.0));
    }
    for a in &shapes {
        for b in &shapes {
            run(a, b);
        }
    }
}

#[test]
fn level_7_sideways_mtf_under_a_bull_htf_is_standby() {
    // Equal swings 95..105: no close ever breaks a swing, ADX stays low, the bands keep their width.
    let mtf = path(&oscillation(95.0, 105.0, 5, 90, 100.0), 1.0);
    let c = run(&bull_htf(), &mtf);
    assert_eq!(c.mtf.regime, Regime::Sideway, "{:#}", c.mtf.detail);
    assert_eq!((c.mtf.trend_direction, c.mtf.bos_mode), (MarketDirection::None, BosMode::None));
    assert_eq!((c.priority_decision, level(&c)), (PriorityDecision::Standby, 7));
}

#[test]
fn htf_close_beyond_the_range_is_just_broken_up_and_an_open_gap_is_a_void() {
    let mut htf = bull_htf();
    let base = *htf.close.last().unwrap();
    let jump = bars(&[base + 1.0, base + 9.0, base + 17.0], |_| 1.0);
    for (col, add) in [
        (&mut htf.open, &jump.open),
        (&mut htf.high, &jump.high),
        (&mut htf.low, &jump.low),
        (&mut htf.close, &jump.close),
        (&mut htf.volume, &jump.volume),
    ] {
        col.extend(add);
    }
    htf.open_time.extend([1, 2, 3]);
    let c = run(&htf, &staircase(100.0, 10, 6, 3, 1.0, 1.0));
    assert_eq!(c.htf.range_position, RangePosition::JustBrokenUp, "{:#}", c.htf.detail);
    assert_eq!(c.htf.liquidity_profile, LiquidityProfile::Void);
    assert!(c.htf.detail["void_gap_atr"].as_f64().unwrap() >= 1.0);
}

#[test]
fn htf_descending_highs_over_a_flat_floor_are_equal_lows_in_a_range() {
    let mut points = vec![(0, 90.0)];
    for k in 0..12 {
        points.extend([(8 * k + 4, 115.0 - 2.0 * k as f64), (8 * k + 8, 90.0)]);
    }
    points.push((100, 93.0));
    let c = run(&path(&points, 1.0), &staircase(100.0, 10, 6, 3, 1.0, 1.0));
    assert_eq!(c.htf.macro_phase, MacroPhase::Range, "{:#}", c.htf.detail);
    assert_eq!(c.htf.liquidity_profile, LiquidityProfile::EqualLows);
    assert_eq!(c.htf.range_position, RangePosition::Low);
    assert_eq!(c.htf.range_low, 89.0);
    // A range low under an MTF uptrend is the edge a long leaves from: aligned.
    assert_eq!(c.priority_decision, PriorityDecision::TradeLong);
}

#[test]
fn a_break_out_of_a_sideways_range_without_adx_is_transition() {
    let mut points = oscillation(95.0, 105.0, 5, 80, 95.0);
    points.push((86, 108.0));
    let c = run(&bull_htf(), &path(&points, 1.0));
    assert_eq!(c.mtf.regime, Regime::Transition, "{:#}", c.mtf.detail);
    assert_eq!(c.mtf.trend_direction, MarketDirection::Up);
    assert_eq!(c.mtf.trend_age, TrendAge::Fresh);
    assert_eq!((c.priority_decision, level(&c)), (PriorityDecision::Standby, 7));
}
