//! Every damage on real answer shapes: the damaged body fails to parse, or parses with exactly
//! the change its kind promises; reordered keys parse equal; the seed decides the picks.

use super::edits::{HUGE, MYSTERY, NEGATIVE, edit};
use super::json::Json;
use super::{Damage, Harm};
use crate::clock::Millis;
use crate::faults::answer::{Delivery, Throttle, Wire};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};
use std::time::Duration;

/// Exchange A's answer to a MARKET buy (FULL), keys in the wire's order.
const ORDER: &str = r#"{"symbol":"BTCUSDT","orderId":12,"orderListId":-1,"clientOrderId":"entry-1","transactTime":1700000000000,"price":"0.00000000","origQty":"0.01000000","executedQty":"0.01000000","cummulativeQuoteQty":"650.00000000","status":"FILLED","timeInForce":"GTC","type":"MARKET","side":"BUY","workingTime":1700000000000,"fills":[{"price":"65000.00000000","qty":"0.01000000","commission":"0.00001000","commissionAsset":"BTC","tradeId":5}],"isWorking":true}"#;
/// Exchange A's open orders: a list of records.
const LIST: &str = r#"[{"symbol":"BTCUSDT","orderId":3,"status":"NEW","side":"SELL"},{"symbol":"ETHUSDT","orderId":4,"status":"NEW","side":"BUY"}]"#;
/// Exchange B's answer to an order that rested.
const B_ORDER: &str = r#"{"status":"ok","response":{"type":"order","data":{"statuses":[{"resting":{"oid":77,"cloid":"0x4d545f000000000000000000000000aa"}}]}}}"#;
/// Klines: lists of scalars, no object at all.
const KLINES: &str = r#"[[1700000000000,"65000.00000000","65100.00000000","64900.00000000","65050.00000000","12.50000000",1700000059999,"812500.00000000",42,"6.00000000","390000.00000000","0"]]"#;
/// Exchange B's plain-text refusal of a body it cannot read: not JSON.
const TEXT: &str = "Failed to deserialize the JSON body into the target type: missing field `type`";

const A_ENUMS: &[&str] =
    &["status", "side", "type", "timeInForce", "listOrderStatus", "listStatusType"];
const B_ENUMS: &[&str] = &["status", "side", "orderType", "tif"];

fn damaged(damage: Damage, body: &str, seed: u64) -> String {
    String::from_utf8(edit(damage, body.as_bytes(), seed, A_ENUMS)).expect("utf-8")
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Every scalar with its path, so two answers compare scalar by scalar.
fn scalars(value: &Value, path: String, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Array(items) => {
            items.iter().enumerate().for_each(|(i, v)| scalars(v, format!("{path}/{i}"), out))
        }
        Value::Object(members) => {
            members.iter().for_each(|(k, v)| scalars(v, format!("{path}/{k}"), out))
        }
        scalar => out.push((path, scalar.clone())),
    }
}

/// The scalars that differ between two answers of the same structure: (path, before, after).
fn changed(before: &Value, after: &Value) -> Vec<(String, Value, Value)> {
    let (mut b, mut a) = (Vec::new(), Vec::new());
    scalars(before, String::new(), &mut b);
    scalars(after, String::new(), &mut a);
    assert_eq!(b.len(), a.len(), "same structure: {after}");
    b.into_iter()
        .zip(a)
        .filter(|((_, x), (_, y))| x != y)
        .map(|((path, x), (p2, y))| {
            assert_eq!(path, p2);
            (path, x, y)
        })
        .collect()
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The keys of a JSON text's top-level object, in the order written.
fn keys_written(text: &str) -> Vec<String> {
    match Json::parse(text.as_bytes()) {
        Some(Json::Object(members)) => members.into_iter().map(|(k, _)| k).collect(),
        other => panic!("not an object: {other:?}"),
    }
}

#[test]
fn an_untouched_tree_renders_the_bytes_serde_json_wrote() {
    let floats =
        serde_json::to_string(&json!({"b": [1.5, 1e-7, 123456789.125], "a": null, "c": "é\"\n"}))
            .expect("json");
    for text in [ORDER, LIST, B_ORDER, KLINES, floats.as_str(), "{}", "[]"] {
        let tree = Json::parse(text.as_bytes()).expect("json");
        assert_eq!(tree.render(), text);
    }
    assert_eq!(Json::parse(TEXT.as_bytes()), None);
}

#[test]
fn truncated_cuts_in_the_first_half_and_never_parses() {
    for body in [ORDER, LIST, B_ORDER, KLINES, "{}", "null"] {
        let mut cuts = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let cut = damaged(Damage::Truncated, body, seed);
            assert!(body.starts_with(&cut) && !cut.is_empty() && cut.len() <= body.len() / 2);
            assert!(serde_json::from_str::<Value>(&cut).is_err(), "{cut}");
            cuts.insert(cut.len());
        }
        assert!(body.len() < 8 || cuts.len() > 5, "the seed moves the cut");
    }
    assert_eq!(damaged(Damage::Truncated, ORDER, 3), damaged(Damage::Truncated, ORDER, 3));
}

#[test]
fn wrong_shape_wraps_an_object_in_a_list_and_a_list_in_an_object() {
    assert_eq!(parse(&damaged(Damage::WrongShape, ORDER, 0)), json!([parse(ORDER)]));
    assert_eq!(parse(&damaged(Damage::WrongShape, LIST, 0)), json!({"data": parse(LIST)}));
}

#[test]
fn wrong_type_changes_the_type_of_one_scalar_at_any_depth() {
    let mut paths = std::collections::BTreeSet::new();
    for body in [ORDER, B_ORDER, KLINES] {
        for seed in 0..60 {
            let after = parse(&damaged(Damage::WrongType, body, seed));
            let diff = changed(&parse(body), &after);
            assert_eq!(diff.len(), 1, "{after}");
            let (path, before, now) = &diff[0];
            assert_ne!(json_type(before), json_type(now), "{path}");
            paths.insert(path.clone());
        }
    }
    assert!(paths.iter().any(|p| p.starts_with("/fills/0/")), "nested fields too: {paths:?}");
    assert!(paths.iter().any(|p| p.starts_with("/response/data/")), "{paths:?}");
}

#[test]
fn missing_field_removes_one_member_of_the_main_object() {
    for seed in 0..30 {
        let before = parse(ORDER);
        let after = parse(&damaged(Damage::MissingField, ORDER, seed));
        let (b, a) = (before.as_object().expect("object"), after.as_object().expect("object"));
        assert_eq!(a.len() + 1, b.len());
        assert!(a.iter().all(|(k, v)| b.get(k) == Some(v)));

        let list = parse(&damaged(Damage::MissingField, LIST, seed));
        assert_eq!(list[0].as_object().map(|o| o.len()), Some(3), "the first record lost one");
        assert_eq!(list[1], parse(LIST)[1]);
    }
    let none_left = damaged(Damage::MissingField, "{}", 0);
    assert!(serde_json::from_str::<Value>(&none_left).is_err(), "nothing to remove: cut");
}

#[test]
fn huge_number_breaks_a_json_number_and_writes_a_decimal_string_as_1e400() {
    assert_eq!(damaged(Damage::HugeNumber, r#"{"orderId":12}"#, 0), r#"{"orderId":1e400}"#);
    assert!(serde_json::from_str::<Value>(r#"{"orderId":1e400}"#).is_err(), "out of range");
    assert_eq!(damaged(Damage::HugeNumber, r#"{"qty":"0.01000000"}"#, 0), r#"{"qty":"1e400"}"#);
    let no_number = r#"{"clientOrderId":"entry-1","status":"NEW"}"#;
    let cut = damaged(Damage::HugeNumber, no_number, 0);
    assert!(no_number.starts_with(&cut) && cut.len() <= no_number.len() / 2, "no number: cut");
    let (mut strings, mut numbers) = (0, 0);
    for seed in 0..60 {
        let text = damaged(Damage::HugeNumber, ORDER, seed);
        match serde_json::from_str::<Value>(&text) {
            Err(_) => {
                numbers += 1;
                assert!(text.contains(":1e400"), "{text}");
            }
            Ok(after) => {
                strings += 1;
                let diff = changed(&parse(ORDER), &after);
                assert_eq!(diff.len(), 1);
                assert_eq!(diff[0].2, json!(HUGE));
            }
        }
    }
    assert!(strings > 0 && numbers > 0, "both kinds of numbers are picked");
}

#[test]
fn negative_number_keeps_the_type_the_wire_used() {
    for seed in 0..60 {
        let after = parse(&damaged(Damage::NegativeNumber, ORDER, seed));
        let diff = changed(&parse(ORDER), &after);
        assert_eq!(diff.len(), 1, "{after}");
        let (path, before, now) = &diff[0];
        match before {
            Value::String(_) => assert_eq!(now, &json!(NEGATIVE), "{path}"),
            _ => assert_eq!(now.as_f64(), Some(-0.0001), "{path}"),
        }
    }
}

#[test]
fn unknown_enum_names_a_value_no_client_knows_or_falls_back_to_a_wrong_type() {
    let mut fields = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let after = parse(&damaged(Damage::UnknownEnum, ORDER, seed));
        let diff = changed(&parse(ORDER), &after);
        assert_eq!(diff.len(), 1);
        assert_eq!(diff[0].2, json!(MYSTERY));
        fields.insert(diff[0].0.clone());
    }
    let expected = ["/side", "/status", "/timeInForce", "/type"].map(String::from);
    assert_eq!(fields, expected.into_iter().collect());

    let b = String::from_utf8(edit(Damage::UnknownEnum, B_ORDER.as_bytes(), 1, B_ENUMS))
        .expect("utf-8");
    assert_eq!(parse(&b)["status"], MYSTERY, "exchange B's envelope status");

    let after = parse(&damaged(Damage::UnknownEnum, KLINES, 5));
    let diff = changed(&parse(KLINES), &after);
    assert_eq!(diff.len(), 1);
    assert_ne!(json_type(&diff[0].1), json_type(&diff[0].2), "no enum: a wrong type");
}

#[test]
fn duplicate_keys_repeat_a_top_level_key_with_another_value() {
    for seed in 0..30 {
        let text = damaged(Damage::DuplicateKeys, ORDER, seed);
        let keys = keys_written(&text);
        let original = keys_written(ORDER);
        assert_eq!(keys[..original.len()], original[..]);
        let repeated = &keys[original.len()];
        assert_eq!(keys.len(), original.len() + 1);
        // serde_json keeps the last value: the answer now says something else.
        let last = parse(&text);
        assert_ne!(last[repeated], parse(ORDER)[repeated], "{repeated}");
    }
    assert_eq!(damaged(Damage::DuplicateKeys, r#"{"a":1}"#, 0), r#"{"a":1,"a":11}"#);
    assert_eq!(damaged(Damage::DuplicateKeys, r#"{"a":"NEW"}"#, 0), r#"{"a":"NEW","a":"1NEW"}"#);
    assert_eq!(damaged(Damage::DuplicateKeys, r#"{"a":-2}"#, 0), r#"{"a":-2,"a":-12}"#);
    assert_eq!(damaged(Damage::DuplicateKeys, r#"{"a":true}"#, 0), r#"{"a":true,"a":false}"#);
}

#[test]
fn reordered_keys_reverse_every_object_and_parse_equal() {
    for body in [ORDER, LIST, B_ORDER, KLINES] {
        let text = damaged(Damage::ReorderedKeys, body, 9);
        assert_eq!(parse(&text), parse(body));
    }
    let text = damaged(Damage::ReorderedKeys, ORDER, 9);
    let mut keys = keys_written(ORDER);
    keys.reverse();
    assert_eq!(keys_written(&text), keys);
    assert!(text.contains(r#"{"tradeId":5,"commissionAsset":"BTC""#), "nested too: {text}");
}

#[test]
fn a_body_that_is_not_json_is_cut_whatever_the_kind() {
    // The kinds that rewrite the body are declared first, up to `reordered_keys`.
    let body_kinds = Damage::ALL.iter().take_while(|d| **d != Damage::HtmlError).copied();
    for damage in body_kinds {
        let text = damaged(damage, TEXT, 4);
        assert!(TEXT.starts_with(&text) && text.len() <= TEXT.len() / 2, "{damage:?}: {text}");
    }
}

/// A wire whose throttles answer 429/418 with the Retry-After given.
const TEST_WIRE: Wire = Wire { enum_fields: A_ENUMS, server_error, throttled };

fn server_error(status: u16) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r
}

fn throttled(throttle: Throttle, secs: u64, _now: Millis) -> Response {
    let mut r = server_error(if throttle == Throttle::Banned { 418 } else { 429 });
    r.headers_mut().insert("retry-after", HeaderValue::from(secs));
    r
}

fn answer() -> Response {
    let mut r = Response::new(Body::from(ORDER));
    r.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    r
}

async fn apply(damage: Damage, seed: u64, ms: Option<u64>, retry_after: Option<u64>) -> Delivery {
    Harm { damage, seed, ms, retry_after }.apply(answer(), &TEST_WIRE, 0).await
}

async fn now(delivery: Delivery) -> (StatusCode, Option<String>, Option<String>, String) {
    let Delivery::Now(r) = delivery else { panic!("not sent at once") };
    let header = |name| r.headers().get(name).and_then(|v| v.to_str().ok()).map(String::from);
    let (status, ct, retry) = (r.status(), header("content-type"), header("retry-after"));
    let body = axum::body::to_bytes(r.into_body(), usize::MAX).await.expect("body");
    (status, ct, retry, String::from_utf8(body.to_vec()).expect("utf-8"))
}

#[tokio::test]
async fn the_answers_a_proxy_makes_up() {
    let mut statuses = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let (status, ct, _, body) = now(apply(Damage::HtmlError, seed, None, None).await).await;
        assert_eq!(ct.as_deref(), Some("text/html"));
        assert!(body.starts_with("<html>\r\n<head><title>50"), "{body}");
        assert!(body.contains(&format!("<title>{}", status.as_u16())), "{body}");
        statuses.insert(status.as_u16());
    }
    assert_eq!(statuses, [502, 503, 504].into_iter().collect());

    let (status, ct, _, body) = now(apply(Damage::EmptyOk, 0, None, None).await).await;
    assert_eq!(
        (status, ct.as_deref(), body.as_str()),
        (StatusCode::OK, Some("application/json"), "")
    );

    let (status, _, retry, _) = now(apply(Damage::RateLimited, 0, None, None).await).await;
    assert_eq!((status.as_u16(), retry.as_deref()), (429, Some("1")));
    let (status, _, retry, _) = now(apply(Damage::Banned, 0, None, None).await).await;
    assert_eq!((status.as_u16(), retry.as_deref()), (418, Some("2")));
    let (_, _, retry, _) = now(apply(Damage::Banned, 0, None, Some(30)).await).await;
    assert_eq!(retry.as_deref(), Some("30"));

    let (status, ct, _, body) = now(apply(Damage::Truncated, 1, None, None).await).await;
    assert_eq!((status, ct.as_deref()), (StatusCode::OK, Some("application/json")));
    assert!(ORDER.starts_with(&body) && body.len() < ORDER.len(), "the body edited in place");
}

#[tokio::test]
async fn slow_holds_the_real_answer_and_dropped_cuts() {
    let Delivery::Late(r, wait) = apply(Damage::Slow, 0, None, None).await else {
        panic!("not late")
    };
    assert_eq!(wait, Duration::from_millis(2000));
    let body = axum::body::to_bytes(r.into_body(), usize::MAX).await.expect("body");
    assert_eq!(body, ORDER.as_bytes());
    let Delivery::Late(_, wait) = apply(Damage::Slow, 0, Some(50), None).await else {
        panic!("not late")
    };
    assert_eq!(wait, Duration::from_millis(50));
    assert!(matches!(apply(Damage::Dropped, 0, None, None).await, Delivery::Cut));
}
