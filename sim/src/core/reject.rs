//! Why the core refuses a request, in its own words: each front end maps these to its
//! exchange's codes and messages.

/// A symbol filter an order broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    Price,
    LotSize,
    MarketLotSize,
    PercentPriceBySide,
    Notional,
    MaxNumOrders,
    MaxNumAlgoOrders,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    UnknownSymbol,
    Filter(Filter),
    InsufficientBalance,
    /// An open order (or list) of the account already carries this client id.
    DuplicateClientId,
    StopWouldTrigger,
    /// A post-only order would take liquidity.
    WouldTake,
    /// A market order by quote amount would buy less than the minimum quantity.
    BookBelowMinQty,
    /// A one-cancels-the-other list needs a stop-loss leg.
    ListWithoutStopLoss,
    /// The list's take-profit, the last price and the stop are not in order.
    ListPrices,
    UnknownOrder,
    /// A scripted partial fill needs a resting limit order and 0 < qty < its remaining.
    PartialFillImpossible,
}
