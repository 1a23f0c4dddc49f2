//! The earlier route set's two strategies as loaded Wasm plugins (`plugins/ta_trend.wasm` and
//! `plugins/ta_mean_revert.wasm`, built by `cargo xtask plugins`): the host loads both, and a
//! preview scan answers every watchlist symbol with a checklist; on scripted candle paths
//! served by the exchange simulator, a clean uptrend is a `ta_trend` buy and an oversold
//! bounce in a range a `ta_mean_revert` buy, with the brackets their READMEs define — on
//! exchange A's candles and on exchange B's.

use std::path::PathBuf;

use crate::trading_support::{Trading, Venue};
use serde_json::{Value, json};
use spotbot_tests::scripted::script;

const PLUGINS: [&str; 2] = ["ta_trend.wasm", "ta_mean_revert.wasm"];

/// A plugins folder holding both components from the workspace's `plugins/`, and its config
/// lines.
fn plugins_dir() -> (tempfile::TempDir, String) {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../plugins");
    let dir = tempfile::tempdir().unwrap();
    for file in PLUGINS {
        let from = built.join(file);
        assert!(from.exists(), "{} is missing: run `cargo xtask plugins`", from.display());
        std::fs::copy(&from, dir.path().join(file)).unwrap();
    }
    let toml = format!("[plugins]\ndir = {:?}\n", dir.path().display().to_string());
    (dir, toml)
}

async fn preview(t: &Trading, plugin: &str, body: Value) -> Vec<Value> {
    let (status, answer) = t.post(&format!("/api/strategies/{plugin}/scan"), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["ok"], true, "{answer}");
    answer["results"].as_array().unwrap().clone()
}

fn checks(result: &Value) -> Vec<(&str, bool)> {
    result["checklist"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["pass"].as_bool().unwrap()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_plugins_load_and_answer_the_watchlist_with_checklists() {
    let (_plugins, plugins_toml) = plugins_dir();
    let t = Trading::start_synced(&format!("\n{plugins_toml}")).await;
    let (status, list) = t.get("/api/strategies").await;
    assert_eq!(status, 200, "{list}");
    for name in ["ta_trend", "ta_mean_revert"] {
        let row = list["plugins"].as_array().unwrap().iter().find(|p| p["name"] == name);
        let row = row.unwrap_or_else(|| panic!("{name} is not listed: {list}"));
        assert_eq!(row["status"], "loaded", "{list}");
        assert_eq!(row["kind"], "strategy", "{list}");
    }

    for plugin in ["ta_trend", "ta_mean_revert"] {
        let results = preview(&t, plugin, json!({})).await;
        assert!(!results.is_empty(), "{plugin}: one result per watchlist symbol");
        for r in &results {
            assert_eq!(r["bot"], plugin, "{r}");
            let total = r["total"].as_u64().unwrap() as usize;
            assert!(total >= 2 && total == checks(r).len(), "{plugin}: {r}");
            assert!(r["passed"].as_u64().unwrap() as usize <= total, "{r}");
            assert!(["buy", "sell", "skip"].contains(&r["direction"].as_str().unwrap()), "{r}");
            assert!(!r["reason"].as_str().unwrap().is_empty(), "{r}");
            for c in r["checklist"].as_array().unwrap() {
                assert!(!c["detail"].as_str().unwrap().is_empty(), "{c}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_setups_are_buys_with_their_brackets() {
    scripted_setups_on(Venue::A).await;
}

/// The same setups served as exchange B's candles (`candleSnapshot`) give the same answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_exchange_b_scripted_setups_are_the_same_buys() {
    scripted_setups_on(Venue::B).await;
}

async fn scripted_setups_on(venue: Venue) {
    let (_plugins, plugins_toml) = plugins_dir();
    let t = Trading::start_synced_on(venue, &format!("\n{plugins_toml}")).await;
    let now = t.rig.now().timestamp_millis();
    let uptrend = ta_trend::scenarios::uptrend(now);
    script(&t.sim.sim, "SOLUSDT", &uptrend);
    script(&t.sim.sim, "AVAXUSDT", &ta_trend::scenarios::downtrend(now));
    script(&t.sim.sim, "LINKUSDT", &ta_mean_revert::scenarios::oversold_bounce(now));

    let results =
        preview(&t, "ta_trend", json!({ "symbols": ["SOLUSDT", "AVAXUSDT", "LINKUSDT"] })).await;
    let trend = &results[0];
    assert_eq!(trend["symbol"], "SOLUSDT");
    assert_eq!(trend["direction"], "buy", "{trend}");
    assert_eq!(
        checks(trend),
        vec![
            ("ema_fast_above_slow", true),
            ("close_above_slow_ema", true),
            ("adx_trending", true),
            ("macd_hist_positive_rising", true),
            ("rsi_healthy", true),
            ("volume", true),
        ],
        "{trend}"
    );
    let (sl, tp) = (trend["sl_pct"].as_f64().unwrap(), trend["tp_pct"].as_f64().unwrap());
    assert!(sl > 0.0 && (tp - 2.0 * sl).abs() < 1e-9, "reward_risk 2: {trend}");
    assert!(trend["ev"].as_f64().unwrap() > 25.0 && trend["confidence"] == 10, "{trend}");
    assert_eq!(results[1]["direction"], "sell", "the downtrend exits: {}", results[1]);
    assert_ne!(results[2]["direction"], "buy", "a bounce is no trend: {}", results[2]);

    let results =
        preview(&t, "ta_mean_revert", json!({ "symbols": ["LINKUSDT", "SOLUSDT"] })).await;
    let bounce = &results[0];
    assert_eq!(bounce["direction"], "buy", "{bounce}");
    assert!(checks(bounce).iter().all(|(_, pass)| *pass), "{bounce}");
    let (price, mid) = (bounce["price"].as_f64().unwrap(), bounce["bb_mid"].as_f64().unwrap());
    let tp = bounce["tp_pct"].as_f64().unwrap();
    assert!((tp - (mid - price) / price * 100.0).abs() < 1e-9, "TP at the middle band: {bounce}");
    assert_eq!(results[1]["direction"], "skip", "an uptrend is not oversold: {}", results[1]);
    assert!(t.orders().is_empty(), "a preview never trades");
    let info_reads = t.seen("POST", "/info").len();
    assert_eq!(info_reads > 0, venue == Venue::B, "candles came from the active exchange");
}
