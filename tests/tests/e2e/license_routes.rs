//! The license table walked end to end: docs/api.md publishes exactly the code's table, every
//! row is enforced by the license layer over HTTP, and every real route that needs a license
//! answers 503 without one.

use std::collections::BTreeSet;

use axum::Router;
use axum::http::Method;
use axum::routing::{MethodFilter, on};
use serde_json::Value;
use spotbot::license::routes::{ROUTES, needs_license, rule_for};
use spotbot::state::AppState;

use crate::license_support::Rig;

/// Rows `(method, path, licensed)` of the license table in docs/api.md.
fn documented_rows() -> BTreeSet<(String, String, bool)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/api.md");
    let text = std::fs::read_to_string(path).expect("docs/api.md exists");
    let start = text.find("<!-- license-table").expect("license table start marker");
    let end = text.find("<!-- /license-table -->").expect("license table end marker");
    text[start..end]
        .lines()
        .filter(|line| ["| GET", "| POST", "| DELETE"].iter().any(|m| line.starts_with(m)))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let licensed = match cells[4] {
                "yes" => true,
                "no" => false,
                other => panic!("license column must be yes or no, got {other:?} in {line}"),
            };
            (cells[1].to_string(), cells[2].trim_matches('`').to_string(), licensed)
        })
        .collect()
}

#[test]
fn docs_api_md_publishes_exactly_the_code_table() {
    let code: BTreeSet<(String, String, bool)> =
        ROUTES.iter().map(|r| (r.method.to_string(), r.path.to_string(), r.licensed)).collect();
    let docs = documented_rows();
    let only_code: Vec<_> = code.difference(&docs).collect();
    let only_docs: Vec<_> = docs.difference(&code).collect();
    assert!(
        only_code.is_empty() && only_docs.is_empty(),
        "docs/api.md and host/src/license/routes.rs differ:\n only in code: {only_code:?}\n \
         only in docs: {only_docs:?}"
    );
}

/// A router with a stub handler at every row of the table (and one unlisted route), behind the
/// host's real license layer and state.
fn probe_router(state: AppState) -> Router {
    let mut router: Router<AppState> = Router::new();
    for rule in ROUTES {
        let method = Method::from_bytes(rule.method.as_bytes()).unwrap();
        router = router
            .route(rule.path, on(MethodFilter::try_from(method).unwrap(), || async { "reached" }));
    }
    router = router.route("/api/unlisted-route", on(MethodFilter::POST, || async { "reached" }));
    router
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            spotbot::api::license::require_license,
        ))
        .with_state(state)
}

fn concrete(path: &str) -> String {
    path.replace("{symbol}", "BTCUSDT").replace("{name}", "coo")
}

async fn call(http: &reqwest::Client, base: &str, method: &str, path: &str) -> (u16, String) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let response = http
        .request(method, format!("{base}{}", concrete(path)))
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn every_row_of_the_table_is_enforced_by_the_license_layer() {
    let rig = Rig::new().await;
    let host = rig.new_host().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let probe = probe_router(host.app.state.clone());
    let server = tokio::spawn(async move { axum::serve(listener, probe).await });
    let http = reqwest::Client::new();

    // No license: licensed rows answer 503 with the error body, free rows reach the handler.
    let mut licensed = 0;
    for rule in ROUTES {
        let (status, body) = call(&http, &base, rule.method, rule.path).await;
        if rule.licensed {
            licensed += 1;
            assert_eq!(status, 503, "{} {} -> {body}", rule.method, rule.path);
            let body: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(body["ok"], false);
            assert_eq!(body["error"], "license_required");
            let detail = body["detail"].as_str().unwrap();
            assert!(detail.contains("POST /api/license/register"), "{detail}");
            assert!(detail.contains("TRADER_LICENSE_KEY"), "{detail}");
        } else {
            assert_eq!((status, body.as_str()), (200, "reached"), "{} {}", rule.method, rule.path);
        }
    }
    assert!(licensed >= 15, "the spec's bot actions, scan-and-signal and confirm are licensed");
    let (status, body) = call(&http, &base, "POST", "/api/unlisted-route").await;
    assert_eq!(status, 503, "a route missing from the table needs a license");
    assert!(body.contains("not in the license table"), "{body}");
    let (status, _) = call(&http, &base, "HEAD", "/api/status").await;
    assert_eq!(status, 503, "HEAD follows GET");

    // With a license every row reaches its handler.
    host.register("walker@example.com").await;
    for rule in ROUTES {
        let (status, body) = call(&http, &base, rule.method, rule.path).await;
        assert_eq!((status, body.as_str()), (200, "reached"), "{} {}", rule.method, rule.path);
    }

    // And when the grace ends, trading stops again.
    let mut rig = rig;
    rig.stop_server().await;
    rig.advance_hours(73);
    for rule in ROUTES.iter().filter(|r| r.licensed) {
        let (status, _) = call(&http, &base, rule.method, rule.path).await;
        assert_eq!(status, 503, "{} {}", rule.method, rule.path);
    }
    server.abort();
    host.stop().await;
}

/// Routes of the running host (from its OpenAPI document): those that need a license answer
/// 503 before their handler runs. Free routes are not called here (their handlers may reach
/// the exchange or the messenger); the probe test covers them.
#[tokio::test]
async fn real_routes_that_need_a_license_answer_503_without_one() {
    let rig = Rig::new().await;
    let host = rig.new_host().await;
    let (status, document) = host.get("/api/openapi.json").await;
    assert_eq!(status, 200);
    let paths = document["paths"].as_object().expect("paths in the OpenAPI document");
    let mut checked = Vec::new();
    for (path, item) in paths {
        for method in item.as_object().unwrap().keys() {
            let method = method.to_uppercase();
            let Ok(parsed) = Method::from_bytes(method.as_bytes()) else { continue };
            if !needs_license(&parsed, path) {
                assert!(rule_for(&parsed, path).is_some_and(|r| !r.licensed));
                continue;
            }
            let (status, body) = call(&host.http, &host.app.base_url(), &method, path).await;
            assert_eq!(status, 503, "{method} {path} -> {body}");
            assert!(body.contains("license_required"), "{method} {path} -> {body}");
            checked.push(format!("{method} {path}"));
        }
    }
    // The license routes themselves are free and answer.
    for path in ["/api/license/status", "/api/health"] {
        let (status, _) = host.get(path).await;
        assert_eq!(status, 200, "{path}");
    }
    eprintln!("licensed routes checked on the real router: {checked:?}");
    host.stop().await;
}
