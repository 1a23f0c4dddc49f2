//! Exchange A's orders, order lists and trades, read strictly. Every order shape the service
//! asks for (FULL placement, query, cancel, a list's reports) carries the same documented
//! fields; one that misses any of them, names an unknown status, side or type, or carries an
//! impossible number (a number that is not a plain decimal string, a negative quantity or
//! price, a fill at 0, more executed than ordered, fills that do not add up) is a
//! [`ExchangeError::Decode`]. The numbers are read by the rule both clients share
//! ([`crate::exchange::answers`]). For a request that moves money the client turns
//! that into an unknown outcome, settled by lookup: a damaged answer is never taken as a
//! rejection, and never as an order built from defaults.

use rust_decimal::Decimal;
use serde::Deserialize;

use crate::exchange::answers::{non_negative, nullable_non_negative, positive};
use crate::exchange::{
    ExchangeError, Fill, Order, OrderList, OrderStatus, OrderType, Price, Qty, Side, TimeInForce,
    Trade,
};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FillJson {
    #[serde(deserialize_with = "positive")]
    pub price: Decimal,
    #[serde(deserialize_with = "positive")]
    pub qty: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub commission: Decimal,
    pub commission_asset: String,
    pub trade_id: i64,
}

/// FULL placement, query and cancel answers: the fields all of them carry are required.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderJson {
    pub symbol: String,
    pub order_id: i64,
    #[serde(default = "minus_one")]
    pub order_list_id: i64,
    pub client_order_id: String,
    /// Cancel answers: the order's own client id (`clientOrderId` is the cancel's).
    #[serde(default)]
    pub orig_client_order_id: Option<String>,
    /// Placement and cancel answers.
    #[serde(default)]
    pub transact_time: Option<i64>,
    /// Query answers.
    #[serde(default)]
    pub time: Option<i64>,
    #[serde(default)]
    pub update_time: Option<i64>,
    #[serde(deserialize_with = "non_negative")]
    pub price: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub orig_qty: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub executed_qty: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub cummulative_quote_qty: Decimal,
    pub status: String,
    #[serde(default)]
    pub time_in_force: Option<String>,
    #[serde(rename = "type")]
    pub order_type: String,
    pub side: String,
    #[serde(default, deserialize_with = "nullable_non_negative")]
    pub stop_price: Option<Decimal>,
    #[serde(default)]
    pub is_working: Option<bool>,
    #[serde(default)]
    pub working_time: Option<i64>,
    /// FULL placement answers only ([`OrderJson::into_placed`] requires them).
    #[serde(default)]
    pub fills: Option<Vec<FillJson>>,
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

fn parse_tif(s: &str) -> Result<TimeInForce, ExchangeError> {
    match s {
        "GTC" => Ok(TimeInForce::Gtc),
        "IOC" => Ok(TimeInForce::Ioc),
        "FOK" => Ok(TimeInForce::Fok),
        _ => Err(bad(format!("unknown time in force {s}"))),
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

impl From<FillJson> for Fill {
    fn from(f: FillJson) -> Self {
        Fill {
            price: Price(f.price),
            qty: Qty(f.qty),
            commission: f.commission,
            commission_asset: f.commission_asset,
            trade_id: f.trade_id,
        }
    }
}

impl OrderJson {
    /// A FULL placement answer: its fills are required and must add up to what executed.
    pub fn into_placed(mut self) -> Result<Order, ExchangeError> {
        if self.fills.is_none() {
            return Err(bad(format!("order {}: placement answer without fills", self.order_id)));
        }
        let fills = self.fills.take();
        let mut order = self.into_order()?;
        order.fills = fills.into_iter().flatten().map(Fill::from).collect();
        let filled: Decimal = order.fills.iter().map(|f| f.qty.0).sum();
        if filled != order.executed_qty.0 {
            return Err(bad(format!(
                "order {}: fills add up to {filled}, executed {}",
                order.client_order_id, order.executed_qty.0
            )));
        }
        Ok(order)
    }

    /// A query, cancel or list report answer (fills, when present, are read as well).
    pub fn into_order(self) -> Result<Order, ExchangeError> {
        let id = self.orig_client_order_id.clone().unwrap_or_else(|| self.client_order_id.clone());
        let side = parse_side(&self.side)?;
        let order_type = parse_type(&self.order_type)?;
        let status = parse_status(&self.status)?;
        let time_in_force = self.time_in_force.as_deref().map(parse_tif).transpose()?;
        let (orig_qty, executed) = (self.orig_qty, self.executed_qty);
        let quote = self.cummulative_quote_qty;
        if executed > orig_qty && !orig_qty.is_zero() {
            return Err(bad(format!("order {id}: executed {executed} of {orig_qty}")));
        }
        if executed.is_zero() != quote.is_zero() {
            return Err(bad(format!("order {id}: executed {executed} for {quote} quote")));
        }
        let Some(time) = self.time.or(self.transact_time) else {
            return Err(bad(format!("order {id}: neither time nor transactTime")));
        };
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
        let stop_price = self.stop_price.unwrap_or_default();
        let fills = self.fills.into_iter().flatten().map(Fill::from).collect();
        Ok(Order {
            symbol: self.symbol,
            order_id: self.order_id,
            order_list_id: (self.order_list_id >= 0).then_some(self.order_list_id),
            client_order_id: id,
            side,
            order_type,
            status,
            price: Price(self.price),
            stop_price: (!stop_price.is_zero()).then_some(Price(stop_price)),
            orig_qty: Qty(orig_qty),
            executed_qty: Qty(executed),
            cumulative_quote_qty: quote,
            time_in_force,
            time,
            update_time: self.update_time.or(self.transact_time).unwrap_or(time),
            working,
            fills,
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
    /// An OCO list: two legs, and a known list status (`EXECUTING` or `ALL_DONE`; the rest of
    /// the documented values, `REJECT`, is refused as a list that does not exist here).
    pub fn into_list(self) -> Result<OrderList, ExchangeError> {
        let executing = match self.list_order_status.as_str() {
            "EXECUTING" => true,
            "ALL_DONE" => false,
            other => return Err(bad(format!("unknown list order status {other}"))),
        };
        match self.list_status_type.as_str() {
            "RESPONSE" | "EXEC_STARTED" | "ALL_DONE" | "UPDATED" => {}
            other => return Err(bad(format!("unknown list status type {other}"))),
        }
        if self.orders.len() != 2 {
            return Err(bad(format!(
                "list {}: {} legs, an OCO has two",
                self.list_client_order_id,
                self.orders.len()
            )));
        }
        let orders =
            self.order_reports.into_iter().map(OrderJson::into_order).collect::<Result<_, _>>()?;
        Ok(OrderList {
            symbol: self.symbol,
            order_list_id: self.order_list_id,
            list_client_order_id: self.list_client_order_id,
            executing,
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
    #[serde(deserialize_with = "positive")]
    pub price: Decimal,
    #[serde(deserialize_with = "positive")]
    pub qty: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub quote_qty: Decimal,
    #[serde(deserialize_with = "non_negative")]
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

    /// A documented FULL answer (the reference's example, its fills adding up).
    const FULL: &str = r#"{"symbol":"BTCUSDT","orderId":28,"orderListId":-1,"clientOrderId":"6gCrw2kRUAF9CvJDGP16IP","transactTime":1507725176595,"price":"0.00000000","origQty":"10.00000000","executedQty":"10.00000000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"40000.00000000","status":"FILLED","timeInForce":"GTC","type":"MARKET","side":"SELL","workingTime":1507725176595,"selfTradePreventionMode":"NONE","fills":[{"price":"4000.00000000","qty":"10.00000000","commission":"4.00000000","commissionAsset":"USDT","tradeId":56}]}"#;

    fn placed(body: &str) -> Result<Order, String> {
        let json: OrderJson = serde_json::from_str(body).map_err(|e| e.to_string())?;
        json.into_placed().map_err(|e| e.to_string())
    }

    #[test]
    fn documented_full_response_parses() {
        let o = placed(FULL).expect("documented");
        assert_eq!(o.status, OrderStatus::Filled);
        assert_eq!(o.order_list_id, None);
        assert_eq!(o.fills.len(), 1);
        assert_eq!(o.cumulative_quote_qty, Decimal::from(40000));
    }

    /// Every way a proxy or a broken gateway damaged a placement answer in the field is an
    /// error here, never an order (the client then looks the order up).
    #[test]
    fn damaged_placement_answers_are_errors() {
        let damaged = [
            ("truncated", FULL[..FULL.len() / 2].to_string()),
            ("wrong shape", format!("[{FULL}]")),
            ("wrong type", FULL.replace(r#""orderId":28"#, r#""orderId":"x""#)),
            ("missing field", FULL.replace(r#""executedQty":"10.00000000","#, "")),
            ("missing status", FULL.replace(r#""status":"FILLED","#, "")),
            ("missing fills", FULL.replace(r#","fills":[{"price":"4000.00000000","qty":"10.00000000","commission":"4.00000000","commissionAsset":"USDT","tradeId":56}]"#, "")),
            ("huge number", FULL.replace(r#""executedQty":"10.00000000""#, r#""executedQty":"1e400""#)),
            ("negative number", FULL.replace(r#""executedQty":"10.00000000""#, r#""executedQty":"-0.0001""#)),
            ("unknown enum", FULL.replace("FILLED", "MYSTERY_VALUE")),
            ("duplicate key", FULL.replacen('{', r#"{"orderId":29,"#, 1)),
            ("executed above ordered", FULL.replace(r#""origQty":"10.00000000""#, r#""origQty":"1.00000000""#)),
            ("fills do not add up", FULL.replace(r#""qty":"10.00000000""#, r#""qty":"1.00000000""#)),
            ("number where a string is", FULL.replace(r#""cummulativeQuoteQty":"40000.00000000""#, r#""cummulativeQuoteQty":7"#)),
            ("exponent", FULL.replace(r#""price":"0.00000000""#, r#""price":"1e-8""#)),
            ("empty", String::new()),
            ("html", "<html><body>502 Bad Gateway</body></html>".into()),
        ];
        for (kind, body) in damaged {
            assert!(placed(&body).is_err(), "{kind}: {body}");
        }
    }

    #[test]
    fn reordered_keys_are_the_same_answer() {
        let value: serde_json::Value = serde_json::from_str(FULL).unwrap();
        let mut pairs: Vec<(String, serde_json::Value)> =
            value.as_object().unwrap().clone().into_iter().collect();
        pairs.reverse();
        let body = format!(
            "{{{}}}",
            pairs.iter().map(|(k, v)| format!("{k:?}:{v}")).collect::<Vec<_>>().join(",")
        );
        assert_eq!(placed(&body), placed(FULL));
    }

    #[test]
    fn documented_oco_parses_and_a_damaged_one_does_not() {
        let body = r#"{"orderListId":1,"contingencyType":"OCO","listStatusType":"EXEC_STARTED","listOrderStatus":"EXECUTING","listClientOrderId":"lH1YDkuQKWiXVXHPSKYEIp","transactionTime":1710485608839,"symbol":"LTCBTC","orders":[{"symbol":"LTCBTC","orderId":10,"clientOrderId":"44nZvqpemY7sVYgPYbvPih"},{"symbol":"LTCBTC","orderId":11,"clientOrderId":"NuMp0nVYnciDiFmVqfpBqK"}],"orderReports":[{"symbol":"LTCBTC","orderId":10,"orderListId":1,"clientOrderId":"44nZvqpemY7sVYgPYbvPih","transactTime":1710485608839,"price":"1.00000000","origQty":"5.00000000","executedQty":"0.00000000","origQuoteOrderQty":"0.000000","cummulativeQuoteQty":"0.00000000","status":"NEW","timeInForce":"GTC","type":"STOP_LOSS_LIMIT","side":"SELL","stopPrice":"1.00000000","workingTime":-1,"selfTradePreventionMode":"NONE"}]}"#;
        let list = |body: &str| {
            serde_json::from_str::<OrderListJson>(body)
                .map_err(|e| e.to_string())?
                .into_list()
                .map_err(|e| e.to_string())
        };
        let l = list(body).expect("documented");
        assert!(l.executing);
        assert_eq!(l.legs.len(), 2);
        assert!(!l.orders[0].working);
        assert!(list(&body.replace("EXECUTING", "MYSTERY_VALUE")).is_err());
        assert!(list(&body.replace(r#""price":"1.00000000""#, r#""price":"-0.0001""#)).is_err());
        assert!(list(&body.replace(r#","orderId":11"#, r#","orderId":"11""#)).is_err());
    }

    #[test]
    fn impossible_trades_are_errors() {
        let trade = r#"{"symbol":"BNBBTC","id":28457,"orderId":100234,"orderListId":-1,"price":"4.00000100","qty":"12.00000000","quoteQty":"48.000012","commission":"10.10000000","commissionAsset":"BNB","time":1499865549590,"isBuyer":true,"isMaker":false,"isBestMatch":true}"#;
        let read = |body: &str| serde_json::from_str::<TradeJson>(body).map(Trade::from);
        assert!(read(trade).is_ok());
        assert!(read(&trade.replace(r#""qty":"12.00000000""#, r#""qty":"-0.0001""#)).is_err());
        assert!(read(&trade.replace(r#""price":"4.00000100""#, r#""price":"0""#)).is_err());
        assert!(read(&trade.replace(r#""isBuyer":true"#, r#""isBuyer":"yes""#)).is_err());
    }
}
