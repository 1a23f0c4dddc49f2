//! The simulated listing: symbols, their assets and filters (each exchange's front end renders
//! them in its own wire; exchange A's is `crate::exchange_a::exchange_info`).

use rust_decimal::Decimal;
use std::str::FromStr;

/// The quote asset of every simulated symbol.
pub const QUOTE: &str = "USDT";
/// The reference coin (market context uses it as the benchmark).
pub const REFERENCE: &str = "BTCUSDT";

/// Trading rules of one symbol.
#[derive(Debug, Clone)]
pub struct SymbolRules {
    pub symbol: String,
    pub base: String,
    pub quote: String,
    /// Starting price of the synthetic market.
    pub base_price: Decimal,
    pub tick: Decimal,
    pub step: Decimal,
    pub min_qty: Decimal,
    pub max_qty: Decimal,
    pub min_price: Decimal,
    pub max_price: Decimal,
    pub market_max_qty: Decimal,
    pub min_notional: Decimal,
    pub max_notional: Decimal,
    /// Annualised-ish volatility scale of the synthetic path (1.0 = BTC-like).
    pub vol: f64,
    pub max_num_orders: usize,
    pub max_num_algo_orders: usize,
}

fn d(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap_or_default()
}

/// One listed coin: its synthetic market and its filters, of the real exchange's shape and
/// scale (exchange A's exchangeInfo for these pairs, rounded): `LOT_SIZE` maxQty is large
/// enough for millions of USDT on every pair (9 000 BTC, 92 billion PEPE), `MARKET_LOT_SIZE`
/// maxQty is lower (the exchange sets it from recent volume), `PRICE_FILTER` maxPrice leaves
/// room above the price.
struct Listed {
    base: &'static str,
    price: &'static str,
    tick: &'static str,
    step: &'static str,
    max_qty: &'static str,
    market_max_qty: &'static str,
    max_price: &'static str,
    vol: f64,
}

const fn listed(
    base: &'static str,
    price: &'static str,
    (tick, step): (&'static str, &'static str),
    (max_qty, market_max_qty, max_price): (&'static str, &'static str, &'static str),
    vol: f64,
) -> Listed {
    Listed { base, price, tick, step, max_qty, market_max_qty, max_price, vol }
}

const LISTING: &[Listed] = &[
    listed("BTC", "65000", ("0.01", "0.00001"), ("9000", "120", "1000000"), 1.0),
    listed("ETH", "3200", ("0.01", "0.0001"), ("9000", "1701.08445", "1000000"), 1.2),
    listed("BNB", "580", ("0.01", "0.001"), ("9000", "2400", "100000"), 1.1),
    listed("SOL", "150", ("0.01", "0.001"), ("9000", "9000", "10000"), 1.6),
    listed("XRP", "0.6", ("0.0001", "1"), ("9222449", "2500000", "10000"), 1.5),
    listed("ADA", "0.45", ("0.0001", "0.1"), ("9000000", "3000000", "1000"), 1.5),
    listed("DOGE", "0.15", ("0.00001", "1"), ("9000000", "9000000", "1000"), 2.0),
    listed("AVAX", "35", ("0.01", "0.01"), ("92233", "45000", "100000"), 1.7),
    listed("LINK", "15", ("0.001", "0.01"), ("90000", "90000", "10000"), 1.6),
    listed("DOT", "7", ("0.001", "0.01"), ("922327", "922327", "10000"), 1.5),
    listed("LTC", "80", ("0.01", "0.001"), ("90000", "90000", "100000"), 1.3),
    listed("TRX", "0.12", ("0.00001", "0.1"), ("90000000", "20000000", "1000"), 1.0),
    listed("ATOM", "9", ("0.001", "0.01"), ("922327", "922327", "10000"), 1.5),
    listed("NEAR", "6", ("0.001", "0.1"), ("922327", "300000", "10000"), 1.8),
    listed("APT", "9", ("0.001", "0.01"), ("922327", "922327", "10000"), 1.8),
    listed("ARB", "1.1", ("0.0001", "0.1"), ("9222449", "2000000", "1000"), 1.9),
    listed("OP", "2.5", ("0.001", "0.01"), ("922327", "922327", "10000"), 1.9),
    listed("FIL", "5.5", ("0.001", "0.01"), ("922327", "922327", "10000"), 1.7),
    listed("INJ", "25", ("0.01", "0.01"), ("92233", "40000", "100000"), 2.1),
    listed("PEPE", "0.00001", ("0.00000001", "1"), ("92233720368", "92233720368", "1"), 2.8),
];

/// The default listing: many symbols against USDT, with BTCUSDT as the reference coin.
pub fn default_listing() -> Vec<SymbolRules> {
    LISTING
        .iter()
        .map(|l| {
            let step = d(l.step);
            SymbolRules {
                symbol: format!("{}{QUOTE}", l.base),
                base: l.base.to_string(),
                quote: QUOTE.to_string(),
                base_price: d(l.price),
                tick: d(l.tick),
                step,
                min_qty: step,
                max_qty: d(l.max_qty),
                min_price: d(l.tick),
                max_price: d(l.max_price),
                market_max_qty: d(l.market_max_qty),
                min_notional: d("5"),
                max_notional: d("9000000"),
                vol: l.vol,
                max_num_orders: 200,
                max_num_algo_orders: 5,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_takes_an_order_of_a_million_usdt_and_its_price_has_room() {
        for rules in default_listing() {
            let lot = rules.max_qty * rules.base_price;
            let market = rules.market_max_qty * rules.base_price;
            assert!(lot >= Decimal::from(900_000), "{}: LOT_SIZE {lot} USDT", rules.symbol);
            assert!(market >= Decimal::from(900_000), "{}: MARKET {market} USDT", rules.symbol);
            assert!(rules.market_max_qty <= rules.max_qty, "{}", rules.symbol);
            assert!(rules.max_price >= rules.base_price * Decimal::from(10), "{}", rules.symbol);
            assert!((rules.max_qty % rules.step).is_zero(), "{}", rules.symbol);
        }
    }
}
