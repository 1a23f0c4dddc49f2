//! A symbol's trading rules from exchangeInfo, and the checks an order must pass before it is
//! sent: prices rounded to tickSize, quantities rounded down to stepSize, min/max quantity and
//! notional. An order that cannot satisfy them is refused with a reason, never sent.
//!
//! The filters are parsed once, strictly: a symbol whose PRICE_FILTER, LOT_SIZE or notional
//! filter is missing, or whose value is not a non-negative decimal, has no rules at all (the
//! reason is kept and every order of that symbol is refused with it). A lenient parse would turn
//! a malformed `tickSize` or `minNotional` into 0, which silently disables that check.

use rust_decimal::{Decimal, RoundingStrategy};
use serde::Serialize;

use super::wire::SymbolInfo;
use crate::exchange::{ExchangeError, NewOco, NewOrder, OrderType, Price, Qty, Side};

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
    pub order_types: Vec<String>,
    pub oco_allowed: bool,
}

/// A required decimal field of a filter: present, a decimal string, not negative.
fn dec(v: &serde_json::Value, filter: &str, name: &str) -> Result<Decimal, String> {
    let text = v
        .get(name)
        .ok_or_else(|| format!("{filter}.{name} is missing"))?
        .as_str()
        .ok_or_else(|| format!("{filter}.{name} is not a decimal string"))?;
    let value: Decimal =
        text.parse().map_err(|_| format!("{filter}.{name} {text:?} is not a decimal"))?;
    if value < Decimal::ZERO {
        return Err(format!("{filter}.{name} {text} is negative"));
    }
    Ok(value)
}

/// An optional flag of a filter; present but not a boolean is malformed.
fn flag(v: &serde_json::Value, filter: &str, name: &str, default: bool) -> Result<bool, String> {
    match v.get(name) {
        None => Ok(default),
        Some(x) => x.as_bool().ok_or_else(|| format!("{filter}.{name} is not a boolean")),
    }
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
    /// Parses a symbol's filters. `Err` names the missing or malformed filter value; such a
    /// symbol cannot be traded (see the module doc).
    pub fn from_info(info: &SymbolInfo) -> Result<Self, String> {
        let mut r = SymbolRules {
            symbol: info.symbol.clone(),
            base_asset: info.base_asset.clone(),
            quote_asset: info.quote_asset.clone(),
            trading: info.status == "TRADING",
            tick_size: Decimal::ZERO,
            min_price: Decimal::ZERO,
            max_price: Decimal::ZERO,
            step_size: Decimal::ZERO,
            min_qty: Decimal::ZERO,
            max_qty: Decimal::ZERO,
            market_step_size: Decimal::ZERO,
            market_min_qty: Decimal::ZERO,
            market_max_qty: Decimal::ZERO,
            min_notional: Decimal::ZERO,
            max_notional: Decimal::ZERO,
            apply_min_to_market: true,
            apply_max_to_market: false,
            order_types: info.order_types.clone(),
            oco_allowed: info.oco_allowed,
        };
        let (mut price, mut lot, mut notional) = (false, false, false);
        for f in &info.filters {
            match f.get("filterType").and_then(|x| x.as_str()) {
                Some(name @ "PRICE_FILTER") => {
                    r.tick_size = dec(f, name, "tickSize")?;
                    r.min_price = dec(f, name, "minPrice")?;
                    r.max_price = dec(f, name, "maxPrice")?;
                    price = true;
                }
                Some(name @ "LOT_SIZE") => {
                    r.step_size = dec(f, name, "stepSize")?;
                    r.min_qty = dec(f, name, "minQty")?;
                    r.max_qty = dec(f, name, "maxQty")?;
                    lot = true;
                }
                Some(name @ "MARKET_LOT_SIZE") => {
                    r.market_step_size = dec(f, name, "stepSize")?;
                    r.market_min_qty = dec(f, name, "minQty")?;
                    r.market_max_qty = dec(f, name, "maxQty")?;
                }
                Some(name @ "NOTIONAL") => {
                    r.min_notional = dec(f, name, "minNotional")?;
                    r.max_notional = dec(f, name, "maxNotional")?;
                    r.apply_min_to_market = flag(f, name, "applyMinToMarket", true)?;
                    r.apply_max_to_market = flag(f, name, "applyMaxToMarket", false)?;
                    notional = true;
                }
                Some(name @ "MIN_NOTIONAL") => {
                    r.min_notional = dec(f, name, "minNotional")?;
                    r.apply_min_to_market = flag(f, name, "applyToMarket", true)?;
                    notional = true;
                }
                _ => {}
            }
        }
        let missing: Vec<&str> =
            [(price, "PRICE_FILTER"), (lot, "LOT_SIZE"), (notional, "NOTIONAL (or MIN_NOTIONAL)")]
                .into_iter()
                .filter_map(|(present, name)| (!present).then_some(name))
                .collect();
        if !missing.is_empty() {
            return Err(format!("the exchange lists no {} filter", missing.join(", ")));
        }
        if r.tick_size.is_zero() || r.step_size.is_zero() {
            return Err("tickSize and stepSize must be positive".into());
        }
        Ok(r)
    }

    /// The nearest valid price (ties away from zero).
    pub fn round_price(&self, p: Decimal) -> Price {
        Price(round_to_step(p, self.tick_size, RoundingStrategy::MidpointAwayFromZero))
    }

    /// A price rounded down to the tick (a stop or limit that must not exceed `p`).
    pub fn floor_price(&self, p: Decimal) -> Price {
        Price(round_to_step(p, self.tick_size, RoundingStrategy::ToNegativeInfinity))
    }

    /// A price rounded up to the tick.
    pub fn ceil_price(&self, p: Decimal) -> Price {
        Price(round_to_step(p, self.tick_size, RoundingStrategy::ToPositiveInfinity))
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
        let type_name = super::wire::type_str(o.order_type);
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
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn rules() -> SymbolRules {
        let info: SymbolInfo = serde_json::from_value(serde_json::json!({
            "symbol": "ETHUSDT", "status": "TRADING", "baseAsset": "ETH", "quoteAsset": "USDT",
            "orderTypes": ["LIMIT", "LIMIT_MAKER", "MARKET", "STOP_LOSS_LIMIT"], "ocoAllowed": true,
            "filters": [
                {"filterType": "PRICE_FILTER", "minPrice": "0.01000000", "maxPrice": "1000000.00000000", "tickSize": "0.01000000"},
                {"filterType": "LOT_SIZE", "minQty": "0.00010000", "maxQty": "9000.00000000", "stepSize": "0.00010000"},
                {"filterType": "MARKET_LOT_SIZE", "minQty": "0.00000000", "maxQty": "1701.08445000", "stepSize": "0.00000000"},
                {"filterType": "NOTIONAL", "minNotional": "5.00000000", "applyMinToMarket": true, "maxNotional": "9000000.00000000", "applyMaxToMarket": false, "avgPriceMins": 5}
            ]
        }))
        .expect("info");
        SymbolRules::from_info(&info).expect("valid filters")
    }

    #[test]
    fn rounding_follows_tick_and_step() {
        let r = rules();
        assert_eq!(r.round_price(dec!(3000.126)).0, dec!(3000.13));
        assert_eq!(r.floor_price(dec!(3000.129)).0, dec!(3000.12));
        assert_eq!(r.floor_qty(dec!(0.123456)).0, dec!(0.1234));
        // zero step (MARKET_LOT_SIZE disabled) does not divide by zero
        assert_eq!(round_to_step(dec!(1.5), Decimal::ZERO, RoundingStrategy::ToZero), dec!(1.5));
    }

    #[test]
    fn orders_are_rounded_to_tick_and_step_before_the_check() {
        let r = rules();
        let o = NewOrder {
            order_type: OrderType::StopLossLimit,
            stop_price: Some(Price(dec!(2900.004))),
            ..NewOrder::limit(
                "ETHUSDT",
                Side::Sell,
                Qty(dec!(0.123456)),
                Price(dec!(2894.209)),
                "c",
            )
        };
        let o = r.round_order(&o);
        assert_eq!(o.qty, Some(Qty(dec!(0.1234))));
        assert_eq!(o.price, Some(Price(dec!(2894.2))), "a SELL stop-limit's limit rounds down");
        assert_eq!(o.stop_price, Some(Price(dec!(2900))));
        assert!(r.check_order(&o, None).is_ok());
        let dust = r.round_order(&NewOrder::market("ETHUSDT", Side::Sell, Qty(dec!(0.00009)), "d"));
        let err = r.check_order(&dust, Some(Price(dec!(3000)))).expect_err("rounds to zero");
        assert!(err.to_string().contains("must be positive"), "{err}");
    }

    #[test]
    fn orders_that_cannot_satisfy_filters_are_refused_with_a_reason() {
        let r = rules();
        let ok = NewOrder::market("ETHUSDT", Side::Buy, Qty(dec!(0.01)), "c1");
        assert!(r.check_order(&ok, Some(Price(dec!(3000)))).is_ok());
        let small = NewOrder::market("ETHUSDT", Side::Buy, Qty(dec!(0.001)), "c1");
        let err = r.check_order(&small, Some(Price(dec!(3000)))).expect_err("notional");
        assert!(err.to_string().contains("minimum notional"), "{err}");
        let odd =
            NewOrder::limit("ETHUSDT", Side::Buy, Qty(dec!(0.01)), Price(dec!(3000.001)), "c1");
        assert!(r.check_order(&odd, None).expect_err("tick").to_string().contains("tick size"));
        let step = NewOrder::market("ETHUSDT", Side::Buy, Qty(dec!(0.00015)), "c1");
        assert!(r.check_order(&step, Some(Price(dec!(3000)))).is_err());
        let stop = NewOrder { order_type: OrderType::StopLoss, ..ok.clone() };
        assert!(
            r.check_order(&stop, None).expect_err("type").to_string().contains("not supported")
        );
    }

    fn info_with(filters: serde_json::Value) -> SymbolInfo {
        serde_json::from_value(serde_json::json!({
            "symbol": "ETHUSDT", "status": "TRADING", "baseAsset": "ETH", "quoteAsset": "USDT",
            "orderTypes": ["LIMIT", "MARKET"], "ocoAllowed": true, "filters": filters
        }))
        .expect("info")
    }

    #[test]
    fn malformed_or_missing_filters_refuse_the_symbol_instead_of_disabling_a_check() {
        let price = serde_json::json!({"filterType": "PRICE_FILTER", "minPrice": "0.01", "maxPrice": "0", "tickSize": "0.01"});
        let lot = serde_json::json!({"filterType": "LOT_SIZE", "minQty": "0.0001", "maxQty": "9000", "stepSize": "0.0001"});
        let notional =
            serde_json::json!({"filterType": "NOTIONAL", "minNotional": "5", "maxNotional": "0"});
        assert!(
            SymbolRules::from_info(&info_with(serde_json::json!([price, lot, notional]))).is_ok()
        );
        let mut bad_tick = price.clone();
        bad_tick["tickSize"] = "0.0x".into();
        let err = SymbolRules::from_info(&info_with(serde_json::json!([bad_tick, lot, notional])))
            .expect_err("malformed tick");
        assert!(err.contains("PRICE_FILTER.tickSize"), "{err}");
        let mut bad_notional = notional.clone();
        bad_notional["minNotional"] = serde_json::json!(5);
        let err = SymbolRules::from_info(&info_with(serde_json::json!([price, lot, bad_notional])))
            .expect_err("number instead of string");
        assert!(err.contains("NOTIONAL.minNotional"), "{err}");
        let err = SymbolRules::from_info(&info_with(serde_json::json!([price, lot])))
            .expect_err("missing notional");
        assert!(err.contains("NOTIONAL"), "{err}");
        let mut zero_step = lot.clone();
        zero_step["stepSize"] = "0".into();
        assert!(
            SymbolRules::from_info(&info_with(serde_json::json!([price, zero_step, notional])))
                .is_err()
        );
    }
}
