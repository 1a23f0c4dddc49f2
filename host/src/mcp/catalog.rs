//! The tools, derived from the OpenAPI document: one per operation, named by its
//! `operationId`, described by its summary and description, with an input schema of its path
//! and query parameters plus `body` for its JSON request body.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Map, Value, json};

use super::effects;
use super::schema;

/// The argument that carries the JSON request body (parameters keep their own names).
pub const BODY: &str = "body";

const METHODS: [&str; 5] = ["get", "put", "post", "delete", "patch"];

/// Where a parameter goes in the HTTP request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Path,
    Query,
}

/// What a tool call needs to become the operation's HTTP request.
#[derive(Debug, Clone)]
pub struct Operation {
    /// Upper case, as in the license table.
    pub method: String,
    /// The route pattern, e.g. `/api/signal/{symbol}/confirm`.
    pub path: String,
    pub params: BTreeMap<String, Place>,
    /// Whether the operation takes a JSON body.
    pub body: bool,
}

/// Every tool and the operation behind it.
#[derive(Debug, Default)]
pub struct Catalog {
    tools: Vec<Tool>,
    operations: BTreeMap<String, Operation>,
}

impl Catalog {
    /// Derives the tools from the document (as JSON). Fails on what a tool cannot express:
    /// a missing or repeated `operationId`, a parameter outside the path and query, a body
    /// that is not JSON, an unresolvable reference.
    pub fn from_document(document: &Value) -> Result<Self, String> {
        let empty = Map::new();
        let components =
            document.pointer("/components/schemas").and_then(Value::as_object).unwrap_or(&empty);
        let paths = document["paths"].as_object().ok_or("the document has no paths")?;
        let mut catalog = Catalog::default();
        for (path, item) in paths {
            for method in METHODS {
                let Some(operation) = item.get(method) else { continue };
                let method = method.to_uppercase();
                if effects::excluded(&method, path) {
                    continue;
                }
                let label = format!("{method} {path}");
                let (tool, operation) = derive(&method, path, operation, components)
                    .map_err(|err| format!("{label}: {err}"))?;
                if catalog.operations.insert(tool.name.to_string(), operation).is_some() {
                    return Err(format!("{label}: the operationId `{}` is not unique", tool.name));
                }
                catalog.tools.push(tool);
            }
        }
        Ok(catalog)
    }

    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    pub fn operation(&self, name: &str) -> Option<&Operation> {
        self.operations.get(name)
    }
}

/// One operation's tool and dispatch recipe.
fn derive(
    method: &str,
    path: &str,
    operation: &Value,
    components: &Map<String, Value>,
) -> Result<(Tool, Operation), String> {
    let name = operation["operationId"].as_str().ok_or("no operationId")?;
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut params = BTreeMap::new();
    for parameter in operation["parameters"].as_array().into_iter().flatten() {
        let name = parameter["name"].as_str().ok_or("a parameter without a name")?;
        let place = match parameter["in"].as_str() {
            Some("path") => Place::Path,
            Some("query") => Place::Query,
            other => return Err(format!("parameter `{name}` is in {other:?}, not path or query")),
        };
        if name == BODY || params.insert(name.to_string(), place).is_some() {
            return Err(format!("parameter `{name}` cannot be an argument of its own"));
        }
        let mut schema = parameter.get("schema").cloned().unwrap_or_else(|| json!({}));
        if let Some(description) = parameter.get("description") {
            describe(&mut schema, description.clone());
        }
        properties.insert(name.to_string(), schema);
        if parameter["required"] == true {
            required.push(name.to_string());
        }
    }
    let body = match operation.get("requestBody") {
        None => false,
        Some(request_body) => {
            let schema = request_body
                .pointer("/content/application~1json/schema")
                .ok_or("the request body is not application/json")?;
            let mut schema = schema.clone();
            describe(&mut schema, json!("The JSON request body."));
            properties.insert(BODY.to_string(), schema);
            if request_body["required"] == true {
                required.push(BODY.to_string());
            }
            true
        }
    };
    let mut input = JsonObject::new();
    input.insert("type".into(), json!("object"));
    input.insert("properties".into(), Value::Object(properties));
    input.insert("additionalProperties".into(), json!(false));
    if !required.is_empty() {
        input.insert("required".into(), json!(required));
    }
    schema::localize(&mut input, components)?;

    let summary = operation["summary"].as_str().unwrap_or(name);
    let mut description = format!("{method} {path}: {summary}");
    if let Some(more) = operation["description"].as_str().filter(|d| !d.is_empty()) {
        description.push_str("\n\n");
        description.push_str(more);
    }
    let tool = Tool::new(name.to_string(), description, Arc::new(input))
        .annotate(effects::of(method, path).annotations(summary));
    Ok((tool, Operation { method: method.to_string(), path: path.to_string(), params, body }))
}

/// Sets the description of an object schema (a boolean schema has none).
fn describe(schema: &mut Value, description: Value) {
    if let Some(schema) = schema.as_object_mut() {
        schema.insert("description".into(), description);
    }
}
