//! A JSON tree that keeps an answer exactly as it was written: members in wire order (serde_json's
//! map sorts them unless its `preserve_order` feature is on, and exchange A's clients may care
//! about the order), duplicate keys, and numbers as their raw tokens (so `1e400`, which no
//! `f64` holds, can be written). Damaging an answer means parsing it into this tree, editing
//! the tree and rendering it again; an untouched tree renders to the bytes serde_json wrote.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

#[derive(Debug, PartialEq)]
pub(super) enum Json {
    Null,
    Bool(bool),
    /// The number's token as written.
    Number(String),
    String(String),
    Array(Vec<Json>),
    /// Members in the order written; a key may repeat.
    Object(Vec<(String, Json)>),
}

/// One scalar of a tree and the key it is the value of (None for an element of a list).
pub(super) type Scalar<'a> = (Option<&'a str>, &'a mut Json);

impl Json {
    /// The tree of a JSON text, or None if the text is not JSON.
    pub(super) fn parse(text: &[u8]) -> Option<Json> {
        serde_json::from_slice(text).ok()
    }

    /// The tree as compact JSON text, members in the tree's order.
    pub(super) fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(token) => out.push_str(token),
            Json::String(s) => write_string(s, out),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(key, out);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }

    /// Every scalar of the tree at any depth, in the order written.
    pub(super) fn scalars_mut(&mut self) -> Vec<Scalar<'_>> {
        let mut out = Vec::new();
        collect_scalars(self, None, &mut out);
        out
    }

    /// The members of the answer's main object: the top level, or the first element of a
    /// top-level list (a list answer's first record).
    pub(super) fn main_object(&mut self) -> Option<&mut Vec<(String, Json)>> {
        match self {
            Json::Object(members) => Some(members),
            Json::Array(items) => match items.first_mut() {
                Some(Json::Object(members)) => Some(members),
                _ => None,
            },
            _ => None,
        }
    }

    /// Reverses the members of every object at any depth.
    pub(super) fn reverse_keys(&mut self) {
        match self {
            Json::Array(items) => items.iter_mut().for_each(Json::reverse_keys),
            Json::Object(members) => {
                members.reverse();
                members.iter_mut().for_each(|(_, value)| value.reverse_keys());
            }
            _ => {}
        }
    }
}

fn collect_scalars<'a>(node: &'a mut Json, key: Option<&'a str>, out: &mut Vec<Scalar<'a>>) {
    match node {
        Json::Array(items) => items.iter_mut().for_each(|item| collect_scalars(item, None, out)),
        Json::Object(members) => {
            for (k, v) in members.iter_mut() {
                collect_scalars(v, Some(k.as_str()), out);
            }
        }
        scalar => out.push((key, scalar)),
    }
}

/// A JSON string literal, escaped as serde_json escapes it.
fn write_string(s: &str, out: &mut String) {
    out.push_str(&serde_json::Value::from(s).to_string());
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.to_string()))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.to_string()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Json, E> {
        // serde_json's own spelling, so a float renders as the simulator wrote it.
        Ok(Json::Number(serde_json::Value::from(n).to_string()))
    }
    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry::<String, Json>()? {
            members.push(member);
        }
        Ok(Json::Object(members))
    }
}
