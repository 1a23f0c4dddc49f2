//! The signal-driven trade over HTTP on loopback: signal → approval message → confirm →
//! MARKET entry and OCO at the exchange simulator, with every skip outcome, gate, status code
//! and the 5-minute expiry on the test clock. Money assertions read what the simulator
//! received, not only what the API answered.

use crate::trading_support::{Trading, d, good_signal, signal_with};
use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::{Value, json};

fn dec(v: &Value) -> Decimal {
    d(v.as_str().unwrap_or_else(|| panic!("decimal string expected: {v}")))
}

fn to_tick(v: Decimal, strategy: RoundingStrategy) -> Decimal {
    let tick = d("0.01");
    ((v / tick).round_dp_with_strategy(0, strategy) * tick).normalize()
}

/// The bracket the simulator must hold after a confirmed ETHUSDT buy: returns (entry, tp, sl).
pub(crate) fn assert_bracket_at_exchange(t: &Trading) -> (Value, Value, Value) {
    let entries = t.orders_of("MARKET", "BUY");
    assert_eq!(entries.len(), 1, "exactly one entry: {entries:?}");
    let entry = entries[0].clone();
    assert_eq!(entry["status"], "FILLED");
    assert!(entry["clientOrderId"].as_str().unwrap().starts_with("SE_"), "{entry}");
    let executed = dec(&entry["executedQty"]);
    let avg = dec(&entry["cummulativeQuoteQty"]) / executed;
    // 10 % of 10 000 USDT at ~3000.
    assert!((d("0.33")..=d("0.334")).contains(&executed), "{entry}");
    let tps = t.orders_of("LIMIT_MAKER", "SELL");
    let sls = t.orders_of("STOP_LOSS_LIMIT", "SELL");
    assert_eq!((tps.len(), sls.len()), (1, 1), "one OCO: {tps:?} {sls:?}");
    let (tp, sl) = (tps[0].clone(), sls[0].clone());
    assert_eq!(tp["orderListId"], sl["orderListId"], "both legs in one list");
    assert!(tp["orderListId"].as_i64().unwrap() >= 0);
    // Quantity: what was received net of the 0.1 % fee in ETH, rounded down to the step.
    let received = executed - executed * d("0.001");
    let qty = (received / d("0.0001")).floor() * d("0.0001");
    assert_eq!(dec(&tp["origQty"]).normalize(), qty.normalize(), "{tp}");
    assert_eq!(dec(&sl["origQty"]).normalize(), qty.normalize(), "{sl}");
    // Prices: tp = entry × 1.05, sl = entry × 0.98, stop limit = sl × 0.998 rounded down.
    let tp_px = to_tick(avg * d("1.05"), RoundingStrategy::MidpointAwayFromZero);
    let sl_px = to_tick(avg * d("0.98"), RoundingStrategy::MidpointAwayFromZero);
    let limit = to_tick(sl_px * d("0.998"), RoundingStrategy::ToNegativeInfinity);
    assert_eq!(dec(&tp["price"]).normalize(), tp_px, "{tp}");
    assert_eq!(dec(&sl["stopPrice"]).normalize(), sl_px, "{sl}");
    assert_eq!(dec(&sl["price"]).normalize(), limit, "{sl}");
    (entry, tp, sl)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signal_approval_confirm_places_the_bracket_at_the_exchange() {
    let t = Trading::start().await;
    let created = t.create_signal(good_signal("ETHUSDT")).await;
    assert_eq!(created["ok"], true);
    assert_eq!(created["ev"], 89.0, "9/10 with reward/risk 2.5: {created}");
    assert_eq!(created["confidence"], 9);

    let approval = t.messages(1).await;
    let request = &approval[0];
    assert_eq!(request.parse_mode.as_deref(), Some("HTML"));
    assert!(
        request.text.contains("1-YES ETHUSDT") && request.text.contains("0-NO ETHUSDT"),
        "{}",
        request.text
    );
    let buttons: Vec<&str> = request.buttons.iter().map(|(_, data)| data.as_str()).collect();

    let (status, signal) = t.get("/api/signal/ETHUSDT").await;
    assert_eq!(status, 200, "{signal}");
    let id = signal["id"].as_str().unwrap();
    assert_eq!(
        buttons,
        [format!("1-YES ETHUSDT {id}"), format!("0-NO ETHUSDT {id}")],
        "a press answers exactly this signal"
    );
    assert_eq!(signal["origin"], json!({"source": "agent", "by": "open access"}));
    assert!(request.text.contains("posted by agent open access"), "{}", request.text);
    assert_eq!(
        (signal["status"].as_str(), signal["tg_sent"].as_bool()),
        (Some("pending"), Some(true))
    );
    assert_eq!(signal["checklist"].as_array().unwrap().len(), 10);
    // passed and total were left out: counted from the checklist, in the list too.
    assert_eq!((signal["passed"].as_u64(), signal["total"].as_u64()), (Some(9), Some(10)));
    let (_, list) = t.get("/api/signal/list").await;
    let listed = &list["signals"][0];
    assert_eq!(
        (listed["passed"].as_u64(), listed["total"].as_u64()),
        (Some(9), Some(10)),
        "{list}"
    );
    let pending = t.host.http.get(t.host.url("/api/signal/pending")).send().await.unwrap();
    assert!(pending.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    let text = pending.text().await.unwrap();
    assert!(
        text.contains("ETHUSDT")
            && text.contains("0 min old")
            && text.contains("1-YES ETHUSDT")
            && text.contains("0-NO ETHUSDT"),
        "{text}"
    );
    assert!(t.orders().is_empty(), "nothing is traded before the confirm");

    let (status, answer) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["status"], "confirmed");
    assert_eq!((answer["ev"].as_f64(), answer["confidence"].as_u64()), (Some(89.0), Some(9)));
    assert_eq!(answer["trade"]["ok"], true);
    let opened = &answer["trade"]["opened"];
    assert_eq!(opened["protection"], "protected", "{answer}");
    assert_eq!(
        (opened["sl_placed"].as_str(), opened["tp_placed"].as_str()),
        (Some("ok"), Some("ok"))
    );

    let (_, tp, sl) = assert_bracket_at_exchange(&t);
    assert_eq!(opened["sl_oid"], sl["orderId"]);
    assert_eq!(opened["tp_oid"], tp["orderId"]);
    let trades = t.open_trades().await;
    assert_eq!(trades.len(), 1);
    assert_eq!(trades[0]["source"], "signal");
    assert_eq!(trades[0]["bot"], "mr_combined");

    // The result reaches the boss with the order ids.
    let messages = t.messages(2).await;
    let result = &messages.last().unwrap().text;
    assert!(result.contains("ETHUSDT") && result.contains(&sl["orderId"].to_string()), "{result}");

    // The signal left memory; a repeated confirm answers without placing anything.
    let (status, _) = t.get("/api/signal/ETHUSDT").await;
    assert_eq!(status, 404);
    let (status, again) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(
        (again["ok"].as_bool(), again["already_confirmed"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1, "nothing placed by the repeat");
    let (_, list) = t.get("/api/signal/list").await;
    assert_eq!(list["signals"].as_array().unwrap().len(), 0, "{list}");
}

/// The boss is never asked to approve what confirm would refuse: a signal under the gates is
/// refused at creation with the failing numbers, nothing is stored, sent or placed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signals_under_the_gates_are_refused_before_the_boss_is_asked() {
    let t = Trading::start().await;
    let (status, body) = t.post("/api/signal", signal_with("ETHUSDT", "buy", 5, 10)).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("signal_below_gates")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("confidence 5 must be >= 8"), "{body}");
    // No checklist and an unknown bot: confidence 0 and ev -100, refused the same way.
    let bare = json!({"symbol": "SOLUSDT", "direction": "buy", "bot": "no_such_bot",
                      "sl_pct": 2.0, "tp_pct": 5.0});
    let (status, body) = t.post("/api/signal", bare).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("signal_below_gates")), "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains("ev -100 must be > 25") && detail.contains("confidence 0"), "{body}");
    assert!(detail.contains("computes them from the checklist"), "says how: {body}");
    let (_, list) = t.get("/api/signal/list").await;
    assert_eq!(list["signals"].as_array().unwrap().len(), 0, "nothing stored: {list}");
    assert!(t.messenger.sent().is_empty(), "the boss was not asked");
    assert!(t.seen("POST", "/api/v3/order").is_empty(), "no order was sent");

    // The caller cannot supply the gate values.
    let mut forged = good_signal("SOLUSDT");
    forged["ev"] = json!(99);
    forged["confidence"] = json!(10);
    let (status, body) = t.post("/api/signal", forged).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("unknown field"), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("The service computes ev"), "{body}");

    // A buy without its stop distance is refused by name, not placed with a stop at 0 %.
    let mut stopless = good_signal("SOLUSDT");
    stopless.as_object_mut().unwrap().remove("sl_pct");
    let (status, body) = t.post("/api/signal", stopless).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("invalid_body")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("`sl_pct` is required for a buy"), "{body}");
    assert!(t.messenger.sent().is_empty(), "the boss was not asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirm_after_five_minutes_is_refused_and_places_nothing() {
    let t = Trading::start().await;
    t.create_signal(good_signal("ETHUSDT")).await;
    t.rig.advance_minutes(4);
    let (status, _) = t.get("/api/signal/ETHUSDT").await;
    assert_eq!(status, 200, "still valid at 4 minutes");
    t.rig.clock.advance(chrono::Duration::seconds(61));
    let (status, body) = t.get("/api/signal/ETHUSDT").await;
    assert_eq!((status, body["error"].as_str()), (410, Some("signal_expired")), "{body}");
    let (status, body) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 410, "{body}");
    assert!(t.seen("POST", "/api/v3/order").is_empty(), "no order was sent");

    // Cleanup: expired now, deleted 30 minutes after creation.
    let (_, cleaned) = t.post_empty("/api/signal/cleanup").await;
    assert_eq!(cleaned["expired"], json!(["ETHUSDT"]), "{cleaned}");
    assert_eq!(
        (cleaned["count_expired"].as_u64(), cleaned["count_deleted"].as_u64()),
        (Some(1), Some(0))
    );
    let (status, body) = t.get("/api/signal/ETHUSDT").await;
    assert_eq!((status, body["error"].as_str()), (409, Some("signal_not_pending")));
    t.rig.advance_minutes(26);
    let (_, cleaned) = t.post_empty("/api/signal/cleanup?max_age_minutes=5").await;
    assert_eq!(cleaned["deleted"], json!(["ETHUSDT"]), "{cleaned}");
    let (status, _) = t.get("/api/signal/ETHUSDT").await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_skip_outcome_and_reject() {
    let t = Trading::start().await;
    t.create_signal(good_signal("ETHUSDT")).await;
    let (_, dup) = t.post("/api/signal", good_signal("ETHUSDT")).await;
    assert_eq!(
        (dup["ok"].as_bool(), dup["status"].as_str()),
        (Some(false), Some("duplicate_skipped"))
    );
    let (_, sell) = t.post("/api/signal", signal_with("SOLUSDT", "sell", 9, 10)).await;
    assert_eq!(sell["status"], "no_position_sell_skipped", "{sell}");

    let (status, _) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 200);
    let (_, exists) = t.post("/api/signal", good_signal("ETHUSDT")).await;
    assert_eq!(exists["status"], "trade_exists_skipped", "{exists}");

    // The messenger refuses: the signal exists anyway, with tg_sent false.
    t.messenger.fail_next(
        spotbot_tests::fake_messenger::Fault::Error {
            code: 400,
            description: "Bad Request: chat not found".into(),
        },
        5,
    );
    let (status, failed) = t.post("/api/signal", good_signal("SOLUSDT")).await;
    assert_eq!((status, failed["status"].as_str()), (200, Some("messenger_failed")), "{failed}");
    let (_, signal) = t.get("/api/signal/SOLUSDT").await;
    assert_eq!(
        (signal["status"].as_str(), signal["tg_sent"].as_bool()),
        (Some("pending"), Some(false))
    );

    // Boss says NO.
    let (status, rejected) = t.post_empty("/api/signal/SOLUSDT/reject").await;
    assert_eq!(status, 200, "{rejected}");
    assert_eq!(rejected, json!({"ok": true, "symbol": "SOLUSDT", "status": "skipped"}));
    let (status, _) = t.confirm("SOLUSDT").await;
    assert_eq!(status, 409, "a skipped signal cannot be confirmed");
    let (status, _) = t.get("/api/signal/NOPEUSDT").await;
    assert_eq!(status, 404);
    let (status, body) = t.post("/api/signal", good_signal("NOPEUSDT")).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("unknown_symbol")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("NOPEUSDT"), "{body}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1, "only the confirmed ETHUSDT entry");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_confirms_place_exactly_one_entry() {
    let t = Trading::start().await;
    t.create_signal(good_signal("ETHUSDT")).await;
    let url = t.host.url("/api/signal/ETHUSDT/confirm");
    let confirms: Vec<_> = (0..20)
        .map(|_| {
            let (http, url) = (t.host.http.clone(), url.clone());
            tokio::spawn(async move {
                let response =
                    http.post(url).header("content-type", "application/json").send().await.unwrap();
                (response.status().as_u16(), response.json::<Value>().await.unwrap())
            })
        })
        .collect();
    let mut answers = Vec::new();
    for confirm in confirms {
        answers.push(confirm.await.unwrap());
    }
    for (status, body) in &answers {
        assert_eq!(*status, 200, "{body}");
        assert_eq!(body["ok"], true, "{body}");
    }
    let executed = answers.iter().filter(|(_, b)| b["already_confirmed"] == false).count();
    assert_eq!(executed, 1, "one confirm executed, the others answered from it");
    assert_eq!(t.seen("POST", "/api/v3/order").len(), 1, "one entry sent");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1);
    assert_eq!(t.seen("POST", "/api/v3/orderList/oco").len(), 1, "one OCO sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daily_trade_limit_blocks_entries_until_reset_daily() {
    let t = Trading::start_with("[risk]\nmax_consecutive_losses = 0\n").await;
    // max_trades_per_day is 5 in the rig; take 5 trades by API on two symbols.
    let (status, body) = t.post_empty("/api/reset-daily").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"ok": true, "trades_today_before": 0, "trades_today_after": 0}));
    for round in 0..5 {
        let symbol = if round % 2 == 0 { "ETHUSDT" } else { "SOLUSDT" };
        if round == 4 {
            // Asked while one trade of the day was left.
            t.create_signal(good_signal("XRPUSDT")).await;
        }
        let (status, body) = t
            .post_empty(&format!("/api/trade?symbol={symbol}&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=8"))
            .await;
        assert_eq!(status, 200, "round {round}: {body}");
        let (status, body) = t.post_empty(&format!("/api/close?symbol={symbol}")).await;
        assert_eq!(status, 200, "round {round}: {body}");
    }
    let (status, answer) = t.confirm("XRPUSDT").await;
    assert_eq!(status, 200);
    assert_eq!(answer["ok"], false, "{answer}");
    let reason = answer["reason"].as_str().unwrap();
    assert!(reason.starts_with("daily_limit_reached"), "{answer}");
    assert!(reason.contains("POST /api/reset-daily") && reason.contains("max_trades_per_day"));

    // A new signal now is not put to the boss: confirm would refuse it. (Counted by the
    // question itself: the closes' reports may still be on their way to the chat.)
    let (status, skipped) = t.post("/api/signal", good_signal("ETHUSDT")).await;
    assert_eq!(status, 200, "{skipped}");
    assert_eq!(
        (skipped["ok"].as_bool(), skipped["status"].as_str()),
        (Some(false), Some("daily_limit_skipped")),
        "{skipped}"
    );
    assert!(skipped["reason"].as_str().unwrap().contains("POST /api/reset-daily"), "{skipped}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let asks = |symbol: &str| {
        let question = format!("1-YES {symbol}");
        t.messenger.sent().iter().filter(|m| m.text.contains(&question)).count()
    };
    assert_eq!(asks("XRPUSDT"), 1, "the signal of round 4 was put to the boss");
    assert_eq!(asks("ETHUSDT"), 0, "the boss was not asked");
    let (status, body) = t
        .post_empty(
            "/api/trade?symbol=ETHUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=8",
        )
        .await;
    assert_eq!((status, body["error"].as_str()), (409, Some("daily_limit_reached")), "{body}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 5);

    let (_, reset) = t.post_empty("/api/reset-daily").await;
    assert_eq!(reset, json!({"ok": true, "trades_today_before": 5, "trades_today_after": 0}));
    let (_, answer) = t.confirm("XRPUSDT").await;
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_trade_enforces_the_gates_and_refuses_orders_below_min_notional() {
    let t = Trading::start_with("[strategy.tiny]\nsize_pct = 0.01\n").await;
    let trade = |ev: &str, conf: &str, bot: &str| {
        format!(
            "/api/trade?symbol=ETHUSDT&direction=buy&bot={bot}&sl=2&tp=5&ev={ev}&confidence={conf}"
        )
    };
    let (status, body) = t.post_empty(&trade("25", "9", "mr_combined")).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("ev_gate")), "{body}");
    let (status, body) = t.post_empty(&trade("30", "7", "mr_combined")).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("confidence_gate")), "{body}");
    // 0.01 % of 10 000 USDT is 1 USDT, below the 5 USDT minimum notional.
    let (status, body) = t.post_empty(&trade("30", "8", "tiny")).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("order_refused")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("minimum notional"), "{body}");
    assert!(t.seen("POST", "/api/v3/order").is_empty(), "nothing was sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capital_cap_sizes_the_position() {
    // balance 10 000, cap 2 000, size_pct 10 -> 200 USDT.
    let t = Trading::start_with("[risk]\nmax_trading_usdt = 2000.0\n").await;
    let (status, body) = t
        .post_empty(
            "/api/trade?symbol=ETHUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=8",
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let entry = &t.orders_of("MARKET", "BUY")[0];
    assert_eq!(dec(&entry["origQty"]).normalize(), d("0.0666"), "200 / 3000 rounded down: {entry}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signals_tier_scales_the_size_by_the_strategys_risk_multiplier() {
    // balance 10 000, cap 2 000, size_pct 10, A+ risk 3 -> 600 USDT.
    let t = Trading::start_with("risk_aplus = 3.0\n[risk]\nmax_trading_usdt = 2000.0\n").await;
    let mut signal = good_signal("ETHUSDT");
    signal["tier"] = json!("A+");
    t.create_signal(signal).await;
    let (_, view) = t.get("/api/signal/ETHUSDT").await;
    assert_eq!(view["tier"], "A+", "{view}");
    let (status, body) = t.confirm("ETHUSDT").await;
    assert_eq!((status, &body["ok"]), (200, &json!(true)), "{body}");
    let entry = &t.orders_of("MARKET", "BUY")[0];
    assert_eq!(dec(&entry["origQty"]).normalize(), d("0.2"), "600 / 3000: {entry}");
    let (status, body) = t
        .post(
            "/api/signal",
            json!({"symbol": "SOLUSDT", "direction": "buy",
        "bot": "mr_combined", "tier": "A+++"}),
        )
        .await;
    assert_eq!((status, body["error"].as_str()), (422, Some("invalid_body")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_messenger_failure_never_blocks_a_trade_and_is_logged() {
    let t = Trading::start().await;
    t.create_signal(good_signal("ETHUSDT")).await;
    t.messenger.fail_next(
        spotbot_tests::fake_messenger::Fault::Error {
            code: 403,
            description: "Forbidden: bot was blocked by the user".into(),
        },
        20,
    );
    let (status, answer) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["ok"], true, "{answer}");
    assert_bracket_at_exchange(&t);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (_, state) = t.get("/api/state").await;
        let logged = state["log"].as_array().unwrap().iter().any(|e| {
            e["status"] == "error" && e["action"].as_str().unwrap().contains("messenger failed")
        });
        if logged {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no activity-log entry: {state}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_consecutive_loss_limit_stops_new_entries() {
    let t = Trading::start_with("[risk]\nmax_consecutive_losses = 1\n").await;
    let (status, body) = t
        .post_empty(
            "/api/trade?symbol=ETHUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=8",
        )
        .await;
    assert_eq!(status, 200, "{body}");
    // Asked before the loss; confirmed after it.
    t.create_signal(good_signal("SOLUSDT")).await;
    t.set_price("ETHUSDT", "2970");
    let (_, closed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert!(closed["pnl"].as_f64().unwrap() < 0.0, "a loss: {closed}");
    // A new signal now is not put to the boss at all.
    let (status, skipped) = t.post("/api/signal", good_signal("XRPUSDT")).await;
    assert_eq!((status, skipped["status"].as_str()), (200, Some("daily_limit_skipped")));
    assert!(skipped["reason"].as_str().unwrap().contains("max_consecutive_losses"), "{skipped}");
    let (_, answer) = t.confirm("SOLUSDT").await;
    assert_eq!(answer["ok"], false, "{answer}");
    let reason = answer["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("daily_limit_reached") && reason.contains("consecutive losses"),
        "{reason}"
    );
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1);
}
