//! A symbol's trading rules in the exchange-neutral form every adapter fills in (exchange A
//! from its exchangeInfo filters, exchange B from its size decimals and price rule), and the
//! checks an order must pass before it is sent: prices rounded to the tick (and, where the
//! exchange counts them, to significant figures), quantities rounded down to the step,
//! min/max quantity and notional. An order that cannot satisfy them is refused with a reason,
//! never sent.

use rust_decimal::{Decimal, RoundingStrategy};
use serde::Serialize;

use spotbot_exchange_b_protocol::numbers;

use super::{ExchangeError, NewOco, NewOrder, OrderType, Price, Qty, Side};

/// Trading rules of one symbol. A zero value disables that rule, as on the exchange.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SymbolRules {
    pub symbol: String,
    pub base_asset: String,
    pub quote_asset: String,
    pub trading: bool,
    pub tick_size: Decimal,
    pub min_price: Decimal,
    pub max_price: Decimal,
    pub step_size: Decimal,
    pub min_qty: Decimal,
    pub max_qty: Decimal,
    pub market_step_size: Decimal,
    pub market_min_qty: Decimal,
    pub market_max_qty: Decimal,
    pub min_notional: Decimal,
    pub max_notional: Decimal,
    pub apply_min_to_market: bool,
    pub apply_max_to_market: bool,
    /// Order types the symbol takes, in the domain's spelling (`LIMIT`, `MARKET`, ...); empty
    /// when the exchange does not list them.
    pub order_types: Vec<String>,
    pub oco_allowed: bool,
    /// The most significant figures a price may have unless it is an integer (exchange B: 5);
    /// 0 when only the tick counts (exchange A).
    pub price_sig_figs: u32,
}

/// Rounds `v` to a multiple of `step` (unchanged when the step is zero).
pub fn round_to_step(v: Decimal, step: Decimal, strategy: RoundingStrategy) -> Decimal {
    if step <= Decimal::ZERO {
        return v;
    }
    let units = (v / step).round_dp_with_strategy(0, strategy);
    (units * step).normalize()
}

fn is_multiple(v: Decimal, step: Decimal) -> bool {
    step <= Decimal::ZERO || (v % step).is_zero()
}

fn refuse(reason: String) -> ExchangeError {
    ExchangeError::Refused { reason }
}

impl SymbolRules {
    /// `p` rounded to the significant figures (when counted), then to the tick, both in
    /// the direction `strategy` gives.
    fn price_with(&self, p: Decimal, strategy: RoundingStrategy) -> Price {
        let p = match self.price_sig_figs {
            0 => p,
            figs => numbers::round_sig_figs(p, figs, strategy),
        };
        Price(round_to_step(p, self.tick_size, strategy))
    }

    /// The nearest valid price (ties away from zero).
    pub fn round_price(&self, p: Decimal) -> Price {
        self.price_with(p, RoundingStrategy::MidpointAwayFromZero)
    }

    /// A price rounded down to a valid one (a stop or limit that must not exceed `p`).
    pub fn floor_price(&self, p: Decimal) -> Price {
        self.price_with(p, RoundingStrategy::ToNegativeInfinity)
    }

    /// A price rounded up to a valid one.
    pub fn ceil_price(&self, p: Decimal) -> Price {
        self.price_with(p, RoundingStrategy::ToPositiveInfinity)
    }

    /// A quantity rounded down to the step: never more than what is owned.
    pub fn floor_qty(&self, q: Decimal) -> Qty {
        Qty(round_to_step(q, self.step_size, RoundingStrategy::ToZero))
    }

    /// The order with its quantity rounded down to the step and its prices to the nearest
    /// tick (a SELL stop-limit's limit down, a BUY's up, so the buffer never shrinks). Values
    /// that rounding makes invalid are then refused by [`SymbolRules::check_order`].
    pub fn round_order(&self, o: &NewOrder) -> NewOrder {
        let limit = |p: Price| match (o.order_type, o.side) {
            (OrderType::StopLossLimit, Side::Sell) => self.floor_price(p.0),
            (OrderType::StopLossLimit, Side::Buy) => self.ceil_price(p.0),
            _ => self.round_price(p.0),
        };
        let step = if o.order_type == OrderType::Market && self.market_step_size > Decimal::ZERO {
            self.market_step_size.max(self.step_size)
        } else {
            self.step_size
        };
        NewOrder {
            qty: o.qty.map(|q| Qty(round_to_step(q.0, step, RoundingStrategy::ToZero))),
            price: o.price.map(limit),
            stop_price: o.stop_price.map(|p| self.round_price(p.0)),
            ..o.clone()
        }
    }

    /// The OCO with the same rounding rules as [`SymbolRules::round_order`].
    pub fn round_oco(&self, o: &NewOco) -> NewOco {
        NewOco {
            qty: self.floor_qty(o.qty.0),
            take_profit: self.round_price(o.take_profit.0),
            stop_price: self.round_price(o.stop_price.0),
            stop_limit_price: match o.side {
                Side::Sell => self.floor_price(o.stop_limit_price.0),
                Side::Buy => self.ceil_price(o.stop_limit_price.0),
            },
            ..o.clone()
        }
    }

    fn check_price(&self, what: &str, p: Price) -> Result<(), ExchangeError> {
        if p.0 <= Decimal::ZERO {
            return Err(refuse(format!("{what} {p} must be positive")));
        }
        if self.price_sig_figs > 0 && !numbers::sig_figs_ok(p.0, self.price_sig_figs) {
            return Err(refuse(format!(
                "{what} {p} has more than {} significant figures and is not an integer",
                self.price_sig_figs
            )));
        }
        if !is_multiple(p.0, self.tick_size) {
            return Err(refuse(format!(
                "{what} {p} is not a multiple of the tick size {}",
                self.tick_size.normalize()
            )));
        }
        if self.min_price > Decimal::ZERO && p.0 < self.min_price {
            return Err(refuse(format!(
                "{what} {p} is below the minimum price {}",
                self.min_price.normalize()
            )));
        }
        if self.max_price > Decimal::ZERO && p.0 > self.max_price {
            return Err(refuse(format!(
                "{what} {p} is above the maximum price {}",
                self.max_price.normalize()
            )));
        }
        Ok(())
    }

    fn check_qty(&self, q: Qty, market: bool) -> Result<(), ExchangeError> {
        if q.0 <= Decimal::ZERO {
            return Err(refuse(format!("quantity {q} must be positive")));
        }
        let rules = [(self.step_size, self.min_qty, self.max_qty, "LOT_SIZE")];
        let market_rules =
            [(self.market_step_size, self.market_min_qty, self.market_max_qty, "MARKET_LOT_SIZE")];
        let all: Vec<_> = if market {
            rules.iter().chain(market_rules.iter()).collect()
        } else {
            rules.iter().collect()
        };
        for (step, min, max, name) in all {
            if !is_multiple(q.0, *step) {
                return Err(refuse(format!(
                    "quantity {q} is not a multiple of the step size {} ({name})",
                    step.normalize()
                )));
            }
            if *min > Decimal::ZERO && q.0 < *min {
                return Err(refuse(format!(
                    "quantity {q} is below the minimum {} ({name})",
                    min.normalize()
                )));
            }
            if *max > Decimal::ZERO && q.0 > *max {
                return Err(refuse(format!(
                    "quantity {q} is above the maximum {} ({name})",
                    max.normalize()
                )));
            }
        }
        Ok(())
    }

    fn check_notional(&self, notional: Decimal, market: bool) -> Result<(), ExchangeError> {
        if (!market || self.apply_min_to_market)
            && self.min_notional > Decimal::ZERO
            && notional < self.min_notional
        {
            return Err(refuse(format!(
                "order value {} {} is below the minimum notional {}",
                notional.round_dp(8).normalize(),
                self.quote_asset,
                self.min_notional.normalize()
            )));
        }
        if (!market || self.apply_max_to_market)
            && self.max_notional > Decimal::ZERO
            && notional > self.max_notional
        {
            return Err(refuse(format!(
                "order value {} is above the maximum notional {}",
                notional.round_dp(8).normalize(),
                self.max_notional.normalize()
            )));
        }
        Ok(())
    }

    /// Checks an order against the rules; `last_price` values MARKET orders for the notional.
    pub fn check_order(
        &self,
        o: &NewOrder,
        last_price: Option<Price>,
    ) -> Result<(), ExchangeError> {
        if !self.trading {
            return Err(refuse(format!("{} is not trading", self.symbol)));
        }
        let type_name = o.order_type.name();
        if !self.order_types.is_empty() && !self.order_types.iter().any(|t| t == type_name) {
            return Err(refuse(format!("{type_name} orders are not supported on {}", self.symbol)));
        }
        let market = o.order_type == OrderType::Market;
        for (what, p) in [("price", o.price), ("stop price", o.stop_price)] {
            if let Some(p) = p {
                self.check_price(what, p)?;
            }
        }
        match (o.qty, o.quote_qty) {
            (Some(q), None) => {
                self.check_qty(q, market)?;
                let reference = o.price.or(o.stop_price).or(last_price);
                if let Some(p) = reference {
                    self.check_notional(p.0 * q.0, market)?;
                }
            }
            (None, Some(quote)) if market => self.check_notional(quote, true)?,
            _ => {
                return Err(refuse(
                    "an order needs a quantity (or, for MARKET, a quote quantity)".into(),
                ));
            }
        }
        Ok(())
    }

    /// Checks both legs of an OCO.
    pub fn check_oco(&self, o: &NewOco) -> Result<(), ExchangeError> {
        if !self.oco_allowed {
            return Err(refuse(format!("OCO orders are not supported on {}", self.symbol)));
        }
        self.check_price("take-profit price", o.take_profit)?;
        self.check_price("stop price", o.stop_price)?;
        self.check_price("stop limit price", o.stop_limit_price)?;
        self.check_qty(o.qty, false)?;
        self.check_notional(o.stop_limit_price.0.min(o.take_profit.0) * o.qty.0, false)
    }
}

#[cfg(test)]
impl SymbolRules {
    /// ETHUSDT as exchange A lists it (tick 0.01, step 0.0001, min notional 5), for tests.
    pub fn example() -> Self {
        use rust_decimal_macros::dec;
        SymbolRules {
            symbol: "ETHUSDT".into(),
            base_asset: "ETH".into(),
            quote_asset: "USDT".into(),
            trading: true,
            tick_size: dec!(0.01),
            min_price: dec!(0.01),
            max_price: Decimal::ZERO,
            step_size: dec!(0.0001),
            min_qty: dec!(0.0001),
            max_qty: Decimal::ZERO,
            market_step_size: Decimal::ZERO,
            market_min_qty: Decimal::ZERO,
            market_max_qty: Decimal::ZERO,
            min_notional: dec!(5),
            max_notional: Decimal::ZERO,
            apply_min_to_market: true,
            apply_max_to_market: false,
            order_types: vec![],
            oco_allowed: true,
            price_sig_figs: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    /// A pair of exchange B: size decimals 2, so prices have at most 6 decimals and 5
    /// significant figures.
    fn sig_fig_rules() -> SymbolRules {
        SymbolRules {
            symbol: "HYPEUSDT".into(),
            base_asset: "HYPE".into(),
            quote_asset: "USDC".into(),
            tick_size: dec!(0.000001),
            min_price: Decimal::ZERO,
            step_size: dec!(0.01),
            min_qty: dec!(0.01),
            min_notional: dec!(10),
            oco_allowed: false,
            price_sig_figs: 5,
            ..SymbolRules::example()
        }
    }

    #[test]
    fn significant_figures_round_in_the_direction_asked_and_integers_pass() {
        let r = sig_fig_rules();
        assert_eq!(r.round_price(dec!(18.620413)).0, dec!(18.62));
        assert_eq!(r.floor_price(dec!(18.62999)).0, dec!(18.629));
        assert_eq!(r.ceil_price(dec!(18.62001)).0, dec!(18.621));
        assert_eq!(r.floor_price(dec!(0.0001234567)).0, dec!(0.000123), "the decimals cap");
        assert_eq!(r.round_price(dec!(123456.7)).0, dec!(123457), "an integer is allowed");
        let order = |p| NewOrder::limit("HYPEUSDT", Side::Sell, Qty(dec!(1)), Price(p), "c");
        assert!(r.check_order(&order(dec!(18.621)), None).is_ok());
        let err = r.check_order(&order(dec!(18.6213)), None).expect_err("6 figures");
        assert!(err.to_string().contains("significant figures"), "{err}");
        assert!(r.check_order(&order(dec!(123456)), None).is_ok());
    }
}
