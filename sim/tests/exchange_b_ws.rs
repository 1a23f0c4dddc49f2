//! Exchange B's WebSocket over a real socket, with tokio-tungstenite's client: the greeting,
//! subscribe and unsubscribe with their acknowledgements and error texts, ping and the idle
//! close, the market feeds after an admin price move, the account feeds for orders placed with
//! signed `POST /exchange` (open, filled, canceled, rejected; fill snapshots and live fills), a
//! dropped connection whose fills come back in the next snapshot, `post` requests, the limits.
//! The clock stands still; prices are scripted.

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use spotbot_exchange_b_protocol::{Action, Network, PrivateKey};
use spotbot_sim::{
    ExchangeBConfig, ManualClock, RunningSim, SimConfig, StreamFault, StreamFaultKind,
    StreamService, WsConfig, serve,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";
const BTC: u32 = 10_000;
const COIN: &str = "UBTC/USDC";
const CLOID: &str = "0x4d545f000000000000000000000000aa";
/// Longest wait for a frame that should come.
const WAIT: Duration = Duration::from_secs(3);

/// A simulator whose default account (100 000 USDT, 0.05 BTC) belongs to [`KEY`]'s address,
/// BTC at 65 000 (best bid 65000, best ask 65000.01).
struct B {
    sim: RunningSim,
    key: PrivateKey,
    user: String,
    nonce: AtomicU64,
}

impl B {
    async fn start_with(ws: WsConfig) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let key = PrivateKey::from_hex(KEY).expect("key");
        let mut config = SimConfig::new(42, "test-key", "test-secret");
        config.clock = Arc::new(ManualClock::starting_now());
        config.exchange_b = ExchangeBConfig { ws, ..ExchangeBConfig::owned_by(key.address()) };
        config.initial_funds =
            vec![("USDT".into(), 100_000.into()), ("BTC".into(), "0.05".parse().unwrap())];
        let sim = serve(config, "127.0.0.1:0").await.expect("bind");
        sim.sim.set_price("BTCUSDT", 65_000.into()).expect("price");
        let nonce = AtomicU64::new(sim.sim.now_ms() as u64);
        let user = key.address().to_string();
        Self { sim, key, user, nonce }
    }

    async fn start() -> Self {
        Self::start_with(WsConfig::default()).await
    }

    /// A signed `/exchange` body of `action`.
    fn signed(&self, action: Value) -> Value {
        let action: Action = serde_json::from_value(action).expect("action");
        let nonce = self.nonce.fetch_add(1, Ordering::SeqCst);
        let sig = self.key.sign_l1(&action, nonce, None, Network::Testnet).expect("sign");
        json!({"action": action, "nonce": nonce, "signature": sig, "vaultAddress": null})
    }

    /// The first entry of `statuses` of a signed action sent with REST.
    async fn act(&self, action: Value) -> Value {
        let url = format!("{}/exchange", self.sim.base_url());
        let r = reqwest::Client::new().post(url).json(&self.signed(action)).send().await;
        let body: Value = r.expect("send").json().await.expect("json");
        body["response"]["data"]["statuses"][0].clone()
    }

    async fn connect(&self) -> Client {
        let url = format!("ws://{}/ws", self.sim.addr);
        let (ws, _) = tokio_tungstenite::connect_async(url).await.expect("connect");
        Client { ws }
    }

    /// A connection subscribed to the account feeds, their acknowledgements and the (empty)
    /// fill snapshot read.
    async fn account_client(&self) -> Client {
        let mut c = self.connect().await;
        for kind in ["orderUpdates", "userEvents", "userFills"] {
            c.subscribe(json!({"type": kind, "user": self.user})).await;
        }
        let snapshot = c.next_on("userFills").await;
        assert_eq!(snapshot["data"]["isSnapshot"], true);
        c
    }
}

fn order(b: bool, p: &str, s: &str, tif: &str) -> Value {
    let o = json!({"a": BTC, "b": b, "p": p, "s": s, "r": false, "t": {"limit": {"tif": tif}}});
    json!({"type": "order", "orders": [o], "grouping": "na"})
}

struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Client {
    async fn send(&mut self, v: Value) {
        self.ws.send(Message::text(v.to_string())).await.expect("send");
    }

    /// The next frame, or None when the connection ended.
    async fn frame(&mut self) -> Option<Result<Message, String>> {
        let next = tokio::time::timeout(WAIT, self.ws.next()).await.expect("a frame in time");
        next.map(|r| r.map_err(|e| e.to_string()))
    }

    /// The next JSON message, skipping frames that are not JSON (the greeting).
    async fn next(&mut self) -> Value {
        loop {
            match self.frame().await {
                Some(Ok(Message::Text(t))) => match serde_json::from_str(t.as_str()) {
                    Ok(v) => return v,
                    Err(_) => continue,
                },
                Some(Ok(_)) => continue,
                other => panic!("connection ended: {other:?}"),
            }
        }
    }

    /// The next message on `channel`, skipping the others.
    async fn next_on(&mut self, channel: &str) -> Value {
        loop {
            let m = self.next().await;
            if m["channel"] == channel {
                return m;
            }
        }
    }

    async fn subscribe(&mut self, subscription: Value) -> Value {
        self.send(json!({"method": "subscribe", "subscription": subscription})).await;
        self.next_on("subscriptionResponse").await
    }

    /// Sends `request` and reads the answer (an acknowledgement, an error or a pong).
    async fn ask(&mut self, request: Value) -> Value {
        self.send(request).await;
        loop {
            let m = self.next().await;
            let c = m["channel"].as_str().unwrap_or_default();
            if ["subscriptionResponse", "error", "pong", "post"].contains(&c) {
                return m;
            }
        }
    }

    /// Waits until the server ends the connection; whether it sent a close frame.
    async fn ended(&mut self) -> bool {
        loop {
            match self.frame().await {
                Some(Ok(Message::Close(_))) => return true,
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return false,
            }
        }
    }
}

#[tokio::test]
async fn subscriptions_are_acknowledged_with_defaults_and_repeats_are_errors() {
    let b = B::start().await;
    let mut c = b.connect().await;
    let greeting = c.frame().await.expect("greeting").expect("frame");
    assert_eq!(greeting, Message::text("Websocket connection established."));

    let fills = json!({"type": "userFills", "user": b.user.to_uppercase().replace("0X", "0x")});
    let ack = c.ask(json!({"method": "subscribe", "subscription": fills})).await;
    let echoed = json!({"type": "userFills", "user": b.user, "aggregateByTime": false});
    assert_eq!(
        ack,
        json!({"channel": "subscriptionResponse", "data": {"method": "subscribe", "subscription": echoed}})
    );
    let snapshot = c.next_on("userFills").await;
    assert_eq!(snapshot["data"], json!({"isSnapshot": true, "user": b.user, "fills": []}));
    let again = c.ask(json!({"method": "subscribe", "subscription": echoed})).await;
    let text = format!(
        r#"Already subscribed: {{"type":"userFills","user":"{}","aggregateByTime":false}}"#,
        b.user
    );
    assert_eq!(again, json!({"channel": "error", "data": text}));

    let off = c.ask(json!({"method": "unsubscribe", "subscription": fills})).await;
    assert_eq!(off["data"], json!({"method": "unsubscribe", "subscription": echoed}));
    let off_again = c.ask(json!({"method": "unsubscribe", "subscription": fills})).await;
    assert_eq!(off_again["data"], text.replace("Already subscribed", "Already unsubscribed"));

    for bad in [json!({"type": "nope"}), json!({"type": "bbo", "coin": "@999"})] {
        let e = c.ask(json!({"method": "subscribe", "subscription": bad})).await;
        assert_eq!(e["channel"], "error", "{bad}: {e}");
    }
    assert_eq!(c.ask(json!({"method": "ping"})).await, json!({"channel": "pong"}));
    assert_eq!(c.ask(json!({"method": "dance"})).await["channel"], "error");
}

#[tokio::test]
async fn a_client_that_sends_nothing_is_closed_after_the_idle_timeout() {
    let idle = Duration::from_millis(400);
    let b = B::start_with(WsConfig { idle_timeout: idle, ..WsConfig::default() }).await;
    let mut c = b.connect().await;
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert_eq!(c.ask(json!({"method": "ping"})).await, json!({"channel": "pong"}));
    }
    let quiet = tokio::time::Instant::now();
    assert!(c.ended().await, "closed with a close frame");
    assert!(quiet.elapsed() >= Duration::from_millis(300), "{:?}", quiet.elapsed());
}

#[tokio::test]
async fn market_feeds_follow_an_admin_price_move() {
    let b = B::start().await;
    let mut c = b.connect().await;
    c.subscribe(json!({"type": "allMids"})).await;
    let mids = c.next_on("allMids").await;
    assert_eq!(mids["data"]["mids"][COIN], "65000.005");
    assert!(mids["data"]["mids"]["@1"].is_string());
    c.subscribe(json!({"type": "bbo", "coin": COIN})).await;
    let bbo = c.next_on("bbo").await["data"].clone();
    assert_eq!((bbo["coin"].as_str(), bbo["time"].is_i64()), (Some(COIN), true));
    assert_eq!((&bbo["bbo"][0]["px"], &bbo["bbo"][1]["px"]), (&json!("65000"), &json!("65000.01")));
    assert_eq!(bbo["bbo"][0]["n"], 1);
    c.subscribe(json!({"type": "l2Book", "coin": COIN})).await;
    let book = c.next_on("l2Book").await["data"].clone();
    assert_eq!(book["levels"][0].as_array().map(Vec::len), Some(20));
    assert_eq!(book["levels"][1][0]["px"], "65000.01");
    c.subscribe(json!({"type": "candle", "coin": COIN, "interval": "1m"})).await;
    let candle = c.next_on("candle").await["data"].clone();
    assert_eq!((candle["s"].as_str(), candle["i"].as_str()), (Some(COIN), Some("1m")));
    c.subscribe(json!({"type": "trades", "coin": COIN})).await;

    b.sim.sim.set_price("BTCUSDT", 66_000.into()).expect("price");
    let mids = c.next_on("allMids").await;
    assert_eq!(mids["data"]["mids"][COIN], "66000.005");
    assert_eq!(c.next_on("bbo").await["data"]["bbo"][1]["px"], "66000.01");

    let filled = b.act(order(true, "67000", "0.01", "Ioc")).await;
    assert_eq!(filled["filled"]["totalSz"], "0.01", "{filled}");
    let trades = c.next_on("trades").await["data"].clone();
    let t = &trades[0];
    assert_eq!(
        (t["coin"].as_str(), t["side"].as_str(), t["px"].as_str(), t["sz"].as_str()),
        (Some(COIN), Some("B"), Some("66000.01"), Some("0.01"))
    );
    assert_eq!(t["users"][0], b.user);
    assert!(t["tid"].is_u64() && t["hash"].is_string() && t["time"].is_i64());
}

#[tokio::test]
async fn a_resting_sell_is_open_then_filled_when_the_price_passes_it() {
    let b = B::start().await;
    let mut c = b.account_client().await;
    let mut place = order(false, "66000", "0.01", "Gtc");
    place["orders"][0]["c"] = json!(CLOID);
    let oid = b.act(place).await["resting"]["oid"].as_u64().expect("resting");
    let open = c.next_on("orderUpdates").await["data"].clone();
    let now = b.sim.sim.now_ms();
    let update = |sz: &str, status: &str| {
        json!([{
            "order": {"coin": COIN, "side": "A", "limitPx": "66000", "sz": sz, "oid": oid,
                      "timestamp": now, "origSz": "0.01", "cloid": CLOID},
            "status": status, "statusTimestamp": now,
        }])
    };
    assert_eq!(open, update("0.01", "open"));

    // Messages come in the order of the subscriptions: orderUpdates, user, userFills.
    b.sim.sim.set_price("BTCUSDT", 67_000.into()).expect("price");
    assert_eq!(c.next_on("orderUpdates").await["data"], update("0.0", "filled"));
    let events = c.next_on("user").await["data"].clone();
    let fills = c.next_on("userFills").await["data"].clone();
    assert_eq!(
        (fills["isSnapshot"].as_bool(), fills["user"].as_str()),
        (Some(false), Some(b.user.as_str()))
    );
    let f = &fills["fills"][0];
    assert_eq!(
        (f["coin"].as_str(), f["px"].as_str(), f["sz"].as_str(), f["side"].as_str()),
        (Some(COIN), Some("66000"), Some("0.01"), Some("A"))
    );
    assert_eq!(
        (f["fee"].as_str(), f["feeToken"].as_str(), f["oid"].as_u64()),
        (Some("0.66"), Some("USDC"), Some(oid))
    );
    assert!(f["tid"].is_u64());
    assert_eq!(events["fills"], fills["fills"]);
}

#[tokio::test]
async fn a_cancel_shows_canceled_and_a_crossing_post_only_order_bad_alo_px_rejected() {
    let b = B::start().await;
    let mut c = b.account_client().await;
    let oid = b.act(order(true, "60000", "0.01", "Gtc")).await["resting"]["oid"].clone();
    assert_eq!(c.next_on("orderUpdates").await["data"][0]["status"], "open");
    let cancel = json!({"type": "cancel", "cancels": [{"a": BTC, "o": oid}]});
    assert_eq!(b.act(cancel).await, "success");
    let canceled = c.next_on("orderUpdates").await["data"][0].clone();
    assert_eq!(canceled["status"], "canceled");
    assert_eq!((&canceled["order"]["oid"], &canceled["order"]["sz"]), (&oid, &json!("0.01")));
    assert!(canceled["order"].get("cloid").is_none(), "no cloid key without one: {canceled}");

    let refused = b.act(order(true, "66000", "0.01", "Alo")).await;
    assert!(refused["error"].as_str().is_some_and(|e| e.starts_with("Post only")), "{refused}");
    let rejected = c.next_on("orderUpdates").await["data"][0].clone();
    assert_eq!(rejected["status"], "badAloPxRejected");
    assert_eq!(
        (&rejected["order"]["limitPx"], &rejected["order"]["side"]),
        (&json!("66000"), &json!("B"))
    );

    let ioc = b.act(order(true, "60000", "0.01", "Ioc")).await;
    assert!(ioc["error"].is_string(), "{ioc}");
    let updates = c.next_on("orderUpdates").await["data"].clone();
    assert_eq!(updates.as_array().map(Vec::len), Some(1), "no open for an IOC: {updates}");
    assert_eq!(updates[0]["status"], "iocCancelRejected");
}

#[tokio::test]
async fn a_dropped_connection_gets_the_fills_it_saw_again_in_the_next_snapshot() {
    let b = B::start().await;
    let mut c = b.account_client().await;
    let mut market = b.connect().await;
    market.subscribe(json!({"type": "allMids"})).await;
    b.act(order(true, "67000", "0.01", "Ioc")).await;
    let live = c.next_on("userFills").await["data"]["fills"][0]["tid"].clone();
    assert!(live.is_u64());

    // A fault for exchange A's services leaves exchange B's connections alone.
    let mut other = StreamFault::new(StreamFaultKind::Drop);
    other.service = Some(StreamService::Market);
    b.sim.sim.stream_fault(other);
    let mut drop = StreamFault::new(StreamFaultKind::Drop);
    drop.service = Some(StreamService::ExchangeB);
    b.sim.sim.stream_fault(drop);
    assert!(!c.ended().await, "dropped without a close frame");
    assert!(!market.ended().await);

    let mut again = b.connect().await;
    again.subscribe(json!({"type": "userFills", "user": b.user})).await;
    let snapshot = again.next_on("userFills").await["data"].clone();
    assert_eq!(snapshot["isSnapshot"], true);
    assert_eq!(snapshot["fills"][0]["tid"], live, "{snapshot}");
}

#[tokio::test]
async fn post_requests_are_answered_by_the_rest_handlers() {
    let b = B::start().await;
    let mut c = b.connect().await;
    let info = json!({"type": "info", "payload": {"type": "l2Book", "coin": COIN}});
    let answer = c.ask(json!({"method": "post", "id": 7, "request": info})).await;
    assert_eq!(
        (answer["channel"].as_str(), answer["data"]["id"].as_u64()),
        (Some("post"), Some(7))
    );
    let response = &answer["data"]["response"];
    assert_eq!(
        (response["type"].as_str(), response["payload"]["type"].as_str()),
        (Some("info"), Some("l2Book"))
    );
    assert_eq!(response["payload"]["data"]["coin"], COIN);

    let action = b.signed(order(true, "60000", "0.01", "Gtc"));
    let request = json!({"type": "action", "payload": action});
    let answer = c.ask(json!({"method": "post", "id": 8, "request": request})).await;
    let payload = &answer["data"]["response"]["payload"];
    assert_eq!(payload["status"], "ok", "{answer}");
    assert!(payload["response"]["data"]["statuses"][0]["resting"]["oid"].is_u64());

    let bad = json!({"type": "info", "payload": {"type": "nope"}});
    let answer = c.ask(json!({"method": "post", "id": 9, "request": bad})).await;
    assert_eq!(answer["data"]["response"]["type"], "error");
    assert!(answer["data"]["response"]["payload"].as_str().is_some_and(|t| t.starts_with("422")));
}

#[tokio::test]
async fn the_limits_answer_the_exchange_texts_across_connections() {
    let ws = WsConfig {
        max_subscriptions: 3,
        max_users: 2,
        max_messages_per_minute: 12,
        ..WsConfig::default()
    };
    let b = B::start_with(ws).await;
    let (mut one, mut two) = (b.connect().await, b.connect().await);
    let user = |n: u8| json!({"type": "userEvents", "user": format!("0x{}", format!("{n:02x}").repeat(20))});
    one.subscribe(user(1)).await;
    two.subscribe(user(2)).await;
    let too_many_users = two.ask(json!({"method": "subscribe", "subscription": user(3)})).await;
    assert_eq!(
        too_many_users,
        json!({"channel": "error", "data": "Cannot track more than 2 total users."})
    );
    one.subscribe(json!({"type": "allMids"})).await;
    let bbo = json!({"type": "bbo", "coin": COIN});
    let too_many = two.ask(json!({"method": "subscribe", "subscription": bbo})).await;
    assert_eq!(too_many["data"], "Cannot subscribe to more than 3 channels.");
    drop(one);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(two.subscribe(bbo).await["channel"], "subscriptionResponse", "places come back");
    assert_eq!(two.subscribe(user(3)).await["channel"], "subscriptionResponse");

    // Seven messages from this IP so far; the twelfth is the last one answered this minute.
    for _ in 8..=12 {
        assert_eq!(two.ask(json!({"method": "ping"})).await, json!({"channel": "pong"}));
    }
    let refused = two.ask(json!({"method": "ping"})).await;
    assert_eq!(refused["data"], "Cannot send more than 12 messages per minute.");
    b.sim.sim.advance(60_000);
    assert_eq!(two.ask(json!({"method": "ping"})).await, json!({"channel": "pong"}));
}
