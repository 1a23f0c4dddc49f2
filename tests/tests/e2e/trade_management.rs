//! Trade management and the free read-outs, over HTTP against the exchange simulator and the
//! fake messenger: the closed-trade history (paging and its bounds), statistics after a win
//! and a loss, the history sync of trades made by hand on the exchange (twice, nothing
//! doubled), status without secrets, the portfolio valued like the simulator's balances, and
//! notify (sent, 503 without messenger, 502 on a messenger fault, bounds of the text); an entry
//! larger than the symbol's filters take is capped, and says so.

use crate::trading_support::{BOT_TOKEN, KEY, SECRET, Trading, d};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use spotbot::exchange::{Exchange, NewOrder, Qty, Side};
use spotbot_sim::FaultKind;
use spotbot_tests::fake_messenger::Fault as MessengerFault;

/// Opens a bracketed ETH trade through the API, moves the price to `exit` and closes it;
/// returns the close answer.
async fn round_trip(t: &Trading, exit: &str) -> Value {
    t.set_price("ETHUSDT", "3000");
    t.buy("ETHUSDT").await;
    t.set_price("ETHUSDT", exit);
    let (status, closed) = t.post_empty("/api/close?symbol=ETHUSDT").await;
    assert_eq!(status, 200, "{closed}");
    t.rig.advance_minutes(1);
    closed
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close_to(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

async fn error_of(t: &Trading, path: &str) -> (u16, String, String) {
    let (status, body) = t.get(path).await;
    let field = |k: &str| body[k].as_str().unwrap_or_default().to_string();
    (status, field("error"), field("detail"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_pages_newest_first_and_names_a_bad_limit_or_offset() {
    let t = Trading::start().await;
    let (status, empty) = t.get("/api/trades/history").await;
    assert_eq!(status, 200, "{empty}");
    assert_eq!(
        (empty["count"].as_u64(), empty["total"].as_u64(), empty["limit"].as_u64()),
        (Some(0), Some(0), Some(50)),
        "{empty}"
    );
    let win = round_trip(&t, "3060").await;
    let loss = round_trip(&t, "2970").await;

    let (_, all) = t.get("/api/trades/history").await;
    assert_eq!((all["count"].as_u64(), all["total"].as_u64()), (Some(2), Some(2)), "{all}");
    let rows = all["trades"].as_array().unwrap();
    assert!(close_to(f(&rows[0]["pnl"]), f(&loss["pnl"])), "newest first: {all}");
    assert!(close_to(f(&rows[1]["pnl"]), f(&win["pnl"])), "{all}");
    let row = &rows[0];
    for key in [
        "symbol",
        "direction",
        "bot",
        "size",
        "entry_px",
        "exit_px",
        "pnl",
        "reason",
        "opened_at",
        "closed_at",
        "source",
        "exchange",
    ] {
        assert!(!row[key].is_null(), "{key} missing: {row}");
    }
    assert_eq!(
        (row["symbol"].as_str(), row["direction"].as_str(), row["reason"].as_str()),
        (Some("ETHUSDT"), Some("buy"), Some("market"))
    );
    assert_eq!(
        (row["source"].as_str(), row["exchange"].as_str()),
        (Some("trade"), Some("exchange_a"))
    );
    // The exit price is what the simulator filled the market sell at.
    let sells = t.orders_of("MARKET", "SELL");
    let last = sells.last().unwrap();
    let filled =
        d(last["cummulativeQuoteQty"].as_str().unwrap()) / d(last["executedQty"].as_str().unwrap());
    assert!(close_to(f(&row["exit_px"]), filled.to_string().parse().unwrap()), "{row} {last}");

    let (_, page) = t.get("/api/trades/history?limit=1&offset=1").await;
    assert_eq!((page["count"].as_u64(), page["total"].as_u64()), (Some(1), Some(2)), "{page}");
    assert!(close_to(f(&page["trades"][0]["pnl"]), f(&win["pnl"])), "{page}");
    let (_, past) = t.get("/api/trades/history?offset=2").await;
    assert_eq!((past["count"].as_u64(), past["offset"].as_u64()), (Some(0), Some(2)), "{past}");
    let (status, huge) = t.get("/api/trades/history?offset=9223372036854775807").await;
    assert_eq!((status, huge["count"].as_u64()), (200, Some(0)), "{huge}");
    let (_, edges) = t.get("/api/trades/history?limit=200&offset=0").await;
    assert_eq!(edges["count"], 2, "{edges}");

    for (query, name) in [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=-1", "limit"),
        ("limit=abc", "limit"),
        ("limit=1.5", "limit"),
        ("offset=-1", "offset"),
        ("offset=9223372036854775808", "offset"),
        ("offset=x", "offset"),
        ("offset=", "offset"),
    ] {
        let (status, error, detail) = error_of(&t, &format!("/api/trades/history?{query}")).await;
        assert_eq!((status, error.as_str()), (422, "invalid_query"), "{query}: {detail}");
        assert!(detail.contains(&format!("`{name}`")), "{query}: {detail}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_after_a_win_and_a_loss() {
    let t = Trading::start().await;
    let (_, none) = t.get("/api/trades/stats").await;
    assert_eq!((none["count"].as_u64(), none["currency"].as_str()), (Some(0), Some("USDT")));
    assert!(none["win_rate"].is_null() && none["profit_factor"].is_null(), "{none}");
    assert_eq!(none["by_bot"], serde_json::json!({}));
    assert_eq!((none["daily"].clone(), none["weekly"].clone()), (json!([]), json!([])));

    let win = f(&round_trip(&t, "3060").await["pnl"]);
    let loss = f(&round_trip(&t, "2970").await["pnl"]);
    assert!(win > 0.0 && loss < 0.0, "win {win}, loss {loss}");

    let (status, stats) = t.get("/api/trades/stats").await;
    assert_eq!(status, 200, "{stats}");
    for scope in [&stats, &stats["by_bot"]["mr_combined"], &stats["by_symbol"]["ETHUSDT"]] {
        assert_eq!(
            (scope["count"].as_u64(), scope["wins"].as_u64(), scope["losses"].as_u64()),
            (Some(2), Some(1), Some(1)),
            "{stats}"
        );
        assert_eq!(scope["breakeven"], 0);
        assert_eq!(scope["win_rate"], 50.0);
        assert!(close_to(f(&scope["total_pnl"]), win + loss), "{stats}");
        assert!(close_to(f(&scope["avg_pnl"]), (win + loss) / 2.0), "{stats}");
        assert!(close_to(f(&scope["best"]), win) && close_to(f(&scope["worst"]), loss));
        assert!(close_to(f(&scope["gross_profit"]), win), "{stats}");
        assert!(close_to(f(&scope["gross_loss"]), -loss), "{stats}");
        let factor = (win / -loss * 10_000.0).round() / 10_000.0;
        assert!(close_to(f(&scope["profit_factor"]), factor), "{stats}");
        // Win first, then the loss: the curve falls from its peak (the win) by the loss.
        assert!(close_to(f(&scope["max_drawdown"]), -loss), "{stats}");
    }
    assert_eq!(stats["by_bot"].as_object().unwrap().len(), 1, "{stats}");
    // Both closed on the test clock's day (2026-03-02, a Monday): one day, one week.
    for period in ["daily", "weekly"] {
        let rows = stats[period].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{period}: {stats}");
        assert_eq!(rows[0]["start"], "2026-03-02", "{period}: {stats}");
        assert_eq!((rows[0]["count"].as_u64(), rows[0]["wins"].as_u64()), (Some(2), Some(1)));
        assert!(close_to(f(&rows[0]["pnl"]), win + loss), "{stats}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_copies_a_round_trip_made_by_hand_once_and_never_the_services_own() {
    let t = Trading::start().await;
    let own = round_trip(&t, "3030").await;
    let hand = t.by_hand();
    let bought = hand
        .place_order(&NewOrder::market("SOLUSDT", Side::Buy, Qty(d("2")), "hand-buy-1"))
        .await
        .unwrap();
    t.set_price("SOLUSDT", "160");
    let sold = hand
        .place_order(&NewOrder::market("SOLUSDT", Side::Sell, Qty(d("1")), "hand-sell-1"))
        .await
        .unwrap();

    let (status, first) = t.post_empty("/api/trades/sync").await;
    assert_eq!(status, 200, "{first}");
    assert_eq!((first["ok"].as_bool(), first["added"].as_u64()), (Some(true), Some(1)), "{first}");
    assert!(first["errors"].as_array().unwrap().is_empty(), "{first}");
    let symbols = first["symbols"].as_array().unwrap();
    assert!(symbols.contains(&"SOLUSDT".into()) && symbols.contains(&"ETHUSDT".into()));
    let row = &first["trades"][0];
    assert_eq!(
        (row["symbol"].as_str(), row["bot"].as_str(), row["source"].as_str()),
        (Some("SOLUSDT"), Some("synced"), Some("synced")),
        "{row}"
    );
    assert_eq!((row["size"].as_f64(), row["direction"].as_str()), (Some(1.0), Some("buy")));

    // The pnl from the simulator's own fills: 1 SOL of the buy (its fee was paid in SOL) and
    // the sell's quote net of its USDT fee.
    let fills = hand.my_trades("SOLUSDT", None).await.unwrap();
    let of_order = |id: i64| fills.iter().filter(|f| f.order_id == id).collect::<Vec<_>>();
    let (buys, sells) = (of_order(bought.order_id), of_order(sold.order_id));
    assert_eq!((buys.len(), sells.len()), (1, 1), "one fill each (the book level is deep)");
    let (buy, sell) = (buys[0], sells[0]);
    assert_eq!((buy.commission_asset.as_str(), sell.commission_asset.as_str()), ("SOL", "USDT"));
    let unit_cost = buy.quote_qty / (buy.qty.0 - buy.commission);
    let expected = (sell.quote_qty - sell.commission - unit_cost).round_dp(8);
    assert!(close_to(f(&row["pnl"]), expected.to_string().parse().unwrap()), "{row} vs {expected}");
    assert_eq!(d(&row["entry_px"].to_string()), buy.price.0.normalize(), "{row}");
    assert_eq!(d(&row["exit_px"].to_string()), sell.price.0.normalize(), "{row}");

    let (_, second) = t.post_empty("/api/trades/sync").await;
    assert_eq!(second["added"], 0, "running it twice adds nothing: {second}");
    let (_, history) = t.get("/api/trades/history").await;
    assert_eq!(history["total"], 2, "the own ETH trade and the SOL round trip: {history}");
    let eth: Vec<&Value> =
        history["trades"].as_array().unwrap().iter().filter(|r| r["symbol"] == "ETHUSDT").collect();
    assert_eq!(eth.len(), 1, "the service's own trade is not copied again: {history}");
    assert!(close_to(f(&eth[0]["pnl"]), f(&own["pnl"])));

    // Selling the rest by hand later: the next sync pairs it with what is left of the buy.
    let rest = (buy.qty.0 - buy.commission - Decimal::ONE).round_dp(3);
    hand.place_order(&NewOrder::market("SOLUSDT", Side::Sell, Qty(rest), "hand-sell-2"))
        .await
        .unwrap();
    let (_, third) = t.post_empty("/api/trades/sync").await;
    assert_eq!(third["added"], 1, "{third}");
    assert_eq!(third["trades"][0]["size"].as_f64(), Some(rest.to_string().parse().unwrap()));
    let (_, fourth) = t.post_empty("/api/trades/sync").await;
    assert_eq!(fourth["added"], 0, "{fourth}");

    let (_, stats) = t.get("/api/trades/stats").await;
    assert_eq!(stats["by_bot"]["synced"]["count"], 2, "{stats}");
    assert_eq!(stats["by_bot"]["mr_combined"]["count"], 1, "{stats}");
    assert!(t.orders_of("MARKET", "BUY").len() == 2, "sync placed no order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_shows_counters_trades_and_config_without_any_secret() {
    let t = Trading::start().await;
    let license_key = t.host.register("status-owner@example.com").await;
    let closed = round_trip(&t, "3030").await;
    t.buy("SOLUSDT").await;

    let (status, answer) = t.get("/api/status?agent=finance").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (answer["exchange"].as_str(), answer["testnet"].as_bool()),
        (Some("exchange_a"), Some(true))
    );
    assert_eq!(answer["trades_today"], 2, "{answer}");
    assert_eq!(answer["consecutive_losses"], 0, "{answer}");
    assert_eq!(answer["open_trades"][0]["symbol"], "SOLUSDT", "{answer}");
    assert_eq!(answer["recent_trades"].as_array().unwrap().len(), 1, "{answer}");
    assert!(close_to(f(&answer["recent_trades"][0]["pnl"]), f(&closed["pnl"])));
    let config = &answer["config"];
    assert_eq!(
        (config["exchange"].as_str(), config["mode"].as_str()),
        (Some("exchange_a"), Some("testnet"))
    );
    assert_eq!(config["size_pct"], 10.0);
    assert_eq!(config["max_trades_per_day"], 5);
    assert_eq!(config["max_trading_usdt"], 0.0);
    assert_eq!(config["timezone"], "UTC");
    assert_eq!(config["messenger_configured"], true);
    assert_eq!(config.get("paper_simulator"), None, "only in paper mode");
    assert!(config["watchlist"].as_array().unwrap().contains(&"ETHUSDT".into()), "{config}");

    let text = answer.to_string();
    for secret in [KEY, SECRET, BOT_TOKEN, "fake-token", license_key.as_str()] {
        assert!(!text.contains(secret), "status shows a secret ({secret}): {text}");
    }
    let (_, state) = t.get("/api/state").await;
    assert_eq!(state["log"][0]["agent"], "finance", "{state}");

    let (status, bad) = t.get("/api/status?agent=nobody").await;
    assert_eq!((status, bad["error"].as_str()), (422, Some("invalid_query")), "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn portfolio_values_the_simulators_balances_at_last_prices() {
    let t = Trading::start().await;
    t.buy("ETHUSDT").await;
    t.set_price("ETHUSDT", "3100");

    let (status, portfolio) = t.get("/api/portfolio").await;
    assert_eq!(status, 200, "{portfolio}");
    assert_eq!(
        (portfolio["ok"].as_bool(), portfolio["currency"].as_str()),
        (Some(true), Some("USDT"))
    );
    assert_eq!(
        (portfolio["exchange"].as_str(), portfolio["testnet"].as_bool()),
        (Some("exchange_a"), Some(true))
    );
    let holdings = portfolio["holdings"].as_array().unwrap();
    assert_eq!(holdings.len(), 2, "USDT and ETH: {portfolio}");
    let of = |asset: &str| holdings.iter().find(|h| h["asset"] == asset).unwrap().clone();
    let (usdt_free, usdt_locked) = t.balance("USDT");
    let (eth_free, eth_locked) = t.balance("ETH");
    assert!(eth_locked > Decimal::ZERO, "the OCO locks the coin; it is still owned");
    let (usdt, eth) = (of("USDT"), of("ETH"));
    let usdt_qty = usdt_free + usdt_locked;
    let eth_qty = eth_free + eth_locked;
    assert_eq!(d(&usdt["qty"].to_string()), usdt_qty.normalize());
    assert_eq!((usdt["price"].as_f64(), usdt["value"].clone()), (Some(1.0), usdt["qty"].clone()));
    assert_eq!(d(&eth["qty"].to_string()), eth_qty.normalize());
    assert_eq!(d(&eth["locked"].to_string()), eth_locked.normalize());
    assert_eq!(eth["price"].as_f64(), Some(3100.0));
    let eth_value = (eth_qty * d("3100")).round_dp(8);
    assert_eq!(d(&eth["value"].to_string()), eth_value.normalize(), "{eth}");
    let total = (usdt_qty + eth_value).round_dp(8);
    assert!(close_to(f(&portfolio["balance"]), total.to_string().parse().unwrap()), "{portfolio}");
    assert_eq!(holdings[0]["asset"], "USDT", "largest value first");

    // The exchange refuses the account request: still 200, ok false and the reason.
    t.fault_on_read(FaultKind::Reject { code: -2015, msg: None }, 1, "/api/v3/account");
    let (status, failed) = t.get("/api/portfolio").await;
    assert_eq!(status, 200, "{failed}");
    assert_eq!((failed["ok"].as_bool(), failed["balance"].is_null()), (Some(false), true));
    assert_eq!(failed["currency"], "USDT");
    assert_eq!(failed["exchange"], "exchange_a");
    assert!(failed["error"].as_str().unwrap().contains("-2015"), "{failed}");
    assert!(failed.get("holdings").is_none(), "{failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_sends_to_the_boss_and_reports_messenger_faults() {
    let t = Trading::start().await;
    let message = "Weekly check: 5 < 6 & all <b>fine</b>";
    let url = format!("/api/notify?message={}", urlencode(message));
    let (status, body) = t.get(&url).await;
    assert_eq!((status, body), (200, serde_json::json!({"ok": true})));
    let sent = t.messages(1).await;
    assert!(sent.iter().any(|m| m.text == message), "sent as written: {sent:?}");

    let longest = "x".repeat(4000);
    let (status, body) = t.get(&format!("/api/notify?message={longest}")).await;
    assert_eq!(status, 200, "{body}");
    for (query, why) in
        [("message=", "empty"), ("message=%20%20%0A", "only whitespace"), ("other=1", "missing")]
    {
        let (status, error, detail) = error_of(&t, &format!("/api/notify?{query}")).await;
        assert_eq!((status, error.as_str()), (422, "invalid_query"), "{why}: {detail}");
        assert!(detail.contains("message"), "{why}: {detail}");
    }
    let (status, error, detail) =
        error_of(&t, &format!("/api/notify?message={}", "x".repeat(4001))).await;
    assert_eq!((status, error.as_str()), (422, "invalid_query"), "{detail}");

    t.messenger.fail_next(
        MessengerFault::Error { code: 400, description: "Bad Request: chat not found".into() },
        1,
    );
    let (status, error, detail) = error_of(&t, "/api/notify?message=hello").await;
    assert_eq!((status, error.as_str()), (502, "messenger_error"), "{detail}");
    assert!(detail.contains("chat not found"), "{detail}");
    assert!(!detail.contains(BOT_TOKEN), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_license_or_messenger_portfolio_works_status_and_notify_answer_503() {
    // A paper-mode install: in-process simulator, no license, no messenger secrets.
    let rig = crate::license_support::Rig::new().await;
    let host = rig.new_host().await;
    let (status, portfolio) = host.get("/api/portfolio").await;
    assert_eq!(status, 200, "{portfolio}");
    assert_eq!(portfolio["ok"], true, "{portfolio}");
    assert_eq!(portfolio["balance"], 10_000.0, "paper_usdt: {portfolio}");
    let (status, history) = host.get("/api/trades/history").await;
    assert_eq!((status, history["total"].as_u64()), (200, Some(0)), "{history}");
    let (status, stats) = host.get("/api/trades/stats").await;
    assert_eq!(status, 200, "{stats}");

    let (status, body) = host.get("/api/status").await;
    assert_eq!((status, body["error"].as_str()), (503, Some("license_required")), "{body}");
    let (status, body) = host.get("/api/notify?message=hello").await;
    assert_eq!((status, body["error"].as_str()), (503, Some("messenger_not_configured")), "{body}");
}

/// Percent-encodes a query value.
fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_above_the_symbols_market_maximum_is_capped_and_says_so() {
    // ETHUSDT takes MARKET orders of at most 0.1 ETH (300 USDT); the trade asks for 1000 USDT.
    let t = Trading::start_listing("", |rules| {
        let eth = rules.iter_mut().find(|r| r.symbol == "ETHUSDT").expect("ETHUSDT listed");
        eth.market_max_qty = d("0.1");
    })
    .await;
    t.buy("ETHUSDT").await;
    let entries = t.orders_of("MARKET", "BUY");
    assert_eq!(entries.len(), 1);
    assert_eq!(d(entries[0]["origQty"].as_str().unwrap()), d("0.1"), "{entries:?}");
    let oco_qty = d(t.orders_of("STOP_LOSS_LIMIT", "SELL")[0]["origQty"].as_str().unwrap());
    assert!(oco_qty <= d("0.1") && oco_qty > d("0.099"), "protected what was bought: {oco_qty}");
    let (_, state) = t.get("/api/state").await;
    let capped = state["log"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"].as_str().is_some_and(|a| a.starts_with("entry ETHUSDT capped")))
        .unwrap_or_else(|| panic!("no cap in the log: {state}"));
    let action = capped["action"].as_str().unwrap();
    assert!(action.contains("capped to 0.1 ETH") && action.contains("MARKET_LOT_SIZE"), "{action}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_filters_by_strategy_symbol_and_days() {
    let t = Trading::start().await;
    round_trip(&t, "3060").await;
    t.rig.advance_hours(24);
    round_trip(&t, "2970").await;
    t.buy("SOLUSDT").await;
    assert_eq!(t.post_empty("/api/close?symbol=SOLUSDT").await.0, 200);
    let page = |query: &'static str| {
        let t = &t;
        async move {
            let (status, page) = t.get(&format!("/api/trades/history?{query}")).await;
            assert_eq!(status, 200, "{query}: {page}");
            let symbols: Vec<String> = page["trades"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["symbol"].as_str().unwrap().to_string())
                .collect();
            assert_eq!(page["total"].as_u64(), Some(symbols.len() as u64), "{page}");
            symbols
        }
    };
    assert_eq!(page("").await, ["SOLUSDT", "ETHUSDT", "ETHUSDT"]);
    assert_eq!(page("symbol=ETHUSDT").await, ["ETHUSDT", "ETHUSDT"]);
    assert_eq!(page("bot=mr_combined&symbol=SOLUSDT").await, ["SOLUSDT"]);
    assert!(page("bot=ta_trend").await.is_empty());
    // The test clock starts on 2026-03-02; the second day holds the loss and SOL.
    assert_eq!(page("to=2026-03-02").await, ["ETHUSDT"]);
    assert_eq!(page("from=2026-03-03&to=2026-03-03").await, ["SOLUSDT", "ETHUSDT"]);
    let (status, error, detail) = error_of(&t, "/api/trades/history?from=03/03/2026").await;
    assert_eq!((status, error.as_str()), (422, "invalid_query"), "{detail}");
    assert!(detail.contains("`from`"), "{detail}");
}
