//! The simulator's WebSocket services, driven with a WebSocket client nobody here wrote
//! (tokio-tungstenite) and raw JSON frames: the user data stream's subscription and events
//! after REST orders and after fills the market makes on its own, the API's framing and
//! errors, the connection rules (pings, lifetime), stream faults, and the market streams.

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use spotbot_sim::{
    Clock, ManualClock, RunningSim, RunningStreams, SimConfig, StreamConfig, StreamFault,
    StreamFaultKind, serve, serve_streams,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The key and secret of the reference's signing examples.
const KEY: &str = "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A";
const SECRET: &str = "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j";
/// The timestamp of the reference's subscription example.
const T0: i64 = 1_747_385_641_636;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

struct Exchange {
    rest: RunningSim,
    streams: RunningStreams,
    clock: Arc<ManualClock>,
    http: reqwest::Client,
}

async fn start() -> Exchange {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let clock = Arc::new(ManualClock::new(T0));
    let mut config = SimConfig::new(5, KEY, SECRET);
    config.clock = clock.clone();
    config.streams = StreamConfig {
        ping_interval: Duration::from_millis(200),
        pong_timeout: Duration::from_millis(2000),
        max_lifetime_ms: 24 * 3_600_000,
        tick: Duration::from_millis(10),
        shutdown_grace: Duration::from_millis(200),
    };
    let rest = serve(config, "127.0.0.1:0").await.expect("bind rest");
    rest.sim.set_price("ETHUSDT", 3000.into()).expect("price");
    let streams = serve_streams(rest.sim.clone(), "127.0.0.1:0").await.expect("bind streams");
    Exchange { rest, streams, clock, http: reqwest::Client::new() }
}

impl Exchange {
    async fn connect(&self, path: &str) -> Ws {
        let url = format!("{}{path}", self.streams.base_url());
        tokio_tungstenite::connect_async(url).await.expect("connect").0
    }

    /// A signed REST request with every parameter in the query string.
    async fn rest(&self, method: reqwest::Method, path: &str, params: &str) -> Value {
        let q = format!("{params}&timestamp={}", self.rest.sim.now_ms());
        let sig = spotbot_sim::params::sign(SECRET, &q);
        let url = format!("{}{path}?{q}&signature={sig}", self.rest.base_url());
        let r = self.http.request(method, url).header("X-MBX-APIKEY", KEY).send().await;
        r.expect("send").json().await.expect("json")
    }

    /// Subscribes the account on `ws`; returns the answer.
    async fn subscribe(&self, ws: &mut Ws, id: &str) -> Value {
        let mut params = serde_json::Map::new();
        params.insert("apiKey".into(), json!(KEY));
        params.insert("timestamp".into(), json!(self.clock.now_ms()));
        let signature =
            spotbot_sim::params::sign(SECRET, &spotbot_sim::params::ws_payload(&params));
        params.insert("signature".into(), json!(signature));
        request(
            ws,
            json!({"id": id, "method": "userDataStream.subscribe.signature", "params": params}),
        )
        .await
    }
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.expect("send");
}

/// The next text frame as raw text (pings are answered by the client while it reads).
async fn next_text(ws: &mut Ws) -> String {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next()).await;
        match msg.expect("a frame within 5 s") {
            Some(Ok(Message::Text(t))) => return t.as_str().to_string(),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            other => panic!("expected a text frame, got {other:?}"),
        }
    }
}

async fn next_json(ws: &mut Ws) -> Value {
    serde_json::from_str(&next_text(ws).await).expect("json frame")
}

async fn request(ws: &mut Ws, req: Value) -> Value {
    send(ws, req).await;
    next_json(ws).await
}

/// The next `n` events' payloads.
async fn events(ws: &mut Ws, n: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for _ in 0..n {
        let frame = next_json(ws).await;
        assert_eq!(frame["subscriptionId"], 0, "{frame}");
        out.push(frame["event"].clone());
    }
    out
}

/// Whether the server ends the connection within `within`.
async fn closed_within(ws: &mut Ws, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Err(_) => return false,
            Ok(Some(Ok(Message::Close(_))) | Some(Err(_)) | None) => return true,
            Ok(Some(Ok(_))) => continue,
        }
    }
}

#[tokio::test]
async fn the_documented_subscription_is_accepted_and_a_market_buy_is_pushed() {
    let x = start().await;
    let mut ws = x.connect("/ws-api/v3").await;
    // The reference's request, signature and all, at its timestamp.
    let answer = request(&mut ws, json!({
        "id": "uds-1", "method": "userDataStream.subscribe.signature",
        "params": {"apiKey": KEY, "timestamp": T0,
                   "signature": "681110a6057ad58657af22f5640fab9dd17418834cdfccdc81be8b0f7b2cde3e"}
    })).await;
    assert_eq!(answer["id"], "uds-1");
    assert_eq!(answer["status"], 200);
    assert_eq!(answer["result"], json!({"subscriptionId": 0}));
    assert_eq!(answer["rateLimits"][0]["rateLimitType"], "REQUEST_WEIGHT");

    let placed = x
        .rest(
            reqwest::Method::POST,
            "/api/v3/order",
            "symbol=ETHUSDT&side=BUY&type=MARKET&quantity=1&newClientOrderId=MT_e1",
        )
        .await;
    let new = next_text(&mut ws).await;
    assert!(new.starts_with(r#"{"subscriptionId":0,"event":{"e":"executionReport","E":"#), "{new}");
    for part in [
        r#""s":"ETHUSDT","c":"MT_e1","S":"BUY","o":"MARKET","f":"GTC","q":"1.00000000","p":"0.00000000","P":"0.00000000","F":"0.00000000","g":-1,"C":"","x":"NEW","X":"NEW","r":"NONE","i":1,"#,
        r#""l":"0.00000000","z":"0.00000000","L":"0.00000000","n":"0","N":null,"#,
        r#""t":-1,"#,
        r#""w":true,"m":false,"M":false,"#,
        r#""V":"NONE"}}"#,
    ] {
        assert!(new.contains(part), "{part} in {new}");
    }
    let [trade, position] = <[Value; 2]>::try_from(events(&mut ws, 2).await).expect("two");
    assert_eq!((trade["x"].as_str(), trade["X"].as_str()), (Some("TRADE"), Some("FILLED")));
    let fill = &placed["fills"][0];
    assert_eq!(trade["i"], placed["orderId"]);
    assert_eq!(trade["L"], fill["price"]);
    assert_eq!(trade["l"], fill["qty"]);
    assert_eq!(trade["n"], fill["commission"]);
    assert_eq!(trade["N"], "ETH");
    assert_eq!(trade["t"], fill["tradeId"]);
    assert_eq!(trade["z"], placed["executedQty"]);
    assert_eq!(trade["Z"], placed["cummulativeQuoteQty"]);
    assert_eq!(position["e"], "outboundAccountPosition");
    let assets: Vec<&str> =
        position["B"].as_array().expect("B").iter().filter_map(|b| b["a"].as_str()).collect();
    assert_eq!(assets, ["ETH", "USDT"]);
    assert_eq!(position["B"][0]["f"], "0.99900000");
}

#[tokio::test]
async fn an_oco_take_profit_filled_by_the_market_is_pushed_without_any_request() {
    let x = start().await;
    x.rest.sim.fund(None, "ETH", 1.into()).expect("fund");
    let mut ws = x.connect("/ws-api/v3").await;
    assert_eq!(x.subscribe(&mut ws, "s").await["status"], 200);
    let list = x
        .rest(
            reqwest::Method::POST,
            "/api/v3/orderList/oco",
            "symbol=ETHUSDT&side=SELL&quantity=1&aboveType=LIMIT_MAKER&abovePrice=3300\
             &belowType=STOP_LOSS_LIMIT&belowStopPrice=2700&belowPrice=2690&belowTimeInForce=GTC\
             &listClientOrderId=MT_oco1&aboveClientOrderId=MT_tp1&belowClientOrderId=MT_sl1",
        )
        .await;
    let placed = events(&mut ws, 4).await;
    let kinds: Vec<(&str, &str)> = placed
        .iter()
        .map(|e| {
            let id = if e["e"] == "listStatus" { &e["C"] } else { &e["c"] };
            (e["e"].as_str().unwrap_or(""), id.as_str().unwrap_or(""))
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("executionReport", "MT_sl1"),
            ("executionReport", "MT_tp1"),
            ("listStatus", "MT_oco1"),
            ("outboundAccountPosition", "")
        ]
    );
    assert_eq!(placed[0]["w"], false, "an untriggered stop is not on the book");
    assert!(placed[0].get("W").is_none());
    assert_eq!(placed[2]["g"], list["orderListId"]);
    assert_eq!(
        (placed[2]["l"].as_str(), placed[2]["L"].as_str()),
        (Some("EXEC_STARTED"), Some("EXECUTING"))
    );
    assert_eq!(placed[3]["B"], json!([{"a": "ETH", "f": "0.00000000", "l": "1.00000000"}]));

    // The market rises through the take-profit a minute later; nobody sends a request.
    x.rest
        .sim
        .engine()
        .market
        .set_path("ETHUSDT", vec![(T0, 3000.into()), (T0 + 60_000, 3310.into())]);
    x.clock.advance(60_000);
    let done = events(&mut ws, 4).await;
    assert_eq!(
        (done[0]["c"].as_str(), done[0]["x"].as_str(), done[0]["X"].as_str()),
        (Some("MT_tp1"), Some("TRADE"), Some("FILLED"))
    );
    assert_eq!(
        (done[0]["m"].as_bool(), done[0]["L"].as_str()),
        (Some(true), Some("3300.00000000"))
    );
    assert_eq!(
        (done[1]["c"].as_str(), done[1]["X"].as_str(), done[1]["eR"].as_str()),
        (Some("MT_sl1"), Some("EXPIRED"), Some("OCO_TRIGGER"))
    );
    assert_eq!(
        (done[2]["e"].as_str(), done[2]["l"].as_str(), done[2]["L"].as_str()),
        (Some("listStatus"), Some("ALL_DONE"), Some("ALL_DONE"))
    );
    assert_eq!(done[2]["T"], T0 + 60_000);
    assert_eq!(done[3]["e"], "outboundAccountPosition");
    // What REST says agrees with what was pushed.
    let tp = x
        .rest(reqwest::Method::GET, "/api/v3/order", "symbol=ETHUSDT&origClientOrderId=MT_tp1")
        .await;
    assert_eq!(
        (tp["status"].as_str(), tp["executedQty"].as_str()),
        (Some("FILLED"), done[0]["z"].as_str())
    );
}

#[tokio::test]
async fn a_cancelled_list_names_the_cancel_and_each_leg() {
    let x = start().await;
    x.rest.sim.fund(None, "ETH", 1.into()).expect("fund");
    let mut ws = x.connect("/ws-api/v3").await;
    x.subscribe(&mut ws, "s").await;
    let list = x
        .rest(
            reqwest::Method::POST,
            "/api/v3/orderList/oco",
            "symbol=ETHUSDT&side=SELL&quantity=1&aboveType=LIMIT_MAKER&abovePrice=3300\
             &belowType=STOP_LOSS&belowStopPrice=2700&aboveClientOrderId=tp&belowClientOrderId=sl",
        )
        .await;
    events(&mut ws, 4).await;
    let id = list["orderListId"].as_i64().expect("list id");
    x.rest(
        reqwest::Method::DELETE,
        "/api/v3/orderList",
        &format!("symbol=ETHUSDT&orderListId={id}&newClientOrderId=MT_cx1"),
    )
    .await;
    let cancelled = events(&mut ws, 4).await;
    for (e, leg) in cancelled[..2].iter().zip(["sl", "tp"]) {
        assert_eq!(
            (e["x"].as_str(), e["c"].as_str(), e["C"].as_str()),
            (Some("CANCELED"), Some("MT_cx1"), Some(leg))
        );
    }
    assert_eq!(cancelled[2]["l"], "ALL_DONE");
    assert_eq!(cancelled[3]["B"], json!([{"a": "ETH", "f": "1.00000000", "l": "0.00000000"}]));
}

#[tokio::test]
async fn the_api_frames_answers_and_refusals_like_the_exchange() {
    let x = start().await;
    let mut ws = x.connect("/ws-api/v3").await;
    let pong = request(&mut ws, json!({"id": 7, "method": "ping"})).await;
    assert_eq!(
        (pong["id"].as_i64(), pong["status"].as_i64(), &pong["result"]),
        (Some(7), Some(200), &json!({}))
    );
    let time = request(&mut ws, json!({"id": null, "method": "v3/time"})).await;
    assert_eq!((time["id"].is_null(), time["result"]["serverTime"].as_i64()), (true, Some(T0)));
    let bad_sig = request(
        &mut ws,
        json!({"id": 1, "method": "userDataStream.subscribe.signature",
        "params": {"apiKey": KEY, "timestamp": T0, "signature": "00"}}),
    )
    .await;
    assert_eq!(
        (bad_sig["status"].as_i64(), bad_sig["error"]["code"].as_i64()),
        (Some(400), Some(-1022))
    );
    let bad_key = request(
        &mut ws,
        json!({"id": 2, "method": "userDataStream.subscribe.signature",
        "params": {"apiKey": "nobody", "timestamp": T0, "signature": "00"}}),
    )
    .await;
    assert_eq!(
        (bad_key["status"].as_i64(), bad_key["error"]["code"].as_i64()),
        (Some(401), Some(-2015))
    );
    x.clock.advance(6_000);
    let stale = request(&mut ws, json!({"id": 3, "method": "userDataStream.subscribe.signature",
        "params": {"apiKey": KEY, "timestamp": T0,
                   "signature": "681110a6057ad58657af22f5640fab9dd17418834cdfccdc81be8b0f7b2cde3e"}})).await;
    assert_eq!(stale["error"]["code"], -1021);
    assert_eq!(x.subscribe(&mut ws, "a").await["result"]["subscriptionId"], 0);
    let again = x.subscribe(&mut ws, "b").await;
    assert_eq!(
        (again["status"].as_i64(), again["error"]["code"].as_i64()),
        (Some(400), Some(-2035))
    );
    let status = request(&mut ws, json!({"id": 4, "method": "session.status"})).await;
    assert_eq!(status["result"]["userDataStream"], true);
    assert!(status["result"]["apiKey"].is_null());
    let subs =
        request(&mut ws, json!({"id": 5, "method": "session.subscriptions", "params": {}})).await;
    assert_eq!(subs["result"], json!([{"subscriptionId": 0}]));
    send(&mut ws, json!({"id": 6, "method": "userDataStream.unsubscribe"})).await;
    assert_eq!(next_json(&mut ws).await["result"], json!({}));
    let ended = next_json(&mut ws).await;
    assert_eq!(
        (ended["subscriptionId"].as_i64(), ended["event"]["e"].as_str()),
        (Some(0), Some("eventStreamTerminated"))
    );
    let unknown = request(&mut ws, json!({"id": 8, "method": "order.teleport"})).await;
    assert_eq!(unknown["status"], 400);
    let quiet =
        request(&mut ws, json!({"id": 9, "method": "ping", "params": {"returnRateLimits": false}}))
            .await;
    assert!(quiet.get("rateLimits").is_none());
    let mut no_limits = x.connect("/ws-api/v3?returnRateLimits=false").await;
    assert!(
        request(&mut no_limits, json!({"id": 1, "method": "ping"}))
            .await
            .get("rateLimits")
            .is_none()
    );
}

#[tokio::test]
async fn the_server_pings_and_closes_connections_that_stop_answering_or_outlive_a_day() {
    let x = start().await;
    let mut listening = x.connect("/ws-api/v3").await;
    let mut deaf = x.connect("/ws-api/v3").await;
    // A client that reads answers every ping (tungstenite does) and outlives the pong timeout.
    assert!(!closed_within(&mut listening, Duration::from_millis(2500)).await);
    // One that does not read never answers: closed after the pong timeout.
    assert!(closed_within(&mut deaf, Duration::from_secs(2)).await);
    // Whatever it does, a connection ends after 24 hours on the exchange's clock.
    x.clock.advance(24 * 3_600_000);
    assert!(closed_within(&mut listening, Duration::from_secs(2)).await);
}

#[tokio::test]
async fn stream_faults_drop_silence_delay_and_announce_a_shutdown() {
    let x = start().await;
    let mut ws = x.connect("/ws-api/v3").await;
    x.subscribe(&mut ws, "s").await;
    let buy = "symbol=ETHUSDT&side=BUY&type=MARKET&quantity=0.01";

    // Silence: what happens meanwhile is lost; later events come again.
    // (Each fault reaches the connection's task within a tick; the waits leave room for a busy
    // machine.)
    x.rest.sim.stream_fault(StreamFault::new(StreamFaultKind::Silence { ms: 1000 }));
    tokio::time::sleep(Duration::from_millis(200)).await;
    x.rest(reqwest::Method::POST, "/api/v3/order", buy).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let after = x.rest(reqwest::Method::POST, "/api/v3/order", buy).await;
    let first = events(&mut ws, 1).await.remove(0);
    assert_eq!(first["i"], after["orderId"], "the silent window's events never arrive");
    events(&mut ws, 2).await;

    // Delay: events arrive late.
    x.rest.sim.stream_fault(StreamFault::new(StreamFaultKind::Delay { ms: 400 }));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let sent = std::time::Instant::now();
    x.rest(reqwest::Method::POST, "/api/v3/order", buy).await;
    events(&mut ws, 3).await;
    assert!(sent.elapsed() >= Duration::from_millis(400), "{:?}", sent.elapsed());
    x.rest.sim.stream_fault(StreamFault::new(StreamFaultKind::Delay { ms: 0 }));

    // serverShutdown is announced, then the connection closes.
    x.rest.sim.stream_fault(StreamFault::new(StreamFaultKind::ServerShutdown));
    let notice = next_text(&mut ws).await;
    assert!(notice.starts_with(r#"{"event":{"e":"serverShutdown","E":"#), "{notice}");
    assert!(closed_within(&mut ws, Duration::from_secs(2)).await);

    // Drop: the connection just ends.
    let mut other = x.connect("/ws-api/v3").await;
    x.rest.sim.stream_fault(StreamFault::new(StreamFaultKind::Drop));
    assert!(closed_within(&mut other, Duration::from_secs(2)).await);
}

#[tokio::test]
async fn market_streams_push_book_tickers_and_trades_raw_or_combined() {
    let x = start().await;
    let mut raw = x.connect("/ws/ethusdt@bookTicker").await;
    let first = next_text(&mut raw).await;
    assert!(first.starts_with(r#"{"u":"#), "{first}");
    let first: Value = serde_json::from_str(&first).expect("json");
    assert_eq!(
        (first["s"].as_str(), first["b"].as_str(), first["a"].as_str()),
        (Some("ETHUSDT"), Some("3000.00000000"), Some("3000.01000000"))
    );
    assert!(first.get("e").is_none());

    let mut combined = x.connect("/stream?streams=ethusdt@trade/ethusdt@bookTicker").await;
    let book = next_json(&mut combined).await;
    assert_eq!(book["stream"], "ethusdt@bookTicker");
    x.rest.sim.set_price("ETHUSDT", 3100.into()).expect("price");
    let trade = next_json(&mut combined).await;
    assert_eq!(trade["stream"], "ethusdt@trade");
    assert_eq!(
        (trade["data"]["e"].as_str(), trade["data"]["p"].as_str()),
        (Some("trade"), Some("3100.00000000"))
    );
    let moved = next_json(&mut raw).await;
    assert_eq!(moved["b"], "3100.00000000");
    assert!(moved["u"].as_i64() > first["u"].as_i64());

    let subscribed =
        request(&mut raw, json!({"method": "SUBSCRIBE", "params": ["btcusdt@trade"], "id": 1}))
            .await;
    assert_eq!(subscribed, json!({"result": null, "id": 1}));
    let list = request(&mut raw, json!({"method": "LIST_SUBSCRIPTIONS", "id": 2})).await;
    assert_eq!(list["result"], json!(["ethusdt@bookTicker", "btcusdt@trade"]));
    assert_eq!(
        request(&mut raw, json!({"method": "GET_PROPERTY", "params": ["combined"], "id": 3})).await
            ["result"],
        false
    );
    let bad =
        request(&mut raw, json!({"method": "SUBSCRIBE", "params": ["nope@trade"], "id": 4})).await;
    assert_eq!(bad["code"], 2);
    assert_eq!(request(&mut raw, json!("not an object")).await["code"], 2);
}

/// The host marks its price link live as soon as it is connected and moves on: a price that
/// changes right then is a trade it must see (the baseline is taken during the handshake and
/// the SUBSCRIBE, not at the connection's first poll).
#[tokio::test]
async fn a_price_change_right_after_connecting_or_subscribing_is_a_trade() {
    let x = start().await;
    let mut ws = x.connect("/stream?streams=ethusdt@trade").await;
    x.rest.sim.set_price("ETHUSDT", 2900.into()).expect("price");
    let trade = next_json(&mut ws).await;
    assert_eq!(
        (trade["stream"].as_str(), trade["data"]["p"].as_str()),
        (Some("ethusdt@trade"), Some("2900.00000000"))
    );

    let subscribe = json!({"method": "SUBSCRIBE", "params": ["btcusdt@trade"], "id": 1});
    assert_eq!(request(&mut ws, subscribe).await, json!({"result": null, "id": 1}));
    x.rest.sim.set_price("BTCUSDT", 61_000.into()).expect("price");
    let trade = next_json(&mut ws).await;
    assert_eq!(trade["data"]["p"], "61000.00000000", "{trade}");
}

#[tokio::test]
async fn an_unknown_path_is_refused_at_the_handshake() {
    let x = start().await;
    let url = format!("{}/nothing", x.streams.base_url());
    assert!(tokio_tungstenite::connect_async(url).await.is_err());
}
