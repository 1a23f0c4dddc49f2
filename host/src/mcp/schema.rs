//! Self-contained input schemas: the document's schemas refer to each other with
//! `#/components/schemas/<name>`, which means nothing to a client that only sees one tool. Each
//! tool's schema gets the schemas it reaches as `$defs`, its references rewritten to them, so
//! a client can validate arguments before calling.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

const COMPONENT: &str = "#/components/schemas/";
const LOCAL: &str = "#/$defs/";

/// Rewrites the references of `schema` (an object schema) and adds `$defs` with every
/// component schema they reach, transitively, taken from `components`.
pub fn localize(
    schema: &mut Map<String, Value>,
    components: &Map<String, Value>,
) -> Result<(), String> {
    let mut pending = BTreeSet::new();
    schema.values_mut().try_for_each(|v| rewrite(v, &mut pending))?;
    let mut defs = Map::new();
    while let Some(name) = pending.pop_first() {
        if defs.contains_key(&name) {
            continue;
        }
        let mut def = components
            .get(&name)
            .cloned()
            .ok_or_else(|| format!("the schema `{name}` is referenced but not defined"))?;
        rewrite(&mut def, &mut pending)?;
        defs.insert(name, def);
    }
    if !defs.is_empty() {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    Ok(())
}

/// Points every `$ref` in `value` at `$defs` and collects the names it points at.
fn rewrite(value: &mut Value, found: &mut BTreeSet<String>) -> Result<(), String> {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get_mut("$ref") {
                let name = target
                    .strip_prefix(COMPONENT)
                    .ok_or_else(|| format!("`{target}` is not a component schema"))?
                    .to_string();
                *target = format!("{LOCAL}{name}");
                found.insert(name);
            }
            map.values_mut().try_for_each(|v| rewrite(v, found))
        }
        Value::Array(items) => items.iter_mut().try_for_each(|v| rewrite(v, found)),
        _ => Ok(()),
    }
}
