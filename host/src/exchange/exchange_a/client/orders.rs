//! Orders and OCO lists: their parameters, submission, and the lookup by client order id that
//! resolves an ambiguous outcome before anything is re-sent.

use reqwest::Method;

use super::{ExchangeAClient, Security, check_client_id, fmt_decimal};
use crate::exchange::exchange_a::signer::Params;
use crate::exchange::exchange_a::wire::{self};
use crate::exchange::lookup::{self, TradeEvidence};
use crate::exchange::{
    ExchangeError, Fill, NewOco, NewOrder, Order, OrderList, OrderRef, OrderType, Side, Trade,
};

impl ExchangeAClient {
    fn order_params(o: &NewOrder) -> Params {
        let mut p = Params::new();
        p.push("symbol", &o.symbol)
            .push("side", wire::side_str(o.side))
            .push("type", wire::type_str(o.order_type))
            .push_opt("timeInForce", o.time_in_force.map(wire::tif_str))
            .push_opt("quantity", o.qty.map(|q| fmt_decimal(q.0)))
            .push_opt("quoteOrderQty", o.quote_qty.map(fmt_decimal))
            .push_opt("price", o.price.map(|p| fmt_decimal(p.0)))
            .push_opt("stopPrice", o.stop_price.map(|p| fmt_decimal(p.0)))
            .push("newClientOrderId", &o.client_order_id)
            .push("newOrderRespType", "FULL");
        p
    }

    fn oco_params(o: &NewOco) -> Params {
        let (above_is_tp, side) = (o.side == Side::Sell, wire::side_str(o.side));
        let tp = |p: &mut Params, prefix: &str| {
            p.push(&format!("{prefix}Type"), "LIMIT_MAKER")
                .push(&format!("{prefix}Price"), fmt_decimal(o.take_profit.0))
                .push_opt(
                    &format!("{prefix}ClientOrderId"),
                    o.take_profit_client_order_id.as_ref(),
                );
        };
        let sl = |p: &mut Params, prefix: &str| {
            p.push(&format!("{prefix}Type"), "STOP_LOSS_LIMIT")
                .push(&format!("{prefix}StopPrice"), fmt_decimal(o.stop_price.0))
                .push(&format!("{prefix}Price"), fmt_decimal(o.stop_limit_price.0))
                .push(&format!("{prefix}TimeInForce"), "GTC")
                .push_opt(&format!("{prefix}ClientOrderId"), o.stop_client_order_id.as_ref());
        };
        let mut p = Params::new();
        p.push("symbol", &o.symbol)
            .push("listClientOrderId", &o.list_client_order_id)
            .push("side", side)
            .push("quantity", fmt_decimal(o.qty.0));
        if above_is_tp {
            tp(&mut p, "above");
            sl(&mut p, "below");
        } else {
            sl(&mut p, "above");
            tp(&mut p, "below");
        }
        p.push("newOrderRespType", "FULL");
        p
    }

    pub(super) fn order_ref(p: &mut Params, id: &OrderRef, client_name: &str) {
        match id {
            OrderRef::Id(i) => p.push("orderId", i.to_string()),
            OrderRef::Client(c) => p.push(client_name, c),
        };
    }

    /// Looks an order up by client order id after an ambiguous outcome (see
    /// [`lookup::by_client_id`]).
    async fn resolve_order(
        &self,
        symbol: &str,
        client_id: &str,
    ) -> Result<Option<Order>, ExchangeError> {
        let id = OrderRef::Client(client_id.to_string());
        let (attempts, delay) = (self.config.lookup_attempts, self.config.lookup_delay);
        lookup::by_client_id(attempts, delay, lookup::ABSENT_AFTER, || self.get_order(symbol, &id))
            .await
    }

    pub(super) async fn get_order(
        &self,
        symbol: &str,
        id: &OrderRef,
    ) -> Result<Order, ExchangeError> {
        let mut p = Params::new();
        p.push("symbol", symbol);
        Self::order_ref(&mut p, id, "origClientOrderId");
        let o: wire::OrderJson =
            self.call(Method::GET, "/api/v3/order", p, Security::Signed).await?;
        o.into_order()
    }

    /// Adds the fills of an order that was found by lookup (queries carry none).
    async fn with_fills(&self, mut o: Order) -> Order {
        if o.executed_qty.0.is_zero() || !o.fills.is_empty() {
            return o;
        }
        if let Ok(trades) = self.trades(&o.symbol, Some(o.order_id)).await {
            o.fills = trades.into_iter().map(Fill::from).collect();
        }
        o
    }

    pub(super) async fn trades(
        &self,
        symbol: &str,
        order_id: Option<i64>,
    ) -> Result<Vec<Trade>, ExchangeError> {
        let mut p = Params::new();
        p.push("symbol", symbol).push_opt("orderId", order_id.map(|i| i.to_string()));
        let v: Vec<wire::TradeJson> =
            self.call(Method::GET, "/api/v3/myTrades", p, Security::Signed).await?;
        Ok(v.into_iter().map(Trade::from).collect())
    }

    pub(super) async fn submit_order(&self, o: &NewOrder) -> Result<Order, ExchangeError> {
        check_client_id(&o.client_order_id)?;
        let rules = self.rules_for(&o.symbol).await?;
        let rounded = rules.round_order(o);
        let o = &rounded;
        let last = if o.order_type == OrderType::Market && o.qty.is_some() {
            Some(self.recent_price(&o.symbol).await?)
        } else {
            None
        };
        rules.check_order(o, last)?;
        let params = Self::order_params(o);
        let first_sent_at = self.server_now_ms();
        // At most two sends, and the second only after the exchange said twice, well formed,
        // that the first does not exist and the account's trades show nothing of it: an
        // order is never placed twice.
        for send in 0..2 {
            let answer = self
                .call::<wire::OrderJson>(
                    Method::POST,
                    "/api/v3/order",
                    params.clone(),
                    Security::Signed,
                )
                .await
                .and_then(|j| placed_answer(j, o));
            let detail = match answer {
                Ok(placed) => {
                    if let Some(p) = placed.avg_price() {
                        self.remember_price(&o.symbol, p);
                    }
                    return Ok(placed);
                }
                Err(ExchangeError::Unknown { detail }) => detail,
                Err(e) => return Err(e),
            };
            tracing::warn!(client_order_id = %o.client_order_id, %detail, "order outcome unknown; looking it up by client order id");
            match self.resolve_order(&o.symbol, &o.client_order_id).await? {
                Some(found) => return Ok(self.with_fills(found).await),
                None if send == 0 => {
                    let evidence = lookup::trades_since(
                        self,
                        &o.symbol,
                        Some(o.side),
                        &o.client_order_id,
                        first_sent_at,
                    )
                    .await;
                    match evidence {
                        TradeEvidence::Clear => {
                            tracing::warn!(client_order_id = %o.client_order_id, "order not on the exchange and no trade of it; sending it again");
                        }
                        TradeEvidence::Ours(found) => return Ok(self.with_fills(found).await),
                        TradeEvidence::Doubt(why) => {
                            return Err(ExchangeError::Unknown {
                                detail: format!("{detail}; not sent again: {why}"),
                            });
                        }
                    }
                }
                None => return Err(ExchangeError::Unknown { detail }),
            }
        }
        Err(ExchangeError::Unknown { detail: "order outcome unresolved".into() })
    }

    pub(super) async fn get_list(&self, id: &OrderRef) -> Result<OrderList, ExchangeError> {
        let mut p = Params::new();
        match id {
            OrderRef::Id(i) => p.push("orderListId", i.to_string()),
            OrderRef::Client(c) => p.push("origClientOrderId", c),
        };
        let l: wire::OrderListJson =
            self.call(Method::GET, "/api/v3/orderList", p, Security::Signed).await?;
        l.into_list()
    }

    /// A list found by lookup carries no leg reports: fetch the legs.
    async fn with_legs(&self, mut l: OrderList) -> Result<OrderList, ExchangeError> {
        if l.orders.is_empty() {
            for (id, _) in l.legs.clone() {
                l.orders.push(self.get_order(&l.symbol, &OrderRef::Id(id)).await?);
            }
        }
        Ok(l)
    }

    pub(super) async fn submit_oco(&self, o: &NewOco) -> Result<OrderList, ExchangeError> {
        check_client_id(&o.list_client_order_id)?;
        for id in [&o.take_profit_client_order_id, &o.stop_client_order_id].into_iter().flatten() {
            check_client_id(id)?;
        }
        let rules = self.rules_for(&o.symbol).await?;
        let rounded = rules.round_oco(o);
        let o = &rounded;
        rules.check_oco(o)?;
        let params = Self::oco_params(o);
        // A second OCO could only be refused (the first holds the coin), but it is sent again
        // only on the same evidence as an order: the list is absent, twice, well formed.
        for send in 0..2 {
            let answer = self
                .call::<wire::OrderListJson>(
                    Method::POST,
                    "/api/v3/orderList/oco",
                    params.clone(),
                    Security::Signed,
                )
                .await
                .and_then(|j| placed_list(j, o));
            let detail = match answer {
                Ok(list) => return Ok(list),
                Err(ExchangeError::Unknown { detail }) => detail,
                Err(e) => return Err(e),
            };
            tracing::warn!(list_client_order_id = %o.list_client_order_id, %detail, "OCO outcome unknown; looking it up");
            let (attempts, delay) = (self.config.lookup_attempts, self.config.lookup_delay);
            let id = OrderRef::Client(o.list_client_order_id.clone());
            let absent_after = lookup::ABSENT_AFTER;
            match lookup::by_client_id(attempts, delay, absent_after, || self.get_list(&id)).await {
                Ok(Some(l)) => return self.with_legs(l).await,
                Ok(None) if send == 0 => {
                    tracing::warn!(list_client_order_id = %o.list_client_order_id, "OCO not on the exchange; sending it again");
                }
                _ => return Err(ExchangeError::Unknown { detail }),
            }
        }
        Err(ExchangeError::Unknown { detail: "OCO outcome unresolved".into() })
    }
}

/// The answer to a placement, when it is a documented FULL answer naming the order sent;
/// anything else is an unknown outcome (the order may exist: it is looked up, never taken as
/// refused).
fn placed_answer(answer: wire::OrderJson, sent: &NewOrder) -> Result<Order, ExchangeError> {
    let unknown = |detail: String| ExchangeError::Unknown {
        detail: format!("/api/v3/order: unreadable answer: {detail}"),
    };
    let placed = answer.into_placed().map_err(|e| unknown(e.to_string()))?;
    if placed.client_order_id != sent.client_order_id || placed.symbol != sent.symbol {
        return Err(unknown(format!(
            "it names {} {}, not the order sent",
            placed.symbol, placed.client_order_id
        )));
    }
    Ok(placed)
}

/// The answer to an OCO placement, when it is documented and names the list sent; anything
/// else is an unknown outcome, like [`placed_answer`].
fn placed_list(answer: wire::OrderListJson, sent: &NewOco) -> Result<OrderList, ExchangeError> {
    let unknown = |detail: String| ExchangeError::Unknown {
        detail: format!("/api/v3/orderList/oco: unreadable answer: {detail}"),
    };
    let list = answer.into_list().map_err(|e| unknown(e.to_string()))?;
    if list.list_client_order_id != sent.list_client_order_id || list.symbol != sent.symbol {
        return Err(unknown(format!("it names {}, not the list sent", list.list_client_order_id)));
    }
    Ok(list)
}
