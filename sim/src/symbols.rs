//! The simulated listing: symbols, their assets and filters, rendered exactly like
//! `GET /api/v3/exchangeInfo`.

use rust_decimal::Decimal;
use serde::Serialize;
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

/// Formats a decimal the way the exchange does: 8 decimals, padded.
pub fn fmt8(v: Decimal) -> String {
    format!("{:.8}", v.round_dp(8))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitJson {
    pub rate_limit_type: &'static str,
    pub interval: &'static str,
    pub interval_num: u32,
    pub limit: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExchangeInfoJson {
    pub timezone: &'static str,
    pub server_time: i64,
    pub rate_limits: Vec<RateLimitJson>,
    pub exchange_filters: Vec<serde_json::Value>,
    pub symbols: Vec<SymbolJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SymbolJson {
    pub symbol: String,
    pub status: &'static str,
    pub base_asset: String,
    pub base_asset_precision: u32,
    pub quote_asset: String,
    pub quote_precision: u32,
    pub quote_asset_precision: u32,
    pub base_commission_precision: u32,
    pub quote_commission_precision: u32,
    pub order_types: Vec<&'static str>,
    pub iceberg_allowed: bool,
    pub oco_allowed: bool,
    pub oto_allowed: bool,
    pub opo_allowed: bool,
    pub quote_order_qty_market_allowed: bool,
    pub allow_trailing_stop: bool,
    pub cancel_replace_allowed: bool,
    pub amend_allowed: bool,
    pub peg_instructions_allowed: bool,
    pub is_spot_trading_allowed: bool,
    pub is_margin_trading_allowed: bool,
    pub filters: Vec<serde_json::Value>,
    pub permissions: Vec<String>,
    pub permission_sets: Vec<Vec<&'static str>>,
    pub default_self_trade_prevention_mode: &'static str,
    pub allowed_self_trade_prevention_modes: Vec<&'static str>,
}

pub const WEIGHT_LIMIT_PER_MINUTE: u64 = 6000;
pub const ORDERS_PER_10S: u64 = 100;
pub const ORDERS_PER_DAY: u64 = 200_000;

pub fn rate_limits() -> Vec<RateLimitJson> {
    vec![
        RateLimitJson {
            rate_limit_type: "REQUEST_WEIGHT",
            interval: "MINUTE",
            interval_num: 1,
            limit: WEIGHT_LIMIT_PER_MINUTE,
        },
        RateLimitJson {
            rate_limit_type: "ORDERS",
            interval: "SECOND",
            interval_num: 10,
            limit: ORDERS_PER_10S,
        },
        RateLimitJson {
            rate_limit_type: "ORDERS",
            interval: "DAY",
            interval_num: 1,
            limit: ORDERS_PER_DAY,
        },
        RateLimitJson {
            rate_limit_type: "RAW_REQUESTS",
            interval: "MINUTE",
            interval_num: 5,
            limit: 300_000,
        },
    ]
}

impl SymbolRules {
    pub fn to_json(&self) -> SymbolJson {
        use serde_json::json;
        SymbolJson {
            symbol: self.symbol.clone(),
            status: "TRADING",
            base_asset: self.base.clone(),
            base_asset_precision: 8,
            quote_asset: self.quote.clone(),
            quote_precision: 8,
            quote_asset_precision: 8,
            base_commission_precision: 8,
            quote_commission_precision: 8,
            order_types: vec![
                "LIMIT",
                "LIMIT_MAKER",
                "MARKET",
                "STOP_LOSS",
                "STOP_LOSS_LIMIT",
                "TAKE_PROFIT",
                "TAKE_PROFIT_LIMIT",
            ],
            iceberg_allowed: false,
            oco_allowed: true,
            oto_allowed: false,
            opo_allowed: false,
            quote_order_qty_market_allowed: true,
            allow_trailing_stop: false,
            cancel_replace_allowed: false,
            amend_allowed: false,
            peg_instructions_allowed: false,
            is_spot_trading_allowed: true,
            is_margin_trading_allowed: false,
            filters: vec![
                json!({"filterType": "PRICE_FILTER", "minPrice": fmt8(self.min_price), "maxPrice": fmt8(self.max_price), "tickSize": fmt8(self.tick)}),
                json!({"filterType": "LOT_SIZE", "minQty": fmt8(self.min_qty), "maxQty": fmt8(self.max_qty), "stepSize": fmt8(self.step)}),
                json!({"filterType": "ICEBERG_PARTS", "limit": 10}),
                json!({"filterType": "MARKET_LOT_SIZE", "minQty": fmt8(Decimal::ZERO), "maxQty": fmt8(self.market_max_qty), "stepSize": fmt8(Decimal::ZERO)}),
                json!({"filterType": "PERCENT_PRICE_BY_SIDE", "bidMultiplierUp": "5", "bidMultiplierDown": "0.2", "askMultiplierUp": "5", "askMultiplierDown": "0.2", "avgPriceMins": 5}),
                json!({"filterType": "NOTIONAL", "minNotional": fmt8(self.min_notional), "applyMinToMarket": true, "maxNotional": fmt8(self.max_notional), "applyMaxToMarket": false, "avgPriceMins": 5}),
                json!({"filterType": "MAX_NUM_ORDERS", "maxNumOrders": self.max_num_orders}),
                json!({"filterType": "MAX_NUM_ALGO_ORDERS", "maxNumAlgoOrders": self.max_num_algo_orders}),
            ],
            permissions: vec![],
            permission_sets: vec![vec!["SPOT"]],
            default_self_trade_prevention_mode: "EXPIRE_MAKER",
            allowed_self_trade_prevention_modes: vec![
                "NONE",
                "EXPIRE_TAKER",
                "EXPIRE_MAKER",
                "EXPIRE_BOTH",
            ],
        }
    }
}
