//! Agents report their status; the dashboard state shows cards and the bounded activity log.

use reqwest::StatusCode;
use serde_json::{Value, json};
use spotbot_tests::TestHost;

#[tokio::test]
async fn an_agent_report_updates_its_card_and_the_log() {
    let host = TestHost::start("").await;
    let response = host
        .http
        .post(host.url("/api/agent/scout"))
        .json(&json!({"status": "running", "action": "scanning watchlist"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.json::<Value>().await.unwrap(), json!({"ok": true}));

    let state: Value =
        host.http.get(host.url("/api/state")).send().await.unwrap().json().await.unwrap();
    assert_eq!(state["agents"]["scout"]["status"], "running");
    assert_eq!(state["agents"]["scout"]["action"], "scanning watchlist");
    for agent in ["coo", "finance", "bot-ops"] {
        assert_eq!(state["agents"][agent]["status"], "idle", "{agent}");
    }
    let newest = &state["log"][0];
    assert_eq!(newest["agent"], "scout");
    assert_eq!(newest["action"], "scanning watchlist");
    assert_eq!(newest["status"], "running");
    assert!(newest["time"].is_string());
    assert!(state["ts"].is_string());
    host.stop().await;
}

#[tokio::test]
async fn earlier_agent_names_are_accepted_and_unknown_ones_are_422() {
    let host = TestHost::start("").await;
    for agent in ["tech", "ops"] {
        let response = host
            .http
            .post(host.url(&format!("/api/agent/{agent}")))
            .json(&json!({"status": "idle", "action": ""}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{agent}");
    }
    let response = host
        .http
        .post(host.url("/api/agent/ceo"))
        .json(&json!({"status": "idle", "action": ""}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "invalid_agent");
    assert!(body["detail"].as_str().unwrap().contains("ceo"));
    host.stop().await;
}

#[tokio::test]
async fn the_activity_log_keeps_the_last_hundred_events() {
    let host = TestHost::start("").await;
    for i in 0..105 {
        let response = host
            .http
            .post(host.url("/api/agent/finance"))
            .json(&json!({"status": "running", "action": format!("step {i}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    let state: Value =
        host.http.get(host.url("/api/state")).send().await.unwrap().json().await.unwrap();
    let log = state["log"].as_array().unwrap();
    assert_eq!(log.len(), 100);
    assert_eq!(log[0]["action"], "step 104");
    assert_eq!(log[99]["action"], "step 5");
    host.stop().await;
}

#[tokio::test]
async fn the_dashboard_page_is_served_as_html() {
    let host = TestHost::start("").await;
    let response = host.http.get(host.url("/api/dashboard")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let page = response.text().await.unwrap();
    assert!(page.contains("/api/state"), "the page polls the state route");
    host.stop().await;
}
