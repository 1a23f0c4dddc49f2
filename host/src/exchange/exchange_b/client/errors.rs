//! Exchange B's error answers as the service's typed errors. Exchange B has no error codes,
//! only texts (wire reference §4.4), so every typed error carries code [`NO_CODE`] and the
//! exchange's text unchanged; HTTP answers other than 200 carry their status as the code.

use std::time::Duration;

use reqwest::StatusCode;

use crate::exchange::ExchangeError;

/// The code of an error exchange B answered with a text only.
pub const NO_CODE: i64 = 0;

/// The text of an IOC that matched nothing: an answer (nothing filled), not an error.
pub const IOC_NO_MATCH: &str = "Order could not immediately match against any resting orders";

/// The start of the refusal of an action past the address-based budget (wire reference §3.1).
const ADDRESS_BUDGET_SPENT: &str = "Too many cumulative requests sent";

/// Past the address budget the exchange still takes one action per this long.
pub const ADDRESS_BUDGET_PAUSE: Duration = Duration::from_secs(10);

/// The text of a cancel of an order that is not open.
const MISSING_ORDER: &str = "Order was never placed, already canceled, or filled";

/// An HTTP answer other than a success, 429 or 418: a 4xx is a refused request (422 is a body
/// the exchange could not read; nothing was done); anything else (a 5xx, a gateway's page)
/// may have executed.
pub fn http_error(status: StatusCode, text: String) -> ExchangeError {
    let code = i64::from(status.as_u16());
    if status.is_client_error() {
        ExchangeError::BadRequest { code, msg: text }
    } else {
        ExchangeError::Unknown { detail: format!("HTTP {status}: {text}") }
    }
}

/// HTTP 429 or 418 with its Retry-After `wait`. On a read nothing was done: the typed limit
/// (`RateLimited`, which a short wait lets the transport send again, or `Banned`). On an
/// action it is `Unknown`: the exchange refuses before executing, but a proxy or a gateway in
/// between may answer so after forwarding the request, so the order may exist; it is looked
/// up by its cloid, never sent again by itself.
pub fn limited(status: StatusCode, wait: Duration, action: bool) -> ExchangeError {
    if action {
        ExchangeError::Unknown {
            detail: format!(
                "HTTP {status} (Retry-After {} s) to an action, which may have executed",
                wait.as_secs()
            ),
        }
    } else if status == StatusCode::IM_A_TEAPOT {
        ExchangeError::Banned { retry_after: wait }
    } else {
        ExchangeError::RateLimited { retry_after: wait }
    }
}

/// A top-level `err` (its text): the whole action was refused, nothing executed.
pub fn top_level_error(msg: String) -> ExchangeError {
    if msg.starts_with(ADDRESS_BUDGET_SPENT) {
        ExchangeError::RateLimited { retry_after: ADDRESS_BUDGET_PAUSE }
    } else if msg.contains("User or API Wallet") && msg.contains("does not exist") {
        // The signer recovered from the signature is unknown: a wrong key or a wrong network.
        ExchangeError::InvalidSignature { code: NO_CODE, msg }
    } else if msg.contains("Must deposit") {
        ExchangeError::Unauthorized { code: NO_CODE, msg }
    } else if msg.contains("Invalid nonce") {
        ExchangeError::InvalidTimestamp { code: NO_CODE, msg }
    } else {
        ExchangeError::BadRequest { code: NO_CODE, msg }
    }
}

/// A per-order or per-cancel `{"error": …}`.
pub fn entry_error(msg: String) -> ExchangeError {
    let lower = msg.to_ascii_lowercase();
    if lower.contains("insufficient spot balance") {
        ExchangeError::InsufficientBalance { code: NO_CODE, msg }
    } else if lower.contains("tick size")
        || lower.contains("minimum value")
        || lower.contains("invalid size")
        || lower.contains("significant figures")
    {
        ExchangeError::FilterFailure { code: NO_CODE, msg }
    } else if msg.starts_with(MISSING_ORDER) {
        ExchangeError::UnknownOrder { code: NO_CODE, msg }
    } else {
        ExchangeError::OrderRejected { code: NO_CODE, msg }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_map_to_typed_errors_keeping_the_text() {
        let e = entry_error("Order has insufficient spot balance to trade asset=10142".into());
        assert!(matches!(e, ExchangeError::InsufficientBalance { .. }), "{e:?}");
        assert!(e.to_string().contains("insufficient spot balance to trade asset=10142"));
        let missing = entry_error(format!("{MISSING_ORDER}. asset=10142"));
        assert!(matches!(missing, ExchangeError::UnknownOrder { .. }), "{missing:?}");
        for text in [
            "Price must be divisible by tick size. asset=10142",
            "Order must have minimum value of 10 USDC. asset=10142",
        ] {
            assert!(matches!(entry_error(text.into()), ExchangeError::FilterFailure { .. }));
        }
        let other = entry_error("Order price too far from oracle asset=10142".into());
        assert!(matches!(other, ExchangeError::OrderRejected { .. }));
    }

    #[test]
    fn top_level_errors_are_signature_deposit_nonce_budget_or_bad_request() {
        let signer = "L1 error: User or API Wallet 0x0123456789abcdef0123456789abcdef01234567 \
                      does not exist.";
        let e = top_level_error(signer.into());
        assert!(matches!(e, ExchangeError::InvalidSignature { .. }), "{e:?}");
        assert!(e.to_string().contains("does not exist"));
        let deposit = top_level_error("Must deposit before performing actions. User: 0xab".into());
        assert!(matches!(deposit, ExchangeError::Unauthorized { .. }));
        let nonce = top_level_error("Invalid nonce: duplicate nonce".into());
        assert!(matches!(nonce, ExchangeError::InvalidTimestamp { .. }));
        assert!(matches!(top_level_error("x".into()), ExchangeError::BadRequest { .. }));
        let spent = "Too many cumulative requests sent (14295 > 14294) for cumulative volume \
                     traded $4295.52. Place taker orders to free up 1 request per USDC traded.";
        let spent = top_level_error(spent.into());
        assert!(
            matches!(spent, ExchangeError::RateLimited { retry_after } if retry_after == ADDRESS_BUDGET_PAUSE),
            "{spent:?}"
        );
    }

    #[test]
    fn http_statuses_map_to_refusals_or_unknown_outcomes() {
        let e = http_error(StatusCode::UNPROCESSABLE_ENTITY, "Failed to deserialize".into());
        assert_eq!(e.code(), Some(422));
        for status in [StatusCode::BAD_GATEWAY, StatusCode::SERVICE_UNAVAILABLE] {
            let page = "<html><body><h1>502 Bad Gateway</h1></body></html>";
            assert!(http_error(status, page.into()).is_unknown_outcome(), "{status}");
        }
        assert!(http_error(StatusCode::GATEWAY_TIMEOUT, "".into()).is_unknown_outcome());
    }

    /// A 429 or 418 to an action may come from a proxy that forwarded it: unknown, never a
    /// limit the transport would wait out and send again. Reads keep the typed limits.
    #[test]
    fn a_limit_on_an_action_is_an_unknown_outcome_and_on_a_read_a_limit() {
        let wait = Duration::from_secs(3);
        for status in [StatusCode::TOO_MANY_REQUESTS, StatusCode::IM_A_TEAPOT] {
            let e = limited(status, wait, true);
            assert!(e.is_unknown_outcome(), "{e:?}");
            assert!(e.to_string().contains("may have executed"), "{e}");
        }
        let read = limited(StatusCode::TOO_MANY_REQUESTS, wait, false);
        assert_eq!(read, ExchangeError::RateLimited { retry_after: wait });
        let ban = limited(StatusCode::IM_A_TEAPOT, wait, false);
        assert_eq!(ban, ExchangeError::Banned { retry_after: wait });
    }
}
