//! Agents as principals over real HTTP: every route of the OpenAPI document refuses a token
//! below its scope and admits one at it (so a new route without a row in the scope table
//! fails here), a revoked token fails on its next request (also through `/mcp`), the MCP tools
//! a token cannot use are not listed, repeated bad tokens answer 429, and other hosts, other
//! origins and form posts change nothing.

use reqwest::Method;
use serde_json::{Value, json};
use spotbot::activity::AgentName;
use spotbot::auth::Scope;
use spotbot::auth::routes::{Needs, needs_of};
use spotbot::auth::tokens::TokenFile;
use spotbot_tests::TestHost;

/// One token per scope, each for another agent.
struct Tokens {
    file: TokenFile,
    by_scope: Vec<(Scope, AgentName, String, String)>,
}

impl Tokens {
    /// Creates them in the host's data folder: the running host switches to tokens on its
    /// next request.
    fn create(host: &TestHost) -> Tokens {
        let file = TokenFile::in_dir(host.data_dir.path());
        let agents =
            [AgentName::BotOps, AgentName::Scout, AgentName::Coo, AgentName::Boss].into_iter();
        let by_scope = Scope::ALL
            .into_iter()
            .zip(agents)
            .map(|(scope, agent)| {
                let (record, token) = file.create(agent, scope, chrono::Utc::now()).unwrap();
                (scope, agent, record.id, token)
            })
            .collect();
        Tokens { file, by_scope }
    }

    fn of(&self, scope: Scope) -> &str {
        &self.by_scope.iter().find(|t| t.0 == scope).unwrap().3
    }
}

async fn call(host: &TestHost, method: &Method, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = host
        .http
        .request(method.clone(), host.url(path))
        .header("content-type", "application/json");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    if path == "/api/dashboard/events" && status == 200 {
        return (status, Value::Null); // an endless stream
    }
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A concrete path for a route pattern, as `agent` would call it.
fn concrete(pattern: &str, agent: AgentName) -> String {
    pattern
        .replace("/api/agent/{name}", &format!("/api/agent/{}", agent.as_str()))
        .replace("{symbol}", "ETHUSDT")
        .replace("{name}", "template")
}

const AUTH_CODES: [&str; 4] =
    ["unauthorized", "invalid_token", "insufficient_scope", "agent_mismatch"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_of_the_document_refuses_a_token_below_its_scope_and_admits_one_at_it() {
    let host = TestHost::start("[scheduler]\nenabled = false\n").await;
    let (_, document) = call(&host, &Method::GET, "/api/openapi.json", None).await;
    let tokens = Tokens::create(&host);
    assert_eq!(document["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");

    let mut checked = 0;
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let http_method = axum::http::Method::from_bytes(method.as_str().as_bytes()).unwrap();
            let needs = needs_of(&http_method, path)
                .unwrap_or_else(|| panic!("{method} {path} has no row in host/src/auth/routes.rs"));
            let security = &operation["security"];
            let needed = match needs {
                Needs::Public => {
                    assert_eq!(security, &json!([]), "{method} {path}");
                    let (status, body) = call(&host, &method, path, None).await;
                    assert_ne!(status, 401, "{method} {path} is public: {body}");
                    continue;
                }
                Needs::Scope(scope) => scope,
            };
            assert_eq!(security, &json!([{"bearer": [needed.as_str()]}]), "{method} {path}");

            let (status, body) = call(&host, &method, &concrete(path, AgentName::Coo), None).await;
            assert_eq!((status, body["error"].as_str()), (401, Some("unauthorized")), "{path}");
            for (scope, agent, _, token) in &tokens.by_scope {
                let (status, body) =
                    call(&host, &method, &concrete(path, *agent), Some(token)).await;
                let code = body["error"].as_str().unwrap_or("");
                if scope.allows(needed) {
                    assert!(
                        !AUTH_CODES.contains(&code),
                        "{method} {path} with a {scope} token: {status} {body}"
                    );
                } else {
                    assert_eq!(
                        (status, code),
                        (403, "insufficient_scope"),
                        "{method} {path} with a {scope} token: {body}"
                    );
                    let detail = body["detail"].as_str().unwrap();
                    assert!(detail.contains(&format!("needs the `{needed}` scope")), "{detail}");
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 60, "only {checked} routes checked");

    // The acting agent comes from the token: naming another one is refused.
    let (status, body) =
        call(&host, &Method::GET, "/api/protection?agent=finance", Some(tokens.of(Scope::Execute)))
            .await;
    assert_eq!((status, body["error"].as_str()), (403, Some("agent_mismatch")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("acts as `coo`"), "{body}");
    let (status, body) =
        call(&host, &Method::GET, "/api/protection?agent=coo", Some(tokens.of(Scope::Execute)))
            .await;
    assert_eq!(status, 200, "{body}");
    host.app.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_fails_on_its_next_request_over_http_and_through_mcp() {
    let host = TestHost::start("[scheduler]\nenabled = false\n").await;
    let tokens = Tokens::create(&host);
    let scout = tokens.of(Scope::Propose).to_string();
    let scout_id = tokens.by_scope[1].2.clone();

    let (status, _) = call(&host, &Method::GET, "/api/signal/list", Some(&scout)).await;
    assert_eq!(status, 200);

    // MCP: the tools are the ones the token may use; a call above its scope is refused.
    let tools = mcp(&host, &scout, "tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"create_signal") && names.contains(&"list_signals"), "{names:?}");
    for hidden in ["confirm_signal", "trade", "close", "reset_daily"] {
        assert!(!names.contains(&hidden), "{hidden} is listed for a propose token: {names:?}");
    }
    let admin = mcp(&host, tokens.of(Scope::Admin), "tools/list", json!({})).await;
    assert!(admin["result"]["tools"].as_array().unwrap().len() > names.len());
    let refused = mcp(
        &host,
        &scout,
        "tools/call",
        json!({"name": "confirm_signal", "arguments": {"symbol": "ETHUSDT"}}),
    )
    .await;
    let answer = &refused["result"]["structuredContent"];
    assert_eq!(answer["status"], 403, "{refused}");
    assert_eq!(answer["body"]["error"], "insufficient_scope", "{refused}");

    tokens.file.revoke(&scout_id, chrono::Utc::now()).unwrap();

    let (status, body) = call(&host, &Method::GET, "/api/signal/list", Some(&scout)).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("token_revoked")), "{body}");
    let response = mcp_raw(&host, &scout, "tools/list", json!({})).await;
    assert_eq!(response.status(), 401, "the next MCP message is refused too");
    host.app.stop().await.unwrap();
}

async fn mcp_raw(host: &TestHost, token: &str, method: &str, params: Value) -> reqwest::Response {
    host.http
        .post(host.url("/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
}

async fn mcp(host: &TestHost, token: &str, method: &str, params: Value) -> Value {
    let response = mcp_raw(host, token, method, params).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_bad_tokens_answer_429_while_a_valid_token_still_passes() {
    let host = TestHost::start("[scheduler]\nenabled = false\n").await;
    let tokens = Tokens::create(&host);
    let bad = "spotbot_0123456789ab_00";
    for _ in 0..10 {
        let (status, body) = call(&host, &Method::GET, "/api/state", Some(bad)).await;
        assert_eq!((status, body["error"].as_str()), (401, Some("invalid_token")), "{body}");
    }
    let response = host.http.get(host.url("/api/state")).bearer_auth(bad).send().await.unwrap();
    assert_eq!(response.status(), 429);
    let wait: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((59..=60).contains(&wait), "{wait}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "too_many_bad_tokens");

    let (status, _) = call(&host, &Method::GET, "/api/state", Some(tokens.of(Scope::Read))).await;
    assert_eq!(status, 200, "a neighbour with a valid token is not locked out");
    host.clock.advance(chrono::Duration::seconds(61));
    let (status, _) = call(&host, &Method::GET, "/api/state", Some(bad)).await;
    assert_eq!(status, 401, "the block ends after a minute of the service clock");
    host.app.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_hosts_other_origins_and_form_posts_change_nothing() {
    let host = TestHost::start("[scheduler]\nenabled = false\n").await;
    let card = |state: &Value| state["agents"]["scout"]["action"].clone();
    let (_, before) = call(&host, &Method::GET, "/api/state", None).await;
    let report = json!({"status": "running", "action": "rebound"});
    let post = |headers: &[(&'static str, &str)]| {
        let mut request = host.http.post(host.url("/api/agent/scout")).body(report.to_string());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let json = ("content-type", "application/json");

    // DNS rebinding: the page's own name resolves to this machine.
    let rebound = post(&[json, ("host", "attacker.example:8000")]).await.unwrap();
    assert_eq!(rebound.status(), 403);
    assert!(rebound.text().await.unwrap().contains("host_not_allowed"));
    let read = host.http.get(host.url("/api/state")).header("host", "attacker.example").send();
    assert_eq!(read.await.unwrap().status(), 403, "reads are refused to other hosts too");

    // A page of another origin (another port of this machine is another origin).
    for headers in [
        vec![json, ("origin", "http://127.0.0.1:8001")],
        vec![json, ("sec-fetch-site", "same-site")],
        vec![json, ("sec-fetch-site", "cross-site"), ("origin", "https://evil.example")],
    ] {
        let answer = post(&headers).await.unwrap();
        assert_eq!(answer.status(), 403, "{headers:?}");
        assert!(answer.text().await.unwrap().contains("cross_site_refused"));
    }
    // A form or a no-cors fetch cannot send the JSON media type.
    let form = post(&[("content-type", "text/plain")]).await.unwrap();
    assert_eq!(form.status(), 415);

    let (_, after) = call(&host, &Method::GET, "/api/state", None).await;
    assert_eq!(card(&after), card(&before), "nothing reached the handler");
    let own = post(&[json, ("origin", &host.app.base_url()), ("sec-fetch-site", "same-origin")]);
    assert_eq!(own.await.unwrap().status(), 200, "the service's own page may");
    let (_, after) = call(&host, &Method::GET, "/api/state", None).await;
    assert_eq!(card(&after), "rebound", "the card read above is the one posted to");
    host.app.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_loopback_the_service_needs_a_token_or_an_explicit_off_which_health_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let mut config =
        spotbot::config::Config::parse("[scheduler]\nenabled = false\n", "t.toml".as_ref())
            .unwrap();
    config.server.addr = "0.0.0.0:0".into();
    config.server.data_dir = dir.path().display().to_string();
    spotbot_tests::keep_on_loopback(&mut config);
    let clock =
        || -> spotbot::clock::SharedClock { std::sync::Arc::new(spotbot::clock::SystemClock) };

    let refused = spotbot::app::start(config.clone(), clock()).await.err().expect("refused");
    let why = format!("{refused:#}");
    assert!(why.contains("beyond loopback") && why.contains("spotbot token create"), "{why}");

    // Written explicitly, off starts, and says so at start and on every health answer (read
    // here over loopback only).
    config.api.auth = Some(spotbot::config::AuthMode::Off);
    let app = spotbot::app::start(config, clock()).await.expect("starts with auth = off");
    let url = format!("http://127.0.0.1:{}/api/health", app.addr.port());
    let health: Value =
        spotbot_tests::http_client().get(url).send().await.unwrap().json().await.unwrap();
    assert_eq!(health["auth"], "off", "{health}");
    assert!(health["warning"].as_str().unwrap().contains("anyone who reaches the port can trade"));
    app.stop().await.unwrap();
}
