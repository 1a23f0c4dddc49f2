//! JSON shapes of the wire protocol, field names exactly as exchange A spells them (including
//! `cummulativeQuoteQty`). Decimals are strings padded to 8 places, ids and times are numbers.

use rust_decimal::Decimal;
use serde::Serialize;

/// Formats a decimal the way the exchange does: 8 decimals, padded.
pub fn fmt8(v: Decimal) -> String {
    format!("{:.8}", v.round_dp(8))
}

/// A wire shape as a JSON value.
pub fn to_value<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// Error body: `{"code": -2010, "msg": "..."}`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ErrorJson {
    pub code: i64,
    pub msg: String,
}

/// One fill of a FULL order response.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FillJson {
    pub price: String,
    pub qty: String,
    pub commission: String,
    pub commission_asset: String,
    pub trade_id: i64,
}

/// An order as placement (ACK/RESULT/FULL), cancel and query responses show it. Which fields
/// are present depends on the response kind; absent ones are skipped.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct OrderJson {
    pub symbol: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orig_client_order_id: Option<String>,
    pub order_id: i64,
    pub order_list_id: i64,
    pub client_order_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transact_time: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orig_qty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executed_qty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orig_quote_order_qty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cummulative_quote_qty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_in_force: Option<&'static str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub order_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_price: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iceberg_qty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_time: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_working: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_time: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_trade_prevention_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiry_reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fills: Option<Vec<FillJson>>,
}

/// `{symbol, orderId, clientOrderId}` inside an order list.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListLegJson {
    pub symbol: String,
    pub order_id: i64,
    pub client_order_id: String,
}

/// An order list (OCO). `orderReports` only on placement and cancel responses.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderListJson {
    pub order_list_id: i64,
    pub contingency_type: &'static str,
    pub list_status_type: &'static str,
    pub list_order_status: &'static str,
    pub list_client_order_id: String,
    pub transaction_time: i64,
    pub symbol: String,
    pub orders: Vec<ListLegJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_reports: Option<Vec<OrderJson>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BalanceJson {
    pub asset: String,
    pub free: String,
    pub locked: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CommissionRatesJson {
    pub maker: String,
    pub taker: String,
    pub buyer: String,
    pub seller: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountJson {
    pub maker_commission: i64,
    pub taker_commission: i64,
    pub buyer_commission: i64,
    pub seller_commission: i64,
    pub commission_rates: CommissionRatesJson,
    pub can_trade: bool,
    pub can_withdraw: bool,
    pub can_deposit: bool,
    pub brokered: bool,
    pub require_self_trade_prevention: bool,
    pub prevent_sor: bool,
    pub update_time: i64,
    pub account_type: &'static str,
    pub balances: Vec<BalanceJson>,
    pub permissions: Vec<&'static str>,
    pub uid: i64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TradeJson {
    pub symbol: String,
    pub id: i64,
    pub order_id: i64,
    pub order_list_id: i64,
    pub price: String,
    pub qty: String,
    pub quote_qty: String,
    pub commission: String,
    pub commission_asset: String,
    pub time: i64,
    pub is_buyer: bool,
    pub is_maker: bool,
    pub is_best_match: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ticker24hJson {
    pub symbol: String,
    pub price_change: String,
    pub price_change_percent: String,
    pub weighted_avg_price: String,
    pub prev_close_price: String,
    pub last_price: String,
    pub last_qty: String,
    pub bid_price: String,
    pub bid_qty: String,
    pub ask_price: String,
    pub ask_qty: String,
    pub open_price: String,
    pub high_price: String,
    pub low_price: String,
    pub volume: String,
    pub quote_volume: String,
    pub open_time: i64,
    pub close_time: i64,
    pub first_id: i64,
    pub last_id: i64,
    pub count: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PriceJson {
    pub symbol: String,
    pub price: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AvgPriceJson {
    pub mins: i64,
    pub price: String,
    pub close_time: i64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DepthJson {
    pub last_update_id: i64,
    pub bids: Vec<[String; 2]>,
    pub asks: Vec<[String; 2]>,
}
