//! The dashboard page and the read routes it reads. The panels' JSON is checked against what
//! the exchange simulator holds; then the page runs in a real headless Chromium against the
//! same kind of host: every panel renders, an agent's report and a price traded at the
//! simulator show up within a second (the live view), the account's equity and drawdown lead
//! the page, a phone sees every figure of an open trade without scrolling sideways, the page
//! says so when the license is missing, the news cannot be read or the service is unreachable,
//! and its console stays free of errors. Screenshots go to `target/dashboard/`
//! (docs/dashboard.md shows one).

use std::path::PathBuf;
use std::time::Duration;

use crate::trading_support::{Trading, d, good_signal};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use spotbot_tests::TestHost;
use spotbot_tests::browser::{Browser, INSTALL_HINT, chromium_path};

/// What the live view promises: a change shows on the page within a second.
const LIVE: Duration = Duration::from_secs(1);
/// Without the live view the page polls the agents every 3 s.
const AGENT_REFRESH: Duration = Duration::from_millis(3_000);
const ROUND_TRIP: Duration = Duration::from_millis(1_500);

fn screenshots() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("target"));
    target.join("dashboard")
}

async fn launch() -> Browser {
    assert!(chromium_path().is_some(), "the browser test needs Chromium: {INSTALL_HINT}");
    Browser::launch().await.expect("Chromium starts")
}

/// Text of the element `selector`, or "".
fn text_of(selector: &str) -> String {
    format!("((document.querySelector({selector:?}) || {{}}).textContent || '')")
}

/// A host with two open trades (one whose stop trailed once), two closed trades (a win and a
/// loss), a pending
/// signal, a pending LIMIT entry and an agent's report.
async fn busy_host() -> Trading {
    let t = Trading::start_with(
        "trailing_enabled = true\ntrailing_trigger_pct = 1.0\ntrailing_distance_pct = 1.0\n",
    )
    .await;
    // Two round trips for the PnL curve: a win and a loss.
    t.buy("SOLUSDT").await;
    t.set_price("SOLUSDT", "156");
    assert_eq!(t.post_empty("/api/close?symbol=SOLUSDT").await.0, 200);
    t.buy("SOLUSDT").await;
    t.set_price("SOLUSDT", "153");
    assert_eq!(t.post_empty("/api/close?symbol=SOLUSDT").await.0, 200);
    t.set_price("SOLUSDT", "150");
    // Open trades; ETHUSDT rises 3 % and its stop trails once.
    t.buy("ETHUSDT").await;
    t.set_price("ETHUSDT", "3090");
    let (status, trailing) = t.get("/api/trailing").await;
    assert_eq!(status, 200, "{trailing}");
    assert_eq!(trailing["updated"].as_array().map(Vec::len), Some(1), "{trailing}");
    t.buy("BTCUSDT").await;
    // A LIMIT entry below the market and a signal waiting for the boss.
    let (status, entry) = t
        .post_empty("/api/trade/manual?symbol=SOLUSDT&direction=buy&entry_px=140&sl_pct=2&tp_pct=4")
        .await;
    assert_eq!(status, 200, "{entry}");
    t.create_signal(good_signal("XRPUSDT")).await;
    let (status, _) =
        t.post("/api/agent/finance", json!({"status": "idle", "action": "PnL report sent"})).await;
    assert_eq!(status, 200);
    t
}

fn dec(v: &Value) -> Decimal {
    d(v.as_str().unwrap_or_else(|| panic!("a decimal string: {v}")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panels_show_what_the_exchange_holds_and_the_journal_sent() {
    let t = busy_host().await;

    // Open trades: last price, unrealised pnl and the stop history of the trailed trade.
    let (status, panels) = t.get("/api/dashboard/trades").await;
    assert_eq!(status, 200, "{panels}");
    assert_eq!(panels["count"], 2);
    let eth =
        panels["trades"].as_array().unwrap().iter().find(|p| p["symbol"] == "ETHUSDT").unwrap();
    assert_eq!(eth["price"].as_f64(), Some(3090.0));
    let size = eth["size"].as_f64().unwrap();
    let entry = eth["entry_px"].as_f64().unwrap();
    let pnl = eth["unrealised_pnl"].as_f64().unwrap();
    assert!((pnl - (3090.0 - entry) * size).abs() < 1e-6, "{eth}");
    assert!(eth["trailing"]["active"].as_bool().unwrap(), "+3 % is past the 1 % trigger");
    // The stop history is the stops the simulator received, in order: the initial one, then
    // the trailed one, which is the stop now on the book.
    let sim_stops: Vec<Decimal> = t
        .orders_of("STOP_LOSS_LIMIT", "SELL")
        .iter()
        .filter(|o| o["symbol"] == "ETHUSDT")
        .map(|o| dec(&o["stopPrice"]))
        .collect();
    let shown: Vec<f64> = eth["trailing"]["stops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["price"].as_f64().unwrap())
        .collect();
    assert_eq!(shown.len(), 2, "{eth}");
    assert_eq!(sim_stops.len(), 2);
    for (shown, sent) in shown.iter().zip(&sim_stops) {
        assert_eq!(Decimal::try_from(*shown).unwrap(), sent.normalize());
    }
    assert_eq!(eth["sl_px"].as_f64(), Some(shown[1]), "the trade's stop is the newest");
    let candles = eth["candles"].as_array().unwrap();
    assert_eq!(candles.len(), 96, "24 h of 15-minute candles");
    let last = &candles[95];
    let (low, high) = (last["low"].as_f64().unwrap(), last["high"].as_f64().unwrap());
    for key in ["open", "close"] {
        let v = last[key].as_f64().unwrap();
        assert!(low <= v && v <= high, "{key} within the candle's range: {last}");
    }
    assert_eq!(last["close"].as_f64(), eth["price"].as_f64(), "the last close is the price");
    let btc =
        panels["trades"].as_array().unwrap().iter().find(|p| p["symbol"] == "BTCUSDT").unwrap();
    assert_eq!(btc["trailing"]["active"], false);
    assert_eq!(btc["trailing"]["stops"].as_array().unwrap().len(), 1);

    // Recent orders: every order the simulator received, newest first.
    let (status, orders) = t.get("/api/orders?limit=200").await;
    assert_eq!(status, 200, "{orders}");
    let orders = orders["orders"].as_array().unwrap();
    let placed = t.orders_of("MARKET", "BUY").len()
        + t.orders_of("MARKET", "SELL").len()
        + t.orders_of("STOP_LOSS_LIMIT", "SELL").len()
        + t.orders_of("LIMIT", "BUY").len();
    assert_eq!(orders.len(), placed, "one journal row per MARKET order, OCO list and LIMIT entry");
    assert!(orders.iter().all(|o| o["outcome"]["state"] == "placed"), "{orders:?}");
    let (_, eth_orders) = t.get("/api/orders?symbol=ETHUSDT").await;
    let kinds: Vec<&str> = eth_orders["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["oco", "oco", "entry"]);
    assert_eq!(t.get("/api/orders?limit=0").await.0, 422);
    assert_eq!(t.get("/api/orders?symbol=eth").await.0, 422);

    // Footer and PnL curve agree with the history's statistics.
    let (_, footer) = t.get("/api/dashboard/footer").await;
    let (_, stats) = t.get("/api/trades/stats").await;
    assert_eq!(
        (footer["wins"].clone(), footer["losses"].clone()),
        (json!(1), json!(1)),
        "{footer}"
    );
    assert_eq!(
        (footer["wins_today"].clone(), footer["losses_today"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(footer["trades_today"], 4);
    assert_eq!(footer["consecutive_losses"], 1);
    assert_eq!(footer["orders_today"].as_u64(), Some(orders.len() as u64));
    assert_eq!(footer["entries_blocked"], Value::Null);
    assert_eq!(footer["mode"], "testnet");
    let (_, pnl) = t.get("/api/dashboard/pnl").await;
    let points = pnl["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert!(points[0]["pnl"].as_f64().unwrap() > 0.0 && points[1]["pnl"].as_f64().unwrap() < 0.0);
    let total = pnl["total"].as_f64().unwrap();
    assert!((total - stats["total_pnl"].as_f64().unwrap()).abs() < 1e-9, "{pnl} vs {stats}");
    assert_eq!(points[1]["cumulative"].as_f64(), Some(total));
    assert!((footer["pnl_today"].as_f64().unwrap() - total).abs() < 1e-9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_renders_every_panel_and_follows_agent_reports_without_console_errors() {
    let t = busy_host().await;
    let browser = launch().await;
    browser.open(&t.host.url("/api/dashboard")).await.unwrap();
    let within = Duration::from_secs(15);

    // Agent cards, the activity log and the footer.
    browser
        .wait_for("document.querySelector('.card[data-agent=\"finance\"]')", within)
        .await
        .unwrap();
    browser
        .wait_for("document.querySelectorAll('#log tbody tr:not(.empty)').length > 3", within)
        .await
        .unwrap();
    browser.wait_for(&format!("{} === '1 / 1'", text_of("#f-winloss")), within).await.unwrap();
    assert_eq!(browser.eval(&text_of("#f-winloss-today")).await.unwrap(), json!("1 / 1"));
    assert_eq!(browser.eval(&text_of("#f-trades")).await.unwrap(), json!("4 / 5"));
    assert_eq!(browser.eval(&text_of("#f-cap")).await.unwrap(), json!("no cap"));
    let orders_today: u64 =
        browser.eval(&text_of("#f-orders")).await.unwrap().as_str().unwrap().parse().unwrap();
    assert!(orders_today >= 10, "4 entries, 4 OCO lists, a trailed OCO, 2 exits: {orders_today}");
    assert!(
        browser.eval(&text_of("#exchange")).await.unwrap().as_str().unwrap().contains("testnet")
    );

    // Open trades with price, trailing state and a chart each.
    browser
        .wait_for("document.querySelectorAll('#trades tbody tr:not(.empty)').length === 2", within)
        .await
        .unwrap();
    let eth_row = browser
        .eval("[...document.querySelectorAll('#trades tbody tr')].find(r => r.cells[0].textContent === 'ETHUSDT').textContent")
        .await
        .unwrap();
    let eth_row = eth_row.as_str().unwrap();
    assert!(eth_row.contains("following") && eth_row.contains("1 moves"), "{eth_row}");
    assert!(eth_row.contains("3090") && eth_row.contains("protected"), "{eth_row}");
    browser
        .wait_for(
            "document.querySelectorAll('#trade-charts .chart-card canvas').length === 2",
            within,
        )
        .await
        .unwrap();
    let chart_titles = browser
        .eval("[...document.querySelectorAll('#trade-charts h3')].map(h => h.textContent).join()")
        .await
        .unwrap();
    assert!(chart_titles.as_str().unwrap().contains("ETHUSDT"), "{chart_titles}");

    // The PnL curve, recent orders, the pending signal and the LIMIT entry.
    browser.wait_for("document.querySelector('#pnl-chart canvas')", within).await.unwrap();
    assert!(
        browser
            .eval(&text_of("#pnl-total"))
            .await
            .unwrap()
            .as_str()
            .unwrap()
            .contains("over 2 closed trades")
    );
    browser
        .wait_for("document.querySelectorAll('#orders tbody tr:not(.empty)').length >= 10", within)
        .await
        .unwrap();
    // The history: both closed trades (newest first), their figures per strategy and symbol,
    // the day's profit bar, and the equity chart.
    let history = "[...document.querySelectorAll('#history tbody tr:not(.empty)')]\
                   .map((r) => r.cells[1].textContent + ' ' + r.cells[7].textContent).join(', ')";
    browser.wait_for(&format!("{history}.includes('SOLUSDT')"), within).await.unwrap();
    let shown = browser.eval(history).await.unwrap();
    let (_, api) = t.get("/api/trades/history").await;
    let pnl = |i: usize| api["trades"][i]["pnl"].as_f64().unwrap();
    let expected = format!("SOLUSDT {:+.2}, SOLUSDT {:+.2}", pnl(0), pnl(1));
    assert_eq!(shown, expected.as_str(), "the page shows the history route's rows");
    assert_eq!(browser.eval(&text_of("#history-page")).await.unwrap(), "1–2 of 2");
    let stats = browser.eval(&text_of("#stats tbody")).await.unwrap();
    for name in ["All trades", "By strategy", "mr_combined", "By symbol", "SOLUSDT", "50.0%"] {
        assert!(stats.as_str().unwrap().contains(name), "{name} in {stats}");
    }
    browser.wait_for("document.querySelector('#bars-chart canvas')", within).await.unwrap();
    // A closed trade picked in the history is drawn with the candles around it, as the chart
    // route answers them.
    let row = api["trades"][0].clone();
    let ms = |field: &str| {
        chrono::DateTime::parse_from_rfc3339(row[field].as_str().unwrap())
            .unwrap()
            .timestamp_millis()
    };
    let route = format!(
        "/api/dashboard/chart?symbol=SOLUSDT&from={}&to={}",
        ms("opened_at"),
        ms("closed_at")
    );
    let (status, chart) = t.get(&route).await;
    assert_eq!(status, 200, "{chart}");
    assert_eq!(chart["timeframe"], "15m", "{chart}");
    assert!(chart["candles"].as_array().unwrap().len() >= 16, "the margins around the trade");
    assert!(!chart["stops"].as_array().unwrap().is_empty(), "its OCO's stop: {chart}");
    browser.eval("document.querySelector('#history tbody tr').click(); true").await.unwrap();
    browser.wait_for("document.querySelector('#history-chart canvas')", within).await.unwrap();
    let title = browser.eval(&text_of("#history-chart-title")).await.unwrap();
    assert!(title.as_str().unwrap().starts_with("SOLUSDT · 15m candles · buy"), "{title}");
    // The stop line steps at the time the stop moved, between two candles' opens.
    let model = "JSON.stringify(tradeChartData({candles: [\
          {time: 0, open: 10, high: 11, low: 9, close: 10.5}, \
          {time: 900000, open: 10.5, high: 12, low: 10, close: 11.5}], \
        stops: [{time: 0, price: 9.5}, {time: 300000, price: 10.2}], entry_px: 10, sl_px: 9.5, \
        tp_px: 12, marks: []}))";
    let data: Value =
        serde_json::from_str(browser.eval(model).await.unwrap().as_str().unwrap()).unwrap();
    assert_eq!(data[0], json!([0, 300, 900]), "the move's time is a point of its own");
    assert_eq!(data[4], json!([9.5, 10.2, 10.2]), "the stop line steps at 300 s, not at 900 s");
    browser.wait_for("document.querySelector('#equity-chart canvas')", within).await.unwrap();
    // A filter narrows the table to what the route answers for it.
    let filter = "document.getElementById('history-from').value = '2026-03-03'; \
                  document.getElementById('history-filter').dispatchEvent(new Event('change')); true";
    browser.eval(filter).await.unwrap();
    browser
        .wait_for(
            &format!("{}.includes('No closed trade matches')", text_of("#history tbody")),
            within,
        )
        .await
        .unwrap_or_else(|_| panic!("no trade closed from 2026-03-03 on"));
    browser
        .wait_for(&format!("{}.includes('XRPUSDT')", text_of("#signals tbody")), within)
        .await
        .unwrap();
    let left = browser
        .eval("document.querySelector('#signals tbody tr').cells[7].textContent")
        .await
        .unwrap();
    let left = left.as_str().unwrap();
    assert!(left == "5m 00s" || left.starts_with("4m "), "a 5-minute window counting down: {left}");
    browser
        .wait_for(&format!("{}.includes('SOLUSDT')", text_of("#entries tbody")), within)
        .await
        .unwrap();
    assert!(
        browser.eval(&text_of("#entries tbody")).await.unwrap().as_str().unwrap().contains("23h")
    );
    assert_eq!(
        browser.eval("document.getElementById('unlicensed').hidden").await.unwrap(),
        json!(true)
    );
    assert_eq!(
        browser.eval("document.getElementById('unreachable').hidden").await.unwrap(),
        json!(true)
    );

    // The account leads the page: equity, balance and the drawdown against its pause.
    browser.wait_for(&format!("{} !== '–'", text_of("#s-equity")), within).await.unwrap();
    let limit = browser.eval(&text_of("#s-drawdown-limit")).await.unwrap();
    assert!(limit.as_str().unwrap().contains("15% pause"), "{limit}");
    assert!(browser.eval(&text_of("#s-balance")).await.unwrap().as_str().unwrap().contains('.'));
    // The news sources cannot be reached: said in words, the raw reason kept for a tooltip.
    browser
        .wait_for(&format!("{}.includes('News unavailable')", text_of("#news")), within)
        .await
        .unwrap();
    let news = browser.eval(&text_of("#news")).await.unwrap();
    assert!(!news.as_str().unwrap().contains("127.0.0.1"), "{news}");

    // An agent's report shows up within a second: the live view announces it.
    browser
        .wait_for("document.getElementById('path').dataset.state !== 'connecting'", within)
        .await
        .unwrap();
    let (status, _) = t
        .post("/api/agent/scout", json!({"status": "running", "action": "scanning 20 symbols"}))
        .await;
    assert_eq!(status, 200);
    let took = browser
        .wait_for(
            "(document.querySelector('.card[data-agent=\"scout\"]') || {}).textContent?.includes('scanning 20 symbols')",
            LIVE,
        )
        .await
        .unwrap();
    assert_eq!(
        browser
            .eval("document.querySelector('.card[data-agent=\"scout\"]').className")
            .await
            .unwrap(),
        json!("card running")
    );

    let errors = browser.console_errors();
    assert!(errors.is_empty(), "the console reported: {errors:#?}");
    browser.viewport(1280, 900, false).await.unwrap();
    browser.screenshot(&screenshots().join("dashboard.png")).await.unwrap();

    // Phone width: one column, nothing wider than the screen, the account and the open
    // trades before the agent cards, and every figure of a trade on screen with its label.
    browser.viewport(390, 844, true).await.unwrap();
    browser
        .wait_for(
            "document.documentElement.scrollWidth <= window.innerWidth",
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    let order = browser
        .eval("['summary', 'trades', 'agents'].map(id => document.getElementById(id).getBoundingClientRect().top)")
        .await
        .unwrap();
    let tops: Vec<f64> = order.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!(tops[0] < tops[1] && tops[1] < tops[2], "summary, trades, agents: {tops:?}");
    assert!(tops[0] < 844.0, "the account is on the first screen: {tops:?}");
    let hidden = browser
        .eval("[...document.querySelectorAll('#trades tbody tr:not(.empty) td')].filter(td => { const r = td.getBoundingClientRect(); return r.width === 0 || r.left < 0 || r.right > window.innerWidth; }).map(td => td.dataset.label)")
        .await
        .unwrap();
    assert_eq!(hidden, json!([]), "cells off screen at 390 px");
    let labels = browser
        .eval("getComputedStyle(document.querySelector('#trades tbody tr td:nth-child(5)'), '::before').content")
        .await
        .unwrap();
    assert_eq!(labels, json!("\"Price\""), "a phone sees each figure's label");
    browser.screenshot(&screenshots().join("dashboard-phone.png")).await.unwrap();
    assert!(browser.console_errors().is_empty(), "{:#?}", browser.console_errors());
    println!("agent report shown after {took:?}");

    // The service goes away: the live view drops, the page polls, says so within one refresh
    // and keeps the last figures.
    t.host.stop().await;
    browser
        .wait_for("!document.getElementById('unreachable').hidden", AGENT_REFRESH + ROUND_TRIP * 4)
        .await
        .unwrap();
    assert_eq!(browser.eval(&text_of("#path")).await.unwrap(), json!("live view down · polling"));
    assert_eq!(browser.eval(&text_of("#connection")).await.unwrap(), json!("unreachable"));
    assert!(
        browser
            .eval(&text_of("#trades tbody"))
            .await
            .unwrap()
            .as_str()
            .unwrap()
            .contains("ETHUSDT")
    );
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_license_the_page_says_so_and_the_licensed_panels_explain_why_they_are_empty() {
    let host = TestHost::start("").await;
    let browser = launch().await;
    browser.open(&host.url("/api/dashboard")).await.unwrap();
    let within = Duration::from_secs(15);
    browser.wait_for("!document.getElementById('unlicensed').hidden", within).await.unwrap();
    browser
        .wait_for(&format!("{}.includes('license')", text_of("#entries tbody")), within)
        .await
        .unwrap();
    browser
        .wait_for(&format!("{}.includes('No open trade')", text_of("#trades tbody")), within)
        .await
        .unwrap();
    browser
        .wait_for(&format!("{}.includes('no closed trade')", text_of("#pnl-total")), within)
        .await
        .unwrap();
    // The earlier route set's path serves the same page.
    browser.open(&host.url("/dashboard")).await.unwrap();
    browser.wait_for("!document.getElementById('unlicensed').hidden", within).await.unwrap();
    // A 503 is an answer the page expects, not an error of the page: only the browser's own
    // note of the failed resource may appear.
    let errors: Vec<String> = browser
        .console_errors()
        .into_iter()
        .filter(|e| !e.contains("503 (Service Unavailable)"))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_price_traded_at_the_exchange_shows_on_the_page_within_a_second() {
    let t = Trading::start_streaming("").await;
    t.buy("ETHUSDT").await;
    let browser = launch().await;
    browser.open(&t.host.url("/api/dashboard")).await.unwrap();
    let within = Duration::from_secs(15);
    browser
        .wait_for(&format!("{} === 'fills & prices streamed'", text_of("#path")), within)
        .await
        .unwrap();
    browser
        .wait_for("document.querySelector('#trade-charts .chart-card canvas')", within)
        .await
        .unwrap();
    let row = "document.querySelector('#trades tbody tr[data-symbol=\"ETHUSDT\"]')";
    // The price link subscribes to a new trade's symbol within a second of the trade.
    let deadline = std::time::Instant::now() + within;
    // The simulator trades on a change of price only.
    for warm_up in ["3001", "3002"].into_iter().cycle() {
        t.set_price("ETHUSDT", warm_up);
        let shown = format!("{row}?.cells[4].textContent === '{warm_up}'");
        if browser.wait_for(&shown, Duration::from_millis(500)).await.is_ok() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no streamed price reached the page");
    }
    for price in ["3042.5", "2987.25"] {
        t.set_price("ETHUSDT", price);
        let took = browser
            .wait_for(&format!("{row}.cells[4].textContent === '{price}'"), LIVE)
            .await
            .unwrap();
        println!("price {price} at the simulator shown after {took:?}");
        let pnl = browser.eval(&format!("{row}.cells[8].textContent")).await.unwrap();
        let (_, panels) = t.get("/api/dashboard/trades").await;
        let expected = panels["trades"][0]["unrealised_pnl"].as_f64().unwrap();
        let sign = if expected > 0.0 { "+" } else { "" };
        assert!(
            pnl.as_str().unwrap().starts_with(&format!("{sign}{expected:.2}")),
            "{pnl} vs {expected}"
        );
    }
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "the console reported: {errors:#?}");
    browser.viewport(1280, 900, false).await.unwrap();
    browser.screenshot(&screenshots().join("dashboard-live.png")).await.unwrap();
    browser.close().await;
}
