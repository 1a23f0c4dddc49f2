//! The browser's side of the trust model, in a real headless Chromium: a page served from
//! another port of this machine cannot change anything (a `no-cors` post, a JSON fetch that
//! needs a preflight, a form, a beacon), and on a service that needs tokens the dashboard asks
//! for one, keeps it in the tab, and then shows the live state.

use std::time::Duration;

use serde_json::Value;
use spotbot::activity::AgentName;
use spotbot::auth::Scope;
use spotbot::auth::tokens::TokenFile;
use spotbot_tests::TestHost;
use spotbot_tests::browser::{Browser, INSTALL_HINT, chromium_path};

async fn launch() -> Browser {
    assert!(chromium_path().is_some(), "the browser test needs Chromium: {INSTALL_HINT}");
    Browser::launch().await.expect("Chromium starts")
}

/// Serves `html` at `/` on another loopback port: the other site.
async fn other_site(html: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let page = axum::Router::new()
        .route("/", axum::routing::get(move || async move { axum::response::Html(html) }));
    tokio::spawn(async move { axum::serve(listener, page).await });
    url
}

async fn scout_card(host: &TestHost) -> Value {
    let state: Value =
        host.http.get(host.url("/api/state")).send().await.unwrap().json().await.unwrap();
    state["agents"]["scout"]["action"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_another_port_cannot_change_anything() {
    let host = TestHost::start("[scheduler]\nenabled = false\n").await;
    let api = host.app.base_url();
    let before = scout_card(&host).await;
    let body = r#"{"status":"running","action":"from another site"}"#;
    let html = format!(
        r#"<!doctype html><form id="f" method="post" action="{api}/api/agent/scout"
        enctype="text/plain"><input name='{{"status":"running","action":"form","x":"' value='"}}'></form>
        <script>
        window.done = (async () => {{
          const outcomes = [];
          const body = '{body}';
          try {{ await fetch('{api}/api/agent/scout', {{method: 'POST', mode: 'no-cors', body}});
                 outcomes.push('no-cors sent'); }} catch (e) {{ outcomes.push('no-cors ' + e); }}
          try {{ await fetch('{api}/api/agent/scout', {{method: 'POST', body,
                   headers: {{'Content-Type': 'application/json'}}}});
                 outcomes.push('cors answered'); }} catch (e) {{ outcomes.push('cors blocked'); }}
          outcomes.push('beacon ' + navigator.sendBeacon('{api}/api/agent/scout',
            new Blob([body], {{type: 'application/json'}})));
          try {{ await fetch('{api}/api/closeall', {{method: 'POST', mode: 'no-cors'}});
                 outcomes.push('closeall sent'); }} catch (e) {{ outcomes.push('closeall ' + e); }}
          return outcomes;
        }})();
        </script>"#
    );
    let site = other_site(html).await;
    let browser = launch().await;
    browser.open(&site).await.unwrap();
    let outcomes = browser.eval("window.done").await.unwrap();
    assert!(outcomes.to_string().contains("cors blocked"), "{outcomes}");
    // The form posts last (it navigates away).
    browser.eval("document.getElementById('f').submit(); true").await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(scout_card(&host).await, before, "no request reached a handler: {outcomes}");
    let own = host
        .http
        .post(host.url("/api/agent/scout"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), 200);
    assert_eq!(scout_card(&host).await, "from another site", "the card read is the one posted to");
    browser.close().await;
    host.app.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_tokens_the_dashboard_asks_for_one_and_then_shows_the_live_state() {
    let host = TestHost::start("[scheduler]\nenabled = false\n").await;
    let file = TokenFile::in_dir(host.data_dir.path());
    let (_, token) = file.create(AgentName::Boss, Scope::Read, chrono::Utc::now()).unwrap();
    let browser = launch().await;
    browser.open(&host.url("/dashboard")).await.unwrap();
    let visible = "!document.getElementById('signin').hidden";
    browser.wait_for(visible, Duration::from_secs(10)).await.unwrap();

    let sign_in = format!(
        "document.getElementById('signin-token').value = {token:?}; \
         document.getElementById('signin').requestSubmit(); true"
    );
    browser.eval(&sign_in).await.unwrap();
    // After the reload the tab keeps the token: the form stays hidden and the live view runs.
    // Null-safe: the page may be between the reload's unload and its new document.
    let live = "document.getElementById('signin')?.hidden \
                && document.getElementById('connection')?.dataset.state === 'live' \
                && document.getElementById('signout')?.hidden === false";
    browser.wait_for(live, Duration::from_secs(10)).await.unwrap();
    let posted = host
        .http
        .post(host.url("/api/agent/scout"))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body(r#"{"status":"running","action":"scanning 3 symbols"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 403, "a read token cannot report for an agent");
    let stored = browser.eval("sessionStorage.getItem('spotbot-token')").await.unwrap();
    assert_eq!(stored, token.as_str(), "kept in the tab's session only");
    // Only the answers before the sign-in (401) and the licensed routes of this unlicensed
    // host (503).
    let errors = browser.console_errors();
    assert!(errors.iter().all(|e| e.contains("401") || e.contains("503")), "{errors:?}");
    browser.close().await;
    host.app.stop().await.unwrap();
}
