//! Turns byte spans and dotted key paths into `line:column` positions, so a config error can
//! name both the key and where it stands in the file.

use std::ops::Range;
use std::path::Path;

use toml_edit::{Document, Item, Key, TableLike, Value};

use super::ConfigError;

/// A parse or type error of the TOML deserializer, as one line with key and position.
pub fn deserialize_error(source: &str, file: &Path, err: &toml::de::Error) -> ConfigError {
    let span = err.span();
    let key = span
        .as_ref()
        .and_then(|span| {
            Document::parse(source).ok().and_then(|doc| key_at(doc.as_table(), span.start))
        })
        .unwrap_or_default();
    ConfigError {
        file: file.to_path_buf(),
        position: span.map(|span| line_col(source, span.start)),
        key,
        message: err.message().trim().replace('\n', " "),
    }
}

/// Where the key at the dotted `path` is written, if it is written in the file at all.
pub fn position_of(source: &str, path: &str) -> Option<(usize, usize)> {
    let doc = Document::parse(source).ok()?;
    let mut table: &dyn TableLike = doc.as_table();
    let mut segments = path.split('.').peekable();
    while let Some(segment) = segments.next() {
        let (key, item) = table.get_key_value(segment)?;
        if segments.peek().is_none() {
            let span = key.span().or_else(|| item.span())?;
            return Some(line_col(source, span.start));
        }
        table = item.as_table_like()?;
    }
    None
}

/// The dotted path of the deepest key whose key or value covers `offset`.
fn key_at(table: &dyn TableLike, offset: usize) -> Option<String> {
    for (name, item) in table.iter() {
        let key = table.get_key_value(name).map(|(key, _)| key);
        let covers = key.and_then(Key::span).is_some_and(|span| contains(&span, offset))
            || item_span(item).is_some_and(|span| contains(&span, offset));
        if let Some(inner) = item.as_table_like().and_then(|inner| key_at(inner, offset)) {
            return Some(format!("{name}.{inner}"));
        }
        if covers {
            return Some(name.to_string());
        }
    }
    None
}

fn item_span(item: &Item) -> Option<Range<usize>> {
    match item {
        Item::Value(Value::InlineTable(_)) | Item::Table(_) | Item::ArrayOfTables(_) => None,
        other => other.span(),
    }
}

fn contains(span: &Range<usize>, offset: usize) -> bool {
    span.start <= offset && offset < span.end.max(span.start + 1)
}

/// 1-based line and column (in characters) of a byte offset.
fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |tail| tail.chars().count()) + 1;
    (line, column)
}
