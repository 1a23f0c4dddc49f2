//! Prices and sizes on exchange B: a size has at most the base token's `szDecimals`
//! decimals; a price has at most 5 significant figures (an integer price is always allowed)
//! and at most `8 − szDecimals` decimals on spot. Both are written without trailing zeros —
//! "2000.0" would be hashed differently from "2000" and recover another signer.
//!
//! A market order does not exist: it is an IOC limit at the mid moved by the slippage (5 %),
//! rounded by the same rules ([`slippage_price`]).

use rust_decimal::{Decimal, RoundingStrategy};

/// The most decimals a spot price may have before `szDecimals` is taken off.
pub const SPOT_MAX_DECIMALS: u32 = 8;

/// The most significant figures a non-integer price may have.
pub const PRICE_SIG_FIGS: u32 = 5;

/// Why a number cannot go on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NumberError {
    #[error("{what} {value} is not positive")]
    NotPositive { what: &'static str, value: Decimal },
    #[error("size {value} has more than {max} decimals")]
    SizeDecimals { value: Decimal, max: u32 },
    #[error("price {value} has more than {max} decimals")]
    PriceDecimals { value: Decimal, max: u32 },
    #[error("price {value} has more than 5 significant figures and is not an integer")]
    PriceSigFigs { value: Decimal },
}

/// The canonical wire spelling: no trailing zeros, no trailing point, never `-0`.
pub fn to_wire(value: Decimal) -> String {
    value.normalize().to_string()
}

/// The decimals a price may have on a pair whose base token has `sz_decimals`.
pub fn price_decimals(sz_decimals: u32) -> u32 {
    SPOT_MAX_DECIMALS.saturating_sub(sz_decimals)
}

/// The position of `value`'s leading digit: 0 for 1..10, 2 for 100..1000, -3 for 0.001..0.01
/// (`floor(log10(value))` for a positive value).
fn magnitude(value: Decimal) -> i64 {
    let digits = value.abs().normalize().mantissa().unsigned_abs().to_string().len() as i64;
    digits - 1 - i64::from(value.normalize().scale())
}

/// Checks a price against the rules.
pub fn check_price(value: Decimal, sz_decimals: u32) -> Result<(), NumberError> {
    if value <= Decimal::ZERO {
        return Err(NumberError::NotPositive { what: "price", value });
    }
    let v = value.normalize();
    let max = price_decimals(sz_decimals);
    if v.scale() > max {
        return Err(NumberError::PriceDecimals { value: v, max });
    }
    if !sig_figs_ok(v, PRICE_SIG_FIGS) {
        return Err(NumberError::PriceSigFigs { value: v });
    }
    Ok(())
}

/// True when `value` is an integer or has at most `figs` significant figures.
pub fn sig_figs_ok(value: Decimal, figs: u32) -> bool {
    let v = value.normalize();
    let significant = v.mantissa().unsigned_abs().to_string().trim_end_matches('0').len();
    v.scale() == 0 || significant <= figs as usize
}

/// `value` rounded to `figs` significant figures in the direction `strategy` gives, or to
/// the integer when its integer part alone has `figs` digits or more (an integer is always
/// allowed, and finer). Zero and negative values come back unchanged.
pub fn round_sig_figs(value: Decimal, figs: u32, strategy: RoundingStrategy) -> Decimal {
    if value <= Decimal::ZERO {
        return value;
    }
    let decimals = (i64::from(figs) - 1 - magnitude(value)).max(0);
    let decimals = u32::try_from(decimals).unwrap_or(u32::MAX).min(28);
    value.round_dp_with_strategy(decimals, strategy).normalize()
}

/// Checks a size against the base token's `sz_decimals`.
pub fn check_size(value: Decimal, sz_decimals: u32) -> Result<(), NumberError> {
    if value <= Decimal::ZERO {
        return Err(NumberError::NotPositive { what: "size", value });
    }
    let v = value.normalize();
    if v.scale() > sz_decimals {
        return Err(NumberError::SizeDecimals { value: v, max: sz_decimals });
    }
    Ok(())
}

/// The nearest allowed price in the direction `strategy` gives: 5 significant figures (or
/// the integer, when the integer part alone has 5 digits or more), then the decimals cap.
/// Zero and negative values come back unchanged (the check refuses them).
pub fn round_price(value: Decimal, sz_decimals: u32, strategy: RoundingStrategy) -> Decimal {
    // Rounding up can carry into a new leading digit (99999.5 -> 100000, an integer;
    // 9.99995 -> 10.000, 5 significant figures): still allowed either way.
    let figures = round_sig_figs(value, PRICE_SIG_FIGS, strategy);
    figures.round_dp_with_strategy(price_decimals(sz_decimals), strategy).normalize()
}

/// `value` rounded to the size's decimals in the direction `strategy` gives.
pub fn round_size(value: Decimal, sz_decimals: u32, strategy: RoundingStrategy) -> Decimal {
    value.round_dp_with_strategy(sz_decimals, strategy).normalize()
}

/// The limit price of a market order: the mid moved by `slippage` (0.05 = 5 %) against the
/// taker — up for a buy, down for a sell — and rounded to the nearest allowed price (the
/// official SDK's `market_open`).
pub fn slippage_price(mid: Decimal, is_buy: bool, slippage: Decimal, sz_decimals: u32) -> Decimal {
    let moved =
        if is_buy { mid * (Decimal::ONE + slippage) } else { mid * (Decimal::ONE - slippage) };
    round_price(moved, sz_decimals, RoundingStrategy::MidpointNearestEven)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    #[test]
    fn wire_numbers_have_no_trailing_zeros() {
        for (value, wire) in [
            ("100", "100"),
            ("2000.0", "2000"),
            ("1670.1", "1670.1"),
            ("0.00000001", "0.00000001"),
            ("120000.000", "120000"),
            ("-0.0", "0"),
        ] {
            assert_eq!(to_wire(d(value)), wire, "{value}");
        }
    }

    #[test]
    fn market_prices_match_the_sdk_worked_examples() {
        let five = d("0.05");
        assert_eq!(slippage_price(d("18.62041381"), false, five, 2), d("17.689"));
        assert_eq!(slippage_price(d("18.62041381"), true, five, 2), d("19.551"));
        assert_eq!(slippage_price(d("0.20432"), false, five, 0), d("0.1941"));
        assert_eq!(slippage_price(d("0.20432"), true, five, 0), d("0.21454"));
        assert_eq!(slippage_price(d("97123.5"), false, five, 5), d("92267"));
        assert_eq!(slippage_price(d("97123.5"), true, five, 5), d("101980"));
    }

    #[test]
    fn prices_obey_significant_figures_and_the_decimals_cap() {
        assert!(check_price(d("123456"), 0).is_ok(), "integers are always allowed");
        assert!(check_price(d("12345.6"), 0).is_err());
        assert!(check_price(d("1234.5"), 0).is_ok());
        assert!(check_price(d("0.0001234"), 1).is_ok());
        assert!(check_price(d("0.0001234"), 3).is_err(), "7 decimals, cap 5");
        assert!(check_price(d("0.12345"), 4).is_err(), "5 decimals, cap 4");
        assert!(check_price(d("100.00"), 2).is_ok(), "trailing zeros are not significant");
        assert!(check_price(d("0"), 2).is_err());
        assert_eq!(round_price(d("12345.6"), 0, RoundingStrategy::ToZero), d("12345"));
        assert_eq!(round_price(d("123456.7"), 0, RoundingStrategy::AwayFromZero), d("123457"));
        assert_eq!(round_price(d("0.000123456"), 2, RoundingStrategy::ToZero), d("0.000123"));
        assert_eq!(round_price(d("0.000123456"), 0, RoundingStrategy::ToZero), d("0.00012345"));
        assert_eq!(round_price(d("99999.7"), 0, RoundingStrategy::AwayFromZero), d("100000"));
        for (value, sz) in [("3.14159265", 2), ("27123.987", 5), ("0.004567891", 0), ("9.99999", 1)]
        {
            for strategy in [RoundingStrategy::ToZero, RoundingStrategy::AwayFromZero] {
                let rounded = round_price(d(value), sz, strategy);
                assert!(check_price(rounded, sz).is_ok(), "{value} -> {rounded}");
            }
        }
    }

    #[test]
    fn sizes_keep_the_base_tokens_decimals() {
        assert!(check_size(d("1.25"), 2).is_ok());
        assert!(check_size(d("1.250"), 2).is_ok());
        assert!(check_size(d("1.255"), 2).is_err());
        assert!(check_size(d("0"), 2).is_err());
        assert_eq!(round_size(d("1.259"), 2, RoundingStrategy::ToZero), d("1.25"));
    }
}
