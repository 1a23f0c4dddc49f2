//! The boss acts from the dashboard, in a real headless Chromium signed in with an admin
//! token: each action asks first in words that name the symbol, size and prices, then goes
//! through the same API route an agent would — and the simulator receives the orders (the
//! approved signal's entry and its OCO, the close's SELL, the cancelled LIMIT entry), the audit
//! log has the row, and the approval counts as the boss's own. On a phone the confirmation fits
//! the screen. A read token sees no action button, and an action it forges is refused.

use std::time::Duration;

use serde_json::Value;
use spotbot::activity::AgentName;
use spotbot::auth::Scope;
use spotbot::auth::tokens::TokenFile;
use spotbot_tests::browser::{Browser, INSTALL_HINT, chromium_path};

use crate::plugin_support::workspace_plugins;
use crate::trading_support::{Trading, good_signal};

const WAIT: Duration = Duration::from_secs(10);

async fn launch() -> Browser {
    assert!(chromium_path().is_some(), "the browser test needs Chromium: {INSTALL_HINT}");
    Browser::launch().await.expect("Chromium starts")
}

/// The simulator's orders of `symbol` with `order_type` and `side`.
fn orders(t: &Trading, symbol: &str, order_type: &str, side: &str) -> Vec<Value> {
    t.orders_of(order_type, side).into_iter().filter(|o| o["symbol"] == symbol).collect()
}

/// GET `path` with `token` (once a token exists, the service needs one on every route).
async fn get(t: &Trading, token: &str, path: &str) -> (u16, Value) {
    let response = t.host.http.get(t.host.url(path)).bearer_auth(token).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Opens the page with `token` kept in the tab, as the sign-in form does, and waits until the
/// header shows who it is (`boss · admin`).
async fn sign_in(browser: &Browser, t: &Trading, token: &str, shown: &str) {
    browser.open(&t.host.url("/dashboard")).await.unwrap();
    browser
        .eval(&format!("sessionStorage.setItem('spotbot-token', {token:?}); true"))
        .await
        .unwrap();
    browser.open(&t.host.url("/dashboard")).await.unwrap();
    let who = format!("((document.getElementById('who') || {{}}).textContent || '') === {shown:?}");
    browser.wait_for(&who, WAIT).await.unwrap();
}

/// Presses `button` (a selector), checks that the confirmation names every one of `facts`,
/// says yes, and waits for the service's answer on the page; the confirmation's text.
async fn confirm_action(browser: &Browser, button: &str, facts: &[&str]) -> String {
    browser.wait_for(&format!("!!document.querySelector({button:?})"), WAIT).await.unwrap();
    browser.eval("document.getElementById('action-result').hidden = true").await.unwrap();
    browser.eval(&format!("document.querySelector({button:?}).click(); true")).await.unwrap();
    browser.wait_for("document.getElementById('confirm').open", WAIT).await.unwrap();
    let text: String = browser
        .eval("document.getElementById('confirm').textContent")
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    for fact in facts {
        assert!(text.contains(fact), "the confirmation names {fact:?}: {text}");
    }
    browser.eval("document.getElementById('confirm-ok').click(); true").await.unwrap();
    let answered = "!document.getElementById('action-result').hidden";
    browser.wait_for(answered, WAIT).await.unwrap();
    let result = browser.eval("document.getElementById('action-result').className").await.unwrap();
    let said = browser.eval("document.getElementById('action-result').textContent").await.unwrap();
    assert_eq!(result, "banner ok", "{said}");
    text
}

/// The newest audit row of `route`.
async fn audit_row(t: &Trading, token: &str, route: &str) -> Value {
    let (status, audit) = get(t, token, "/api/audit?limit=100").await;
    assert_eq!(status, 200, "{audit}");
    let rows = audit["rows"].as_array().unwrap();
    rows.iter().find(|r| r["route"] == route).cloned().unwrap_or_else(|| panic!("{route}: {audit}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_boss_approves_closes_cancels_and_resets_from_the_page() {
    let (_plugins, plugins_toml) = workspace_plugins(&["mr_combined.wasm"]);
    let t = Trading::start_with(&plugins_toml).await;
    t.buy("ETHUSDT").await;
    let manual = "/api/trade/manual?symbol=SOLUSDT&direction=buy&entry_px=140&sl_pct=2&tp_pct=4";
    let (status, entry) = t.post_empty(manual).await;
    assert_eq!(status, 200, "{entry}");
    t.create_signal(good_signal("XRPUSDT")).await;
    t.create_signal(good_signal("BNBUSDT")).await;
    let file = TokenFile::in_dir(t.host.data_dir.path());
    let (_, admin) = file.create(AgentName::Boss, Scope::Admin, chrono::Utc::now()).unwrap();
    let (_, reader) = file.create(AgentName::Boss, Scope::Read, chrono::Utc::now()).unwrap();

    let browser = launch().await;
    sign_in(&browser, &t, &admin, "boss · admin").await;
    assert!(browser.eval("document.body.classList.contains('can-act')").await.unwrap() == true);
    // The strategies panel lists the loaded plugin with its canary, as GET /api/strategies.
    let plugin = "document.querySelector(\"#strategies tr[data-plugin='mr_combined']\")";
    browser.wait_for(plugin, WAIT).await.unwrap();
    let shown = browser.eval(&format!("{plugin}.textContent")).await.unwrap();
    let (_, list) = get(&t, &admin, "/api/strategies").await;
    let version = list["plugins"][0]["version"].as_str().unwrap();
    for part in ["loaded", "ok · ", version, "0 / 0"] {
        assert!(shown.as_str().unwrap().contains(part), "{part} in {shown}");
    }

    // Approve: the boss's own YES on exactly this signal; the entry and its OCO reach the
    // exchange.
    let approve = "#signals tr[data-symbol='XRPUSDT'] button[data-action='approve']";
    confirm_action(&browser, approve, &["Buy XRPUSDT at market", "2 %", "5 %", "your own YES"])
        .await;
    assert_eq!(orders(&t, "XRPUSDT", "MARKET", "BUY").len(), 1, "{:?}", t.orders());
    assert_eq!(orders(&t, "XRPUSDT", "STOP_LOSS_LIMIT", "SELL").len(), 1, "the OCO's stop");
    let row = audit_row(&t, &admin, "POST /api/signal/{symbol}/confirm").await;
    assert_eq!(
        (row["agent"].as_str(), row["outcome"].as_str()),
        (Some("boss"), Some("ok")),
        "{row}"
    );
    assert!(row["approval"].as_str().unwrap().starts_with("boss (token "), "{row}");
    assert!(row["target"].as_str().unwrap().contains("signal_id="), "bound to the signal: {row}");

    // Reject: nothing placed, the signal skipped.
    let reject = "#signals tr[data-symbol='BNBUSDT'] button[data-action='reject']";
    confirm_action(&browser, reject, &["BNBUSDT", "nothing is placed"]).await;
    let (_, list) = get(&t, &admin, "/api/signal/list").await;
    let signals = list["signals"].as_array().unwrap();
    let bnb = signals.iter().find(|s| s["symbol"] == "BNBUSDT").expect("still listed");
    assert_eq!(bnb["status"], "skipped", "{list}");
    assert!(orders(&t, "BNBUSDT", "MARKET", "BUY").is_empty());

    // The rest on a phone: the confirmation fits the screen.
    browser.viewport(390, 844, true).await.unwrap();
    let close = "#trades tr[data-symbol='ETHUSDT'] button[data-action='close']";
    browser.wait_for(&format!("!!document.querySelector({close:?})"), WAIT).await.unwrap();
    browser.eval(&format!("document.querySelector({close:?}).click(); true")).await.unwrap();
    browser.wait_for("document.getElementById('confirm').open", WAIT).await.unwrap();
    let fits = "(() => { const b = document.getElementById('confirm-ok').getBoundingClientRect(); \
                return b.right <= innerWidth && b.bottom <= innerHeight && b.left >= 0; })()";
    assert_eq!(browser.eval(fits).await.unwrap(), true, "the yes button is on the phone's screen");
    browser.eval("document.getElementById('confirm-cancel').click(); true").await.unwrap();
    // Cancel answers no: nothing reaches the exchange (a wrong yes would be there by now).
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(orders(&t, "ETHUSDT", "MARKET", "SELL").is_empty(), "cancelled: nothing sold");
    confirm_action(&browser, close, &["Sell", "ETHUSDT at market", "entry 3000"]).await;
    assert_eq!(orders(&t, "ETHUSDT", "MARKET", "SELL").len(), 1, "the close's SELL");
    let row = audit_row(&t, &admin, "POST /api/close").await;
    assert_eq!((row["agent"].as_str(), row["symbol"].as_str()), (Some("boss"), Some("ETHUSDT")));

    let cancel = "#entries tr[data-symbol='SOLUSDT'] button[data-action='cancel']";
    confirm_action(&browser, cancel, &["LIMIT buy", "SOLUSDT at 140"]).await;
    let limits = orders(&t, "SOLUSDT", "LIMIT", "BUY");
    assert_eq!(limits.len(), 1, "{limits:?}");
    assert_eq!(limits[0]["status"], "CANCELED", "the entry was cancelled at the exchange");

    confirm_action(&browser, "#act-reset", &["go back to 0"]).await;
    audit_row(&t, &admin, "POST /api/reset-daily").await;

    // Pause, then resume from the banner the pause raises.
    confirm_action(&browser, "#act-pause", &["No new entry until you resume", "stops"]).await;
    let banner = "!document.getElementById('blocked').hidden \
                  && !document.getElementById('act-resume').hidden";
    browser.wait_for(banner, WAIT).await.unwrap();
    let (_, footer) = get(&t, &admin, "/api/dashboard/footer").await;
    let blocked = footer["entries_blocked"].as_str().unwrap();
    assert!(blocked.starts_with("entries_paused: new entries paused by boss (token "), "{blocked}");
    confirm_action(&browser, "#act-resume", &["entries_paused", "allowed again"]).await;
    browser.wait_for("document.getElementById('blocked').hidden", WAIT).await.unwrap();
    audit_row(&t, &admin, "POST /api/protection/resume").await;

    confirm_action(&browser, "#act-closeall", &["XRPUSDT at market"]).await;
    assert_eq!(orders(&t, "XRPUSDT", "MARKET", "SELL").len(), 1, "close all sold XRPUSDT");
    let (_, open) = get(&t, &admin, "/api/trades").await;
    assert_eq!(open["count"], 0, "{open}");

    // A read token watches: no action buttons, and an action it forges is refused.
    let url = t.host.url("/api/signal");
    let posted = t.host.http.post(url).bearer_auth(&admin).json(&good_signal("ETHUSDT")).send();
    assert_eq!(posted.await.unwrap().status(), 200);
    browser.viewport(1280, 900, false).await.unwrap();
    sign_in(&browser, &t, &reader, "boss · read").await;
    browser
        .wait_for("document.querySelector(\"#signals tr[data-symbol='ETHUSDT']\")", WAIT)
        .await
        .unwrap();
    let visible_buttons = "[...document.querySelectorAll('.act button, button.act')]\
                           .filter((b) => b.offsetParent !== null).length";
    assert_eq!(browser.eval(visible_buttons).await.unwrap(), 0);
    let forged = format!(
        "fetch('/api/signal/ETHUSDT/confirm', {{method: 'POST', headers: {{Authorization: \
         'Bearer ' + {reader:?}, 'Content-Type': 'application/json'}}}}).then((r) => r.status)"
    );
    assert_eq!(browser.eval(&forged).await.unwrap(), 403);
    assert!(orders(&t, "ETHUSDT", "MARKET", "BUY").len() == 1, "only the first ETHUSDT buy");
    let errors = browser.console_errors();
    // The first load before the token was in the tab (401) and the forged action (403).
    assert!(errors.iter().all(|e| e.contains("401") || e.contains("403")), "{errors:?}");
    browser.close().await;
}
