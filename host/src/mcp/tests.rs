//! The tools against the real API document: every operation is a tool or excluded with a
//! reason, the hints follow the effect lists, the lists follow the license table, the schemas
//! stand alone; and a call becomes the HTTP request it should.

use std::collections::BTreeMap;

use axum::Router;
use axum::extract::Request;
use axum::routing::any;
use serde_json::{Value, json};

use super::catalog::{Catalog, Operation, Place};
use super::dispatch;
use super::effects::{self, CHANGES, EXCLUDED, Effect, MOVES_MONEY};
use crate::auth::Caller;
use crate::license::routes::needs_license;

fn document() -> Value {
    serde_json::to_value(crate::api::document()).expect("the document is JSON")
}

/// `(METHOD, path, operationId)` of every operation of the document.
fn operations(document: &Value) -> Vec<(String, String, String)> {
    let mut all = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            let id = operation["operationId"].as_str().unwrap_or_default().to_string();
            all.push((method.to_uppercase(), path.clone(), id));
        }
    }
    all
}

fn catalog() -> Catalog {
    Catalog::from_document(&document()).expect("every operation makes a tool")
}

#[test]
fn every_operation_is_a_tool_or_excluded_and_the_lists_name_real_operations() {
    let document = document();
    let operations = operations(&document);
    let catalog = catalog();
    for (method, path, id) in &operations {
        // GET and POST /api/pump-momentum/scan share one handler and so one operationId.
        let derived = catalog.operation(id).is_some_and(|o| &o.method == method && &o.path == path);
        assert_eq!(derived, !effects::excluded(method, path), "{method} {path} ({id})");
        assert_eq!(catalog.tool(id).is_some(), catalog.operation(id).is_some(), "{id}");
    }
    assert_eq!(catalog.tools().len() + EXCLUDED.len(), operations.len());
    let exists = |m: &str, p: &str| operations.iter().any(|(om, op, _)| om == m && op == p);
    for (method, path, why) in EXCLUDED {
        assert!(exists(method, path), "excluded {method} {path} ({why}) is no operation");
    }
    for (method, path) in MOVES_MONEY.iter().chain(CHANGES) {
        assert!(exists(method, path), "listed {method} {path} is no operation");
    }
    for (method, path) in MOVES_MONEY {
        assert!(!CHANGES.contains(&(*method, *path)), "{method} {path} is in both lists");
    }
    for name in ["health", "dashboard_state", "create_signal", "confirm_signal", "trade"] {
        assert!(catalog.tool(name).is_some(), "a tool named {name}");
    }
}

#[test]
fn every_non_get_operation_is_listed_and_money_follows_the_license_table() {
    for (method, path, _) in operations(&document()) {
        if effects::excluded(&method, &path) {
            continue;
        }
        let listed = MOVES_MONEY.contains(&(method.as_str(), path.as_str()))
            || CHANGES.contains(&(method.as_str(), path.as_str()));
        assert!(
            method == "GET" || listed,
            "{method} {path}: list it in host/src/mcp/effects.rs, MOVES_MONEY or CHANGES"
        );
        let licensed = needs_license(&method.parse().unwrap(), &path);
        let moves_money = effects::of(&method, &path) == Effect::MovesMoney;
        if moves_money {
            assert!(licensed, "{method} {path} moves money but needs no license");
        }
        if licensed && method != "GET" {
            assert!(moves_money, "{method} {path} needs a license: list it in MOVES_MONEY");
        }
    }
    assert_eq!(effects::of("POST", "/api/some-new-route"), Effect::MovesMoney, "fail closed");
    assert_eq!(effects::of("GET", "/api/some-new-route"), Effect::Reads);
}

#[test]
fn hints_follow_the_effect() {
    let catalog = catalog();
    let hints = |name: &str| {
        let tool = catalog.tool(name).unwrap_or_else(|| panic!("tool {name}"));
        let a = tool.annotations.clone().expect("annotated");
        (a.read_only_hint, a.destructive_hint)
    };
    assert_eq!(hints("health"), (Some(true), None));
    assert_eq!(hints("dashboard_state"), (Some(true), None));
    assert_eq!(hints("confirm_signal"), (Some(false), Some(true)));
    assert_eq!(hints("trailing"), (Some(false), Some(true)), "a GET that moves stops");
    assert_eq!(hints("reject_signal"), (Some(false), Some(false)));
}

#[test]
fn input_schemas_are_objects_that_stand_alone() {
    for tool in catalog().tools() {
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        assert_eq!(schema["type"], "object", "{}", tool.name);
        assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
        let text = schema.to_string();
        assert!(!text.contains("#/components/"), "{}: {text}", tool.name);
        // Every reference points into the tool's own `$defs`, at a schema that is there.
        let references = text.matches("\"$ref\":").count();
        let local: Vec<&str> = text
            .split("\"$ref\":\"#/$defs/")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect();
        assert_eq!(local.len(), references, "{}: {text}", tool.name);
        for name in local {
            assert!(schema["$defs"].get(name).is_some(), "{}: {name} unresolved", tool.name);
        }
    }
    let tool = catalog();
    let signal = tool.tool("create_signal").expect("create_signal");
    let schema = Value::Object(signal.input_schema.as_ref().clone());
    assert_eq!(schema["required"], json!(["body"]), "{schema}");
    let confirm = tool.tool("confirm_signal").expect("confirm_signal");
    assert!(confirm.input_schema["properties"]["symbol"].is_object());
    assert!(
        confirm.description.as_deref().unwrap().starts_with("POST /api/signal/{symbol}/confirm")
    );
}

/// A router that answers every request with what it received.
fn echo() -> Router {
    Router::new().route(
        "/{*rest}",
        any(|request: Request| async move {
            let method = request.method().to_string();
            let uri = request.uri().to_string();
            let typed = request.headers().get("content-type").is_some();
            let body = axum::body::to_bytes(request.into_body(), 1024).await.unwrap_or_default();
            let body = String::from_utf8_lossy(&body).into_owned();
            axum::Json(json!({"method": method, "uri": uri, "json": typed, "body": body}))
        }),
    )
}

fn operation(method: &str, path: &str, params: &[(&str, Place)], body: bool) -> Operation {
    let params: BTreeMap<String, Place> =
        params.iter().map(|(name, place)| (name.to_string(), *place)).collect();
    Operation { method: method.into(), path: path.into(), params, body }
}

fn arguments(value: Value) -> rmcp::model::JsonObject {
    value.as_object().cloned().expect("an object")
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result.content[0].as_text().map(|t| t.text.clone()).unwrap_or_default()
}

#[tokio::test]
async fn a_call_becomes_the_request_and_bad_arguments_are_named() {
    let router = echo();
    let confirm = operation(
        "POST",
        "/api/signal/{symbol}/confirm",
        &[("symbol", Place::Path), ("agent", Place::Query)],
        false,
    );
    let result = dispatch::call(
        &router,
        &confirm,
        arguments(json!({"symbol": "ETHUSDT", "agent": "coo"})),
        Caller::open(),
    )
    .await;
    assert_eq!(result.is_error, Some(false));
    let answer = result.structured_content.clone().unwrap();
    assert_eq!(answer["status"], 200);
    assert_eq!(answer["body"]["method"], "POST");
    assert_eq!(answer["body"]["uri"], "/api/signal/ETHUSDT/confirm?agent=coo");

    let result = dispatch::call(
        &router,
        &confirm,
        arguments(json!({"symbol": "../../trade?x=1#"})),
        Caller::open(),
    )
    .await;
    let uri = result.structured_content.unwrap()["body"]["uri"].clone();
    assert_eq!(uri, "/api/signal/..%2F..%2Ftrade%3Fx%3D1%23/confirm", "stays one segment");

    let result =
        dispatch::call(&router, &confirm, arguments(json!({"agent": "coo"})), Caller::open()).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("`symbol` is required"), "{}", text(&result));
    let result = dispatch::call(
        &router,
        &confirm,
        arguments(json!({"symbol": "ETHUSDT", "sl": 2})),
        Caller::open(),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("unknown argument `sl`"), "{}", text(&result));
    let result =
        dispatch::call(&router, &confirm, arguments(json!({"symbol": {"x": 1}})), Caller::open())
            .await;
    assert!(text(&result).contains("`symbol` must be a string"), "{}", text(&result));

    let signal = operation("POST", "/api/signal", &[], true);
    let result = dispatch::call(
        &router,
        &signal,
        arguments(json!({"body": {"symbol": "ETHUSDT"}})),
        Caller::open(),
    )
    .await;
    let answer = result.structured_content.unwrap();
    assert_eq!(
        (answer["body"]["json"].as_bool(), answer["body"]["body"].as_str()),
        (Some(true), Some("{\"symbol\":\"ETHUSDT\"}"))
    );
}

#[tokio::test]
async fn an_error_status_or_ok_false_is_a_tool_error_with_the_body() {
    let router = Router::new()
        .route(
            "/refused",
            any(|| async {
                (
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    axum::Json(json!({"ok": false, "error": "license_required"})),
                )
            }),
        )
        .route("/declined", any(|| async { axum::Json(json!({"ok": false, "reason": "gate"})) }))
        .route("/text", any(|| async { "plain words" }));
    let call = |path: &'static str| {
        let router = router.clone();
        async move {
            dispatch::call(
                &router,
                &operation("GET", path, &[], false),
                Default::default(),
                Caller::open(),
            )
            .await
        }
    };
    let refused = call("/refused").await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("license_required") && text(&refused).contains("503"));
    assert_eq!(call("/declined").await.is_error, Some(true));
    let plain = call("/text").await;
    assert_eq!(plain.is_error, Some(false));
    assert_eq!(plain.structured_content.unwrap()["body"], "plain words");
}
