//! A plugin scan on the default configuration reads the active exchange (here the paper
//! exchange: the in-process simulator) for the klines and 24 h tickers its manifest asks for.

use crate::plugin_support::{deploy, wasm};
use spotbot_tests::TestHost;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_strategy_scans_the_paper_exchange() {
    let plugins_dir = tempfile::tempdir().unwrap();
    deploy(plugins_dir.path(), "template.wasm", &wasm("strategy-template"));
    let toml = format!("[plugins]\ndir = {:?}\n", plugins_dir.path().display().to_string());
    let host = TestHost::start(&toml).await;
    assert!(host.app.state.paper.is_some(), "paper mode by default");

    let r = host
        .http
        .post(host.url("/api/strategies/template/scan"))
        .json(&serde_json::json!({"symbols": ["BTCUSDT", "ETHUSDT"]}))
        .send()
        .await
        .unwrap();
    let status = r.status();
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{body}");
    for (result, symbol) in results.iter().zip(["BTCUSDT", "ETHUSDT"]) {
        assert_eq!(result["symbol"], symbol);
        assert_eq!(result["bot"], "template");
        assert!(result["price"].as_f64().unwrap() > 0.0, "{result}");
        assert!(["buy", "skip"].contains(&result["direction"].as_str().unwrap()), "{result}");
    }
    let state: serde_json::Value =
        host.http.get(host.url("/api/state")).send().await.unwrap().json().await.unwrap();
    assert_eq!(state["log"][0]["agent"], "scout", "the scout card reflects scans by default");
    assert_eq!(state["log"][0]["status"], "ok");
    assert!(state["log"][0]["action"].as_str().unwrap().contains("template"), "{state}");

    let r = host
        .http
        .post(host.url("/api/strategies/template/scan?agent=coo"))
        .json(&serde_json::json!({"symbols": ["NOSUCHCOIN"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422, "a symbol the exchange does not list is the caller's mistake");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"], "unknown_symbol", "{body}");
    assert!(body["detail"].as_str().unwrap().contains("NOSUCHCOIN"), "{body}");
    let state: serde_json::Value =
        host.http.get(host.url("/api/state")).send().await.unwrap().json().await.unwrap();
    assert_eq!(state["log"][0]["agent"], "coo");
    assert_eq!(state["log"][0]["status"], "error");

    let r = host
        .http
        .post(host.url("/api/strategies/template/scan"))
        .header("content-type", "application/json")
        .body("{\"symbols\": [")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "invalid JSON in the optional body");
    let r = host
        .http
        .post(host.url("/api/strategies/template/scan"))
        .json(&serde_json::json!({"symbol": ["BTCUSDT"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422, "an unknown field in the optional body");
    let r = host
        .http
        .post(host.url("/api/strategies/template/scan?agent=ceo"))
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422, "an unknown agent is refused");
    host.stop().await;
}
