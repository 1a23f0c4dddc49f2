//! Orders and cancels (`/exchange`, wire reference §4.2-§4.4): the service's order as exchange
//! B's limit order (a MARKET is an IOC at the mid ± the slippage), rounded and checked before
//! it is signed, the answer read by [`super::action_answer`], and the lookup by cloid that
//! resolves an ambiguous outcome. An order is sent once: after a 5xx, a 429, a timeout, a
//! dropped connection or an answer that is not a well-formed outcome it is looked up, never
//! re-sent.

use rust_decimal::{Decimal, RoundingStrategy};
use spotbot_exchange_b_protocol::numbers::{check_price, check_size, round_size, slippage_price};
use spotbot_exchange_b_protocol::{
    Action, CancelByCloidWire, CancelWire, Cloid, Grouping, OrderTypeWire, OrderWire, Tif,
    WireDecimal,
};

use super::ExchangeBClient;
use super::action_answer::{cancelled, placed};
use crate::exchange::exchange_b::symbols::Pair;
use crate::exchange::lookup;
use crate::exchange::{
    ExchangeError, NewOrder, Order, OrderRef, OrderType, Price, Qty, Side, TimeInForce,
};

/// Exchange B's limit order for a rounded, checked `o`; `mid` prices a MARKET.
pub fn order_wire(
    pair: &Pair,
    o: &NewOrder,
    mid: Option<Price>,
    slippage: Decimal,
    cloid: Cloid,
) -> Result<OrderWire, ExchangeError> {
    let is_buy = o.side == Side::Buy;
    let (price, tif) = match (o.order_type, o.time_in_force) {
        (OrderType::Market, _) => {
            let mid = mid.ok_or_else(|| refused("a MARKET order needs the mid"))?;
            (slippage_price(mid.0, is_buy, slippage, pair.sz_decimals), Tif::Ioc)
        }
        (OrderType::LimitMaker, _) => (limit_price(o)?, Tif::Alo),
        (OrderType::Limit, Some(TimeInForce::Ioc | TimeInForce::Fok)) => {
            (limit_price(o)?, Tif::Ioc)
        }
        (OrderType::Limit, _) => (limit_price(o)?, Tif::Gtc),
        _ => return Err(refused("exchange B has no stop orders on spot")),
    };
    let size = o.qty.ok_or_else(|| refused("an order needs a base quantity"))?.0;
    check_price(price, pair.sz_decimals).map_err(|e| refused(&e.to_string()))?;
    check_size(size, pair.sz_decimals).map_err(|e| refused(&e.to_string()))?;
    Ok(OrderWire {
        a: pair.asset,
        b: is_buy,
        p: WireDecimal(price),
        s: WireDecimal(size),
        r: false,
        t: OrderTypeWire::Limit { tif },
        c: Some(cloid),
    })
}

fn limit_price(o: &NewOrder) -> Result<Decimal, ExchangeError> {
    Ok(o.price.ok_or_else(|| refused("a LIMIT order needs a price"))?.0)
}

fn refused(reason: &str) -> ExchangeError {
    ExchangeError::Refused { reason: reason.to_string() }
}

impl ExchangeBClient {
    pub(super) async fn submit_order(&self, o: &NewOrder) -> Result<Order, ExchangeError> {
        if o.client_order_id.is_empty() {
            return Err(refused(
                "an order needs a client order id (its cloid resolves an ambiguous outcome)",
            ));
        }
        if !matches!(o.order_type, OrderType::Market | OrderType::Limit | OrderType::LimitMaker) {
            return Err(refused("exchange B has no stop orders on spot"));
        }
        let pair = self.pair(&o.symbol).await?;
        let rules = pair.rules();
        let mid =
            if o.order_type == OrderType::Market { Some(self.mid(&pair).await?) } else { None };
        let mut order = o.clone();
        if let (Some(mid), None, Some(quote)) = (mid, o.qty, o.quote_qty) {
            // A quote amount becomes a size at the mid, rounded down.
            order.qty = Some(Qty(round_size(
                quote.checked_div(mid.0).unwrap_or_default(),
                pair.sz_decimals,
                RoundingStrategy::ToZero,
            )));
            order.quote_qty = None;
        }
        let order = rules.round_order(&order);
        rules.check_order(&order, mid)?;
        let cloid = self.ids.learn(&order.client_order_id);
        let wire = order_wire(&pair, &order, mid, self.config.market_slippage, cloid)?;
        let action = Action::Order { orders: vec![wire.clone()], grouping: Grouping::Na };
        let answer = self.act(&action).await;
        let detail = match answer.and_then(|s| placed(&order, &wire, s, self.clock.now_ms())) {
            Err(ExchangeError::Unknown { detail }) => detail,
            known => return known,
        };
        tracing::warn!(client_order_id = %order.client_order_id, %detail, "order outcome unknown; looking it up by cloid");
        self.resolve(&order.symbol, &order.client_order_id, detail).await
    }

    /// Looks an order up by its client order id after an ambiguous outcome: what the
    /// exchange has, or `Unknown` when it cannot tell. Never "absent": an action answered
    /// with a 5xx may still land in a later block, so unlike exchange A's the order is not
    /// sent again (reconciliation settles it later).
    async fn resolve(
        &self,
        symbol: &str,
        client_id: &str,
        detail: String,
    ) -> Result<Order, ExchangeError> {
        let id = OrderRef::Client(client_id.to_string());
        let (attempts, delay) = (self.config.lookup_attempts, self.config.lookup_delay);
        // Every attempt is made: an order that lands late is still found.
        let found = lookup::by_client_id(attempts, delay, u32::MAX, || self.get_order(symbol, &id));
        let why = match found.await {
            Ok(Some(found)) => return Ok(found),
            Ok(None) => "not on the exchange (yet)".to_string(),
            Err(e) => e.to_string(),
        };
        Err(ExchangeError::Unknown {
            detail: format!("{detail}; order {client_id} not resolved by its cloid: {why}"),
        })
    }

    /// Cancels an order and answers its final state. A cancel whose answer is lost or not a
    /// well-formed outcome is resolved by reading the order: closed is an answer, still open
    /// stays `Unknown`.
    pub(super) async fn cancel(&self, symbol: &str, id: &OrderRef) -> Result<Order, ExchangeError> {
        let pair = self.pair(symbol).await?;
        let action = match id {
            OrderRef::Id(oid) => Action::Cancel {
                cancels: vec![CancelWire {
                    a: pair.asset,
                    o: u64::try_from(*oid).map_err(|_| refused("an order id is never negative"))?,
                }],
            },
            OrderRef::Client(c) => Action::CancelByCloid {
                cancels: vec![CancelByCloidWire { asset: pair.asset, cloid: self.ids.learn(c) }],
            },
        };
        match self.act(&action).await.and_then(cancelled) {
            Ok(()) => self.get_order(symbol, id).await,
            Err(ExchangeError::Unknown { detail }) => match self.get_order(symbol, id).await {
                Ok(o) if !o.status.is_open() => Ok(o),
                Ok(_) => Err(ExchangeError::Unknown { detail }),
                Err(e) => Err(ExchangeError::Unknown { detail: format!("{detail}; lookup: {e}") }),
            },
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::exchange_b::cloid::cloid_of;
    use rust_decimal_macros::dec;

    fn btc() -> Pair {
        Pair {
            symbol: "BTCUSDT".into(),
            coin: "@142".into(),
            asset: 10142,
            base: "BTC".into(),
            sz_decimals: 5,
        }
    }

    #[test]
    fn a_market_sell_is_an_ioc_at_the_mid_less_five_percent() {
        let o = NewOrder::market("BTCUSDT", Side::Sell, Qty(dec!(0.001)), "SX_a_BTCUSDT");
        let w = order_wire(
            &btc(),
            &o,
            Some(Price(dec!(97123.5))),
            dec!(0.05),
            cloid_of("SX_a_BTCUSDT"),
        )
        .unwrap();
        assert_eq!(
            (w.p.to_string(), w.s.to_string(), w.b, w.a),
            ("92267".into(), "0.001".into(), false, 10142)
        );
        assert_eq!(w.t, OrderTypeWire::Limit { tif: Tif::Ioc });
        let buy = NewOrder { side: Side::Buy, ..o };
        let w = order_wire(&btc(), &buy, Some(Price(dec!(97123.5))), dec!(0.05), cloid_of("x"))
            .unwrap();
        assert_eq!(w.p.to_string(), "101980");
    }

    #[test]
    fn limit_types_map_to_time_in_force_and_stops_are_refused() {
        let tp = NewOrder::limit(
            "BTCUSDT",
            Side::Sell,
            Qty(dec!(0.001)),
            Price(dec!(101000)),
            "SO_a_BTCUSDT",
        );
        let tif =
            |o: &NewOrder| order_wire(&btc(), o, None, dec!(0.05), cloid_of("c")).map(|w| w.t);
        assert_eq!(tif(&tp).unwrap(), OrderTypeWire::Limit { tif: Tif::Gtc });
        let maker =
            NewOrder { order_type: OrderType::LimitMaker, time_in_force: None, ..tp.clone() };
        assert_eq!(tif(&maker).unwrap(), OrderTypeWire::Limit { tif: Tif::Alo });
        let ioc = NewOrder { time_in_force: Some(TimeInForce::Fok), ..tp.clone() };
        assert_eq!(tif(&ioc).unwrap(), OrderTypeWire::Limit { tif: Tif::Ioc });
        let stop = NewOrder {
            order_type: OrderType::StopLossLimit,
            stop_price: Some(Price(dec!(90000))),
            ..tp.clone()
        };
        assert!(tif(&stop).unwrap_err().to_string().contains("no stop orders"));
        let bad = NewOrder { price: Some(Price(dec!(101000.5))), ..tp };
        assert!(matches!(tif(&bad), Err(ExchangeError::Refused { .. })), "six significant figures");
    }
}
