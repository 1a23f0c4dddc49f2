//! Exchange A's symbol filters from exchangeInfo as [`SymbolRules`] (PRICE_FILTER, LOT_SIZE,
//! MARKET_LOT_SIZE, NOTIONAL / MIN_NOTIONAL).
//!
//! The filters are parsed once, strictly: a symbol whose PRICE_FILTER, LOT_SIZE or notional
//! filter is missing, or whose value is not a non-negative decimal, has no rules at all (the
//! reason is kept and every order of that symbol is refused with it). A lenient parse would turn
//! a malformed `tickSize` or `minNotional` into 0, which silently disables that check.

use rust_decimal::Decimal;

use super::wire::SymbolInfo;
pub use crate::exchange::rules::SymbolRules;

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
            price_sig_figs: 0,
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::rules::round_to_step;
    use crate::exchange::{NewOrder, OrderType, Price, Qty, Side};
    use rust_decimal::RoundingStrategy;
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
