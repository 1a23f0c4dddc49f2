//! The simulator's refusal: an error exactly as exchange A reports it ([`ApiError`]: HTTP
//! status, code, message), the core's refusals in its codes and messages, and the default
//! message of each code an injected fault may answer with. Exchange A's front end, the admin
//! API and the simulator's handle ([`crate::Sim`]) all refuse with it, so it sits below them
//! all.

use crate::core::{Filter, Reject};

/// An error exactly as the exchange reports it: HTTP status, code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub code: i64,
    pub msg: String,
}

impl ApiError {
    pub fn new(status: u16, code: i64, msg: impl Into<String>) -> Self {
        Self { status, code, msg: msg.into() }
    }
    /// HTTP 400 with the given code.
    pub fn bad(code: i64, msg: impl Into<String>) -> Self {
        Self::new(400, code, msg)
    }
    pub fn mandatory(name: &str) -> Self {
        Self::bad(
            -1102,
            format!("Mandatory parameter '{name}' was not sent, was empty/null, or malformed."),
        )
    }
    pub fn not_required(name: &str) -> Self {
        Self::bad(-1106, format!("Parameter '{name}' sent when not required."))
    }
    pub fn insufficient_balance() -> Self {
        Self::bad(-2010, "Account has insufficient balance for requested action.")
    }
    pub fn filter(name: &str) -> Self {
        Self::bad(-1013, format!("Filter failure: {name}"))
    }
}

impl From<Reject> for ApiError {
    fn from(r: Reject) -> Self {
        match r {
            Reject::UnknownSymbol => ApiError::bad(-1121, "Invalid symbol."),
            Reject::Filter(f) => ApiError::filter(filter_name(f)),
            Reject::InsufficientBalance => ApiError::insufficient_balance(),
            Reject::DuplicateClientId => ApiError::bad(-2010, "Duplicate order sent."),
            Reject::StopWouldTrigger => {
                ApiError::bad(-2010, "Stop price would trigger immediately.")
            }
            Reject::WouldTake => ApiError::bad(-2010, "Order would immediately match and take."),
            Reject::BookBelowMinQty => ApiError::bad(
                -2010,
                "Order book liquidity is less than `LOT_SIZE` filter minimum quantity.",
            ),
            Reject::ListWithoutStopLoss => {
                ApiError::bad(-1168, "At least one OCO order must be contingent.")
            }
            Reject::ListPrices => ApiError::bad(
                -2010,
                "The relationship of the prices for the orders is not correct.",
            ),
            Reject::UnknownOrder => ApiError::bad(-2013, "Order does not exist."),
            Reject::PartialFillImpossible => ApiError::bad(
                -1013,
                "A partial fill needs a resting limit order and 0 < qty < its remaining quantity.",
            ),
        }
    }
}

fn filter_name(f: Filter) -> &'static str {
    match f {
        Filter::Price => "PRICE_FILTER",
        Filter::LotSize => "LOT_SIZE",
        Filter::MarketLotSize => "MARKET_LOT_SIZE",
        Filter::PercentPriceBySide => "PERCENT_PRICE_BY_SIDE",
        Filter::Notional => "NOTIONAL",
        Filter::MaxNumOrders => "MAX_NUM_ORDERS",
        Filter::MaxNumAlgoOrders => "MAX_NUM_ALGO_ORDERS",
    }
}

/// The message exchange A sends with `code` when the fault that injects it names none.
pub fn default_msg(code: i64) -> &'static str {
    match code {
        -1003 => "Too many requests queued.",
        -1013 => "Filter failure: NOTIONAL",
        -1015 => "Too many new orders; current limit is 100 orders per 10 SECOND.",
        -1021 => "Timestamp for this request is outside of the recvWindow.",
        -1022 => "Signature for this request is not valid.",
        -1121 => "Invalid symbol.",
        -2010 => "Account has insufficient balance for requested action.",
        -2011 => "Unknown order sent.",
        -2013 => "Order does not exist.",
        -2015 => "Invalid API-key, IP, or permissions for action.",
        -1007 => {
            "Timeout waiting for response from backend server. Send status unknown; execution status unknown."
        }
        _ => "An unknown error occurred while processing the request.",
    }
}
