//! The damages that rewrite an answer's body (status and headers untouched): cut it, change
//! its shape, a type, a field, a number or an enum value, repeat a key, reorder the keys.
//! Every pick is drawn from the damage's seed, so one seed damages one answer one way. An
//! answer that offers nothing of the kind to damage (not JSON, no such field) is cut instead,
//! so a damage armed is always a damage done; `reordered_keys` is the exception, a correct
//! answer by design (unchanged where no object has two keys; an answer that is not JSON is
//! cut as well).

use super::Damage;
use super::json::{Json, Scalar};
use fastrand::Rng;

/// What `unknown_enum` writes: a value no client knows.
pub(super) const MYSTERY: &str = "MYSTERY_VALUE";
/// What `huge_number` writes: a number no `f64` holds.
pub(super) const HUGE: &str = "1e400";
/// What `negative_number` writes where quantities, prices and ids are never negative.
pub(super) const NEGATIVE: &str = "-0.0001";

/// The body `damage` makes of `body`; `enum_fields` are the wire's enum-valued field names.
/// Kinds that do not rewrite bodies are not passed here; `truncated` is the fallback of all.
pub(super) fn edit(damage: Damage, body: &[u8], seed: u64, enum_fields: &[&str]) -> Vec<u8> {
    let mut rng = Rng::with_seed(seed);
    let mut tree = Json::parse(body);
    let done = tree.as_mut().is_some_and(|t| match damage {
        Damage::WrongShape => wrong_shape(t),
        Damage::WrongType => wrong_type(t, &mut rng),
        Damage::MissingField => missing_field(t, &mut rng),
        Damage::HugeNumber => replace_number(t, &mut rng, HUGE),
        Damage::NegativeNumber => replace_number(t, &mut rng, NEGATIVE),
        Damage::UnknownEnum => unknown_enum(t, &mut rng, enum_fields) || wrong_type(t, &mut rng),
        Damage::DuplicateKeys => duplicate_key(t, &mut rng),
        Damage::ReorderedKeys => {
            t.reverse_keys();
            true
        }
        _ => false,
    });
    match tree {
        Some(t) if done => t.render().into_bytes(),
        _ => truncate(body, &mut rng),
    }
}

/// The body cut at a point in its first half: never valid JSON (an object or list lacks its
/// end, a literal its letters).
fn truncate(body: &[u8], rng: &mut Rng) -> Vec<u8> {
    let cut = if body.len() < 2 { 0 } else { rng.usize(1..=body.len() / 2) };
    body[..cut].to_vec()
}

/// An object becomes a one-element list holding it, a list an object `{"data": [...]}`.
fn wrong_shape(t: &mut Json) -> bool {
    let wrapped = match t {
        Json::Object(_) => Json::Array(vec![std::mem::replace(t, Json::Null)]),
        Json::Array(_) => {
            Json::Object(vec![("data".to_string(), std::mem::replace(t, Json::Null))])
        }
        _ => return false,
    };
    *t = wrapped;
    true
}

/// One scalar among `candidates`, drawn from `rng`.
fn pick<'a>(mut candidates: Vec<Scalar<'a>>, rng: &mut Rng) -> Option<&'a mut Json> {
    if candidates.is_empty() {
        return None;
    }
    let i = rng.usize(..candidates.len());
    Some(candidates.swap_remove(i).1)
}

/// One scalar at any depth gets a value of another JSON type.
fn wrong_type(t: &mut Json, rng: &mut Rng) -> bool {
    let Some(value) = pick(t.scalars_mut(), rng) else { return false };
    *value = match value {
        Json::String(_) | Json::Null => Json::Number("7".to_string()),
        Json::Number(_) => Json::String("x".to_string()),
        _ => Json::String("yes".to_string()),
    };
    true
}

/// One member of the main object is removed.
fn missing_field(t: &mut Json, rng: &mut Rng) -> bool {
    let Some(members) = t.main_object().filter(|m| !m.is_empty()) else { return false };
    members.remove(rng.usize(..members.len()));
    true
}

/// Whether a scalar holds a number: a JSON number, or a string of a decimal number as exchange
/// A writes prices and quantities (`"0.01000000"`).
fn numeric(value: &Json) -> bool {
    match value {
        Json::Number(_) => true,
        Json::String(s) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            let (int, frac) = digits.split_once('.').unwrap_or((digits, "0"));
            [int, frac].iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        }
        _ => false,
    }
}

/// One numeric scalar at any depth becomes `number`, a string where the wire wrote a string,
/// the raw token where it wrote a number.
fn replace_number(t: &mut Json, rng: &mut Rng, number: &str) -> bool {
    let numbers = t.scalars_mut().into_iter().filter(|(_, v)| numeric(v)).collect();
    let Some(value) = pick(numbers, rng) else { return false };
    *value = match value {
        Json::String(_) => Json::String(number.to_string()),
        _ => Json::Number(number.to_string()),
    };
    true
}

/// One string-valued enum field at any depth becomes [`MYSTERY`].
fn unknown_enum(t: &mut Json, rng: &mut Rng, enum_fields: &[&str]) -> bool {
    let enums = t
        .scalars_mut()
        .into_iter()
        .filter(|(key, v)| {
            key.is_some_and(|k| enum_fields.contains(&k)) && matches!(v, Json::String(_))
        })
        .collect();
    let Some(value) = pick(enums, rng) else { return false };
    *value = Json::String(MYSTERY.to_string());
    true
}

/// One member of the main object is repeated at its end with a different value: which one a
/// client keeps is up to its parser, so the answer contradicts itself.
fn duplicate_key(t: &mut Json, rng: &mut Rng) -> bool {
    let Some(members) = t.main_object().filter(|m| !m.is_empty()) else { return false };
    let (key, value) = &members[rng.usize(..members.len())];
    let repeat = (key.clone(), different(value));
    members.push(repeat);
    true
}

/// A value unlike `value`, of the same JSON type where one exists: a string or number gets a
/// leading 1 (a decimal string stays a decimal of another value, a status becomes unknown), a
/// bool flips, a container or null becomes another type.
fn different(value: &Json) -> Json {
    match value {
        Json::String(s) => Json::String(format!("1{s}")),
        Json::Number(token) => Json::Number(match token.strip_prefix('-') {
            Some(abs) => format!("-1{abs}"),
            None => format!("1{token}"),
        }),
        Json::Bool(b) => Json::Bool(!b),
        Json::Null => Json::Number("1".to_string()),
        Json::Array(_) | Json::Object(_) => Json::Null,
    }
}
