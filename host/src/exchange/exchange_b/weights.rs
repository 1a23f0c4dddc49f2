//! Exchange B's request weights (wire reference §3.1): 1200 per minute per IP shared by every
//! REST request. `/info` costs 2 for the light reads and 20 for the rest, and `userFills` and
//! `candleSnapshot` cost more after the answer — one per 20 fills and one per 60 candles
//! returned (the reference leaves the rounding open; whole blocks are counted, as the
//! simulator does) — so the client counts the base weight before sending and the surcharge
//! once the answer is read. `/exchange` costs `1 + floor(batch / 40)`.

use crate::exchange::budget::Limits;

/// The limits of exchange B for the request budget. It has no order-count windows like
/// exchange A (its per-address action budget grows with traded volume and is not tracked
/// here), so the order counts are set out of reach and only the weight binds.
pub const LIMITS: Limits =
    Limits { weight_per_minute: 1200, orders_per_10s: 1_000_000, orders_per_day: 1_000_000_000 };

/// The weight of `/info` request `kind` before any surcharge.
pub fn info_weight(kind: &str) -> u64 {
    match kind {
        "allMids"
        | "l2Book"
        | "spotClearinghouseState"
        | "orderStatus"
        | "clearinghouseState"
        | "exchangeStatus" => 2,
        "userRole" => 60,
        _ => 20,
    }
}

/// The weight charged after an `/info` answer of `kind` that returned `items` elements.
pub fn surcharge(kind: &str, items: usize) -> u64 {
    let items = items as u64;
    match kind {
        "userFills" | "userFillsByTime" => items / 20,
        "candleSnapshot" => items / 60,
        _ => 0,
    }
}

/// The weight of an `/exchange` action carrying `batch` orders or cancels.
pub fn exchange_weight(batch: usize) -> u64 {
    1 + batch as u64 / 40
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_the_reference_table() {
        assert_eq!(info_weight("allMids"), 2);
        assert_eq!(info_weight("orderStatus"), 2);
        assert_eq!(info_weight("frontendOpenOrders"), 20);
        assert_eq!(info_weight("spotMeta"), 20);
        assert_eq!(surcharge("userFills", 2000), 100);
        assert_eq!(surcharge("candleSnapshot", 500), 8);
        assert_eq!(surcharge("allMids", 500), 0);
        assert_eq!((exchange_weight(1), exchange_weight(79), exchange_weight(80)), (1, 2, 3));
    }
}
