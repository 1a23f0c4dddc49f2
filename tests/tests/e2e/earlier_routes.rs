//! The earlier route set over real HTTP (spec, "Earlier route set"; docs/api.md): the
//! prefix-less health and license routes, the read-only `/scan` and `/custom_check` with a real
//! strategy plugin on scripted candles, `/trade` placing the bracket at the exchange simulator,
//! `/trailing`, `/status`, `/api/scan-and-signal` with its skip reasons, the earlier flow's
//! confirm that only consumes a signal `/trade` already traded (one entry, idempotent), the
//! license on the licensed routes, and `deprecated` on every one in the OpenAPI document.

use std::path::PathBuf;

use crate::trading_support::{Trading, good_signal};
use serde_json::{Value, json};
use spotbot_tests::scripted::script;

/// The strategy the tests run (one the spec names; any loaded strategy plugin is accepted).
const BOT: &str = "ta_trend";

/// The earlier routes and whether they need a license.
const EARLIER: &[(&str, &str, bool)] = &[
    ("GET", "/health", false),
    ("GET", "/license/status", false),
    ("POST", "/license/register", false),
    ("POST", "/license/activate", false),
    ("GET", "/scan", false),
    ("GET", "/custom_check", false),
    ("POST", "/trade", true),
    ("GET", "/trailing", true),
    ("GET", "/status", true),
    ("POST", "/api/scan-and-signal", true),
];

/// A plugins folder with `BOT`'s component from the workspace's `plugins/` (what
/// `cargo xtask plugins` builds), and its config lines.
fn plugins_dir() -> (tempfile::TempDir, String) {
    let file = format!("{BOT}.wasm");
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../plugins").join(&file);
    assert!(built.exists(), "{} is missing: run `cargo xtask plugins`", built.display());
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&built, dir.path().join(&file)).unwrap();
    let toml = format!("[plugins]\ndir = {:?}\n", dir.path().display().to_string());
    (dir, toml)
}

/// A trading host with the strategy loaded (5 trades a day), its clock driving the simulator,
/// and a watchlist of a clean uptrend (SOLUSDT: a buy), a range (AVAXUSDT: a skip) and a
/// clean downtrend (LINKUSDT: a sell, which needs a position).
async fn with_strategy() -> (Trading, tempfile::TempDir) {
    let (plugins, plugins_toml) = plugins_dir();
    let t = Trading::start_synced(&format!(
        "\n[strategy.{BOT}]\nmax_trades_per_day = 5\n\
         [market]\nwatchlist = [\"SOLUSDT\", \"AVAXUSDT\", \"LINKUSDT\"]\n{plugins_toml}"
    ))
    .await;
    let now = t.rig.now().timestamp_millis();
    script(&t.sim.sim, "SOLUSDT", &ta_trend::scenarios::uptrend(now));
    script(&t.sim.sim, "AVAXUSDT", &ta_trend::scenarios::range(now));
    script(&t.sim.sim, "LINKUSDT", &ta_trend::scenarios::downtrend(now));
    (t, plugins)
}

/// Asserts the object's keys are exactly `expected` (any order).
#[track_caller]
fn assert_keys(v: &Value, expected: &[&str]) {
    let mut keys: Vec<&str> =
        v.as_object().expect("an object").keys().map(String::as_str).collect();
    let mut expected = expected.to_vec();
    keys.sort_unstable();
    expected.sort_unstable();
    assert_eq!(keys, expected, "{v}");
}

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) => s.parse().unwrap(),
        other => other.as_f64().unwrap(),
    }
}

fn close_to(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

/// The newest activity-log action of an agent.
async fn logged(t: &Trading, agent: &str) -> String {
    let (_, state) = t.get("/api/state").await;
    let log = state["log"].as_array().cloned().unwrap_or_default();
    let entry = log.iter().find(|e| e["agent"] == agent);
    entry.and_then(|e| e["action"].as_str()).unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_license_answer_without_the_prefix_and_licensed_routes_need_a_license() {
    let rig = crate::license_support::Rig::new().await;
    let host = rig.new_host().await;

    let (status, health) = host.get("/health").await;
    assert_eq!(status, 200, "{health}");
    // `streams`: the paper exchange's streams are followed (issue 20; docs/api.md).
    assert_keys(&health, &["auth", "commit", "license_status", "ok", "plan", "streams"]);
    assert_eq!(health["license_status"], "required");
    let (_, current) = host.get("/api/health").await;
    assert_eq!(health, current, "the same answer as /api/health");
    let (status, license) = host.get("/license/status").await;
    assert_eq!((status, license["status"].as_str()), (200, Some("unlicensed")), "{license}");

    // Without a license the licensed earlier routes answer 503 before their handler runs;
    // the read-only checks are free (here: no plugin is loaded, so `bot` is not found).
    let query = "?symbol=ETHUSDT&direction=buy&bot=no_such_bot&sl=2&tp=5&ev=30&confidence=9";
    for (method, path, licensed) in EARLIER {
        if path.starts_with("/license") || *path == "/health" {
            continue;
        }
        let url = host.url(&format!("{path}{query}"));
        let request = match *method {
            "GET" => host.http.get(url),
            _ => host.http.post(url).header("content-type", "application/json"),
        };
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap();
        if *licensed {
            assert_eq!(status, 503, "{method} {path}: {body}");
            assert_eq!(body["error"], "license_required", "{method} {path}: {body}");
        } else {
            assert_eq!(status, 404, "{method} {path}: {body}");
            assert_eq!(body["error"], "plugin_not_found");
            assert!(body["detail"].as_str().unwrap().contains("`bot`"), "{body}");
        }
    }

    // Register without the prefix: the earlier shape, and the install is licensed.
    let (status, registered) = host
        .post("/license/register", json!({"email": "earlier@example.com", "name": "Old Agent"}))
        .await;
    assert_eq!(status, 200, "{registered}");
    assert_keys(&registered, &["license_key", "message", "ok", "plan"]);
    assert_eq!(
        (registered["ok"].as_bool(), registered["plan"].as_str()),
        (Some(true), Some("free"))
    );
    let key = registered["license_key"].as_str().unwrap();
    let (_, health) = host.get("/health").await;
    assert_eq!(health["license_status"], "active", "{health}");
    let (status, activated) = host.post("/license/activate", json!({"license_key": key})).await;
    assert_eq!(status, 200, "{activated}");
    assert_keys(&activated, &["message", "ok", "plan"]);
    assert_eq!(activated["ok"], true);
    let (status, bad) = host.post("/license/activate", json!({"license_key": "nope"})).await;
    assert_eq!((status, bad["error"].as_str()), (422, Some("invalid_license_key")), "{bad}");

    // Every earlier route is in the document, marked deprecated.
    let (_, document) = host.get("/api/openapi.json").await;
    for (method, path, _) in EARLIER {
        let operation = &document["paths"][path][method.to_lowercase()];
        assert_eq!(operation["deprecated"], true, "{method} {path}: {operation}");
    }
    assert!(document["paths"]["/api/trade"]["post"]["deprecated"].is_null(), "current routes");
    host.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_and_custom_check_score_the_strategy_and_create_nothing() {
    let (t, _plugins) = with_strategy().await;

    let (status, scan) = t.get(&format!("/scan?bot={BOT}")).await;
    assert_eq!(status, 200, "{scan}");
    assert_keys(
        &scan,
        &[
            "all",
            "bot",
            "candidates",
            "exchange",
            "remaining",
            "scanned",
            "status",
            "testnet",
            "trades_today",
        ],
    );
    assert_eq!(scan["status"], "ok");
    assert_eq!(scan["bot"], BOT);
    assert_eq!(
        (scan["exchange"].as_str(), scan["testnet"].as_bool()),
        (Some("exchange_a"), Some(true))
    );
    assert_eq!(scan["scanned"], 3, "the watchlist");
    assert_eq!((scan["trades_today"].as_i64(), scan["remaining"].as_i64()), (Some(0), Some(5)));
    let all = scan["all"].as_array().unwrap();
    assert_eq!(all.len(), 3, "{scan}");
    let row = |symbol: &str| all.iter().find(|r| r["symbol"] == symbol).unwrap().clone();
    let (sol, avax, link) = (row("SOLUSDT"), row("AVAXUSDT"), row("LINKUSDT"));
    assert_eq!(sol["direction"], "buy", "{scan}");
    assert_eq!(link["direction"], "sell", "{scan}");
    assert_eq!(avax["direction"], "skip", "{scan}");
    let skip_reason = avax["reason"].as_str().unwrap().to_string();
    assert!(!skip_reason.is_empty(), "the strategy says why: {scan}");
    for result in [&sol, &link] {
        assert!(result["score"].as_f64().unwrap() > 25.0, "{result}");
        assert!(result["confidence"].as_u64().unwrap() >= 8, "{result}");
    }
    let candidates = scan["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 2, "only buy and sell results: {scan}");
    let (first, second) = (&candidates[0], &candidates[1]);
    assert!(first["score"].as_f64() >= second["score"].as_f64(), "highest score first: {scan}");
    let mut listed = vec![first["symbol"].as_str().unwrap(), second["symbol"].as_str().unwrap()];
    listed.sort_unstable();
    assert_eq!(listed, ["LINKUSDT", "SOLUSDT"]);
    assert!(candidates.contains(&sol) && candidates.contains(&link));
    assert!(logged(&t, "tech").await.contains("scan"), "default agent tech");

    // The check of one symbol: the same scores, the strategy's checklist.
    let check = |symbol: &str, direction: &str| {
        format!("/custom_check?symbol={symbol}&direction={direction}&bot={BOT}&agent=coo")
    };
    let (status, buy) = t.get(&check("SOLUSDT", "buy")).await;
    assert_eq!(status, 200, "{buy}");
    let mut expected = vec![
        "bot",
        "checklist",
        "confidence",
        "direction",
        "ev",
        "passed",
        "signal",
        "strategy_direction",
        "symbol",
        "total",
    ];
    if buy.get("reason").is_some() {
        expected.push("reason"); // the strategy's own sentence, when it gives one
    }
    assert_keys(&buy, &expected);
    assert_eq!(
        (buy["symbol"].as_str(), buy["direction"].as_str(), buy["bot"].as_str()),
        (Some("SOLUSDT"), Some("buy"), Some(BOT))
    );
    assert_eq!(
        (buy["signal"].as_bool(), buy["strategy_direction"].as_str()),
        (Some(true), Some("buy"))
    );
    assert_eq!((&buy["ev"], &buy["confidence"]), (&sol["score"], &sol["confidence"]));
    let checklist = buy["checklist"].as_array().unwrap();
    assert_eq!(buy["total"].as_u64(), Some(checklist.len() as u64));
    let passed = checklist.iter().filter(|c| c["pass"] == true).count() as u64;
    assert_eq!(buy["passed"].as_u64(), Some(passed));
    for item in checklist {
        assert_keys(item, &["detail", "name", "pass"]);
    }
    assert!(logged(&t, "coo").await.contains("custom_check"));

    let (_, sell) = t.get(&check("SOLUSDT", "sell")).await;
    assert_eq!(
        (sell["signal"].as_bool(), sell["strategy_direction"].as_str()),
        (Some(false), Some("buy"))
    );
    let (_, sell) = t.get(&check("LINKUSDT", "sell")).await;
    assert_eq!(
        (sell["signal"].as_bool(), sell["strategy_direction"].as_str()),
        (Some(true), Some("sell"))
    );
    let (_, range) = t.get(&check("AVAXUSDT", "buy")).await;
    assert_eq!(range["signal"], false, "{range}");
    assert_eq!(range["strategy_direction"], "skip", "{range}");
    assert_eq!(range["reason"].as_str(), Some(skip_reason.as_str()), "{range}");

    // Wrong names are refused naming the parameter.
    let (status, body) = t.get("/scan?bot=ta_nothing").await;
    assert_eq!((status, body["error"].as_str()), (404, Some("plugin_not_found")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains(BOT), "it lists what is loaded: {body}");
    let (status, body) = t.get("/scan?bot=Bad-Name").await;
    assert_eq!((status, body["error"].as_str()), (422, Some("invalid_query")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("`bot`"), "{body}");
    let (status, body) = t.get("/scan").await;
    assert_eq!(status, 422, "bot is required: {body}");
    let (status, body) = t.get(&check("NOPEUSDT", "buy")).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("unknown_symbol")), "{body}");

    // Read-only: no signal, no order, nobody asked.
    let (_, signals) = t.get("/api/signal/list").await;
    assert!(signals["signals"].as_array().unwrap().is_empty(), "{signals}");
    assert!(t.orders().is_empty());
    assert!(t.messenger.sent().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trade_places_the_bracket_and_trailing_status_and_a_sell_answer_the_earlier_shapes() {
    let t = Trading::start().await;
    let path = |direction: &str, ev: &str, confidence: &str| {
        format!(
            "/trade?symbol=ETHUSDT&direction={direction}&bot={BOT}&sl=2&tp=5&ev={ev}\
             &confidence={confidence}"
        )
    };

    // The gates refuse before anything is sent.
    let (status, body) = t.post_empty(&path("buy", "25", "9")).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("ev_gate")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("`ev`"), "{body}");
    let (status, body) = t.post_empty(&path("buy", "30", "7")).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("confidence_gate")), "{body}");
    assert!(t.orders().is_empty(), "nothing was sent");

    let (status, trade) = t.post_empty(&path("buy", "30", "9")).await;
    assert_eq!(status, 200, "{trade}");
    assert_keys(
        &trade,
        &[
            "bot",
            "date",
            "direction",
            "entry_px",
            "sl_pct",
            "sl_placed",
            "sl_px",
            "size",
            "symbol",
            "tp_pct",
            "tp_placed",
            "tp_px",
        ],
    );
    assert_eq!(
        (trade["symbol"].as_str(), trade["direction"].as_str()),
        (Some("ETHUSDT"), Some("buy"))
    );
    assert_eq!(
        (trade["sl_placed"].as_str(), trade["tp_placed"].as_str()),
        (Some("ok"), Some("ok"))
    );
    assert_eq!((trade["sl_pct"].as_f64(), trade["tp_pct"].as_f64()), (Some(2.0), Some(5.0)));
    assert_eq!(trade["date"].as_str().unwrap().len(), 10, "YYYY-MM-DD: {trade}");

    // The simulator got a MARKET BUY, then one OCO at the answered prices and quantity.
    let entries = t.orders_of("MARKET", "BUY");
    assert_eq!(entries.len(), 1, "{entries:?}");
    let bought = num(&entries[0]["executedQty"]);
    assert!(close_to(bought * 3000.0, 1000.0, 3.0), "size_pct 10 of 10 000 USDT: {bought}");
    // The size held (and protected) is the fill net of the fee taken in the coin.
    let size = trade["size"].as_f64().unwrap();
    assert!(size <= bought && size >= bought * 0.998, "{size} of {bought}");
    let fill = num(&entries[0]["cummulativeQuoteQty"]) / bought;
    assert_eq!(trade["entry_px"].as_f64(), Some(fill));
    let (take, stop) = (t.orders_of("LIMIT_MAKER", "SELL"), t.orders_of("STOP_LOSS_LIMIT", "SELL"));
    assert_eq!((take.len(), stop.len()), (1, 1), "one OCO");
    assert_eq!(take[0]["orderListId"], stop[0]["orderListId"]);
    assert!(take[0]["orderId"].as_i64() > entries[0]["orderId"].as_i64(), "after the entry");
    let (tp_px, sl_px) = (trade["tp_px"].as_f64().unwrap(), trade["sl_px"].as_f64().unwrap());
    assert_eq!(num(&take[0]["price"]), tp_px);
    assert_eq!(num(&stop[0]["stopPrice"]), sl_px);
    assert!(close_to(tp_px, fill * 1.05, 0.01) && close_to(sl_px, fill * 0.98, 0.01), "{trade}");
    assert!(close_to(num(&stop[0]["price"]), sl_px * 0.998, 0.01), "the 0.2 % buffer");
    assert_eq!((num(&take[0]["origQty"]), num(&stop[0]["origQty"])), (size, size));
    assert!(logged(&t, "ops").await.contains("trade ETHUSDT"), "default agent ops");

    // Trailing: 3.3 % up raises the stop; the earlier `updated` rows.
    t.set_price("ETHUSDT", "3100");
    let (status, trailing) = t.get("/trailing").await;
    assert_eq!(status, 200, "{trailing}");
    let updated = trailing["updated"].as_array().unwrap();
    assert_eq!(updated.len(), 1, "{trailing}");
    assert_keys(&updated[0], &["new_sl", "old_sl", "profit_pct", "symbol"]);
    assert_eq!(
        (updated[0]["symbol"].as_str(), updated[0]["old_sl"].as_f64()),
        (Some("ETHUSDT"), Some(sl_px))
    );
    assert_eq!(updated[0]["new_sl"].as_f64(), Some(3069.0), "1 % below 3100");
    assert!(logged(&t, "tech").await.contains("trailing"), "default agent tech");

    // Status: the earlier keys (and the current open_trades), logged on coo by default.
    let (status, report) = t.get("/status").await;
    assert_eq!(status, 200, "{report}");
    for key in
        ["exchange", "testnet", "trades_today", "consecutive_losses", "recent_trades", "config"]
    {
        assert!(report.get(key).is_some(), "{key}: {report}");
    }
    assert_eq!(report["trades_today"], 1);
    assert_eq!(report["open_trades"][0]["symbol"], "ETHUSDT");
    assert_eq!(logged(&t, "coo").await, "status");

    // A sell closes the position: the same shape, with the exit.
    let (status, sold) = t.post_empty(&path("sell", "30", "9")).await;
    assert_eq!(status, 200, "{sold}");
    assert_eq!(sold["direction"], "sell");
    assert_eq!(
        (sold["sl_placed"].as_str(), sold["tp_placed"].as_str()),
        (Some("closed"), Some("closed"))
    );
    assert_eq!(sold["size"].as_f64(), Some(size));
    assert_eq!(sold["entry_px"].as_f64(), Some(fill));
    assert_eq!(sold["exit_px"].as_f64(), Some(3100.0), "{sold}");
    assert!(sold["pnl"].as_f64().unwrap() > 0.0, "{sold}");
    assert_eq!(t.orders_of("MARKET", "SELL").len(), 1);
    assert!(t.open_trades().await.is_empty());
    let (status, body) = t.post_empty(&path("sell", "30", "9")).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("no_position")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirm_after_trade_only_consumes_the_signal_and_places_nothing() {
    let t = Trading::start().await;
    t.create_signal(good_signal("ETHUSDT")).await;
    t.create_signal(good_signal("SOLUSDT")).await;

    // The earlier flow: finance trades with POST /trade, coo confirms afterwards.
    let (status, trade) = t
        .post_empty(&format!(
            "/trade?symbol=ETHUSDT&direction=buy&bot={BOT}&sl=2&tp=5&ev=30&confidence=9"
        ))
        .await;
    assert_eq!(status, 200, "{trade}");
    for _ in 0..2 {
        let (status, confirmed) = t.confirm("ETHUSDT").await;
        assert_eq!(status, 200, "{confirmed}");
        assert_eq!(
            (confirmed["ok"].as_bool(), confirmed["symbol"].as_str(), confirmed["status"].as_str()),
            (Some(true), Some("ETHUSDT"), Some("confirmed")),
            "{confirmed}"
        );
        assert_eq!(confirmed["already_confirmed"], true, "{confirmed}");
        assert!(confirmed["reason"].as_str().unwrap().contains("POST /trade"), "{confirmed}");
        assert_eq!(confirmed["trade"]["opened"]["size"], trade["size"], "{confirmed}");
    }
    let eth = |o: &Value| o["symbol"] == "ETHUSDT";
    assert_eq!(t.orders_of("MARKET", "BUY").iter().filter(|o| eth(o)).count(), 1, "one entry");
    assert_eq!(t.orders_of("LIMIT_MAKER", "SELL").iter().filter(|o| eth(o)).count(), 1, "one OCO");
    assert_eq!(t.orders_of("STOP_LOSS_LIMIT", "SELL").iter().filter(|o| eth(o)).count(), 1);
    let (status, _) = t.get("/api/signal/ETHUSDT").await;
    assert_eq!(status, 404, "the signal was consumed");

    // A signal no trade took keeps the current semantics: its confirm places the bracket.
    let (status, confirmed) = t.confirm("SOLUSDT").await;
    assert_eq!(status, 200, "{confirmed}");
    assert_eq!(
        (confirmed["ok"].as_bool(), confirmed["already_confirmed"].as_bool()),
        (Some(true), Some(false))
    );
    let sol = |o: &Value| o["symbol"] == "SOLUSDT";
    assert_eq!(t.orders_of("MARKET", "BUY").iter().filter(|o| sol(o)).count(), 1);

    // A trade the exchange refuses takes nothing: the signal stays pending and its confirm
    // still executes it.
    t.create_signal(good_signal("BNBUSDT")).await;
    t.fault(spotbot_sim::FaultKind::Reject { code: -1013, msg: None }, 1, Some("/api/v3/order"));
    let (status, refused) = t
        .post_empty(&format!(
            "/trade?symbol=BNBUSDT&direction=buy&bot={BOT}&sl=2&tp=5&ev=30&confidence=9"
        ))
        .await;
    assert_ne!(status, 200, "{refused}");
    let (status, signal) = t.get("/api/signal/BNBUSDT").await;
    assert_eq!((status, signal["status"].as_str()), (200, Some("pending")), "{signal}");
    let (_, confirmed) = t.confirm("BNBUSDT").await;
    assert_eq!(
        (confirmed["ok"].as_bool(), confirmed["already_confirmed"].as_bool()),
        (Some(true), Some(false)),
        "{confirmed}"
    );
    let bnb = |o: &Value| o["symbol"] == "BNBUSDT" && o["status"] == "FILLED";
    assert_eq!(t.orders_of("MARKET", "BUY").iter().filter(|o| bnb(o)).count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_and_signal_creates_signals_and_reports_every_skip() {
    let (t, _plugins) = with_strategy().await;
    let path = format!("/api/scan-and-signal?bot={BOT}");
    let call = || t.post_empty(&path);
    let reason = |answer: &Value, symbol: &str| {
        answer["skipped"].as_array().unwrap().iter().find(|s| s["symbol"] == symbol).unwrap()
            ["reason"]
            .clone()
    };

    let (status, first) = call().await;
    assert_eq!(status, 200, "{first}");
    assert_keys(&first, &["ok", "scan", "signaled", "skipped"]);
    assert_eq!(first["ok"], true);
    assert_eq!(first["signaled"], json!(["SOLUSDT"]));
    let skipped = first["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 2, "{first}");
    let (_, scan) = t.get(&format!("/scan?bot={BOT}")).await;
    let range_reason = scan["all"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["symbol"] == "AVAXUSDT")
        .unwrap()["reason"]
        .clone();
    assert_eq!(reason(&first, "AVAXUSDT"), range_reason, "the strategy's own reason");
    assert_eq!(reason(&first, "LINKUSDT"), "no_position_sell_skipped", "{first}");
    assert_eq!(first["scan"], json!({"bot": BOT, "scanned": 3, "trades_today": 0, "remaining": 5}));
    let (status, signal) = t.get("/api/signal/SOLUSDT").await;
    assert_eq!((status, signal["bot"].as_str()), (200, Some(BOT)), "{signal}");
    t.message_containing("SOLUSDT").await;
    assert!(logged(&t, "scout").await.contains("scan"), "default agent scout");

    let (_, second) = call().await;
    assert_eq!(second["signaled"], json!([]), "{second}");
    assert_eq!(reason(&second, "SOLUSDT"), "duplicate_skipped");

    // The earlier flow trades it; the next scan finds the trade.
    let (status, _) = t
        .post_empty(&format!(
            "/trade?symbol=SOLUSDT&direction=buy&bot={BOT}&sl=2&tp=5&ev=30&confidence=9"
        ))
        .await;
    assert_eq!(status, 200);
    let (_, third) = call().await;
    assert_eq!(reason(&third, "SOLUSDT"), "trade_exists_skipped", "{third}");
    assert_eq!(
        (third["scan"]["trades_today"].as_i64(), third["scan"]["remaining"].as_i64()),
        (Some(1), Some(4))
    );

    // Only one entry: the consumed signal's confirm places nothing.
    let (_, confirmed) = t.confirm("SOLUSDT").await;
    assert_eq!(confirmed["status"], "confirmed", "{confirmed}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1);

    // The messenger refuses: the signal exists, listed as messenger_failed.
    let sent = t.messenger.sent().len();
    let (_, closed) = t.post_empty("/api/close?symbol=SOLUSDT").await;
    assert_eq!(closed["ok"], true, "{closed}");
    t.messages(sent + 1).await; // the close's report, sent in the background
    t.messenger.fail_next(
        spotbot_tests::fake_messenger::Fault::Error {
            code: 400,
            description: "Bad Request: chat not found".into(),
        },
        5,
    );
    let (_, fourth) = call().await;
    assert_eq!(reason(&fourth, "SOLUSDT"), "messenger_failed", "{fourth}");
    let (status, _) = t.get("/api/signal/SOLUSDT").await;
    assert_eq!(status, 200, "the signal was created");

    // The daily limit: nothing is scanned.
    for symbol in ["BNBUSDT", "XRPUSDT", "DOTUSDT", "ETHUSDT"] {
        let (status, body) = t
            .post_empty(&format!(
                "/trade?symbol={symbol}&direction=buy&bot={BOT}&sl=2&tp=5&ev=30&confidence=9"
            ))
            .await;
        assert_eq!(status, 200, "{body}");
    }
    let (_, limited) = call().await;
    assert_eq!(limited["reason"], "daily_limit_reached", "{limited}");
    assert_eq!(
        (limited["signaled"].as_array().map(Vec::len), limited["skipped"].as_array().map(Vec::len)),
        (Some(0), Some(0))
    );
    assert_eq!(
        limited["scan"],
        json!({"bot": BOT, "scanned": 0, "trades_today": 5, "remaining": 0})
    );
}
