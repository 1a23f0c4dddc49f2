//! `GET /api/v3/exchangeInfo`: the listing and the rate limits in exchange A's shape.

use super::wire::fmt8;
use crate::symbols::SymbolRules;
use rust_decimal::Decimal;
use serde::Serialize;

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
    /// The symbol as `exchangeInfo` lists it.
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
