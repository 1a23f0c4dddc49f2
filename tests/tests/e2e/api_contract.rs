//! The OpenAPI document as a contract, checked quickly without schemathesis (`cargo xtask
//! contract` is the full check): every `$ref` resolves, the shared error answers are
//! documented where the shared extractors and layers give them, and the scan body accepts what
//! its schema allows.

use serde_json::{Value, json};
use spotbot_tests::TestHost;

const METHODS: &[&str] = &["get", "put", "post", "delete", "patch"];

async fn document(host: &TestHost) -> Value {
    let response = host.http.get(host.url("/api/openapi.json")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// (method, path, operation) of every operation.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut all = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS {
            if let Some(op) = item.get(*method) {
                all.push((method.to_uppercase(), path.clone(), op.clone()));
            }
        }
    }
    assert!(all.len() >= 9, "the document lists the routes: {all:?}");
    all
}

fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                out.push(target);
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn every_ref_names_a_defined_schema() {
    let host = TestHost::start("").await;
    let doc = document(&host).await;
    let mut targets = Vec::new();
    refs(&doc, &mut targets);
    assert!(targets.contains(&"#/components/schemas/AgentName"), "{targets:?}");
    for target in targets {
        let pointer = target.strip_prefix('#').expect("local reference");
        assert!(doc.pointer(pointer).is_some(), "{target} is referenced but not defined");
    }
    host.stop().await;
}

#[tokio::test]
async fn shared_error_answers_are_documented_on_every_route_that_gives_them() {
    let host = TestHost::start("").await;
    let doc = document(&host).await;
    for (method, path, op) in operations(&doc) {
        let documented = |status: &str| op["responses"].get(status).is_some();
        let label = format!("{method} {path}");
        if let Some(body) = op.get("requestBody") {
            for status in ["400", "413", "422"] {
                assert!(
                    documented(status),
                    "{label} has a JSON body but does not document {status}"
                );
            }
            if body["required"] == true {
                assert!(documented("415"), "{label} needs a JSON body but does not document 415");
            }
        }
        let params = op["parameters"].as_array().cloned().unwrap_or_default();
        if params.iter().any(|p| p["in"] == "query" || p["in"] == "path") {
            assert!(documented("422"), "{label} has parameters but does not document 422");
        }
        let licensed =
            spotbot::license::routes::needs_license(&method.parse().unwrap(), path.as_str());
        if licensed {
            assert!(documented("503"), "{label} needs a license but does not document 503");
        }
        if let Some(statuses) = op.get("x-valid-input-statuses") {
            for status in statuses.as_array().expect("a list of statuses") {
                let status = status.to_string();
                assert!(documented(&status), "{label} declares {status} but does not document it");
            }
        }
    }
    host.stop().await;
}

#[tokio::test]
async fn the_scan_body_accepts_what_its_schema_allows_and_names_a_bad_symbol() {
    let plugins = crate::plugin_support::PluginHost::start(
        &[("strategy_template.wasm", "strategy-template")],
        "",
        "[market]\nwatchlist = [\"BTCUSDT\", \"ETHUSDT\"]\n",
    )
    .await;
    let url = plugins.host.url("/api/strategies/template/scan");
    let post = |body: &'static str| {
        plugins.host.http.post(&url).header("content-type", "application/json").body(body).send()
    };

    for body in ["", "null", "{}", "{\"symbols\": null}"] {
        let response = post(body).await.unwrap();
        assert_eq!(response.status(), 200, "body {body:?}");
        let answer: Value = response.json().await.unwrap();
        let scanned: Vec<&str> = answer["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["symbol"].as_str())
            .collect();
        assert!(scanned.iter().all(|s| ["BTCUSDT", "ETHUSDT"].contains(s)), "{answer}");
    }

    for (body, names) in [
        ("{\"symbols\": [\"btcusdt\"]}", "\"btcusdt\""),
        ("{\"symbols\": [\"BTC-USDT\"]}", "\"BTC-USDT\""),
        ("{\"symbols\": [\"B\"]}", "\"B\""),
        ("{\"symbols\": []}", "symbols"),
    ] {
        let response = post(body).await.unwrap();
        assert_eq!(response.status(), 422, "body {body}");
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["error"], "invalid_body", "{answer}");
        assert!(answer["detail"].as_str().unwrap().contains(names), "{answer}");
    }

    let response =
        plugins.host.http.post(&url).json(&json!({"symbols": ["ETHUSDT"]})).send().await.unwrap();
    assert_eq!(response.status(), 200);
    plugins.host.stop().await;
}

#[tokio::test]
async fn unknown_symbols_do_not_spend_the_exchange_request_weight() {
    let host = TestHost::start("").await;
    let exchange = host.app.state.exchange.clone().expect("paper mode has an exchange");
    let sim = host.app.state.paper.clone().expect("paper mode runs the simulator");
    exchange.symbol_rules("BTCUSDT").await.expect("BTCUSDT is listed");
    for i in 0..300 {
        let err = exchange.symbol_rules(&format!("NOPE{i}")).await.unwrap_err();
        assert!(matches!(err, spotbot::exchange::ExchangeError::InvalidSymbol { .. }), "{err}");
    }
    let loads = sim.sim.requests().iter().filter(|r| r.path == "/api/v3/exchangeInfo").count();
    assert_eq!(loads, 1, "one exchangeInfo for the listing, none per unknown symbol");
    host.stop().await;
}
