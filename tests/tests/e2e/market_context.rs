//! The market multi-timeframe routes (spec: "MarketContext", "Market multi-timeframe") over
//! HTTP against the exchange simulator on the rig's test clock: every field of a context with
//! only the spec's values, the one-hour cache (what reaches the exchange and what does not),
//! the 422 / 404 / 500 errors, the snapshot history, the cache list, the watchlist scan, and
//! what survives a restart (snapshots and the compression / watch memories, not the cache).

use crate::trading_support::Trading;
use chrono::Duration;
use serde_json::Value;
use spotbot_sdk::Candles;
use spotbot_sim::{Fault, FaultKind};
use spotbot_tests::scripted::script;

const TTL_SEC: i64 = 3600;
const HOUR_MS: i64 = 3_600_000;
const TIMEFRAMES: [&str; 6] = ["15m", "30m", "1h", "4h", "1d", "1w"];
const WATCHLIST: [&str; 5] = ["BTCUSDT", "ETHUSDT", "SOLUSDT", "BNBUSDT", "XRPUSDT"];

fn now_s(t: &Trading) -> i64 {
    t.rig.now().timestamp()
}

fn advance_seconds(t: &Trading, seconds: i64) {
    t.rig.clock.advance(Duration::seconds(seconds));
}

/// Kline requests the simulator answered so far.
fn klines_seen(t: &Trading) -> usize {
    t.seen("GET", "/api/v3/klines").len()
}

/// A synced rig whose SOLUSDT serves MR Combined's range-bounce scenario (2928 closed 1h
/// candles ending at the rig's start); returns the scenario too.
async fn range_rig() -> (Trading, Candles) {
    let t = Trading::start_synced("").await;
    let candles = mr_combined::scenarios::range_bounce_buy(t.rig.now().timestamp_millis());
    script(&t.sim.sim, "SOLUSDT", &candles);
    (t, candles)
}

/// `GET path`, asserting 200.
async fn ok(t: &Trading, path: &str) -> Value {
    let (status, body) = t.get(path).await;
    assert_eq!(status, 200, "GET {path}: {body}");
    body
}

/// `GET path`, asserting the status and error code of the API's one error body; returns its
/// detail.
async fn failing(t: &Trading, path: &str, status: u16, code: &str) -> String {
    let (got, body) = t.get(path).await;
    assert_eq!(got, status, "GET {path}: {body}");
    assert_eq!(body["ok"], false, "GET {path}: {body}");
    assert_eq!(body["error"], code, "GET {path}: {body}");
    let detail = body["detail"].as_str().unwrap_or_default().to_string();
    assert!(!detail.is_empty(), "GET {path}: the detail says why: {body}");
    detail
}

fn keys(v: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

fn one_of(v: &Value, allowed: &[&str], what: &str, context: &Value) {
    let s = v.as_str().unwrap_or_else(|| panic!("{what} is not a string: {context}"));
    assert!(allowed.contains(&s), "{what} = {s:?} is not one of {allowed:?}: {context}");
}

/// Every field of the spec's MarketContext, with only its allowed values (and nothing else at
/// the top level or in the two layers).
fn assert_market_context(c: &Value) {
    assert_eq!(
        keys(c),
        [
            "htf",
            "htf_tf",
            "mtf",
            "mtf_tf",
            "no_trade_reason",
            "priority_decision",
            "symbol",
            "timestamp"
        ],
        "{c}"
    );
    assert!(c["symbol"].is_string(), "{c}");
    one_of(&c["htf_tf"], &TIMEFRAMES, "htf_tf", c);
    one_of(&c["mtf_tf"], &TIMEFRAMES, "mtf_tf", c);
    assert!(c["timestamp"].is_i64(), "timestamp is an integer: {c}");

    let htf = &c["htf"];
    assert_eq!(
        keys(htf),
        ["detail", "liquidity_profile", "macro_phase", "range_high", "range_low", "range_position"],
        "{c}"
    );
    one_of(&htf["macro_phase"], &["bull", "bear", "range"], "htf.macro_phase", c);
    one_of(
        &htf["range_position"],
        &["low", "mid", "high", "just_broken_up", "just_broken_down", "unknown"],
        "htf.range_position",
        c,
    );
    one_of(
        &htf["liquidity_profile"],
        &["clean", "equal_highs", "equal_lows", "void"],
        "htf.liquidity_profile",
        c,
    );
    assert!(htf["range_high"].is_f64() && htf["range_low"].is_f64(), "{c}");
    assert!(htf["detail"].is_object(), "{c}");

    let mtf = &c["mtf"];
    assert_eq!(
        keys(mtf),
        [
            "atr_val",
            "bos_mode",
            "compression_bias",
            "detail",
            "regime",
            "trend_age",
            "trend_direction",
            "volatile_chop"
        ],
        "{c}"
    );
    one_of(
        &mtf["regime"],
        &["trend", "compression", "sideway", "volatile_chop", "transition", "unknown"],
        "mtf.regime",
        c,
    );
    one_of(&mtf["trend_direction"], &["up", "down", "none"], "mtf.trend_direction", c);
    one_of(&mtf["bos_mode"], &["confirmed", "quick", "none"], "mtf.bos_mode", c);
    one_of(&mtf["trend_age"], &["fresh", "extended", "none"], "mtf.trend_age", c);
    one_of(&mtf["compression_bias"], &["up", "down", "none"], "mtf.compression_bias", c);
    let chop = mtf["volatile_chop"].as_bool().unwrap_or_else(|| panic!("a bool: {c}"));
    assert_eq!(chop, mtf["regime"] == "volatile_chop", "{c}");
    assert!(mtf["atr_val"].is_f64(), "{c}");
    assert!(mtf["detail"].is_object(), "{c}");

    one_of(
        &c["priority_decision"],
        &["trade_long", "trade_short", "standby", "no_trade", "watch_regime_shift"],
        "priority_decision",
        c,
    );
    let reason = c["no_trade_reason"].as_str().unwrap();
    assert_eq!(!reason.is_empty(), c["priority_decision"] == "no_trade", "{c}");
}

/// A stored snapshot row without its `computed_at`: what the route served when it was computed.
fn without_computed_at(row: &Value) -> Value {
    let mut row = row.clone();
    row.as_object_mut().unwrap().remove("computed_at");
    row
}

// ---------------------------------------------------------------------------------------------
// 1. One context.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_has_every_spec_field_with_allowed_values_and_the_clock_as_timestamp() {
    let (t, candles) = range_rig().await;
    let c = ok(&t, "/api/market/SOLUSDT").await;
    assert_market_context(&c);
    assert_eq!(c["symbol"], "SOLUSDT");
    assert_eq!((c["mtf_tf"].as_str(), c["htf_tf"].as_str()), (Some("4h"), Some("1d")), "{c}");
    assert_eq!(c["timestamp"].as_i64(), Some(now_s(&t)), "the rig clock in epoch seconds");
    assert_eq!(c["timestamp"].as_i64(), Some(1_772_438_400), "2026-03-02T08:00:00Z");

    // Computed from the scripted candles the simulator served: 200 of each timeframe, the last
    // MTF close is the scenario's last close.
    let detail = &c["mtf"]["detail"];
    assert_eq!(detail["candles"], 200, "{detail}");
    assert_eq!(c["htf"]["detail"]["candles"], 200, "{c}");
    let last_close = *candles.close.last().unwrap();
    let close = detail["close"].as_f64().unwrap();
    assert!((close - last_close).abs() < 1e-5, "mtf close {close} vs the script's {last_close}");
    let (high, low) = (c["htf"]["range_high"].as_f64().unwrap(), c["htf"]["range_low"].as_f64());
    assert!(low.is_some_and(|low| 0.0 < low && low < high), "{c}");
    // The memories are part of the MTF detail from the first computation on.
    assert!(detail["compression_memory"].is_object(), "{detail}");
    assert!(detail["watch_memory"].is_object(), "{detail}");
    assert!(t.seen("GET", "/api/v3/klines").len() >= 2, "both timeframes were fetched");
}

// ---------------------------------------------------------------------------------------------
// 2. The cache.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_context_comes_from_the_cache_and_is_recomputed_when_stale_or_for_other_frames() {
    let (t, _) = range_rig().await;
    let t0 = now_s(&t);
    let first = ok(&t, "/api/market/SOLUSDT").await;
    let after_first = klines_seen(&t);
    let info_after_first = t.seen("GET", "/api/v3/exchangeInfo").len();
    assert!(after_first >= 2, "the HTF and the MTF candles were fetched");

    // A hit touches neither the exchange nor the answer.
    let second = ok(&t, "/api/market/SOLUSDT").await;
    assert_eq!(second, first, "the cached context, unchanged");
    assert_eq!(klines_seen(&t), after_first, "a cache hit sends no kline request");
    assert_eq!(t.seen("GET", "/api/v3/exchangeInfo").len(), info_after_first);
    // Asking for the defaults explicitly is the same entry.
    let explicit = ok(&t, "/api/market/SOLUSDT?mtf_tf=4h&htf_tf=1d").await;
    assert_eq!(explicit, first);
    assert_eq!(klines_seen(&t), after_first);

    // 3599 s later it is still fresh.
    advance_seconds(&t, TTL_SEC - 1);
    let still = ok(&t, "/api/market/SOLUSDT").await;
    assert_eq!(still["timestamp"].as_i64(), Some(t0));
    assert_eq!(klines_seen(&t), after_first, "younger than the TTL: no request");

    // 3601 s after the computation it is stale: recomputed from new klines, new timestamp.
    advance_seconds(&t, 2);
    let recomputed = ok(&t, "/api/market/SOLUSDT").await;
    assert_market_context(&recomputed);
    assert_eq!(recomputed["timestamp"].as_i64(), Some(t0 + TTL_SEC + 1), "{recomputed}");
    let after_stale = klines_seen(&t);
    assert!(after_stale >= after_first + 2, "both timeframes fetched again");
    let again = ok(&t, "/api/market/SOLUSDT").await;
    assert_eq!(again, recomputed, "the new context is cached in turn");
    assert_eq!(klines_seen(&t), after_stale);

    // Another MTF is a miss although the entry is fresh; its HTF is the spec's pair (1h→4h).
    let hourly = ok(&t, "/api/market/SOLUSDT?mtf_tf=1h").await;
    assert_market_context(&hourly);
    assert_eq!((hourly["mtf_tf"].as_str(), hourly["htf_tf"].as_str()), (Some("1h"), Some("4h")));
    let after_hourly = klines_seen(&t);
    assert!(after_hourly >= after_stale + 2, "1h and 4h candles fetched");
    assert_eq!(ok(&t, "/api/market/SOLUSDT?mtf_tf=1h").await, hourly, "now cached for 1h");
    assert_eq!(klines_seen(&t), after_hourly);

    // The cache holds one context per symbol: back to the default frames is a miss again.
    let back = ok(&t, "/api/market/SOLUSDT").await;
    assert_eq!((back["mtf_tf"].as_str(), back["htf_tf"].as_str()), (Some("4h"), Some("1d")));
    let after_back = klines_seen(&t);
    assert!(after_back >= after_hourly + 2, "recomputed for 4h/1d");

    // An HTF override is honoured (and is another miss).
    let weekly = ok(&t, "/api/market/SOLUSDT?htf_tf=1w").await;
    assert_market_context(&weekly);
    assert_eq!((weekly["mtf_tf"].as_str(), weekly["htf_tf"].as_str()), (Some("4h"), Some("1w")));
    assert!(klines_seen(&t) >= after_back + 2, "1w and 4h candles fetched");
    let (status, cache) = t.get("/api/market/all").await;
    assert_eq!(status, 200);
    assert_eq!(cache["count"], 1, "one entry per symbol: {cache}");
    assert_eq!(cache["data"][0]["htf_tf"], "1w", "{cache}");
}

// ---------------------------------------------------------------------------------------------
// 3. Errors.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_timeframes_are_422_and_unknown_symbols_404_without_fetching_candles() {
    let (t, _) = range_rig().await;
    for (query, field, value) in [
        ("mtf_tf=2h", "mtf_tf", "2h"),
        ("mtf_tf=1M", "mtf_tf", "1M"),
        ("htf_tf=abc", "htf_tf", "abc"),
        ("mtf_tf=4h&htf_tf=4H", "htf_tf", "4H"),
    ] {
        let detail =
            failing(&t, &format!("/api/market/SOLUSDT?{query}"), 422, "invalid_timeframe").await;
        assert!(detail.contains(field) && detail.contains(value), "{query}: {detail}");
    }
    for path in ["/api/market/NOPEUSDT", "/api/market/btc-usdt", "/api/market/btcusdt"] {
        failing(&t, path, 404, "symbol_not_found").await;
    }
    assert_eq!(klines_seen(&t), 0, "no candles fetched for a request that cannot be served");
    assert_eq!(t.get("/api/market/all").await.1["count"], 0, "nothing cached");
    let (_, history) = t.get("/api/market/NOPEUSDT/history").await;
    assert_eq!(history["count"], 0, "nothing stored: {history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kline_failure_is_500_market_fetch_failed_and_the_next_request_recovers() {
    let (t, _) = range_rig().await;
    let kinds = [
        FaultKind::ServerError { status: 503, execute: false },
        FaultKind::DropAfterExecute,
        FaultKind::Reject { code: -1000, msg: Some("An unknown error occurred".into()) },
    ];
    for kind in kinds {
        let before = t.sim.sim.requests().len();
        let mut fault = Fault::new(kind.clone());
        fault.path = Some("/api/v3/klines".into());
        fault.method = Some("GET".into());
        fault.count = 100;
        t.sim.sim.inject(fault);

        let detail = failing(&t, "/api/market/SOLUSDT", 500, "market_fetch_failed").await;
        assert!(detail.contains("SOLUSDT") && detail.contains("klines"), "{kind:?}: {detail}");
        let tried: Vec<_> = t.sim.sim.requests()[before..]
            .iter()
            .filter(|r| r.path == "/api/v3/klines")
            .cloned()
            .collect();
        assert!(!tried.is_empty(), "{kind:?}: the candles were asked for");
        assert!(
            tried.iter().all(|r| r.fault.is_some() && r.status != 200),
            "{kind:?}: every kline request of that GET met the fault: {tried:?}"
        );
        t.sim.sim.clear_faults();
        // Nothing of the failed request was cached or stored.
        assert_eq!(ok(&t, "/api/market/all").await["count"], 0, "{kind:?}");
        assert_eq!(ok(&t, "/api/market/SOLUSDT/history").await["count"], 0, "{kind:?}");
    }

    let served = ok(&t, "/api/market/SOLUSDT").await;
    assert_market_context(&served);
    assert_eq!(served["timestamp"].as_i64(), Some(now_s(&t)));
    assert_eq!(ok(&t, "/api/market/SOLUSDT/history").await["count"], 1);
    let last = t.seen("GET", "/api/v3/klines");
    assert!(last.iter().rev().take(2).all(|r| r.status == 200 && r.fault.is_none()));
}

// ---------------------------------------------------------------------------------------------
// 4. History.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_lists_the_snapshots_newest_first_with_limit_and_timeframe_filters() {
    let (t, _) = range_rig().await;
    let t0 = now_s(&t);
    let first = ok(&t, "/api/market/SOLUSDT").await;
    advance_seconds(&t, TTL_SEC + 1);
    let second = ok(&t, "/api/market/SOLUSDT").await;
    advance_seconds(&t, 60);
    let third = ok(&t, "/api/market/SOLUSDT?mtf_tf=1h").await;
    // A cache hit stores nothing.
    ok(&t, "/api/market/SOLUSDT?mtf_tf=1h").await;

    let history = ok(&t, "/api/market/SOLUSDT/history").await;
    assert_eq!(history["symbol"], "SOLUSDT");
    assert_eq!(history["count"], 3, "{history}");
    let rows = history["data"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let at: Vec<i64> = rows.iter().map(|r| r["computed_at"].as_i64().unwrap()).collect();
    assert_eq!(at, [t0 + TTL_SEC + 61, t0 + TTL_SEC + 1, t0], "newest first");
    for (row, served) in rows.iter().zip([&third, &second, &first]) {
        assert_eq!(row["computed_at"], row["timestamp"], "{row}");
        assert_eq!(&without_computed_at(row), served, "the row is the context as served");
        assert_market_context(&without_computed_at(row));
    }

    let newest = ok(&t, "/api/market/SOLUSDT/history?limit=1").await;
    assert_eq!(newest["count"], 1);
    assert_eq!(newest["data"][0], rows[0]);

    let four_hour = ok(&t, "/api/market/SOLUSDT/history?mtf_tf=4h").await;
    assert_eq!(four_hour["count"], 2, "{four_hour}");
    assert_eq!(four_hour["data"][0], rows[1]);
    assert_eq!(four_hour["data"][1], rows[2]);
    let hourly = ok(&t, "/api/market/SOLUSDT/history?mtf_tf=1h").await;
    assert_eq!(hourly["count"], 1);
    assert_eq!(hourly["data"][0], rows[0]);
    let htf_4h = ok(&t, "/api/market/SOLUSDT/history?htf_tf=4h").await;
    assert_eq!(htf_4h["count"], 1);
    assert_eq!(htf_4h["data"][0]["mtf_tf"], "1h");
    let both = ok(&t, "/api/market/SOLUSDT/history?mtf_tf=4h&htf_tf=1d&limit=1").await;
    assert_eq!(both["count"], 1);
    assert_eq!(both["data"][0], rows[1], "filters apply before the limit");
    assert_eq!(ok(&t, "/api/market/SOLUSDT/history?mtf_tf=15m").await["count"], 0);

    for limit in ["0", "101", "abc", "-1", "1.5"] {
        let path = format!("/api/market/SOLUSDT/history?limit={limit}");
        let detail = failing(&t, &path, 422, "invalid_query").await;
        assert!(detail.contains("limit"), "{limit}: {detail}");
    }
    assert_eq!(ok(&t, "/api/market/SOLUSDT/history?limit=100").await["count"], 3);
    let detail =
        failing(&t, "/api/market/SOLUSDT/history?mtf_tf=2h", 422, "invalid_timeframe").await;
    assert!(detail.contains("mtf_tf") && detail.contains("2h"), "{detail}");
    let detail =
        failing(&t, "/api/market/SOLUSDT/history?htf_tf=bad", 422, "invalid_timeframe").await;
    assert!(detail.contains("htf_tf") && detail.contains("bad"), "{detail}");

    let never = ok(&t, "/api/market/ETHUSDT/history").await;
    assert_eq!(never["symbol"], "ETHUSDT");
    assert_eq!(never["count"], 0);
    assert_eq!(never["data"], Value::Array(vec![]));
}

// ---------------------------------------------------------------------------------------------
// 5. The cache list.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_list_shows_age_and_staleness_and_can_leave_stale_rows_out() {
    let (t, _) = range_rig().await;
    let empty = ok(&t, "/api/market/all").await;
    assert_eq!((empty["count"].as_i64(), empty["ttl_sec"].as_i64()), (Some(0), Some(TTL_SEC)));
    assert_eq!(empty["data"], Value::Array(vec![]));

    let sol = ok(&t, "/api/market/SOLUSDT").await;
    ok(&t, "/api/market/ETHUSDT").await;
    let cache = ok(&t, "/api/market/all").await;
    assert_eq!(cache["count"], 2);
    assert_eq!(cache["ttl_sec"], TTL_SEC);
    let rows = cache["data"].as_array().unwrap();
    let symbols: Vec<&str> = rows.iter().map(|r| r["symbol"].as_str().unwrap()).collect();
    assert_eq!(symbols, ["ETHUSDT", "SOLUSDT"], "by symbol");
    for row in rows {
        assert_eq!((row["age_sec"].as_i64(), row["stale"].as_bool()), (Some(0), Some(false)));
        let mut context = row.clone();
        context.as_object_mut().unwrap().remove("age_sec");
        context.as_object_mut().unwrap().remove("stale");
        assert_market_context(&context);
        if row["symbol"] == "SOLUSDT" {
            assert_eq!(context, sol, "the row is the cached context plus its age");
        }
    }

    advance_seconds(&t, 1800);
    ok(&t, "/api/market/BTCUSDT").await;
    let kline_requests = klines_seen(&t);
    let cache = ok(&t, "/api/market/all").await;
    let ages: Vec<(i64, bool)> = cache["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["age_sec"].as_i64().unwrap(), r["stale"].as_bool().unwrap()))
        .collect();
    assert_eq!(ages, [(0, false), (1800, false), (1800, false)], "BTC, ETH, SOL: {cache}");

    // 3601 s after ETH and SOL were computed: both stale, BTC (1801 s) fresh.
    advance_seconds(&t, 1801);
    let all = ok(&t, "/api/market/all").await;
    assert_eq!(all["count"], 3);
    let rows: Vec<(&str, i64, bool)> = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["symbol"].as_str().unwrap(),
                r["age_sec"].as_i64().unwrap(),
                r["stale"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [("BTCUSDT", 1801, false), ("ETHUSDT", 3601, true), ("SOLUSDT", 3601, true)],
        "{all}"
    );
    assert_eq!(ok(&t, "/api/market/all?stale=true").await, all, "true is the default");
    let fresh = ok(&t, "/api/market/all?stale=false").await;
    assert_eq!(fresh["count"], 1, "{fresh}");
    assert_eq!(fresh["data"][0]["symbol"], "BTCUSDT");
    assert_eq!(fresh["ttl_sec"], TTL_SEC);
    assert_eq!(klines_seen(&t), kline_requests, "listing the cache fetches nothing");
    let (status, body) = t.get("/api/market/all?stale=maybe").await;
    assert_eq!(status, 422, "{body}");

    // The next request of a stale symbol recomputes it; its row is fresh again.
    ok(&t, "/api/market/SOLUSDT").await;
    let fresh = ok(&t, "/api/market/all?stale=false").await;
    let symbols: Vec<&str> =
        fresh["data"].as_array().unwrap().iter().map(|r| r["symbol"].as_str().unwrap()).collect();
    assert_eq!(symbols, ["BTCUSDT", "SOLUSDT"], "{fresh}");
}

// ---------------------------------------------------------------------------------------------
// 6. The scan.

/// The newest dashboard log entry of a market scan.
async fn last_scan_log(t: &Trading) -> Value {
    let state = ok(t, "/api/state").await;
    let log = state["log"].as_array().unwrap();
    let scan =
        log.iter().find(|e| e["action"].as_str().is_some_and(|a| a.starts_with("market scan")));
    scan.unwrap_or_else(|| panic!("no market scan in the log: {state}")).clone()
}

fn decisions(scan: &Value) -> Vec<String> {
    scan["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["priority_decision"].as_str().unwrap().to_string())
        .collect()
}

fn assert_summary_adds_up(scan: &Value) {
    let summary = &scan["summary"];
    assert_eq!(
        keys(summary),
        ["no_trade", "standby", "trade_long", "trade_short", "watch_regime_shift"],
        "{scan}"
    );
    let decisions = decisions(scan);
    let mut total = 0;
    for (key, n) in summary.as_object().unwrap() {
        let n = n.as_u64().unwrap() as usize;
        assert_eq!(n, decisions.iter().filter(|d| *d == key).count(), "{key}: {scan}");
        total += n;
    }
    assert_eq!(total as u64, scan["scanned"].as_u64().unwrap(), "{scan}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_covers_the_watchlist_and_an_immediate_second_scan_comes_from_the_cache() {
    let (t, _) = range_rig().await;
    let first = ok(&t, "/api/market/scan").await;
    assert_eq!(first["exchange"], "exchange_a");
    assert_eq!((first["mtf_tf"].as_str(), first["htf_tf"].as_str()), (Some("4h"), Some("1d")));
    assert_eq!(first["scanned"], 5);
    assert_eq!(first["cached"], 0);
    assert_eq!(first["ttl_sec"], TTL_SEC);
    assert_eq!(first["errors"], Value::Array(vec![]), "{first}");
    let results = first["results"].as_array().unwrap();
    let symbols: Vec<&str> = results.iter().map(|r| r["symbol"].as_str().unwrap()).collect();
    assert_eq!(symbols, WATCHLIST, "the watchlist, in order");
    for r in results {
        assert_market_context(r);
        assert_eq!(r["timestamp"].as_i64(), Some(now_s(&t)));
    }
    assert_summary_adds_up(&first);
    let after_first = klines_seen(&t);
    assert!(after_first >= 10, "two timeframes for each of five symbols: {after_first}");

    let log = last_scan_log(&t).await;
    assert_eq!(log["agent"], "scout", "{log}");
    assert_eq!(log["status"], "ok", "{log}");
    assert!(log["action"].as_str().unwrap().starts_with("market scan 4h/1d:"), "{log}");

    let second = ok(&t, "/api/market/scan?agent=ops").await;
    assert_eq!(second["scanned"], 5);
    assert_eq!(second["cached"], 5);
    assert_eq!(second["results"], first["results"], "the cached contexts");
    assert_eq!(second["summary"], first["summary"]);
    assert_eq!(klines_seen(&t), after_first, "a cached scan sends no kline request");
    assert_eq!(last_scan_log(&t).await["agent"], "ops");
    // Each scanned context is in the cache and in its symbol's history.
    assert_eq!(ok(&t, "/api/market/all").await["count"], 5);
    for symbol in WATCHLIST {
        let history = ok(&t, &format!("/api/market/{symbol}/history")).await;
        assert_eq!(history["count"], 1, "{symbol}: {history}");
    }

    // A single GET served from what the scan cached.
    let sol = ok(&t, "/api/market/SOLUSDT").await;
    assert_eq!(sol, first["results"][2]);
    assert_eq!(klines_seen(&t), after_first);

    // Another MTF: its HTF pair, nothing from the cache.
    let hourly = ok(&t, "/api/market/scan?mtf_tf=1h").await;
    assert_eq!((hourly["mtf_tf"].as_str(), hourly["htf_tf"].as_str()), (Some("1h"), Some("4h")));
    assert_eq!((hourly["scanned"].as_u64(), hourly["cached"].as_u64()), (Some(5), Some(0)));
    assert!(hourly["results"].as_array().unwrap().iter().all(|r| r["mtf_tf"] == "1h"));
    assert_summary_adds_up(&hourly);

    let before_bad = klines_seen(&t);
    for query in ["mtf_tf=bad", "mtf_tf=2h"] {
        let detail =
            failing(&t, &format!("/api/market/scan?{query}"), 422, "invalid_timeframe").await;
        assert!(detail.contains("mtf_tf"), "{detail}");
    }
    assert_eq!(klines_seen(&t), before_bad);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_reports_the_watchlist_symbols_it_cannot_serve_and_goes_on() {
    let t =
        Trading::start_synced("\n[market]\nwatchlist = [\"BTCUSDT\", \"NOPEUSDT\", \"ETHUSDT\"]\n")
            .await;
    let scan = ok(&t, "/api/market/scan").await;
    assert_eq!(scan["scanned"], 2, "{scan}");
    let symbols: Vec<&str> =
        scan["results"].as_array().unwrap().iter().map(|r| r["symbol"].as_str().unwrap()).collect();
    assert_eq!(symbols, ["BTCUSDT", "ETHUSDT"]);
    assert_summary_adds_up(&scan);
    let errors = scan["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{scan}");
    assert_eq!(errors[0]["symbol"], "NOPEUSDT");
    assert_eq!(errors[0]["error"], "symbol_not_found");
    assert!(errors[0]["detail"].as_str().unwrap().contains("NOPEUSDT"), "{scan}");
    let log = last_scan_log(&t).await;
    assert_eq!(log["status"], "error", "{log}");
}

// ---------------------------------------------------------------------------------------------
// 7. Persistence and the memories.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_and_memories_survive_a_restart_and_the_cache_does_not() {
    let (t, _) = range_rig().await;
    let first = ok(&t, "/api/market/SOLUSDT").await;
    advance_seconds(&t, TTL_SEC + 1);
    let second = ok(&t, "/api/market/SOLUSDT").await;
    let before = ok(&t, "/api/market/SOLUSDT/history").await;
    assert_eq!(before["count"], 2);
    assert_eq!(ok(&t, "/api/market/all").await["count"], 1);
    for row in before["data"].as_array().unwrap() {
        let detail = &row["mtf"]["detail"];
        for memory in ["compression_memory", "watch_memory"] {
            assert!(detail[memory].is_object(), "{memory} in the snapshot: {detail}");
        }
        assert_eq!(keys(&detail["compression_memory"]), ["active", "last_release"], "{detail}");
        assert_eq!(keys(&detail["watch_memory"]), ["active", "last_resolution"], "{detail}");
    }
    assert_eq!(without_computed_at(&before["data"][0]), second);
    assert_eq!(without_computed_at(&before["data"][1]), first);

    let t = t.restart().await;
    let cache = ok(&t, "/api/market/all").await;
    assert_eq!(cache["count"], 0, "the cache is memory only: {cache}");
    let after = ok(&t, "/api/market/SOLUSDT/history").await;
    assert_eq!(after, before, "the snapshots are stored");

    // After the restart the cache is empty, so the next request computes again (same clock).
    let kline_requests = klines_seen(&t);
    let third = ok(&t, "/api/market/SOLUSDT").await;
    assert!(klines_seen(&t) > kline_requests, "recomputed after the restart");
    assert_eq!(third["timestamp"], second["timestamp"]);
    let history = ok(&t, "/api/market/SOLUSDT/history").await;
    assert_eq!(history["count"], 2, "same key (symbol, time, frames): replaced, {history}");
    assert_eq!(without_computed_at(&history["data"][0]), third);
    assert_eq!(without_computed_at(&history["data"][1]), first);
    // (That the memories themselves continue after a restart is shown by the squeeze below:
    // this path never enters compression or a watch, so its memories stay empty.)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_older_than_the_retention_are_deleted_when_a_newer_one_is_stored() {
    let t = Trading::start_synced("\n[market]\nsnapshot_retention_days = 2\n").await;
    let candles = mr_combined::scenarios::range_bounce_buy(t.rig.now().timestamp_millis());
    script(&t.sim.sim, "SOLUSDT", &candles);
    let t0 = now_s(&t);
    ok(&t, "/api/market/SOLUSDT").await;
    ok(&t, "/api/market/ETHUSDT").await;
    t.rig.advance_hours(24);
    ok(&t, "/api/market/SOLUSDT").await;
    // Exactly two days old: still kept.
    t.rig.advance_hours(24);
    ok(&t, "/api/market/SOLUSDT").await;
    let at = |h: &Value| -> Vec<i64> {
        h["data"].as_array().unwrap().iter().map(|r| r["computed_at"].as_i64().unwrap()).collect()
    };
    let day = 86_400;
    let history = ok(&t, "/api/market/SOLUSDT/history").await;
    assert_eq!(at(&history), [t0 + 2 * day, t0 + day, t0], "{history}");

    // The next snapshot of SOLUSDT deletes the one now older than two days.
    advance_seconds(&t, TTL_SEC);
    ok(&t, "/api/market/SOLUSDT").await;
    let history = ok(&t, "/api/market/SOLUSDT/history").await;
    assert_eq!(at(&history), [t0 + 2 * day + TTL_SEC, t0 + 2 * day, t0 + day], "{history}");
    // Another symbol's old snapshot goes with that symbol's next write, not before.
    assert_eq!(at(&ok(&t, "/api/market/ETHUSDT/history").await), [t0]);
    ok(&t, "/api/market/ETHUSDT").await;
    let eth = ok(&t, "/api/market/ETHUSDT/history").await;
    assert_eq!(at(&eth), [t0 + 2 * day + TTL_SEC], "{eth}");
}

/// 1h candles whose mid follows straight lines between `(hour, price)` waypoints, hours
/// relative to `t0_ms`: each candle opens at the mid of its start and closes at the mid of its
/// end, with wicks `wick` beyond both.
fn hourly_path(t0_ms: i64, waypoints: &[(i64, f64)], wick: f64) -> Candles {
    let mid = |h: i64| {
        let i = waypoints.windows(2).position(|w| w[0].0 <= h && h <= w[1].0).unwrap();
        let ((a, pa), (b, pb)) = (waypoints[i], waypoints[i + 1]);
        pa + (pb - pa) * (h - a) as f64 / (b - a) as f64
    };
    let (first, last) = (waypoints[0].0, waypoints[waypoints.len() - 1].0);
    let mut c = Candles {
        timeframe: "1h".into(),
        open_time: vec![],
        open: vec![],
        high: vec![],
        low: vec![],
        close: vec![],
        volume: vec![],
    };
    for h in first..last {
        let (open, close) = (mid(h), mid(h + 1));
        c.open_time.push(t0_ms + h * HOUR_MS);
        c.open.push(open);
        c.close.push(close);
        c.high.push(open.max(close) + wick);
        c.low.push(open.min(close) - wick);
        c.volume.push(1000.0);
    }
    c
}

/// Waypoints alternating between `low` and `high` every `every` hours from `from` to `to`.
fn swings(from: i64, to: i64, every: i64, low: f64, high: f64) -> Vec<(i64, f64)> {
    (0..=(to - from) / every)
        .map(|k| (from + k * every, if k % 2 == 0 { low } else { high }))
        .collect()
}

/// SOLUSDT's path: 120 days of wide 4h swings (90↔110 every 5 bars), then from 160 hours
/// before the rig's start a squeeze (99.5↔100.5 every 2 bars) that lasts until 8 hours after
/// it, then a rise to 130 over the next 40 hours (held after that).
fn squeeze_then_break_out(t0_ms: i64) -> Candles {
    let mut waypoints = swings(-2928, -160, 20, 90.0, 110.0);
    waypoints.push((-160, 100.0));
    waypoints.extend(swings(-152, 8, 8, 100.5, 99.5));
    waypoints.push((48, 130.0));
    waypoints.push((52, 130.0));
    hourly_path(t0_ms, &waypoints, 0.1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_squeeze_is_remembered_across_computations_and_restarts_and_its_breakout_is_recorded() {
    let t = Trading::start_synced("").await;
    let t0 = now_s(&t);
    script(&t.sim.sim, "SOLUSDT", &squeeze_then_break_out(t0 * 1000));

    let squeezed = ok(&t, "/api/market/SOLUSDT").await;
    assert_market_context(&squeezed);
    let detail = &squeezed["mtf"]["detail"];
    assert_eq!(squeezed["mtf"]["regime"], "compression", "{detail}");
    assert_eq!(squeezed["priority_decision"], "no_trade");
    assert_eq!(squeezed["no_trade_reason"], "compression");
    assert_eq!(detail["priority_rule"], "compression", "{detail}");
    let episode = detail["compression_memory"]["active"].clone();
    assert_eq!(episode["since"].as_i64(), Some(t0), "{episode}");
    assert_eq!(episode["last_seen"].as_i64(), Some(t0), "{episode}");
    assert_eq!(episode["observations"], 1, "{episode}");
    // The box is the squeeze's: its swings 99.5..100.5 plus the 0.1 wicks.
    let (box_high, box_low) =
        (episode["box_high"].as_f64().unwrap(), episode["box_low"].as_f64().unwrap());
    assert!((box_high - 100.6).abs() < 1e-6 && (box_low - 99.4).abs() < 1e-6, "{episode}");
    assert_eq!(detail["compression_memory"]["last_release"], Value::Null);

    // A cache hit observes nothing.
    let hit = ok(&t, "/api/market/SOLUSDT").await;
    assert_eq!(hit["mtf"]["detail"]["compression_memory"]["active"]["observations"], 1);

    // The episode is stored: after a restart, a computation four hours on continues it.
    let t = t.restart().await;
    t.rig.advance_hours(4);
    let still = ok(&t, "/api/market/SOLUSDT").await;
    assert_eq!(still["mtf"]["regime"], "compression", "{}", still["mtf"]["detail"]);
    let continued = &still["mtf"]["detail"]["compression_memory"]["active"];
    assert_eq!(continued["since"].as_i64(), Some(t0), "{continued}");
    assert_eq!(continued["last_seen"].as_i64(), Some(t0 + 4 * 3600), "{continued}");
    assert_eq!(continued["observations"], 2, "{continued}");
    assert_eq!(
        (&continued["box_high"], &continued["box_low"]),
        (&episode["box_high"], &episode["box_low"])
    );

    // 52 hours after the start the price has risen to 130: the squeeze ended upwards.
    t.rig.advance_hours(48);
    let broke = ok(&t, "/api/market/SOLUSDT").await;
    assert_market_context(&broke);
    let regime = broke["mtf"]["regime"].clone();
    assert_ne!(regime, "compression", "{}", broke["mtf"]["detail"]);
    let memory = &broke["mtf"]["detail"]["compression_memory"];
    assert_eq!(memory["active"], Value::Null, "{memory}");
    let release = &memory["last_release"];
    assert_eq!(release["since"].as_i64(), Some(t0), "{release}");
    assert_eq!(release["ended"].as_i64(), Some(t0 + 52 * 3600), "{release}");
    assert_eq!(release["direction"], "up", "{release}");
    assert_eq!(release["regime_after"], regime, "{release}");
    assert_eq!(
        (&release["box_high"], &release["box_low"]),
        (&episode["box_high"], &episode["box_low"])
    );

    // The snapshots carry the memory as it was after each computation.
    let history = ok(&t, "/api/market/SOLUSDT/history").await;
    let stored: Vec<Value> = history["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["mtf"]["detail"]["compression_memory"].clone())
        .collect();
    assert_eq!(stored.len(), 3, "{history}");
    assert_eq!(stored[0], *memory);
    assert_eq!(stored[1]["active"], *continued);
    assert_eq!(stored[2]["active"], episode);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_misses_compute_once_and_share_the_result() {
    let (t, _) = range_rig().await;
    let before = klines_seen(&t);
    let path = "/api/market/SOLUSDT";
    let (a, b, c) = tokio::join!(t.get(path), t.get(path), t.get(path));
    for (status, body) in [&a, &b, &c] {
        assert_eq!(*status, 200, "{body}");
        assert_eq!(body, &a.1, "every caller gets the one computed context");
    }
    assert_eq!(klines_seen(&t) - before, 2, "one fetch per timeframe (1d and 4h)");
    let (_, history) = t.get("/api/market/SOLUSDT/history").await;
    assert_eq!(history["count"], 1, "one snapshot: {history}");
    let (status, _) = t.get("/api/market/btc-usdt/history").await;
    assert_eq!(status, 404, "a path that cannot be a symbol");
}

/// Exchange B's candles (`candleSnapshot`, 500 per answer, paged) give the same context.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_exchange_b_the_context_is_computed_from_its_candles() {
    use crate::trading_support::Venue;
    let t = Trading::start_on(Venue::B, "").await;
    let candles = mr_combined::scenarios::range_bounce_buy(t.rig.now().timestamp_millis());
    script(&t.sim.sim, "SOLUSDT", &candles);
    let c = ok(&t, "/api/market/SOLUSDT").await;
    assert_market_context(&c);
    let detail = &c["mtf"]["detail"];
    assert_eq!(detail["candles"], 200, "{detail}");
    let last_close = *candles.close.last().unwrap();
    let close = detail["close"].as_f64().unwrap();
    assert!((close - last_close).abs() < 1e-5, "mtf close {close} vs the script's {last_close}");
    assert!(t.seen("GET", "/api/v3/klines").is_empty(), "nothing asked of exchange A");
    assert!(t.seen("POST", "/info").len() >= 2, "both timeframes from exchange B");
}
