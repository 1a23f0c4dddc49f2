//! Exchange A's error answers as the service's typed errors.

use reqwest::StatusCode;

use crate::exchange::ExchangeError;

/// Maps an exchange error answer onto the typed error, keeping code and message.
pub fn map_error(status: StatusCode, code: i64, msg: String) -> ExchangeError {
    match code {
        -2010 if msg.contains("insufficient balance") => {
            ExchangeError::InsufficientBalance { code, msg }
        }
        -2010 => ExchangeError::OrderRejected { code, msg },
        -1013 => ExchangeError::FilterFailure { code, msg },
        -2013 => ExchangeError::UnknownOrder { code, msg },
        -2011 if msg.starts_with("Unknown order") => ExchangeError::UnknownOrder { code, msg },
        -2011 => ExchangeError::CancelRejected { code, msg },
        -1121 => ExchangeError::InvalidSymbol { code, msg },
        -1021 => ExchangeError::InvalidTimestamp { code, msg },
        -1022 => ExchangeError::InvalidSignature { code, msg },
        -2014 | -2015 => ExchangeError::Unauthorized { code, msg },
        // The exchange's own "execution status unknown" answers.
        -1007 | -1000 | -1001 | -1006 | -1008 => {
            ExchangeError::Unknown { detail: format!("{code}: {msg}") }
        }
        _ if status.is_server_error() => {
            ExchangeError::Unknown { detail: format!("HTTP {status}, {code}: {msg}") }
        }
        _ => ExchangeError::BadRequest { code, msg },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_map_to_typed_variants_keeping_code_and_message() {
        let e = map_error(
            StatusCode::BAD_REQUEST,
            -2010,
            "Account has insufficient balance for requested action.".into(),
        );
        assert!(matches!(e, ExchangeError::InsufficientBalance { code: -2010, .. }));
        assert!(e.to_string().contains("insufficient balance for requested action"));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -2010, "Duplicate order sent.".into()),
            ExchangeError::OrderRejected { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -1013, "Filter failure: LOT_SIZE".into()),
            ExchangeError::FilterFailure { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -2013, "Order does not exist.".into()),
            ExchangeError::UnknownOrder { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -2011, "Unknown order sent.".into()),
            ExchangeError::UnknownOrder { .. }
        ));
        assert!(matches!(
            map_error(
                StatusCode::BAD_REQUEST,
                -2011,
                "Order was not canceled due to cancel restrictions.".into()
            ),
            ExchangeError::CancelRejected { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -1121, "Invalid symbol.".into()),
            ExchangeError::InvalidSymbol { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -1021, "x".into()),
            ExchangeError::InvalidTimestamp { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::BAD_REQUEST, -1022, "x".into()),
            ExchangeError::InvalidSignature { .. }
        ));
        assert!(matches!(
            map_error(StatusCode::UNAUTHORIZED, -2015, "x".into()),
            ExchangeError::Unauthorized { .. }
        ));
        assert!(map_error(StatusCode::BAD_REQUEST, -1007, "Timeout".into()).is_unknown_outcome());
        assert!(map_error(StatusCode::SERVICE_UNAVAILABLE, -9999, "x".into()).is_unknown_outcome());
        assert_eq!(map_error(StatusCode::BAD_REQUEST, -1100, "x".into()).code(), Some(-1100));
    }
}
