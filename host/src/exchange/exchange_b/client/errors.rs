//! Exchange B's error answers as the service's typed errors. Exchange B has no error codes,
//! only texts (wire reference §4.4), so every typed error carries code [`NO_CODE`] and the
//! exchange's text unchanged; HTTP answers other than 200 carry their status as the code.

use std::time::Duration;

use reqwest::StatusCode;

use crate::exchange::ExchangeError;
use crate::exchange::exchange_b::wire::{ExchangeAnswer, OkResponse, StatusEntry};

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

/// An HTTP answer other than 200/429: 422 is a body the exchange could not read (nothing was
/// done), 5xx may have executed, anything else is a refused request.
pub fn http_error(status: StatusCode, text: String) -> ExchangeError {
    let code = i64::from(status.as_u16());
    if status.is_server_error() {
        ExchangeError::Unknown { detail: format!("HTTP {status}: {text}") }
    } else {
        ExchangeError::BadRequest { code, msg: text }
    }
}

/// The statuses of an `ok` answer, or the typed error of an `err` one.
pub fn statuses(answer: ExchangeAnswer) -> Result<Vec<StatusEntry>, ExchangeError> {
    if answer.status != "ok" {
        let text = match answer.response {
            serde_json::Value::String(text) => text,
            other => other.to_string(),
        };
        return Err(top_level_error(text));
    }
    let ok: OkResponse = serde_json::from_value(answer.response).map_err(|e| {
        ExchangeError::Unknown { detail: format!("/exchange: unreadable ok answer: {e}") }
    })?;
    Ok(ok.data.map(|d| d.statuses).unwrap_or_default())
}

/// A top-level `err`: the whole action was refused, nothing executed.
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
    use crate::exchange::exchange_b::wire::fixtures;

    fn answer(text: &str) -> Result<Vec<StatusEntry>, ExchangeError> {
        statuses(serde_json::from_str(text).unwrap())
    }

    fn first_error(text: &str) -> ExchangeError {
        match answer(text).unwrap().remove(0) {
            StatusEntry::Error { error } => entry_error(error),
            other => panic!("not an error: {other:?}"),
        }
    }

    #[test]
    fn texts_map_to_typed_errors_keeping_the_text() {
        let e = first_error(fixtures::INSUFFICIENT);
        assert!(matches!(e, ExchangeError::InsufficientBalance { .. }), "{e:?}");
        assert!(e.to_string().contains("insufficient spot balance to trade asset=10142"));
        let missing = first_error(fixtures::CANCEL_MISSING);
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
        let e = answer(fixtures::WRONG_SIGNER).unwrap_err();
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
        assert!(http_error(StatusCode::BAD_GATEWAY, "".into()).is_unknown_outcome());
        assert!(
            matches!(answer(fixtures::CANCEL_OK).unwrap()[0], StatusEntry::Text(ref s) if s == "success")
        );
    }
}
