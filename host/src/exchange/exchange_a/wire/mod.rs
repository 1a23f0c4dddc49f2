//! Exchange A's JSON, field names exactly as the exchange spells them (including
//! `cummulativeQuoteQty`). Decimals arrive as strings and are read into `Decimal` without
//! passing through floats. Conversion to the domain types happens here, once.

use rust_decimal::Decimal;
use serde::Deserialize;

use crate::exchange::{
    Balance, ExchangeError, Fill, Kline, Order, OrderList, OrderStatus, OrderType, Price, Qty,
    Side, Ticker24h, TimeInForce, Trade,
};

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
    pub free: Decimal,
    pub locked: Decimal,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountJson {
    #[serde(default)]
    pub can_trade: bool,
    pub balances: Vec<BalanceJson>,
}

impl From<BalanceJson> for Balance {
    fn from(b: BalanceJson) -> Self {
        Balance { asset: b.asset, free: b.free, locked: b.locked }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FillJson {
    pub price: Decimal,
    pub qty: Decimal,
    pub commission: Decimal,
    pub commission_asset: String,
    #[serde(default)]
    pub trade_id: i64,
}

/// Placement (ACK/RESULT/FULL), query and cancel responses share this shape; fields that a
/// given response lacks default.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderJson {
    pub symbol: String,
    pub order_id: i64,
    #[serde(default = "minus_one")]
    pub order_list_id: i64,
    pub client_order_id: String,
    /// Cancel responses: the order's own client id (`clientOrderId` is the cancel's).
    #[serde(default)]
    pub orig_client_order_id: Option<String>,
    #[serde(default)]
    pub transact_time: Option<i64>,
    #[serde(default)]
    pub time: Option<i64>,
    #[serde(default)]
    pub update_time: Option<i64>,
    #[serde(default)]
    pub price: Option<Decimal>,
    #[serde(default)]
    pub orig_qty: Option<Decimal>,
    #[serde(default)]
    pub executed_qty: Option<Decimal>,
    #[serde(default)]
    pub cummulative_quote_qty: Option<Decimal>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub time_in_force: Option<String>,
    #[serde(rename = "type", default)]
    pub order_type: Option<String>,
    #[serde(default)]
    pub side: Option<String>,
    #[serde(default)]
    pub stop_price: Option<Decimal>,
    #[serde(default)]
    pub is_working: Option<bool>,
    #[serde(default)]
    pub working_time: Option<i64>,
    #[serde(default)]
    pub fills: Vec<FillJson>,
}

fn minus_one() -> i64 {
    -1
}

fn bad(detail: String) -> ExchangeError {
    ExchangeError::Decode { detail }
}

pub fn parse_side(s: &str) -> Result<Side, ExchangeError> {
    match s {
        "BUY" => Ok(Side::Buy),
        "SELL" => Ok(Side::Sell),
        _ => Err(bad(format!("unknown side {s}"))),
    }
}

pub fn side_str(s: Side) -> &'static str {
    match s {
        Side::Buy => "BUY",
        Side::Sell => "SELL",
    }
}

pub fn parse_type(s: &str) -> Result<OrderType, ExchangeError> {
    Ok(match s {
        "MARKET" => OrderType::Market,
        "LIMIT" => OrderType::Limit,
        "LIMIT_MAKER" => OrderType::LimitMaker,
        "STOP_LOSS" => OrderType::StopLoss,
        "STOP_LOSS_LIMIT" => OrderType::StopLossLimit,
        "TAKE_PROFIT" => OrderType::TakeProfit,
        "TAKE_PROFIT_LIMIT" => OrderType::TakeProfitLimit,
        _ => return Err(bad(format!("unknown order type {s}"))),
    })
}

pub fn type_str(t: OrderType) -> &'static str {
    t.name()
}

pub fn tif_str(t: TimeInForce) -> &'static str {
    match t {
        TimeInForce::Gtc => "GTC",
        TimeInForce::Ioc => "IOC",
        TimeInForce::Fok => "FOK",
    }
}

fn parse_tif(s: &str) -> Option<TimeInForce> {
    match s {
        "GTC" => Some(TimeInForce::Gtc),
        "IOC" => Some(TimeInForce::Ioc),
        "FOK" => Some(TimeInForce::Fok),
        _ => None,
    }
}

pub fn parse_status(s: &str) -> Result<OrderStatus, ExchangeError> {
    Ok(match s {
        "NEW" => OrderStatus::New,
        "PENDING_NEW" => OrderStatus::PendingNew,
        "PARTIALLY_FILLED" => OrderStatus::PartiallyFilled,
        "FILLED" => OrderStatus::Filled,
        "CANCELED" => OrderStatus::Canceled,
        "PENDING_CANCEL" => OrderStatus::PendingCancel,
        "REJECTED" => OrderStatus::Rejected,
        "EXPIRED" => OrderStatus::Expired,
        "EXPIRED_IN_MATCH" => OrderStatus::ExpiredInMatch,
        _ => return Err(bad(format!("unknown order status {s}"))),
    })
}

impl OrderJson {
    /// Converts to the domain order. An ACK answer lacks the details: `fallback` (what was
    /// sent) fills them in and the status reads NEW.
    pub fn into_order(
        self,
        fallback: Option<&crate::exchange::NewOrder>,
    ) -> Result<Order, ExchangeError> {
        let side = match (&self.side, fallback) {
            (Some(s), _) => parse_side(s)?,
            (None, Some(f)) => f.side,
            (None, None) => return Err(bad("order without side".into())),
        };
        let order_type = match (&self.order_type, fallback) {
            (Some(t), _) => parse_type(t)?,
            (None, Some(f)) => f.order_type,
            (None, None) => return Err(bad("order without type".into())),
        };
        let status = match &self.status {
            Some(s) => parse_status(s)?,
            None => OrderStatus::New,
        };
        let time = self.time.or(self.transact_time).unwrap_or(0);
        let is_stop = matches!(
            order_type,
            OrderType::StopLoss
                | OrderType::StopLossLimit
                | OrderType::TakeProfit
                | OrderType::TakeProfitLimit
        );
        let working = self.is_working.unwrap_or(match self.working_time {
            Some(w) => w >= 0,
            None => !is_stop,
        });
        let stop_price = self.stop_price.filter(|p| !p.is_zero()).map(Price);
        Ok(Order {
            symbol: self.symbol,
            order_id: self.order_id,
            order_list_id: (self.order_list_id >= 0).then_some(self.order_list_id),
            client_order_id: self.orig_client_order_id.unwrap_or(self.client_order_id),
            side,
            order_type,
            status,
            price: Price(
                self.price
                    .or_else(|| fallback.and_then(|f| f.price.map(|p| p.0)))
                    .unwrap_or_default(),
            ),
            stop_price: stop_price.or_else(|| fallback.and_then(|f| f.stop_price)),
            orig_qty: Qty(self
                .orig_qty
                .or_else(|| fallback.and_then(|f| f.qty.map(|q| q.0)))
                .unwrap_or_default()),
            executed_qty: Qty(self.executed_qty.unwrap_or_default()),
            cumulative_quote_qty: self.cummulative_quote_qty.unwrap_or_default(),
            time_in_force: self.time_in_force.as_deref().and_then(parse_tif),
            time,
            update_time: self.update_time.or(self.transact_time).unwrap_or(time),
            working,
            fills: self
                .fills
                .into_iter()
                .map(|f| Fill {
                    price: Price(f.price),
                    qty: Qty(f.qty),
                    commission: f.commission,
                    commission_asset: f.commission_asset,
                    trade_id: f.trade_id,
                })
                .collect(),
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListLegJson {
    pub symbol: String,
    pub order_id: i64,
    pub client_order_id: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderListJson {
    pub order_list_id: i64,
    #[serde(default)]
    pub contingency_type: String,
    pub list_status_type: String,
    pub list_order_status: String,
    pub list_client_order_id: String,
    pub transaction_time: i64,
    pub symbol: String,
    pub orders: Vec<ListLegJson>,
    #[serde(default)]
    pub order_reports: Vec<OrderJson>,
}

impl OrderListJson {
    pub fn into_list(self) -> Result<OrderList, ExchangeError> {
        let orders = self
            .order_reports
            .into_iter()
            .map(|o| o.into_order(None))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(OrderList {
            symbol: self.symbol,
            order_list_id: self.order_list_id,
            list_client_order_id: self.list_client_order_id,
            executing: self.list_order_status == "EXECUTING",
            legs: self.orders.into_iter().map(|l| (l.order_id, l.client_order_id)).collect(),
            orders,
            transaction_time: self.transaction_time,
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TradeJson {
    pub symbol: String,
    pub id: i64,
    pub order_id: i64,
    #[serde(default = "minus_one")]
    pub order_list_id: i64,
    pub price: Decimal,
    pub qty: Decimal,
    pub quote_qty: Decimal,
    pub commission: Decimal,
    pub commission_asset: String,
    pub time: i64,
    pub is_buyer: bool,
    pub is_maker: bool,
}

impl From<TradeJson> for Trade {
    fn from(t: TradeJson) -> Self {
        Trade {
            symbol: t.symbol,
            id: t.id,
            order_id: t.order_id,
            order_list_id: (t.order_list_id >= 0).then_some(t.order_list_id),
            price: Price(t.price),
            qty: Qty(t.qty),
            quote_qty: t.quote_qty,
            commission: t.commission,
            commission_asset: t.commission_asset,
            time: t.time,
            is_buyer: t.is_buyer,
            is_maker: t.is_maker,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_full_response_parses() {
        let body = r#"{"symbol":"BTCUSDT","orderId":28,"orderListId":-1,"clientOrderId":"6gCrw2kRUAF9CvJDGP16IP","transactTime":1507725176595,"price":"0.00000000","origQty":"10.00000000","executedQty":"10.00000000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"10.00000000","status":"FILLED","timeInForce":"GTC","type":"MARKET","side":"SELL","workingTime":1507725176595,"selfTradePreventionMode":"NONE","fills":[{"price":"4000.00000000","qty":"1.00000000","commission":"4.00000000","commissionAsset":"USDT","tradeId":56}]}"#;
        let o: OrderJson = serde_json::from_str(body).expect("parse");
        let o = o.into_order(None).expect("convert");
        assert_eq!(o.status, OrderStatus::Filled);
        assert_eq!(o.order_list_id, None);
        assert_eq!(o.fills.len(), 1);
        assert_eq!(o.cumulative_quote_qty, Decimal::from(10));
    }

    #[test]
    fn documented_oco_and_kline_parse() {
        let body = r#"{"orderListId":1,"contingencyType":"OCO","listStatusType":"EXEC_STARTED","listOrderStatus":"EXECUTING","listClientOrderId":"lH1YDkuQKWiXVXHPSKYEIp","transactionTime":1710485608839,"symbol":"LTCBTC","orders":[{"symbol":"LTCBTC","orderId":10,"clientOrderId":"44nZvqpemY7sVYgPYbvPih"},{"symbol":"LTCBTC","orderId":11,"clientOrderId":"NuMp0nVYnciDiFmVqfpBqK"}],"orderReports":[{"symbol":"LTCBTC","orderId":10,"orderListId":1,"clientOrderId":"44nZvqpemY7sVYgPYbvPih","transactTime":1710485608839,"price":"1.00000000","origQty":"5.00000000","executedQty":"0.00000000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"0.00000000","status":"NEW","timeInForce":"GTC","type":"STOP_LOSS_LIMIT","side":"SELL","stopPrice":"1.00000000","workingTime":-1,"selfTradePreventionMode":"NONE"}]}"#;
        let l: OrderListJson = serde_json::from_str(body).expect("parse");
        let l = l.into_list().expect("convert");
        assert!(l.executing);
        assert_eq!(l.legs.len(), 2);
        assert!(!l.orders[0].working);
        let k: Vec<KlineRow> = serde_json::from_str(r#"[[1499040000000,"0.01634790","0.80000000","0.01575800","0.01577100","148976.11427815",1499644799999,"2434.19055334",308,"1756.87402397","28.46694368","0"]]"#).expect("kline");
        assert_eq!(Kline::from(k[0].clone()).trades, 308);
    }
}
