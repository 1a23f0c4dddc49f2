//! Manual trades with a LIMIT entry and a TTL over HTTP against the exchange simulator: the
//! LIMIT GTC `MT_` entry, the pending entry, the check (filled → OCO only then; TTL elapsed →
//! cancelled and the boss alerted), the mirrored sell, a restart with an entry open, recover.

use crate::trading_support::{Trading, d};
use rust_decimal::Decimal;
use serde_json::Value;

const BUY_2950: &str =
    "/api/trade/manual?symbol=ETHUSDT&direction=buy&entry_px=2950&sl_pct=2&rr=1:2.5";

fn dec(v: &Value) -> Decimal {
    d(v.as_str().unwrap()).normalize()
}

async fn pending(t: &Trading) -> Vec<Value> {
    let (status, body) = t.get("/api/pending-entries").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["count"].as_u64().unwrap() as usize, body["pending"].as_array().unwrap().len());
    body["pending"].as_array().unwrap().clone()
}

async fn check(t: &Trading) -> Value {
    let (status, body) = t.get("/api/pending-entries/check").await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_entry_waits_then_gets_its_oco_only_once_filled() {
    let t = Trading::start().await;
    let (status, placed) = t.post_empty(BUY_2950).await;
    assert_eq!(status, 200, "{placed}");
    assert_eq!((placed["ok"].as_bool(), placed["status"].as_str()), (Some(true), Some("NEW")));
    assert!(placed["client_order_id"].as_str().unwrap().starts_with("MT_"), "{placed}");
    // The spec's formulas: sl = entry x (1 - 2/100), tp_pct = 2 x 2.5 = 5.
    assert_eq!((placed["sl_px"].as_f64(), placed["tp_px"].as_f64()), (Some(2891.0), Some(3097.5)));
    assert_eq!(placed["tp_pct"].as_f64(), Some(5.0));
    let expires =
        chrono::DateTime::parse_from_rfc3339(placed["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(expires.to_utc() - t.rig.now(), chrono::Duration::hours(24), "ttl_hours default 24");

    let limits = t.orders_of("LIMIT", "BUY");
    assert_eq!(limits.len(), 1);
    let entry = &limits[0];
    assert_eq!(
        (entry["timeInForce"].as_str(), entry["status"].as_str()),
        (Some("GTC"), Some("NEW"))
    );
    assert_eq!(dec(&entry["price"]), d("2950"));
    assert_eq!(dec(&entry["origQty"]), d("0.3389"), "1000 USDT / 2950 rounded down");
    assert_eq!(entry["clientOrderId"], placed["client_order_id"]);
    assert_eq!(pending(&t).await.len(), 1);
    t.message_containing("LIMIT entry placed").await;

    let report = check(&t).await;
    assert_eq!(
        (report["checked"].as_u64(), report["open"].as_array().unwrap().len()),
        (Some(1), 1)
    );
    assert!(t.orders_of("LIMIT_MAKER", "SELL").is_empty(), "no OCO before the fill");

    t.set_price("ETHUSDT", "2940");
    let report = check(&t).await;
    assert_eq!(report["filled"].as_array().unwrap().len(), 1, "{report}");
    let trade = &report["filled"][0];
    assert_eq!(
        (trade["source"].as_str(), trade["protection"].as_str()),
        (Some("manual"), Some("protected"))
    );
    let tp = &t.orders_of("LIMIT_MAKER", "SELL")[0];
    let sl = &t.orders_of("STOP_LOSS_LIMIT", "SELL")[0];
    assert_eq!(dec(&tp["price"]), d("3097.5"));
    assert_eq!(dec(&sl["stopPrice"]), d("2891"));
    assert_eq!(dec(&sl["price"]), d("2885.21"), "2891 x 0.998 = 2885.218, rounded down");
    assert_eq!(dec(&tp["origQty"]), d("0.3385"), "0.3389 minus the 0.1 % fee, to the step");
    assert!(pending(&t).await.is_empty());
    assert_eq!(t.open_trades().await.len(), 1);
    t.message_containing("LIMIT entry filled").await;
    let again = check(&t).await;
    assert_eq!(again["checked"], 0);
    assert_eq!(t.orders_of("LIMIT_MAKER", "SELL").len(), 1, "one OCO, never two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfilled_entry_is_cancelled_when_its_ttl_elapses_and_the_boss_is_told() {
    let t = Trading::start().await;
    let (status, placed) = t.post_empty(&format!("{BUY_2950}&ttl_hours=1")).await;
    assert_eq!(status, 200, "{placed}");
    t.rig.advance_minutes(59);
    assert_eq!(check(&t).await["open"].as_array().unwrap().len(), 1);
    t.rig.advance_minutes(2);
    let report = check(&t).await;
    assert_eq!(report["expired"].as_array().unwrap().len(), 1, "{report}");
    assert!(report["partially_filled"].as_array().unwrap().is_empty());
    assert_eq!(t.orders_of("LIMIT", "BUY")[0]["status"], "CANCELED");
    assert!(pending(&t).await.is_empty());
    assert!(t.open_trades().await.is_empty());
    t.message_containing("expired and cancelled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_parameters_are_refused_naming_the_field() {
    let t = Trading::start().await;
    let base = "/api/trade/manual?symbol=ETHUSDT&direction=buy&sl_pct=2";
    for (query, field) in [
        ("&entry_px=2950&rr=2:1", "rr"),
        ("&entry_px=2950&rr=1:x", "rr"),
        ("&entry_px=2950", "tp_pct"),
        ("&entry_px=2950.005&tp_pct=4", "entry_px"),
        ("&entry_px=-1&tp_pct=4", "entry_px"),
        ("&entry_px=2950&tp_pct=4&ttl_hours=0", "ttl_hours"),
        ("&entry_px=2950&tp_pct=4&ttl_hours=10000", "ttl_hours"),
    ] {
        let (status, body) = t.post_empty(&format!("{base}{query}")).await;
        assert_eq!((status, body["error"].as_str()), (422, Some("invalid_query")), "{query}");
        assert!(body["detail"].as_str().unwrap().contains(field), "{query}: {body}");
    }
    let (status, body) = t
        .post_empty(
            "/api/trade/manual?symbol=ETHUSDT&direction=buy&entry_px=2950&sl_pct=150&tp_pct=4",
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(t.orders().is_empty(), "nothing was sent");
    // rr wins over tp_pct when both are given.
    let (status, placed) = t.post_empty(&format!("{BUY_2950}&tp_pct=40")).await;
    assert_eq!((status, placed["tp_pct"].as_f64()), (200, Some(5.0)), "{placed}");
    let (status, body) = t.post_empty(BUY_2950).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("trade_exists")),
        "one entry per symbol: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_request_says_what_is_wrong_even_when_the_day_is_full() {
    let t = Trading::start_with("[risk]\nmax_consecutive_losses = 0\n").await;
    // The rig's daily limit is 5 trades: take them by API.
    for round in 0..5 {
        let symbol = if round % 2 == 0 { "ETHUSDT" } else { "SOLUSDT" };
        let trade = format!(
            "/api/trade?symbol={symbol}&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=8"
        );
        assert_eq!(t.post_empty(&trade).await.0, 200, "round {round}");
        assert_eq!(t.post_empty(&format!("/api/close?symbol={symbol}")).await.0, 200);
    }
    let unlisted = "/api/trade/manual?symbol=FOOUSDT&direction=buy&entry_px=1&sl_pct=2&rr=1:2";
    let (status, body) = t.post_empty(unlisted).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("unknown_symbol")), "{body}");
    let off_tick =
        "/api/trade/manual?symbol=ETHUSDT&direction=buy&entry_px=2950.005&sl_pct=2&rr=1:2";
    let (status, body) = t.post_empty(off_tick).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("invalid_query")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("tick size"), "{body}");
    let (status, body) = t.post_empty(BUY_2950).await;
    assert_eq!((status, body["error"].as_str()), (409, Some("daily_limit_reached")), "{body}");
    assert!(pending(&t).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sell_entry_is_mirrored_and_closes_by_buying_back() {
    let t = Trading::start().await;
    t.sim.sim.fund(None, "ETH", d("1")).unwrap();
    let (status, placed) = t
        .post_empty(
            "/api/trade/manual?symbol=ETHUSDT&direction=sell&entry_px=3050&sl_pct=2&tp_pct=5",
        )
        .await;
    assert_eq!(status, 200, "{placed}");
    // Mirrored: stop above, target below.
    assert_eq!((placed["sl_px"].as_f64(), placed["tp_px"].as_f64()), (Some(3111.0), Some(2897.5)));
    assert_eq!(t.orders_of("LIMIT", "SELL").len(), 1);
    t.set_price("ETHUSDT", "3060");
    let report = check(&t).await;
    assert_eq!(report["filled"][0]["direction"], "sell", "{report}");
    assert_eq!(report["filled"][0]["protection"], "protected", "{report}");
    let tp = &t.orders_of("LIMIT_MAKER", "BUY")[0];
    let sl = &t.orders_of("STOP_LOSS_LIMIT", "BUY")[0];
    assert_eq!(dec(&tp["price"]), d("2897.5"));
    assert_eq!(dec(&sl["stopPrice"]), d("3111"));
    assert_eq!(dec(&sl["price"]), d("3117.23"), "3111 x 1.002 = 3117.222, rounded up");

    t.set_price("ETHUSDT", "3000");
    let (status, closed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_eq!(status, 200, "{closed}");
    assert!(closed["pnl"].as_f64().unwrap() > 0.0, "sold 3050, bought back ~3000: {closed}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1, "bought back at market");
    assert!(t.seen("POST", "/api/v3/order").iter().all(|r| r.status == 200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_entry_survives_a_restart_and_recover_restores_lost_ones() {
    let t = Trading::start().await;
    let (_, placed) = t.post_empty(BUY_2950).await;
    let t = t.restart().await;
    assert_eq!(pending(&t).await.len(), 1, "persistent");
    t.set_price("ETHUSDT", "2940");
    let report = check(&t).await;
    assert_eq!(report["filled"].as_array().unwrap().len(), 1, "{report}");

    // Recover: an MT_ order the store lost is rebuilt from the journal's plan; a second run
    // skips it (tracked).
    let (_, sol) = t
        .post_empty("/api/trade/manual?symbol=SOLUSDT&direction=buy&entry_px=140&sl_pct=2&tp_pct=4")
        .await;
    let id = sol["client_order_id"].as_str().unwrap().to_string();
    t.forget_pending_entry(&id);
    let (status, recovered) = t.get("/api/pending-entries/recover").await;
    assert_eq!(status, 200, "{recovered}");
    assert_eq!(
        (recovered["recovered"].as_u64(), recovered["skipped"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(recovered["entries"][0]["client_order_id"], id.as_str());
    assert_eq!(recovered["entries"][0]["sl_px"], sol["sl_px"]);
    let (_, again) = t.get("/api/pending-entries/recover").await;
    assert_eq!((again["recovered"].as_u64(), again["skipped"].as_u64()), (Some(0), Some(1)));
    assert_ne!(placed["client_order_id"], sol["client_order_id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_fill_at_ttl_cancels_the_rest_and_protects_what_filled() {
    let t = Trading::start().await;
    let (status, placed) = t.post_empty(&format!("{BUY_2950}&ttl_hours=2")).await;
    assert_eq!(status, 200, "{placed}");
    let order_id = placed["entry_order_id"].as_i64().unwrap();
    t.sim.sim.fill_partially(order_id, d("0.2")).unwrap();
    let report = check(&t).await;
    assert_eq!(report["open"].as_array().unwrap().len(), 1, "PARTIALLY_FILLED waits: {report}");
    assert!(t.orders_of("LIMIT_MAKER", "SELL").is_empty());

    t.rig.advance_hours(2);
    let report = check(&t).await;
    assert_eq!(report["expired"].as_array().unwrap().len(), 1, "{report}");
    let trade = &report["partially_filled"][0];
    assert_eq!(trade["protection"], "protected", "{report}");
    assert_eq!(trade["size"].as_f64(), Some(0.1998), "0.2 minus the 0.1 % fee");
    assert_eq!(t.orders_of("LIMIT", "BUY")[0]["status"], "CANCELED", "the rest is cancelled");
    let tp = &t.orders_of("LIMIT_MAKER", "SELL")[0];
    assert_eq!(dec(&tp["origQty"]), d("0.1998"), "the OCO protects what filled");
    assert_eq!(t.open_trades().await.len(), 1);
    t.message_containing("0.2 had filled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_messenger_delays_the_note_but_never_the_entry() {
    let t = Trading::start().await;
    t.messenger.fail_next(spotbot_tests::fake_messenger::Fault::RateLimit { retry_after_s: 1 }, 1);
    let started = std::time::Instant::now();
    let (status, placed) = t.post_empty(BUY_2950).await;
    assert_eq!(status, 200, "{placed}");
    assert!(
        started.elapsed() < std::time::Duration::from_millis(900),
        "the entry did not wait for the messenger"
    );
    assert_eq!(t.orders_of("LIMIT", "BUY").len(), 1);
    t.message_containing("LIMIT entry placed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_better_fill_is_protected_at_the_announced_levels() {
    let t = Trading::start().await;
    // A limit above the market (3000) fills at once, below its limit.
    let (status, placed) = t
        .post_empty(
            "/api/trade/manual?symbol=ETHUSDT&direction=buy&entry_px=3010&sl_pct=1&tp_pct=5",
        )
        .await;
    assert_eq!(status, 200, "{placed}");
    assert_eq!(placed["status"], "FILLED", "{placed}");
    assert_eq!((placed["sl_px"].as_f64(), placed["tp_px"].as_f64()), (Some(2979.9), Some(3160.5)));
    let trade = &t.open_trades().await[0];
    assert!(trade["entry_px"].as_f64().unwrap() < 3010.0, "a better fill: {trade}");
    let tp = &t.orders_of("LIMIT_MAKER", "SELL")[0];
    let sl = &t.orders_of("STOP_LOSS_LIMIT", "SELL")[0];
    assert_eq!(dec(&tp["price"]), d("3160.5"), "the announced take-profit, not re-based");
    assert_eq!(dec(&sl["stopPrice"]), d("2979.9"), "the announced stop");
    assert_eq!(dec(&sl["price"]), d("2973.94"), "2979.9 x 0.998 = 2973.94");
    assert_eq!((trade["sl_px"].as_f64(), trade["tp_px"].as_f64()), (Some(2979.9), Some(3160.5)));
    let opened = t.message_containing("Trade opened").await.text;
    assert!(
        opened.contains("Stop-loss 2979.9 · take-profit 3160.5"),
        "the boss is told the levels placed: {opened}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fill_beyond_the_announced_stop_is_protected_at_levels_based_on_the_fill() {
    let t = Trading::start().await;
    // sl = 3100 x 0.98 = 3038, above the fill near 3000: that stop would sell at once.
    let (status, placed) = t
        .post_empty(
            "/api/trade/manual?symbol=ETHUSDT&direction=buy&entry_px=3100&sl_pct=2&tp_pct=5",
        )
        .await;
    assert_eq!((status, placed["status"].as_str()), (200, Some("FILLED")), "{placed}");
    let fill = d(&t.open_trades().await[0]["entry_px"].to_string());
    let sl = &t.orders_of("STOP_LOSS_LIMIT", "SELL")[0];
    let tp = &t.orders_of("LIMIT_MAKER", "SELL")[0];
    assert_eq!(dec(&sl["stopPrice"]), (fill * d("0.98")).round_dp(2), "fill {fill}");
    assert_eq!(dec(&tp["price"]), (fill * d("1.05")).round_dp(2), "fill {fill}");
    assert_eq!(t.open_trades().await[0]["protection"], "protected");
}

const CANCEL_ETH: &str = "/api/pending-entries/cancel?symbol=ETH";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_entry_is_cancelled_at_the_exchange_on_request() {
    let t = Trading::start().await;
    let (_, placed) = t.post_empty(BUY_2950).await;
    let (status, cancelled) = t.post_empty(CANCEL_ETH).await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(
        (cancelled["ok"].as_bool(), cancelled["status"].as_str()),
        (Some(true), Some("cancelled"))
    );
    assert_eq!(cancelled["entry"]["client_order_id"], placed["client_order_id"]);
    assert!(cancelled.get("trade").is_none(), "{cancelled}");
    let entry = &t.orders_of("LIMIT", "BUY")[0];
    assert_eq!(entry["status"], "CANCELED", "cancelled at the exchange: {entry}");
    let cancels = t.seen("DELETE", "/api/v3/order");
    assert_eq!(cancels.len(), 1, "one cancel request");
    assert!(pending(&t).await.is_empty());
    assert!(t.open_trades().await.is_empty());
    assert!(t.orders_of("LIMIT_MAKER", "SELL").is_empty(), "no OCO");
    let note = t.message_containing("LIMIT entry cancelled").await.text;
    assert!(note.contains("ETHUSDT") && note.contains("2950"), "{note}");
    let (status, body) = t.post_empty(CANCEL_ETH).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("no_pending_entry")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("ETH"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_that_filled_before_its_cancel_becomes_a_protected_trade() {
    let t = Trading::start().await;
    t.post_empty(BUY_2950).await;
    // The exchange fills the entry; no check has seen it yet when the cancel arrives.
    t.set_price("ETHUSDT", "2940");
    let (status, cancelled) = t.post_empty("/api/pending-entries/cancel?symbol=ETHUSDT").await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "filled", "{cancelled}");
    assert_eq!(cancelled["trade"]["protection"], "protected", "{cancelled}");
    assert_eq!(t.orders_of("LIMIT", "BUY")[0]["status"], "FILLED");
    let tp = &t.orders_of("LIMIT_MAKER", "SELL")[0];
    let sl = &t.orders_of("STOP_LOSS_LIMIT", "SELL")[0];
    assert_eq!((dec(&tp["price"]), dec(&sl["stopPrice"])), (d("3097.5"), d("2891")));
    assert_eq!(dec(&tp["origQty"]), d("0.3385"), "what the fill received");
    assert!(pending(&t).await.is_empty());
    let trades = t.open_trades().await;
    assert_eq!(trades.len(), 1);
    assert_eq!(trades[0]["source"], "manual");
    t.message_containing("LIMIT entry filled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_partly_filled_entry_protects_the_part_that_filled() {
    let t = Trading::start().await;
    let (_, placed) = t.post_empty(BUY_2950).await;
    t.sim.sim.fill_partially(placed["entry_order_id"].as_i64().unwrap(), d("0.2")).unwrap();
    let (status, cancelled) = t.post_empty(CANCEL_ETH).await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "partially_filled", "{cancelled}");
    assert_eq!(cancelled["trade"]["size"].as_f64(), Some(0.1998), "0.2 minus the 0.1 % fee");
    assert_eq!(t.orders_of("LIMIT", "BUY")[0]["status"], "CANCELED", "the rest is cancelled");
    let tp = &t.orders_of("LIMIT_MAKER", "SELL")[0];
    assert_eq!(dec(&tp["origQty"]), d("0.1998"), "the OCO protects what filled");
    assert!(pending(&t).await.is_empty());
    t.message_containing("0.2 had filled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_the_exchange_does_not_take_leaves_the_entry_pending() {
    let t = Trading::start().await;
    t.post_empty(BUY_2950).await;
    let mut fault = spotbot_sim::Fault::new(spotbot_sim::FaultKind::ServerError {
        status: 503,
        execute: false,
    });
    fault.count = 20;
    fault.path = Some("/api/v3/order".into());
    fault.method = Some("DELETE".into());
    t.sim.sim.inject(fault);
    let (status, body) = t.post_empty(CANCEL_ETH).await;
    assert_eq!((status, body["error"].as_str()), (502, Some("exchange_error")), "{body}");
    assert!(!t.seen("DELETE", "/api/v3/order").is_empty(), "the cancel was sent");
    assert_eq!(t.orders_of("LIMIT", "BUY")[0]["status"], "NEW", "still on the book");
    assert_eq!(pending(&t).await.len(), 1, "still pending, checked as before");
    t.sim.sim.clear_faults();
    // It fills later: the check protects it as usual.
    t.set_price("ETHUSDT", "2940");
    let report = check(&t).await;
    assert_eq!(report["filled"][0]["protection"], "protected", "{report}");
    assert!(!t.messenger.sent().iter().any(|m| m.text.contains("LIMIT entry cancelled")));
}
