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

/// (base asset, price, tick, step, volatility)
const LISTING: &[(&str, &str, &str, &str, f64)] = &[
    ("BTC", "65000", "0.01", "0.00001", 1.0),
    ("ETH", "3200", "0.01", "0.0001", 1.2),
    ("BNB", "580", "0.01", "0.001", 1.1),
    ("SOL", "150", "0.01", "0.001", 1.6),
    ("XRP", "0.6", "0.0001", "1", 1.5),
    ("ADA", "0.45", "0.0001", "0.1", 1.5),
    ("DOGE", "0.15", "0.00001", "1", 2.0),
    ("AVAX", "35", "0.01", "0.01", 1.7),
    ("LINK", "15", "0.001", "0.01", 1.6),
    ("DOT", "7", "0.001", "0.01", 1.5),
    ("LTC", "80", "0.01", "0.001", 1.3),
    ("TRX", "0.12", "0.00001", "0.1", 1.0),
    ("ATOM", "9", "0.001", "0.01", 1.5),
    ("NEAR", "6", "0.001", "0.1", 1.8),
    ("APT", "9", "0.001", "0.01", 1.8),
    ("ARB", "1.1", "0.0001", "0.1", 1.9),
    ("OP", "2.5", "0.001", "0.01", 1.9),
    ("FIL", "5.5", "0.001", "0.01", 1.7),
    ("INJ", "25", "0.01", "0.01", 2.1),
    ("PEPE", "0.00001", "0.00000001", "1", 2.8),
];

/// The default listing: many symbols against USDT, with BTCUSDT as the reference coin.
pub fn default_listing() -> Vec<SymbolRules> {
    LISTING
        .iter()
        .map(|(base, price, tick, step, vol)| {
            let step = d(step);
            SymbolRules {
                symbol: format!("{base}{QUOTE}"),
                base: (*base).to_string(),
                quote: QUOTE.to_string(),
                base_price: d(price),
                tick: d(tick),
                step,
                min_qty: step,
                max_qty: d("9000000"),
                min_price: d(tick),
                max_price: d("1000000"),
                market_max_qty: d("1000000"),
                min_notional: d("5"),
                max_notional: d("9000000"),
                vol: *vol,
                max_num_orders: 200,
                max_num_algo_orders: 5,
            }
        })
        .collect()
}
