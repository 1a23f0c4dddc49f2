//! The two strategies of the spec as loaded Wasm plugins, on scripted candle paths served by
//! the exchange simulator: MR Combined's scan-and-signal (a clean range bounce becomes a signal
//! with the right targets, the boss is asked, a confirm places the bracket at the simulator;
//! trend, chop and a news window give skips with their reasons) and Pump Momentum's alerts
//! (pump_watch, then pump_signal on follow-through, nothing after the expiry, never an order).
//! Both strategies also scan exchange B's candles, and MR Combined's signal trades there.

use std::path::PathBuf;

use crate::trading_support::{Trading, Venue};
use serde_json::{Value, json};
use spotbot_tests::scripted::script;

/// A plugins folder holding the given components from the workspace's `plugins/` (what
/// `cargo xtask plugins` builds), and its config lines.
fn plugins_dir(files: &[&str]) -> (tempfile::TempDir, String) {
    plugins_from("plugins", files)
}

/// As [`plugins_dir`], from `folder` of the workspace (e.g. `target/test-guests`).
fn plugins_from(folder: &str, files: &[&str]) -> (tempfile::TempDir, String) {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(folder);
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        let from = built.join(file);
        assert!(from.exists(), "{} is missing: run `cargo xtask plugins`", from.display());
        std::fs::copy(&from, dir.path().join(file)).unwrap();
    }
    let toml = format!("[plugins]\ndir = {:?}\n", dir.path().display().to_string());
    (dir, toml)
}

fn now_ms(t: &Trading) -> i64 {
    t.rig.now().timestamp_millis()
}

async fn scan_and_signal(t: &Trading, symbols: &[&str]) -> Value {
    let (status, body) =
        t.post("/api/mr-combined/scan-and-signal", json!({ "symbols": symbols })).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ok"], true, "{body}");
    body
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(1.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_range_bounce_becomes_a_signal_with_its_targets_and_a_confirm_places_them() {
    let (_plugins, plugins_toml) = plugins_dir(&["mr_combined.wasm"]);
    let t = Trading::start_synced(&format!("\n{plugins_toml}")).await;
    let candles = mr_combined::scenarios::range_bounce_buy(now_ms(&t));
    script(&t.sim.sim, "SOLUSDT", &candles);

    let body = scan_and_signal(&t, &["SOLUSDT"]).await;
    let signaled = body["signaled"].as_array().unwrap();
    assert_eq!(signaled.len(), 1, "{body}");
    assert_eq!(signaled[0]["symbol"], "SOLUSDT");
    assert_eq!(signaled[0]["direction"], "buy");
    assert_eq!(signaled[0]["status"], "pending", "the boss is asked: {body}");
    assert!(body["skipped"].as_array().unwrap().is_empty(), "{body}");
    assert!(body.get("reason").is_none(), "{body}");

    let (status, signal) = t.get("/api/signal/SOLUSDT").await;
    assert_eq!(status, 200, "{signal}");
    assert_eq!(signal["bot"], "mr_combined");
    // The range of the scenario, to the cent, and the targets the README defines from it.
    use mr_combined::scenarios::{RESISTANCE, SUPPORT};
    assert_eq!(signal["range_support"].as_f64(), Some(SUPPORT), "{signal}");
    assert_eq!(signal["range_resistance"].as_f64(), Some(RESISTANCE), "{signal}");
    let mid = (SUPPORT + RESISTANCE) / 2.0;
    assert_eq!(signal["range_midline"].as_f64(), Some(mid), "{signal}");
    let price = signal["price"].as_f64().unwrap();
    let last_close = *candles.close.last().unwrap();
    assert!(close(price, last_close), "price {price} is the last close {last_close}");
    let tp1 = signal["tp1_pct"].as_f64().unwrap();
    assert!(close(tp1, (mid / price - 1.0) * 100.0), "TP1 is the midline: {tp1}");
    let (sl, tp) = (signal["sl_pct"].as_f64().unwrap(), signal["tp_pct"].as_f64().unwrap());
    assert!(sl > 0.0 && tp / sl >= 2.5, "min_rr 2.5 holds: sl {sl} tp {tp}");
    let passed = signal["passed"].as_u64().unwrap();
    let total = signal["total"].as_u64().unwrap();
    // The service scores the result with its own formula (docs/signals.md).
    let confidence = (10.0 * passed as f64 / total as f64).round() as u64;
    assert_eq!(signal["confidence"].as_u64(), Some(confidence), "{signal}");
    assert!(confidence >= 8, "{signal}");
    assert!(signal["ev"].as_f64().unwrap() > 25.0, "{signal}");
    assert!(["normal", "A+", "A++"].contains(&signal["tier"].as_str().unwrap()), "{signal}");
    let ask = t.message_containing("SOLUSDT").await;
    assert!(ask.text.to_uppercase().contains("BUY"), "{}", ask.text);
    assert!(t.orders().is_empty(), "nothing is traded before the boss says yes");

    let (status, confirmed) = t.confirm("SOLUSDT").await;
    assert_eq!(status, 200, "{confirmed}");
    assert_eq!(confirmed["ok"], true, "{confirmed}");
    let entry = t.orders_of("MARKET", "BUY");
    assert_eq!(entry.len(), 1, "one entry");
    assert_eq!(entry[0]["symbol"], "SOLUSDT");
    let fill = entry[0]["cummulativeQuoteQty"].as_str().unwrap().parse::<f64>().unwrap()
        / entry[0]["executedQty"].as_str().unwrap().parse::<f64>().unwrap();
    let take = t.orders_of("LIMIT_MAKER", "SELL");
    let stop = t.orders_of("STOP_LOSS_LIMIT", "SELL");
    assert_eq!((take.len(), stop.len()), (1, 1), "one OCO");
    let px = |o: &Value, k: &str| o[k].as_str().unwrap().parse::<f64>().unwrap();
    // The simulator received the plugin's distances from the fill, rounded to the tick.
    let tick = 0.01;
    assert!((px(&take[0], "price") - fill * (1.0 + tp / 100.0)).abs() <= tick, "{take:?}");
    assert!((px(&stop[0], "stopPrice") - fill * (1.0 - sl / 100.0)).abs() <= tick, "{stop:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trend_and_chop_are_skipped_with_the_failing_gate_and_nothing_is_asked() {
    let (_plugins, plugins_toml) = plugins_dir(&["mr_combined.wasm"]);
    let t = Trading::start_synced(&format!("\n{plugins_toml}")).await;
    let now = now_ms(&t);
    script(&t.sim.sim, "AVAXUSDT", &mr_combined::scenarios::strong_trend(now));
    script(&t.sim.sim, "LINKUSDT", &mr_combined::scenarios::volatile_chop(now));

    let body = scan_and_signal(&t, &["AVAXUSDT", "LINKUSDT"]).await;
    assert!(body["signaled"].as_array().unwrap().is_empty(), "{body}");
    let skipped = body["skipped"].as_array().unwrap();
    let reason = |symbol: &str| {
        skipped.iter().find(|s| s["symbol"] == symbol).unwrap()["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(reason("AVAXUSDT").starts_with("regime"), "{body}");
    assert!(reason("LINKUSDT").starts_with("regime"), "{body}");
    assert!(reason("LINKUSDT").contains("chop"), "{body}");
    let (status, _) = t.get("/api/signal/AVAXUSDT").await;
    assert_eq!(status, 404, "a skip creates no signal");
    assert!(t.messenger.sent().is_empty(), "nobody is asked about a skip");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_news_window_blocks_the_clean_setup() {
    let (_plugins, plugins_toml) = plugins_dir(&["mr_combined.wasm"]);
    // The rig's clock is 08:00 UTC; the window wraps nothing and covers it.
    let t = Trading::start_synced(&format!(
        "news_blackout_windows_utc = [\"07:30-08:30\"]\n{plugins_toml}"
    ))
    .await;
    script(&t.sim.sim, "SOLUSDT", &mr_combined::scenarios::range_bounce_buy(now_ms(&t)));
    let body = scan_and_signal(&t, &["SOLUSDT"]).await;
    assert!(body["signaled"].as_array().unwrap().is_empty(), "{body}");
    let reason = body["skipped"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("news_blackout"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daily_limit_skips_the_scan_and_a_bad_section_refuses_the_plugin() {
    let (_plugins, plugins_toml) = plugins_dir(&["mr_combined.wasm"]);
    let t = Trading::start_synced(&format!("\n{plugins_toml}")).await;
    t.buy("ETHUSDT").await;
    let (status, _) = t.post_empty("/api/reset-daily").await;
    assert_eq!(status, 200);
    // max_trades_per_day is 5 in the rig: fill the day.
    for symbol in ["BNBUSDT", "XRPUSDT", "LINKUSDT", "AVAXUSDT", "DOTUSDT"] {
        t.buy(symbol).await;
    }
    let body = scan_and_signal(&t, &["SOLUSDT"]).await;
    assert_eq!(body["reason"], "daily_limit_reached", "{body}");
    assert!(body["signaled"].as_array().unwrap().is_empty());
    assert!(body["skipped"].as_array().unwrap().is_empty());

    // A key the plugin does not have refuses the plugin, naming the key.
    let (_plugins, plugins_toml) = plugins_dir(&["mr_combined.wasm"]);
    let bad = Trading::start_synced(&format!("scan_limit = 80\n{plugins_toml}")).await;
    let (_, list) = bad.get("/api/strategies").await;
    let row = &list["plugins"][0];
    assert_eq!(row["status"], "failed", "{list}");
    let error = row["last_error"].as_str().unwrap();
    assert!(error.contains("strategy.mr_combined.scan_limit is not a key"), "{error}");
    let (status, body) = bad.post("/api/mr-combined/scan-and-signal", json!({})).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("plugin_not_found")), "{body}");
}

/// Pump scenario: 80 15m candles whose candle 60 ignites and, `follow` candles later, follows
/// through; candle 60 closes at the rig's start.
fn pump_paths(t: &Trading, follow: Option<usize>) -> pump_momentum::scenarios::Scenario {
    use pump_momentum::scenarios as s;
    const STEP: i64 = 15 * 60_000;
    let end = now_ms(t) + 19 * STEP;
    let scenario = match follow {
        Some(k) => s::pump_then_follow_through(end, 80, 60, k),
        None => s::pump_without_follow_through(end, 80, 60),
    };
    assert_eq!(scenario.closed_at(60), now_ms(t), "the ignition closes at the rig's start");
    script(&t.sim.sim, "SOLUSDT", &scenario.candles);
    script(&t.sim.sim, "BTCUSDT", &s::reference(end, 80));
    scenario
}

const PUMP_CONFIG: &str =
    "\n[strategy.pump_momentum]\nuse_universe = false\nwatchlist_override = [\"SOLUSDT\"]\n";

async fn pump_scan(t: &Trading) -> Value {
    let (status, body) = t.post_empty("/api/pump-momentum/scan?agent=scout").await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pump_is_watched_then_signalled_on_follow_through_stored_notified_and_never_traded() {
    pump_watch_signal_and_outcomes_on(Venue::A).await;
}

/// The same pump on exchange B's candles: the same alerts and outcomes, no order there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_exchange_b_a_pump_is_watched_signalled_and_scored_from_its_candles() {
    pump_watch_signal_and_outcomes_on(Venue::B).await;
}

async fn pump_watch_signal_and_outcomes_on(venue: Venue) {
    let (_plugins, plugins_toml) = plugins_dir(&["pump_momentum.wasm"]);
    let t = Trading::start_synced_on(venue, &format!("{PUMP_CONFIG}{plugins_toml}")).await;
    let scenario = pump_paths(&t, Some(1));

    let first = pump_scan(&t).await;
    assert_eq!(first["count"], 1, "{first}");
    assert_eq!(first["signals"], json!([{"symbol": "SOLUSDT", "stage": "pump_watch"}]));
    assert_eq!(first["notify_errors"], json!([]));
    t.message_containing("Pump watch SOLUSDT").await;
    let again = pump_scan(&t).await;
    assert_eq!(again["count"], 0, "the same candle is not alerted twice: {again}");

    t.rig.advance_minutes(15);
    let second = pump_scan(&t).await;
    assert_eq!(second["signals"], json!([{"symbol": "SOLUSDT", "stage": "pump_signal"}]));
    t.message_containing("Pump signal SOLUSDT").await;

    let (status, list) = t.get("/api/pump-momentum/signals?symbol=SOLUSDT").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["count"], 2, "{list}");
    let (signal, watch) = (&list["signals"][0], &list["signals"][1]);
    assert_eq!(
        (signal["stage"].as_str(), watch["stage"].as_str()),
        (Some("pump_signal"), Some("pump_watch"))
    );
    assert_eq!(watch["timestamp_signal"].as_i64(), Some(scenario.closed_at(60)));
    let ignition = &watch["ignition"];
    assert_eq!(ignition["open_time"].as_i64(), Some(scenario.ignition_open_time), "{watch}");
    assert!(close(ignition["close"].as_f64().unwrap(), scenario.candles.close[60]), "{watch}");
    // Exchange B's price is its mid: 5 significant figures, half a tick above the last trade.
    let (price, last) = (watch["price"].as_f64().unwrap(), scenario.candles.close[60]);
    let within = if venue == Venue::A { 1e-9 } else { 1e-4 };
    assert!((price - last).abs() <= within * last, "{watch}");
    for key in ["vol_ratio", "candle_return_pct", "close_strength", "rel_strength_15m", "atr"] {
        assert!(watch["metrics"][key].is_number(), "{key}: {watch}");
    }
    assert!(watch["metrics"]["vol_ratio"].as_f64().unwrap() >= 3.0, "{watch}");
    assert!(signal["metrics"]["follow_vol_ratio"].as_f64().unwrap() >= 1.5, "{signal}");
    assert_eq!(watch["notified"], true);
    let (_, filtered) = t.get("/api/pump-momentum/signals?stage=pump_signal&limit=1").await;
    assert_eq!(filtered["count"], 1, "{filtered}");
    let (_, by_symbol) = t.get("/api/pump-momentum/signals/SOLUSDT?confidence=high").await;
    assert!(by_symbol["signals"].as_array().unwrap().iter().all(|a| a["confidence"] == "high"));
    let (status, _) = t.get("/api/pump-momentum/signals?limit=201").await;
    assert_eq!(status, 422);
    assert!(t.orders().is_empty(), "the scanner never trades");

    // A day later the outcomes are filled from the simulator's candles.
    t.rig.advance_hours(25);
    let (status, report) = t.post_empty("/api/pump-momentum/outcomes").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["updated"], 2, "{report}");
    let (_, list) = t.get("/api/pump-momentum/signals?stage=pump_watch").await;
    let outcome = &list["signals"][0]["outcome"];
    // The watch was raised when candle 60 closed (candle 61 opened): an hour later candle 65
    // opens, and its close is the price an hour after.
    let after = outcome["price_1h_after"].as_f64().unwrap();
    assert!(close(after, scenario.candles.close[65]), "{outcome}");
    assert!(outcome["price_24h_after"].is_number(), "{outcome}");
    assert!(outcome["mfe_24h_pct"].as_f64().unwrap() >= 0.0, "{outcome}");
    assert!(outcome["reached_5pct"].is_boolean() && outcome["reversed"].is_boolean(), "{outcome}");
    assert_eq!(t.seen("POST", "/info").is_empty(), venue == Venue::A, "the active exchange's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_without_follow_through_expires_after_stage2_expiry_candles() {
    let (_plugins, plugins_toml) = plugins_dir(&["pump_momentum.wasm"]);
    let t = Trading::start_synced(&format!("{PUMP_CONFIG}{plugins_toml}")).await;
    pump_paths(&t, None);
    assert_eq!(pump_scan(&t).await["count"], 1);
    let mut later = 0;
    for _ in 0..5 {
        t.rig.advance_minutes(15);
        later += pump_scan(&t).await["count"].as_u64().unwrap();
    }
    assert_eq!(later, 0, "no pump_signal without follow-through, none after the expiry");
    let (_, list) = t.get("/api/pump-momentum/signals").await;
    assert_eq!(list["count"], 1, "{list}");
}

/// `ask_coo = false` from a plugin: ignored unless `[signals] allow_auto_confirm`; honoured,
/// the service confirms by itself through every gate and tells the boss the outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_coo_false_is_honoured_only_when_the_operator_allows_it_and_the_gates_still_apply() {
    let guest = || plugins_from("target/test-guests", &["guest_auto_confirm.wasm"]);

    let (_plugins, toml) = guest();
    let asks = Trading::start_synced(&format!("\n{toml}")).await;
    let body = scan_and_signal(&asks, &["SOLUSDT"]).await;
    assert_eq!(body["signaled"][0]["status"], "pending", "asked like any other: {body}");
    asks.message_containing("SOLUSDT").await;
    let (_, state) = asks.get("/api/state").await;
    let logged = state["log"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["action"].as_str().is_some_and(|a| a.contains("allow_auto_confirm is off")));
    assert!(logged, "the log says why the boss was asked: {state}");
    assert!(asks.orders().is_empty());

    let (_plugins, toml) = guest();
    let auto =
        Trading::start_synced(&format!("\n{toml}[signals]\nallow_auto_confirm = true\n")).await;
    let body = scan_and_signal(&auto, &["SOLUSDT"]).await;
    let signaled = &body["signaled"][0];
    assert_eq!(signaled["status"], "auto_confirmed", "{body}");
    assert_eq!(signaled["confirm"]["ok"], true, "{body}");
    assert_eq!(auto.orders_of("MARKET", "BUY").len(), 1, "the entry");
    assert_eq!(auto.orders_of("LIMIT_MAKER", "SELL").len(), 1, "its OCO");
    let note = auto.message_containing("Auto-confirmed").await;
    assert!(note.text.contains("SOLUSDT") && note.text.contains("placed"), "{}", note.text);
    assert!(
        !auto.messenger.sent().iter().any(|m| m.text.contains("YES")),
        "no approval question was sent"
    );

    // A result under the confidence gate is not signalled at all: no question, no note, no
    // order (confirm would refuse it).
    let (_plugins, toml) = guest();
    let weak = Trading::start_synced(&format!(
        "passed = 5\ntotal = 10\n{toml}[signals]\nallow_auto_confirm = true\n"
    ))
    .await;
    // The preview shows the numbers the gates will judge, and that they fail.
    let (status, preview) =
        weak.post("/api/strategies/mr_combined/scan", json!({"symbols": ["SOLUSDT"]})).await;
    assert_eq!(status, 200, "{preview}");
    let gate = &preview["gates"][0];
    assert_eq!((gate["symbol"].as_str(), gate["passes"].as_bool()), (Some("SOLUSDT"), Some(false)));
    assert_eq!(gate["confidence"], 5, "{preview}");
    assert!(gate["refused"].as_str().unwrap().contains("confidence 5 must be >= 8"), "{gate}");
    let body = scan_and_signal(&weak, &["SOLUSDT"]).await;
    assert_eq!(body["signaled"].as_array().unwrap().len(), 0, "{body}");
    let reason = body["skipped"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("below_gates: ") && reason.contains("confidence 5"), "{body}");
    assert!(weak.orders().is_empty(), "nothing placed");
    assert!(weak.messenger.sent().is_empty(), "nothing sent to the boss");
}

/// The same scan on exchange B: the plugin reads exchange B's candles (`candleSnapshot`), the
/// signal is the same, and the confirm enters with an IOC and rests a take-profit at the
/// plugin's distance (the stop is watched: exchange B has none on spot).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_exchange_b_the_scan_reads_its_candles_and_the_confirm_trades_there() {
    let (_plugins, plugins_toml) = plugins_dir(&["mr_combined.wasm"]);
    let t = Trading::start_on(Venue::B, &format!("\n{plugins_toml}")).await;
    let candles = mr_combined::scenarios::range_bounce_buy(now_ms(&t));
    script(&t.sim.sim, "SOLUSDT", &candles);

    let body = scan_and_signal(&t, &["SOLUSDT"]).await;
    let signaled = body["signaled"].as_array().unwrap();
    assert_eq!(signaled.len(), 1, "{body}");
    assert_eq!(
        (signaled[0]["symbol"].as_str(), signaled[0]["direction"].as_str()),
        (Some("SOLUSDT"), Some("buy"))
    );
    assert!(!t.seen("POST", "/info").is_empty(), "candles came from exchange B's /info");
    let (_, signal) = t.get("/api/signal/SOLUSDT").await;
    let tp = signal["tp_pct"].as_f64().unwrap();

    let (status, confirmed) = t.confirm("SOLUSDT").await;
    assert_eq!(status, 200, "{confirmed}");
    assert_eq!(confirmed["trade"]["opened"]["protection"], "protected", "{confirmed}");
    let orders = t.orders_b();
    let tif = |o: &Value| o["order"]["tif"].as_str().unwrap_or_default().to_string();
    let entry: Vec<_> = orders.iter().filter(|o| tif(o) == "Ioc").collect();
    let take: Vec<_> = orders.iter().filter(|o| tif(o) == "Gtc").collect();
    assert_eq!((entry.len(), take.len()), (1, 1), "{orders:?}");
    let entry_px = confirmed["trade"]["opened"]["entry_px"].as_f64().unwrap();
    let take_px: f64 = take[0]["order"]["limitPx"].as_str().unwrap().parse().unwrap();
    // Exchange B keeps 5 significant figures: within one unit of the fifth figure.
    let wanted = entry_px * (1.0 + tp / 100.0);
    assert!((take_px - wanted).abs() <= wanted * 1e-4, "{take_px} vs {wanted}");
}
