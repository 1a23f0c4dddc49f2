//! Exchange B's texts for refused orders and cancels. Most are the exchange's own (wire
//! reference §4.2 and §4.4); the few the exchange's documents do not give are marked as the
//! simulator's. A per-order or per-cancel error ends with ` asset=<id>`, as the live server
//! appends it.

use crate::core::{Filter, Reject};
use rust_decimal::Decimal;
use spotbot_exchange_b_protocol::numbers::to_wire;

pub const REDUCE_ONLY: &str = "Reduce-only is invalid for spot trading";
pub const TRIGGER: &str = "Placing trigger orders is not enabled on spot trading yet";
pub const TICK: &str = "Price must be divisible by tick size.";
/// The simulator's text for a size with too many decimals, zero, or out of the listing's range.
pub const SIZE: &str = "Order has invalid size.";
pub const MIN_VALUE: &str = "Order must have minimum value of 10 USDC.";
pub const INSUFFICIENT_BALANCE: &str = "Order has insufficient spot balance to trade";
pub const IOC_CANCEL: &str = "Order could not immediately match against any resting orders.";
pub const MISSING_ORDER: &str = "Order was never placed, already canceled, or filled.";
pub const ORACLE: &str = "Order price too far from oracle";
/// The simulator's text for an asset id that is no listed spot pair.
pub const UNKNOWN_ASSET: &str = "Invalid asset.";
/// The simulator's text for a cloid an open order of the account already carries.
pub const DUPLICATE_CLOID: &str = "Cloid is already used by an open order.";
/// The simulator's text when the account has too many open orders on the pair.
pub const TOO_MANY_ORDERS: &str = "Too many open orders.";

/// The simulator's text for a refusal exchange B's orders cannot meet.
pub const REFUSED: &str = "Order rejected.";

/// `text` as one entry of `statuses`.
pub fn entry(text: &str, asset: u32) -> serde_json::Value {
    serde_json::json!({ "error": format!("{text} asset={asset}") })
}

/// The start of the post-only refusal's text.
const BAD_ALO_PX: &str = "Post only order would have immediately matched";

/// The order status `orderUpdates` reports for an order refused with `text`, when exchange B
/// names one (its `*Rejected` statuses); the simulator's own refusals have none.
pub fn rejected_status(text: &str) -> Option<&'static str> {
    Some(match text {
        REDUCE_ONLY => "reduceOnlyRejected",
        TICK => "tickRejected",
        MIN_VALUE => "minTradeNtlRejected",
        INSUFFICIENT_BALANCE => "insufficientSpotBalanceRejected",
        ORACLE => "oracleRejected",
        t if t.starts_with(BAD_ALO_PX) => "badAloPxRejected",
        _ => return None,
    })
}

/// The text of a core refusal of an order; `bbo` gives the best bid and ask for the
/// post-only refusal.
pub fn order_refusal(r: Reject, bbo: impl FnOnce() -> (Decimal, Decimal)) -> String {
    let text = match r {
        Reject::WouldTake => {
            let (bid, ask) = bbo();
            return format!("{BAD_ALO_PX}, bbo was {}@{}.", to_wire(bid), to_wire(ask));
        }
        Reject::InsufficientBalance => INSUFFICIENT_BALANCE,
        Reject::Filter(Filter::Price) => TICK,
        Reject::Filter(Filter::PercentPriceBySide) => ORACLE,
        Reject::Filter(Filter::LotSize | Filter::MarketLotSize | Filter::Notional) => SIZE,
        Reject::Filter(Filter::MaxNumOrders | Filter::MaxNumAlgoOrders) => TOO_MANY_ORDERS,
        Reject::DuplicateClientId => DUPLICATE_CLOID,
        Reject::UnknownSymbol => UNKNOWN_ASSET,
        Reject::UnknownOrder => MISSING_ORDER,
        // Refusals of what exchange B cannot send: stops, lists, market orders by quote.
        Reject::StopWouldTrigger
        | Reject::BookBelowMinQty
        | Reject::ListWithoutStopLoss
        | Reject::ListPrices
        | Reject::PartialFillImpossible => REFUSED,
    };
    text.to_string()
}
