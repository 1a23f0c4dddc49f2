//! Exchange A's spelling of the core's enums, both ways, with the error each bad value gets.

use super::params::{ApiError, Params};
use crate::core::{Expiry, OrderType, Side, Status, Tif};

pub fn side(s: Side) -> &'static str {
    match s {
        Side::Buy => "BUY",
        Side::Sell => "SELL",
    }
}

pub fn parse_side(s: &str) -> Result<Side, ApiError> {
    match s {
        "BUY" => Ok(Side::Buy),
        "SELL" => Ok(Side::Sell),
        _ => Err(ApiError::bad(-1117, "Invalid side.")),
    }
}

pub fn order_type(t: OrderType) -> &'static str {
    match t {
        OrderType::Limit => "LIMIT",
        OrderType::Market => "MARKET",
        OrderType::StopLoss => "STOP_LOSS",
        OrderType::StopLossLimit => "STOP_LOSS_LIMIT",
        OrderType::TakeProfit => "TAKE_PROFIT",
        OrderType::TakeProfitLimit => "TAKE_PROFIT_LIMIT",
        OrderType::LimitMaker => "LIMIT_MAKER",
    }
}

pub fn parse_order_type(s: &str) -> Result<OrderType, ApiError> {
    Ok(match s {
        "LIMIT" => OrderType::Limit,
        "MARKET" => OrderType::Market,
        "STOP_LOSS" => OrderType::StopLoss,
        "STOP_LOSS_LIMIT" => OrderType::StopLossLimit,
        "TAKE_PROFIT" => OrderType::TakeProfit,
        "TAKE_PROFIT_LIMIT" => OrderType::TakeProfitLimit,
        "LIMIT_MAKER" => OrderType::LimitMaker,
        _ => return Err(ApiError::bad(-1116, "Invalid orderType.")),
    })
}

pub fn tif(t: Tif) -> &'static str {
    match t {
        Tif::Gtc => "GTC",
        Tif::Ioc => "IOC",
        Tif::Fok => "FOK",
    }
}

pub fn parse_tif(s: &str) -> Result<Tif, ApiError> {
    match s {
        "GTC" => Ok(Tif::Gtc),
        "IOC" => Ok(Tif::Ioc),
        "FOK" => Ok(Tif::Fok),
        _ => Err(ApiError::bad(-1115, "Invalid timeInForce.")),
    }
}

pub fn status(s: Status) -> &'static str {
    match s {
        Status::New => "NEW",
        Status::PartiallyFilled => "PARTIALLY_FILLED",
        Status::Filled => "FILLED",
        Status::Canceled => "CANCELED",
        Status::Expired => "EXPIRED",
    }
}

pub fn expiry(e: Expiry) -> &'static str {
    match e {
        Expiry::PartnerTriggered => "OCO_TRIGGER",
        Expiry::InsufficientLiquidity => "INSUFFICIENT_LIQUIDITY",
        Expiry::UnfilledFok => "UNFILLED_FOK_ORDER_EXPIRED",
        Expiry::UnfilledIoc => "UNFILLED_IOC_QUANTITY_EXPIRED",
    }
}

/// How much a placement answer says (`newOrderRespType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespType {
    Ack,
    Result,
    Full,
}

pub fn resp_type(p: &Params, default: RespType) -> Result<RespType, ApiError> {
    match p.get("newOrderRespType") {
        None => Ok(default),
        Some("ACK") => Ok(RespType::Ack),
        Some("RESULT") => Ok(RespType::Result),
        Some("FULL") => Ok(RespType::Full),
        Some(_) => Err(ApiError::bad(
            -1100,
            "Illegal characters found in parameter 'newOrderRespType'; legal range is 'ACK, RESULT, FULL'.",
        )),
    }
}
