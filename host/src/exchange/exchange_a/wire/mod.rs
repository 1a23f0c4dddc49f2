//! Exchange A's JSON, field names exactly as the exchange spells them (including
//! `cummulativeQuoteQty`). Decimals arrive as strings and are read into `Decimal` without
//! passing through floats. Conversion to the domain types happens here, once, and is strict:
//! an answer that misses a field or carries an impossible number is an error, never a value
//! built from defaults (orders, lists and trades: [`orders`]).

mod orders;

use rust_decimal::Decimal;
use serde::Deserialize;

pub use orders::{OrderJson, OrderListJson, TradeJson, parse_status, side_str, tif_str, type_str};

use crate::exchange::{Balance, Kline, Price, Ticker24h};

/// `{"code": -2010, "msg": "..."}`.
#[derive(Debug, Clone, Deserialize)]
pub struct ErrorBody {
    pub code: i64,
    #[serde(default)]
    pub msg: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTime {
    pub server_time: i64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimit {
    pub rate_limit_type: String,
    pub interval: String,
    pub interval_num: u32,
    pub limit: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExchangeInfo {
    #[serde(default)]
    pub server_time: i64,
    #[serde(default)]
    pub rate_limits: Vec<RateLimit>,
    pub symbols: Vec<SymbolInfo>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SymbolInfo {
    pub symbol: String,
    pub status: String,
    pub base_asset: String,
    pub quote_asset: String,
    #[serde(default)]
    pub order_types: Vec<String>,
    #[serde(default)]
    pub oco_allowed: bool,
    #[serde(default)]
    pub quote_order_qty_market_allowed: bool,
    #[serde(default)]
    pub filters: Vec<serde_json::Value>,
}

/// One kline: 12 positional elements.
#[derive(Debug, Clone, Deserialize)]
pub struct KlineRow(
    pub i64,
    pub Decimal,
    pub Decimal,
    pub Decimal,
    pub Decimal,
    pub Decimal,
    pub i64,
    pub Decimal,
    pub u64,
    pub Decimal,
    pub Decimal,
    pub serde_json::Value,
);

impl From<KlineRow> for Kline {
    fn from(k: KlineRow) -> Self {
        Kline {
            open_time: k.0,
            open: Price(k.1),
            high: Price(k.2),
            low: Price(k.3),
            close: Price(k.4),
            volume: k.5,
            close_time: k.6,
            quote_volume: k.7,
            trades: k.8,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ticker24hJson {
    pub symbol: String,
    pub price_change_percent: Decimal,
    pub last_price: Decimal,
    pub high_price: Decimal,
    pub low_price: Decimal,
    pub volume: Decimal,
    pub quote_volume: Decimal,
}

impl From<Ticker24hJson> for Ticker24h {
    fn from(t: Ticker24hJson) -> Self {
        Ticker24h {
            symbol: t.symbol,
            last_price: Price(t.last_price),
            price_change_percent: t.price_change_percent,
            high_price: Price(t.high_price),
            low_price: Price(t.low_price),
            volume: t.volume,
            quote_volume: t.quote_volume,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct PriceJson {
    pub symbol: String,
    pub price: Decimal,
}

#[derive(Debug, Clone, Deserialize)]
pub struct BalanceJson {
    pub asset: String,
    #[serde(deserialize_with = "crate::exchange::answers::non_negative")]
    pub free: Decimal,
    #[serde(deserialize_with = "crate::exchange::answers::non_negative")]
    pub locked: Decimal,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountJson {
    #[serde(default)]
    pub can_trade: bool,
    pub balances: Vec<BalanceJson>,
}

/// A negative balance is refused when read: the answer is damaged, not a debt.
impl From<BalanceJson> for Balance {
    fn from(b: BalanceJson) -> Self {
        Balance { asset: b.asset, free: b.free, locked: b.locked }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_kline_parses() {
        let k: Vec<KlineRow> = serde_json::from_str(r#"[[1499040000000,"0.01634790","0.80000000","0.01575800","0.01577100","148976.11427815",1499644799999,"2434.19055334",308,"1756.87402397","28.46694368","0"]]"#).expect("kline");
        assert_eq!(Kline::from(k[0].clone()).trades, 308);
    }

    #[test]
    fn a_negative_balance_is_a_damaged_answer() {
        let json = |free: &str| format!(r#"{{"asset":"BTC","free":"{free}","locked":"0"}}"#);
        assert!(serde_json::from_str::<BalanceJson>(&json("0.5")).is_ok());
        assert!(serde_json::from_str::<BalanceJson>(&json("-0.0001")).is_err());
        assert!(serde_json::from_str::<BalanceJson>(&json("1e400")).is_err());
        let number = r#"{"asset":"BTC","free":7,"locked":"0"}"#;
        assert!(serde_json::from_str::<BalanceJson>(number).is_err(), "a number, not a string");
    }
}
