//! An exit that filled only part of what it asked for. A market order on exchange A sweeps
//! the book; on exchange B a "market" order is an IOC limit 5 % through the mid, which gives up
//! whatever the book does not hold inside that band (the gap of a fast market). The coin left
//! over is still the boss's position: it is offered again at a fresh price, a few times, with
//! a client order id of its own per attempt (so a restart or an ambiguous answer finds each
//! attempt in the journal), and the boss is told how the exit went either way.

use rust_decimal::Decimal;

use super::client_id::{ClientOrderId, Purpose};
use super::journal::OrderKind;
use super::trade::Trade;
use super::{Execution, ExecutionError};
use crate::exchange::{NewOrder, Order, Qty, SymbolRules};
use crate::messenger::templates;

/// How many more orders an exit that filled only part may send for the rest.
pub const REMAINDER_ATTEMPTS: u32 = 3;

/// `first` and `then` as one exit: quantities, quote and fills added up, the later status.
fn merged(first: Order, then: Order) -> Order {
    let mut fills = first.fills;
    fills.extend(then.fills);
    Order {
        executed_qty: Qty(first.executed_qty.0 + then.executed_qty.0),
        cumulative_quote_qty: first.cumulative_quote_qty + then.cumulative_quote_qty,
        fills,
        ..then
    }
}

/// What is left of `wanted` after `exit`, rounded down to the step; zero when the rest is
/// dust the exchange would refuse (below the minimum quantity or value at `price`).
pub fn left_over(wanted: Decimal, exit: &Order, price: Decimal, rules: &SymbolRules) -> Decimal {
    let rest = rules.floor_qty(wanted - exit.executed_qty.0).0;
    let dust = rest < rules.min_qty.max(rules.step_size)
        || (rules.min_notional > Decimal::ZERO && rest * price < rules.min_notional);
    if dust { Decimal::ZERO } else { rest }
}

impl Execution {
    /// Completes the exit `first` of `trade`, which asked for `wanted`: while a sellable
    /// rest is left and attempts remain, the rest goes out again. Returns every attempt as one
    /// order (what was sold in total); the boss hears about an exit that needed more than one
    /// order or still left coin behind.
    pub(crate) async fn fill_remainder(
        &self,
        trade: &Trade,
        first: Order,
        wanted: Decimal,
        cause: &str,
        rules: &SymbolRules,
    ) -> Order {
        let first_qty = first.executed_qty.0;
        let mut exit = first;
        let mut attempts = 0;
        let mut failure = None;
        while attempts < REMAINDER_ATTEMPTS {
            let price = exit.avg_price().map_or(trade.entry_px, |p| p.0);
            let rest = left_over(wanted, &exit, price, rules);
            if rest.is_zero() {
                break;
            }
            attempts += 1;
            match self.send_rest(trade, &exit.client_order_id, attempts, rest, cause).await {
                Ok(more) => exit = merged(exit, more),
                Err(err) => {
                    failure = Some(err.to_string());
                    break;
                }
            }
        }
        if attempts > 0 {
            let price = exit.avg_price().map_or(trade.entry_px, |p| p.0);
            // Dust the exchange would refuse is not worth an alarm; a later exit sweeps it.
            let unsold = left_over(wanted, &exit, price, rules);
            self.notify(
                templates::exit_short(&templates::ExitShort {
                    symbol: trade.symbol.clone(),
                    wanted: wanted.normalize().to_string(),
                    first: first_qty.normalize().to_string(),
                    retries: attempts,
                    sold: exit.executed_qty.0.normalize().to_string(),
                    avg_px: price.normalize().to_string(),
                    unsold: unsold.normalize().to_string(),
                    base_asset: rules.base_asset.clone(),
                    failure,
                }),
                "exit filled in parts",
            );
        }
        exit
    }

    /// One more exit order for `rest`, with the client id of attempt `attempt` of the exit
    /// `exit_id`; its final state.
    async fn send_rest(
        &self,
        trade: &Trade,
        exit_id: &str,
        attempt: u32,
        rest: Decimal,
        cause: &str,
    ) -> Result<Order, ExecutionError> {
        let orders = self.orders()?.clone();
        let digit = char::from_digit(attempt, 10).unwrap_or('9');
        let id = ClientOrderId::leg(exit_id, digit).unwrap_or_else(|| {
            ClientOrderId::fresh(Purpose::MarketExit, self.inner.clock.now_ms(), &trade.symbol)
                .into_string()
        });
        let order = NewOrder::market(&trade.symbol, trade.direction.exit_side(), Qty(rest), &id);
        let cause = format!("{cause} (the rest, attempt {attempt})");
        let placed = orders
            .place(&order, OrderKind::Exit, &cause, None, |_, _| Ok(()))
            .await
            .map_err(|e| ExecutionError::from_send(e, &id))?;
        orders
            .await_final(placed, self.inner.timing.fill_timeout)
            .await
            .map_err(|e| ExecutionError::from_send(e, &id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::{Fill, OrderStatus, OrderType, Price, Side};
    use rust_decimal_macros::dec;

    fn exit(qty: Decimal, quote: Decimal, status: OrderStatus) -> Order {
        Order {
            symbol: "ETHUSDT".into(),
            order_id: 1,
            order_list_id: None,
            client_order_id: "SX_a_ETHUSDT".into(),
            side: Side::Sell,
            order_type: OrderType::Market,
            status,
            price: Price(Decimal::ZERO),
            stop_price: None,
            orig_qty: Qty(dec!(1)),
            executed_qty: Qty(qty),
            cumulative_quote_qty: quote,
            time_in_force: None,
            time: 1,
            update_time: 1,
            working: true,
            fills: vec![Fill {
                price: Price(dec!(3000)),
                qty: Qty(qty),
                commission: dec!(0.1),
                commission_asset: "USDT".into(),
                trade_id: 1,
            }],
        }
    }

    fn rules() -> SymbolRules {
        SymbolRules::example()
    }

    #[test]
    fn the_rest_is_what_was_asked_minus_what_filled_unless_it_is_dust() {
        let r = rules();
        let part = exit(dec!(0.6), dec!(1800), OrderStatus::Expired);
        assert_eq!(left_over(dec!(1), &part, dec!(3000), &r), dec!(0.4));
        let almost = exit(dec!(0.9999), dec!(2999.7), OrderStatus::Expired);
        assert_eq!(left_over(dec!(1), &almost, dec!(3000), &r), Decimal::ZERO, "0.3 USDT: dust");
        let all = exit(dec!(1), dec!(3000), OrderStatus::Filled);
        assert_eq!(left_over(dec!(1), &all, dec!(3000), &r), Decimal::ZERO);
    }

    #[test]
    fn attempts_add_up_to_one_exit() {
        let first = exit(dec!(0.6), dec!(1800), OrderStatus::Expired);
        let then = Order { order_id: 2, ..exit(dec!(0.4), dec!(1180), OrderStatus::Filled) };
        let both = merged(first, then);
        assert_eq!(both.executed_qty.0, dec!(1));
        assert_eq!(both.cumulative_quote_qty, dec!(2980));
        assert_eq!(both.fills.len(), 2);
        assert_eq!(both.commission_in("USDT"), dec!(0.2));
        assert_eq!(both.status, OrderStatus::Filled);
        assert_eq!(both.avg_price().map(|p| p.0), Some(dec!(2980)));
    }
}
