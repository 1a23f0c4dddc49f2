//! The frames of exchange B's WebSocket the link reads (wire reference §9.2-§9.4), as the
//! exchange spells them. Frames that are not JSON (the greeting) and channels the host does
//! not follow are ignored; an order update is the same object `orderStatus` nests.

use std::collections::HashMap;

use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::Value;

use crate::exchange::exchange_b::wire::OrderWithStatus;

/// What one frame says.
#[derive(Debug)]
pub enum Frame {
    /// Not JSON, or nothing the host follows.
    Ignored,
    Pong,
    /// A subscription was acknowledged: its `type`, and its `user` (lower case) if it has one.
    Subscribed {
        kind: String,
        user: Option<String>,
    },
    /// The server refused something (`{"channel":"error","data":"<text>"}`).
    Error(String),
    /// `allMids`: the mid of every coin.
    Mids(HashMap<String, Decimal>),
    /// `orderUpdates`: one element per order status change (elements that do not read are
    /// left out).
    Orders(Vec<OrderWithStatus>),
}

#[derive(Deserialize)]
struct Envelope {
    channel: String,
    #[serde(default)]
    data: Value,
}

/// The subscribe request for `subscription`.
pub fn subscribe(subscription: Value) -> String {
    serde_json::json!({"method": "subscribe", "subscription": subscription}).to_string()
}

pub const PING: &str = r#"{"method":"ping"}"#;

/// Reads one text frame.
pub fn frame(text: &str) -> Frame {
    if !text.trim_start().starts_with('{') {
        return Frame::Ignored;
    }
    let Ok(Envelope { channel, data }) = serde_json::from_str(text) else { return Frame::Ignored };
    match channel.as_str() {
        "pong" => Frame::Pong,
        "error" => Frame::Error(data.as_str().map_or_else(|| data.to_string(), String::from)),
        "subscriptionResponse" if data["method"] == "subscribe" => {
            let sub = &data["subscription"];
            let Some(kind) = sub["type"].as_str() else { return Frame::Ignored };
            let user = sub["user"].as_str().map(str::to_ascii_lowercase);
            Frame::Subscribed { kind: kind.to_string(), user }
        }
        "allMids" => {
            let Some(mids) = data["mids"].as_object() else { return Frame::Ignored };
            let mids = mids
                .iter()
                .filter_map(|(coin, mid)| Some((coin.clone(), mid.as_str()?.parse().ok()?)))
                .collect();
            Frame::Mids(mids)
        }
        "orderUpdates" => {
            let Value::Array(updates) = data else { return Frame::Ignored };
            Frame::Orders(
                updates.into_iter().filter_map(|u| serde_json::from_value(u).ok()).collect(),
            )
        }
        _ => Frame::Ignored,
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    /// §9.5, event 1: a take-profit resting.
    pub const TP_OPEN: &str = r#"{"channel":"orderUpdates","data":[{"order":{"coin":"@107","side":"A","limitPx":"19.5","sz":"43.84","oid":59071663721,"timestamp":1750000000000,"origSz":"43.84","cloid":"0x4d545f000000000000000000000000aa"},"status":"open","statusTimestamp":1750000000000}]}"#;
    /// §9.5, event 3: the take-profit filled.
    pub const TP_FILLED: &str = r#"{"channel":"orderUpdates","data":[{"order":{"coin":"@107","side":"A","limitPx":"19.5","sz":"0.0","oid":59071663721,"timestamp":1750000000000,"origSz":"43.84","cloid":"0x4d545f000000000000000000000000aa"},"status":"filled","statusTimestamp":1750000600000}]}"#;
    /// §9.5, event 2: a fill (the host does not follow `userFills`).
    const FILL: &str = r#"{"channel":"userFills","data":{"isSnapshot":false,"user":"0x14791697260e4c9a71f18484c9f997b308e59325","fills":[{"coin":"@107","px":"19.5","sz":"43.84","side":"A","time":1750000600000,"startPosition":"43.84","dir":"Sell","closedPnl":"0.0","hash":"0x…","oid":59071663721,"crossed":false,"fee":"0.25646","tid":118437262884913,"feeToken":"USDC"}]}}"#;

    #[test]
    fn order_updates_read_as_orders_with_their_status() {
        let Frame::Orders(open) = frame(TP_OPEN) else { panic!() };
        let Frame::Orders(filled) = frame(TP_FILLED) else { panic!() };
        let (o, f) = (&open[0], &filled[0]);
        assert_eq!(
            (o.status.as_str(), o.order.oid, o.order.sz),
            ("open", 59071663721, dec!(43.84))
        );
        assert_eq!((f.status.as_str(), f.status_timestamp), ("filled", 1750000600000));
        assert_eq!((f.order.sz, f.order.orig_sz), (dec!(0.0), dec!(43.84)));
        assert_eq!(f.order.cloid, Some("0x4d545f000000000000000000000000aa".parse().unwrap()));
        let no_cloid = TP_OPEN.replace(r#","cloid":"0x4d545f000000000000000000000000aa""#, "");
        let with_null = TP_OPEN.replace(r#""0x4d545f000000000000000000000000aa""#, "null");
        for text in [no_cloid, with_null] {
            let Frame::Orders(o) = frame(&text) else { panic!("{text}") };
            assert_eq!(o[0].order.cloid, None);
        }
        let Frame::Orders(none) = frame(r#"{"channel":"orderUpdates","data":[{"odd":1}]}"#) else {
            panic!()
        };
        assert!(none.is_empty(), "an element that does not read is left out");
    }

    #[test]
    fn mids_acks_pongs_and_errors() {
        let mids = r#"{"channel":"allMids","data":{"mids":{"BTC":"97123.5","PURR/USDC":"0.20432","@107":"18.62041381"}}}"#;
        let Frame::Mids(m) = frame(mids) else { panic!() };
        assert_eq!((m["@107"], m["PURR/USDC"], m.len()), (dec!(18.62041381), dec!(0.20432), 3));

        let ack = r#"{"channel":"subscriptionResponse","data":{"method":"subscribe","subscription":{"type":"userFills","user":"0x14791697260E4C9A71F18484C9F997B308E59325","aggregateByTime":false}}}"#;
        let Frame::Subscribed { kind, user } = frame(ack) else { panic!() };
        assert_eq!(kind, "userFills");
        assert_eq!(user.as_deref(), Some("0x14791697260e4c9a71f18484c9f997b308e59325"));
        let all = r#"{"channel":"subscriptionResponse","data":{"method":"subscribe","subscription":{"type":"allMids"}}}"#;
        assert!(matches!(frame(all), Frame::Subscribed { kind, user: None } if kind == "allMids"));
        let gone = all.replace(r#""method":"subscribe""#, r#""method":"unsubscribe""#);
        assert!(matches!(frame(&gone), Frame::Ignored), "an unsubscribe's ack");

        assert!(matches!(frame(r#"{"channel":"pong"}"#), Frame::Pong));
        let err = r#"{"channel":"error","data":"Cannot track more than 10 total users."}"#;
        assert!(
            matches!(frame(err), Frame::Error(t) if t == "Cannot track more than 10 total users.")
        );
    }

    #[test]
    fn the_greeting_and_unknown_channels_are_skipped() {
        assert!(matches!(frame("Websocket connection established."), Frame::Ignored));
        assert!(matches!(frame(FILL), Frame::Ignored));
        let candle = r#"{"channel":"candle","data":{"t":1,"T":2,"s":"@107","i":"1m","o":"1","c":"1","h":"1","l":"1","v":"0","n":0}}"#;
        assert!(matches!(frame(candle), Frame::Ignored));
        assert!(matches!(frame("{not json"), Frame::Ignored));
        assert!(matches!(frame(r#"{"channel":"allMids","data":{"BTC":"1"}}"#), Frame::Ignored));
    }

    #[test]
    fn requests_are_spelled_as_the_exchange_wants() {
        let sub = subscribe(serde_json::json!({"type": "allMids"}));
        assert_eq!(sub, r#"{"method":"subscribe","subscription":{"type":"allMids"}}"#);
        assert_eq!(PING, r#"{"method":"ping"}"#);
    }
}
