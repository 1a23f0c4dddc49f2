//! The one error body, also for the framework's own rejections, over real HTTP.

use reqwest::StatusCode;
use serde_json::{Value, json};
use spotbot_tests::TestHost;

async fn assert_error_body(response: reqwest::Response, status: StatusCode, code: &str) -> Value {
    assert_eq!(response.status(), status);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_string();
    assert!(content_type.starts_with("application/json"), "{content_type}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["ok"], false, "{body}");
    assert_eq!(body["error"], code, "{body}");
    let detail = body["detail"].as_str().expect("detail is a string");
    assert!(!detail.is_empty());
    assert_eq!(body.as_object().unwrap().len(), 3, "exactly ok, error, detail: {body}");
    body
}

#[tokio::test]
async fn health_answers_with_commit_and_license_fields() {
    let host = TestHost::start("").await;
    let response = host.http.get(host.url("/api/health")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["ok"], true);
    assert_eq!(body["commit"], "dev");
    assert!(["active", "required"].contains(&body["license_status"].as_str().unwrap()));
    assert!(body["plan"].is_string());
    host.stop().await;
}

#[tokio::test]
async fn invalid_json_is_400() {
    let host = TestHost::start("").await;
    let response = host
        .http
        .post(host.url("/api/agent/coo"))
        .header("content-type", "application/json")
        .body("{\"status\": ")
        .send()
        .await
        .unwrap();
    assert_error_body(response, StatusCode::BAD_REQUEST, "invalid_json").await;
    host.stop().await;
}

#[tokio::test]
async fn a_body_with_a_wrong_field_is_422_naming_the_field() {
    let host = TestHost::start("").await;
    let response = host
        .http
        .post(host.url("/api/agent/coo"))
        .json(&json!({"status": "sleeping", "action": "x"}))
        .send()
        .await
        .unwrap();
    let body = assert_error_body(response, StatusCode::UNPROCESSABLE_ENTITY, "invalid_body").await;
    assert!(body["detail"].as_str().unwrap().contains("status"), "{body}");
    host.stop().await;
}

#[tokio::test]
async fn an_unknown_route_is_404() {
    let host = TestHost::start("").await;
    let response = host.http.get(host.url("/api/no-such-thing")).send().await.unwrap();
    assert_error_body(response, StatusCode::NOT_FOUND, "route_not_found").await;
    host.stop().await;
}

#[tokio::test]
async fn a_wrong_method_is_405() {
    let host = TestHost::start("").await;
    let response = host.http.delete(host.url("/api/health")).send().await.unwrap();
    assert_error_body(response, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    host.stop().await;
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let host = TestHost::start("[server]\nmax_body_bytes = 2048\n").await;
    let action = "x".repeat(4096);
    let response = host
        .http
        .post(host.url("/api/agent/coo"))
        .json(&json!({"status": "idle", "action": action}))
        .send()
        .await
        .unwrap();
    assert_error_body(response, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    host.stop().await;
}

#[tokio::test]
async fn a_missing_content_type_is_415() {
    let host = TestHost::start("").await;
    let response = host
        .http
        .post(host.url("/api/agent/coo"))
        .body("{\"status\": \"idle\"}")
        .send()
        .await
        .unwrap();
    assert_error_body(response, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type").await;
    host.stop().await;
}

#[tokio::test]
async fn the_openapi_document_lists_every_route_with_its_errors() {
    let host = TestHost::start("").await;
    let doc: Value =
        host.http.get(host.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"), "{}", doc["openapi"]);
    let paths = doc["paths"].as_object().unwrap();
    for path in ["/api/health", "/api/agent/{name}", "/api/state", "/api/dashboard"] {
        assert!(paths.contains_key(path), "missing {path}");
    }
    let agent = &paths["/api/agent/{name}"]["post"];
    for status in ["200", "400", "413", "422"] {
        assert!(agent["responses"].get(status).is_some(), "agent route lacks {status}");
    }
    assert!(doc["components"]["schemas"].get("ErrorBody").is_some());
    host.stop().await;
}
