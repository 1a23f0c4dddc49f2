//! The frames of exchange A's WebSocket services the host reads, field names (case-sensitive)
//! as the exchange spells them. Everything else in a frame is ignored.

use rust_decimal::Decimal;
use serde::Deserialize;

use super::super::wire::parse_status;
use crate::exchange::feed::{ExchangeEvent, OrderUpdate};

/// A frame of the WebSocket API: an answer (with `id` and `status`) or a pushed event.
#[derive(Debug, Deserialize)]
pub struct ApiFrame {
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default)]
    pub error: Option<ApiError>,
    #[serde(default)]
    pub event: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
pub struct ApiError {
    pub code: i64,
    #[serde(default)]
    pub msg: String,
}

/// The keys of `executionReport` the host uses.
#[derive(Debug, Deserialize)]
struct ExecutionReport {
    s: String,
    /// The order's own client id (`c` is a cancel's id on a cancel).
    c: String,
    #[serde(rename = "C", default)]
    orig_client_id: String,
    #[serde(rename = "X")]
    status: String,
    i: i64,
    g: i64,
    #[serde(with = "rust_decimal::serde::str")]
    z: Decimal,
    #[serde(rename = "T")]
    time: i64,
}

/// What a pushed event means to the host, if anything.
pub enum Pushed {
    Event(ExchangeEvent),
    /// The server is about to close the connection, or ended the subscription.
    Ending,
    Ignored,
}

/// Reads one pushed account event.
pub fn account_event(event: &serde_json::Value) -> Pushed {
    match event.get("e").and_then(|e| e.as_str()) {
        Some("executionReport") => {
            let Ok(r) = serde_json::from_value::<ExecutionReport>(event.clone()) else {
                return Pushed::Ignored;
            };
            let Ok(status) = parse_status(&r.status) else { return Pushed::Ignored };
            let client_order_id = if r.orig_client_id.is_empty() { r.c } else { r.orig_client_id };
            Pushed::Event(ExchangeEvent::Order(OrderUpdate {
                symbol: r.s,
                order_id: r.i,
                client_order_id,
                list_id: (r.g >= 0).then_some(r.g),
                status,
                executed_qty: r.z,
                time_ms: r.time,
            }))
        }
        Some("serverShutdown" | "eventStreamTerminated") => Pushed::Ending,
        _ => Pushed::Ignored,
    }
}

/// A market stream frame, raw or wrapped in `{"stream", "data"}`.
#[derive(Debug, Deserialize)]
struct Trade {
    e: String,
    s: String,
    #[serde(with = "rust_decimal::serde::str")]
    p: Decimal,
    #[serde(rename = "T")]
    time: i64,
}

/// Reads one market stream frame: a trade is the symbol's last price.
pub fn market_frame(text: &str) -> Pushed {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else { return Pushed::Ignored };
    let data = value.get("data").unwrap_or(&value);
    if data.get("e").and_then(|e| e.as_str()) == Some("serverShutdown") {
        return Pushed::Ending;
    }
    match serde_json::from_value::<Trade>(data.clone()) {
        Ok(t) if t.e == "trade" => {
            Pushed::Event(ExchangeEvent::Price { symbol: t.s, price: t.p, time_ms: t.time })
        }
        _ => Pushed::Ignored,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::OrderStatus;

    #[test]
    fn an_execution_report_becomes_an_order_update_keyed_by_the_order_s_own_id() {
        // Event 1 of the reference's list cancel: `c` is the cancel's id, `C` the leg's.
        let cancel = serde_json::json!({"e":"executionReport","E":1750000400002i64,"s":"BTCUSDT","c":"MT_cx1","S":"SELL","o":"STOP_LOSS_LIMIT","f":"GTC","q":"0.00099000","p":"57884.00000000","P":"58000.00000000","F":"0.00000000","g":77,"C":"MT_sl1","x":"CANCELED","X":"CANCELED","r":"NONE","i":1002,"l":"0.00000000","z":"0.00000000","L":"0.00000000","n":"0","N":null,"T":1750000400001i64,"t":-1,"I":2009,"w":false,"m":false,"M":false,"O":1750000100001i64,"Z":"0.00000000","Y":"0.00000000","Q":"0.00000000","V":"NONE"});
        let Pushed::Event(ExchangeEvent::Order(u)) = account_event(&cancel) else { panic!() };
        assert_eq!(
            (u.client_order_id.as_str(), u.order_id, u.list_id, u.status),
            ("MT_sl1", 1002, Some(77), OrderStatus::Canceled)
        );
        assert!(matches!(
            account_event(&serde_json::json!({"e": "serverShutdown", "E": 1})),
            Pushed::Ending
        ));
        assert!(matches!(account_event(&serde_json::json!({"e": "listStatus"})), Pushed::Ignored));
    }

    #[test]
    fn a_trade_raw_or_combined_is_a_price() {
        let raw = r#"{"e":"trade","E":1,"s":"ETHUSDT","t":5,"p":"3100.00000000","q":"1","T":7,"m":false,"M":true}"#;
        let combined = format!(r#"{{"stream":"ethusdt@trade","data":{raw}}}"#);
        for text in [raw, combined.as_str()] {
            let Pushed::Event(ExchangeEvent::Price { symbol, price, time_ms }) = market_frame(text)
            else {
                panic!("{text}")
            };
            assert_eq!((symbol.as_str(), price, time_ms), ("ETHUSDT", Decimal::new(3100, 0), 7));
        }
        assert!(matches!(market_frame(r#"{"result":null,"id":1}"#), Pushed::Ignored));
    }
}
