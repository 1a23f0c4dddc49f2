//! A tool call as an HTTP request into the API router: the path filled from the arguments, the
//! query, the JSON body, sent with `oneshot` through every layer (license, read budget, body
//! limit, metrics). The answer becomes the tool result: `{"status": <HTTP status>, "body":
//! <the JSON body, or its text>}`, an error result when the status is not 2xx or the body says
//! `ok: false`.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{Value, json};
use tower::ServiceExt;

use super::catalog::{BODY, Operation, Place};
use crate::auth::Caller;

/// Largest answer read back (the trade history is the longest); a longer one is an error.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// Calls `operation` with `arguments` through `api` as `caller` and answers the tool result.
pub async fn call(
    api: &Router,
    operation: &Operation,
    arguments: JsonObject,
    caller: Caller,
) -> CallToolResult {
    let mut request = match request(operation, arguments) {
        Ok(request) => request,
        Err(reason) => return refused(reason),
    };
    // Admitted once on `/mcp` (host, origin, token); the layer checks the route's scope.
    request.extensions_mut().insert(caller);
    // On its own task: a client that goes away mid-call must not cut an order flow short
    // (the call runs to its end, like an HTTP request whose answer nobody reads).
    let api = api.clone();
    let answered = tokio::spawn(async move {
        let response = match api.oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let status = response.status();
        (status, axum::body::to_bytes(response.into_body(), MAX_ANSWER_BYTES).await)
    })
    .await;
    match answered {
        Ok((status, Ok(bytes))) => answer(status, &bytes),
        Ok((status, Err(err))) => {
            refused(format!("the answer ({status}) could not be read: {err}"))
        }
        Err(err) => refused(format!("the call failed inside the service: {err}")),
    }
}

/// The HTTP request of a call, or why the arguments cannot make one (naming the argument).
fn request(operation: &Operation, mut arguments: JsonObject) -> Result<Request<Body>, String> {
    let mut path = operation.path.clone();
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, place) in &operation.params {
        let value = arguments.remove(name).filter(|v| !v.is_null());
        let Some(value) = value else {
            if *place == Place::Path {
                return Err(format!("`{name}` is required (a path parameter)"));
            }
            continue;
        };
        let text = match value {
            Value::String(text) => text,
            Value::Number(_) | Value::Bool(_) => value.to_string(),
            _ => return Err(format!("`{name}` must be a string, a number or a boolean")),
        };
        match place {
            Place::Path => path = path.replace(&format!("{{{name}}}"), &encode_segment(&text)),
            Place::Query => {
                query.append_pair(name, &text);
            }
        }
    }
    let body = if operation.body { arguments.remove(BODY) } else { None };
    if let Some(unknown) = arguments.keys().next() {
        let mut known: Vec<&str> = operation.params.keys().map(String::as_str).collect();
        if operation.body {
            known.push(BODY);
        }
        return Err(format!("unknown argument `{unknown}`; this tool takes: {}", known.join(", ")));
    }
    let query = query.finish();
    let uri = if query.is_empty() { path } else { format!("{path}?{query}") };
    let builder = Request::builder().method(operation.method.as_str()).uri(uri);
    // Every POST carries the JSON media type, as the API requires of any caller.
    let builder = builder.header(header::CONTENT_TYPE, "application/json");
    let built = match body {
        Some(body) => builder.body(Body::from(body.to_string())),
        None => builder.body(Body::empty()),
    };
    built.map_err(|err| format!("the arguments make no valid request: {err}"))
}

/// A path segment with everything but RFC 3986's unreserved characters percent-encoded, so
/// an argument cannot reach another route (`../`, `?`, `#`).
fn encode_segment(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// The tool result of an HTTP answer.
fn answer(status: StatusCode, bytes: &[u8]) -> CallToolResult {
    let body = serde_json::from_slice::<Value>(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()));
    let failed = !status.is_success() || body.get("ok") == Some(&Value::Bool(false));
    let answer = json!({"status": status.as_u16(), "body": body});
    let content = vec![ContentBlock::text(answer.to_string())];
    let mut result =
        if failed { CallToolResult::error(content) } else { CallToolResult::success(content) };
    result.structured_content = Some(answer);
    result
}

/// A call refused before it reached the API (the request was never sent).
fn refused(reason: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(reason)])
}
