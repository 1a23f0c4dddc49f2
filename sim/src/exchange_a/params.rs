//! Request parameters as exchange A reads them: query string and form body, mixed, the query
//! winning on duplicates; decimal syntax and precision checks; HMAC signature verification
//! over the raw (still percent-encoded) query concatenated with the raw body.

use hmac::{Hmac, Mac};
use rust_decimal::Decimal;
use sha2::Sha256;
use std::collections::HashMap;
use std::str::FromStr;

/// Re-exported: exchange A's parameters refuse with it, and the service's paper exchange
/// names it here.
pub use crate::error::ApiError;

pub const DECIMAL_RANGE: &str = "^([0-9]{1,20})(\\.[0-9]{1,20})?$";
pub const CLIENT_ID_RANGE: &str = "^[\\.A-Z\\:/a-z0-9_-]{1,36}$";

/// Parsed parameters of one request.
#[derive(Debug, Clone, Default)]
pub struct Params {
    map: HashMap<String, String>,
}

fn parse_pairs(raw: &str) -> Result<Vec<(String, String)>, ApiError> {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(raw.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let mut seen = std::collections::HashSet::new();
    for (k, _) in &pairs {
        if !seen.insert(k.as_str()) {
            return Err(ApiError::bad(-1101, "Duplicate values for a parameter detected."));
        }
    }
    Ok(pairs)
}

impl Params {
    /// Merges query and form body; a parameter in both takes the query's value.
    pub fn parse(query: &str, body: &str) -> Result<Self, ApiError> {
        let mut map = HashMap::new();
        for (k, v) in parse_pairs(body)? {
            map.insert(k, v);
        }
        for (k, v) in parse_pairs(query)? {
            map.insert(k, v);
        }
        Ok(Self { map })
    }

    pub fn from_pairs<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        Self { map: pairs.into_iter().collect() }
    }

    /// The value, `None` when absent or empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.map.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn req(&self, name: &str) -> Result<&str, ApiError> {
        self.get(name).ok_or_else(|| ApiError::mandatory(name))
    }

    /// A DECIMAL parameter: plain decimal text, at most 8 decimals.
    pub fn decimal(&self, name: &str) -> Result<Option<Decimal>, ApiError> {
        let Some(raw) = self.get(name) else {
            return Ok(None);
        };
        parse_decimal(name, raw).map(Some)
    }

    pub fn req_decimal(&self, name: &str) -> Result<Decimal, ApiError> {
        self.decimal(name)?.ok_or_else(|| ApiError::mandatory(name))
    }

    /// A LONG parameter.
    pub fn long(&self, name: &str) -> Result<Option<i64>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v.parse::<i64>().map(Some).map_err(|_| {
                ApiError::bad(
                    -1100,
                    format!("Illegal characters found in parameter '{name}'; legal range is '^-?[0-9]{{1,19}}$'."),
                )
            }),
        }
    }

    /// A client order id: the safe character set, 1-36 characters.
    pub fn client_id(&self, name: &str) -> Result<Option<String>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) if valid_client_id(v) => Ok(Some(v.to_string())),
            Some(_) => Err(ApiError::bad(
                -1100,
                format!(
                    "Illegal characters found in parameter '{name}'; legal range is '{CLIENT_ID_RANGE}'."
                ),
            )),
        }
    }
}

/// The `limit` parameter: `default` when absent, at most `max`.
pub fn limit_param(p: &Params, default: usize, max: usize) -> Result<usize, ApiError> {
    match p.long("limit")? {
        None => Ok(default),
        Some(l) if l >= 1 => Ok((l as usize).min(max)),
        Some(_) => Err(ApiError::bad(
            -1100,
            "Illegal characters found in parameter 'limit'; legal range is '1-1000'.",
        )),
    }
}

pub fn valid_client_id(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 36
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b':' | b'/' | b'_' | b'-'))
}

/// Parses decimal text with the exchange's rules (-1100 syntax, -1111 precision).
pub fn parse_decimal(name: &str, raw: &str) -> Result<Decimal, ApiError> {
    let illegal = || {
        ApiError::bad(
            -1100,
            format!(
                "Illegal characters found in parameter '{name}'; legal range is '{DECIMAL_RANGE}'."
            ),
        )
    };
    let (int, frac) = match raw.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (raw, None),
    };
    let digits_ok =
        |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits_ok(int) || frac.is_some_and(|f| !digits_ok(f)) {
        return Err(illegal());
    }
    if let Some(f) = frac
        && f.trim_end_matches('0').len() > 8
    {
        return Err(ApiError::bad(-1111, format!("Parameter '{name}' has too much precision.")));
    }
    let trimmed = match frac {
        Some(f) => {
            let f = f.trim_end_matches('0');
            if f.is_empty() { int.to_string() } else { format!("{int}.{f}") }
        }
        None => int.to_string(),
    };
    Decimal::from_str(&trimmed).map_err(|_| illegal())
}

/// The `timestamp` of a signed request in ms (microseconds are accepted and scaled).
pub fn timestamp(raw: &str) -> Result<i64, ApiError> {
    let ts: i64 = raw.parse().map_err(|_| ApiError::mandatory("timestamp"))?;
    Ok(if ts > 100_000_000_000_000 { ts / 1000 } else { ts })
}

/// The timing rule of signed requests: not 1 s or more ahead of the server, and not older than
/// `recvWindow` (default 5000, at most 60000).
pub fn check_timestamp(ts: i64, recv_window: Option<&str>, now: i64) -> Result<(), ApiError> {
    let recv_window = match recv_window {
        None => Decimal::from(5000),
        Some(v) => {
            let d = parse_decimal("recvWindow", v)?;
            if d > Decimal::from(60_000) {
                return Err(ApiError::bad(
                    -1102,
                    "'recvWindow' contains unexpected value. Cannot be greater than 60000.",
                ));
            }
            d
        }
    };
    if ts >= now.saturating_add(1000) {
        return Err(ApiError::bad(
            -1021,
            "Timestamp for this request was 1000ms ahead of the server's time.",
        ));
    }
    if Decimal::from(now.saturating_sub(ts)) > recv_window {
        return Err(ApiError::bad(
            -1021,
            "Timestamp for this request is outside of the recvWindow.",
        ));
    }
    Ok(())
}

/// Removes every `signature=` pair from a raw `a=1&b=2` string, keeping the rest byte for byte.
fn strip_signature(raw: &str) -> String {
    raw.split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("signature="))
        .collect::<Vec<_>>()
        .join("&")
}

/// HMAC-SHA256 hex of `payload` under `secret`.
pub fn sign(secret: &str, payload: &str) -> String {
    // HMAC accepts keys of any length, so `new_from_slice` cannot fail here.
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(m) => m,
        Err(_) => return String::new(),
    };
    mac.update(payload.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// Verifies the signature of a request: payload = raw query (without the signature pair)
/// concatenated with the raw body (without the signature pair), no separator.
pub fn verify_signature(
    secret: &str,
    raw_query: &str,
    raw_body: &str,
    params: &Params,
) -> Result<(), ApiError> {
    let Some(given) = params.get("signature") else {
        return Err(ApiError::mandatory("signature"));
    };
    let payload = format!("{}{}", strip_signature(raw_query), strip_signature(raw_body));
    let expected = sign(secret, &payload);
    let ok = given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a.to_ascii_lowercase() ^ b))
            == 0;
    if ok { Ok(()) } else { Err(ApiError::bad(-1022, "Signature for this request is not valid.")) }
}

/// The WebSocket API's signature payload: every param but `signature`, sorted by name, as
/// `name=value` joined with `&`; strings as they are, numbers and booleans as their JSON text,
/// nothing percent-encoded.
pub fn ws_payload(params: &serde_json::Map<String, serde_json::Value>) -> String {
    let mut pairs: Vec<(&String, String)> = params
        .iter()
        .filter(|(k, _)| k.as_str() != "signature")
        .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_string)))
        .collect();
    pairs.sort();
    pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")
}

/// Verifies `params.signature` of a WebSocket API request against `secret`.
pub fn verify_ws_signature(
    secret: &str,
    params: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), ApiError> {
    let given = params
        .get("signature")
        .and_then(|v| v.as_str())
        .ok_or_else(|| ApiError::mandatory("signature"))?;
    if given.eq_ignore_ascii_case(&sign(secret, &ws_payload(params))) {
        Ok(())
    } else {
        Err(ApiError::bad(-1022, "Signature for this request is not valid."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j";

    #[test]
    fn documented_vectors_verify() {
        let q = "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559";
        assert_eq!(
            sign(SECRET, q),
            "c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71"
        );
        let q2 = format!(
            "{q}&signature=C8DB56825AE71D6D79447849E617115F4A920FA2ACDCAB2B053C4B2838BD6B71"
        );
        let p = Params::parse(&q2, "").unwrap_or_default();
        assert!(verify_signature(SECRET, &q2, "", &p).is_ok());
        // mixed query + body
        let query = "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC";
        let body = "quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559&signature=0fd168b8ddb4876a0358a8d14d0c9f3da0e9b20c5d52b2a00fcf7d1c602f9a77";
        let p = Params::parse(query, body).unwrap_or_default();
        assert!(verify_signature(SECRET, query, body, &p).is_ok());
        let bad = body.replace("quantity=1", "quantity=2");
        let p = Params::parse(query, &bad).unwrap_or_default();
        assert_eq!(verify_signature(SECRET, query, &bad, &p).map_err(|e| e.code), Err(-1022));
    }

    #[test]
    fn websocket_api_vectors_verify() {
        let key = "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A";
        let order = serde_json::json!({
            "symbol": "BTCUSDT", "side": "SELL", "type": "LIMIT", "timeInForce": "GTC",
            "quantity": "0.01000000", "price": "52000.00", "recvWindow": 100,
            "timestamp": 1645423376532i64, "apiKey": key,
            "signature": "aa1b5712c094bc4e57c05a1a5c1fd8d88dcd628338ea863fec7b88e59fe2db24"
        });
        let order = order.as_object().cloned().unwrap_or_default();
        assert!(verify_ws_signature(SECRET, &order).is_ok());
        let subscribe = serde_json::json!({
            "apiKey": key, "recvWindow": 5000, "timestamp": 1747385641636i64,
            "signature": "49601FFC5B0122C3C7EE3EA85EF7D6CD76256F5191A57C976418FAA32E917653"
        });
        let mut subscribe = subscribe.as_object().cloned().unwrap_or_default();
        assert!(verify_ws_signature(SECRET, &subscribe).is_ok(), "hex case does not matter");
        subscribe.insert("recvWindow".into(), serde_json::json!(6000));
        let refused = verify_ws_signature(SECRET, &subscribe).map_err(|e| e.code);
        assert_eq!(refused, Err(-1022));
    }

    #[test]
    fn query_wins_over_body() {
        let p = Params::parse("a=1", "a=2&b=3").unwrap_or_default();
        assert_eq!(p.get("a"), Some("1"));
        assert_eq!(p.get("b"), Some("3"));
        assert!(Params::parse("a=1&a=2", "").is_err());
    }

    #[test]
    fn decimal_rules() {
        assert_eq!(parse_decimal("q", "1.50000000000").ok(), Decimal::from_str("1.5").ok());
        assert_eq!(parse_decimal("q", "1e5").map_err(|e| e.code), Err(-1100));
        assert_eq!(parse_decimal("q", "-1").map_err(|e| e.code), Err(-1100));
        assert_eq!(parse_decimal("q", "0.123456789").map_err(|e| e.code), Err(-1111));
        assert!(parse_decimal("q", "99999999999999999999.99999999").is_ok());
    }
}
