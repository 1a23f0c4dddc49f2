//! Exchange B's front end over real HTTP: every `/info` type's shape, orders and cancels signed
//! with the protocol crate's key (the one the service signs with), the spot rules' error texts,
//! signatures and nonces, weights, and a fault after execution. The clock stands still (it
//! starts at the wall time, so nonces are current milliseconds), prices are scripted.

use serde::Serialize;
use serde_json::{Value, json};
use spotbot_exchange_b_protocol::{Action, Network, PrivateKey};
use spotbot_sim::{ExchangeBConfig, Fault, FaultKind, ManualClock, RunningSim, SimConfig, serve};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";
const OTHER_KEY: &str = "0x1111111111111111111111111111111111111111111111111111111111111111";
const BTC: u32 = 10_000;
const CLOID: &str = "0x4d545f000000000000000000000000aa";

struct B {
    sim: RunningSim,
    http: reqwest::Client,
    key: PrivateKey,
    user: String,
    nonce: AtomicU64,
}

struct Reply {
    status: u16,
    text: String,
    body: Value,
}

impl B {
    /// A simulator whose default account (100 000 USDT) belongs to [`KEY`]'s address, with BTC
    /// at 65 000 (best bid 65000, best ask 65000.01), with exchange B's front end set up by
    /// `edit`.
    async fn start_with(edit: fn(&mut ExchangeBConfig)) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let key = PrivateKey::from_hex(KEY).expect("key");
        let mut config = SimConfig::new(42, "test-key", "test-secret");
        config.clock = Arc::new(ManualClock::starting_now());
        config.exchange_b = ExchangeBConfig::owned_by(key.address());
        edit(&mut config.exchange_b);
        config.initial_funds = vec![("USDT".into(), 100_000.into())];
        let sim = serve(config, "127.0.0.1:0").await.expect("bind");
        sim.sim.set_price("BTCUSDT", 65_000.into()).expect("price");
        let nonce = AtomicU64::new(sim.sim.now_ms() as u64);
        let user = key.address().to_string();
        Self { sim, http: reqwest::Client::new(), key, user, nonce }
    }

    async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    async fn post(&self, path: &str, body: &Value) -> Reply {
        let url = format!("{}{path}", self.sim.base_url());
        let r = self.http.post(url).json(body).send().await.expect("send");
        let status = r.status().as_u16();
        let text = r.text().await.expect("body");
        Reply { status, body: serde_json::from_str(&text).unwrap_or(Value::Null), text }
    }

    async fn info(&self, body: Value) -> Value {
        let r = self.post("/info", &body).await;
        assert_eq!(r.status, 200, "{body} -> {}", r.text);
        r.body
    }

    /// `info` of a request type about the default account.
    async fn user_info(&self, kind: &str) -> Value {
        self.info(json!({"type": kind, "user": self.user})).await
    }

    fn next_nonce(&self) -> u64 {
        self.nonce.fetch_add(1, Ordering::SeqCst)
    }

    /// The envelope of `action` signed by `key` on testnet.
    fn envelope(&self, key: &PrivateKey, action: &impl Serialize, nonce: u64) -> Value {
        let sig = key.sign_l1(action, nonce, None, Network::Testnet).expect("sign");
        json!({"action": action, "nonce": nonce, "signature": sig, "vaultAddress": null})
    }

    /// Sends `action` (JSON of an [`Action`]) signed by the account's key.
    async fn act(&self, action: Value) -> Value {
        let action: Action = serde_json::from_value(action).expect("action");
        let r = self.post("/exchange", &self.envelope(&self.key, &action, self.next_nonce())).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body
    }

    /// The `statuses` of an `ok` answer.
    async fn statuses(&self, action: Value) -> Vec<Value> {
        let r = self.act(action).await;
        assert_eq!(r["status"], "ok", "{r}");
        r["response"]["data"]["statuses"].as_array().cloned().unwrap_or_default()
    }

    async fn order(&self, order: Value) -> Value {
        let s = self.statuses(json!({"type": "order", "orders": [order], "grouping": "na"})).await;
        s[0].clone()
    }

    /// The default account's balance of a token: (total, hold).
    async fn balance(&self, coin: &str) -> (String, String) {
        let s = self.user_info("spotClearinghouseState").await;
        let b =
            s["balances"].as_array().and_then(|v| v.iter().find(|b| b["coin"] == coin).cloned());
        let b = b.unwrap_or(json!({"total": "0", "hold": "0"}));
        (b["total"].as_str().unwrap_or("").into(), b["hold"].as_str().unwrap_or("").into())
    }

    async fn order_status(&self, oid: Value) -> Value {
        self.info(json!({"type": "orderStatus", "user": self.user, "oid": oid})).await
    }
}

fn limit(b: bool, p: &str, s: &str, tif: &str) -> Value {
    json!({"a": BTC, "b": b, "p": p, "s": s, "r": false, "t": {"limit": {"tif": tif}}})
}

fn with_cloid(mut order: Value, cloid: &str) -> Value {
    order["c"] = json!(cloid);
    order
}

fn error_of(status: &Value) -> &str {
    status["error"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn every_info_type_has_the_exchange_shape() {
    let b = B::start().await;
    let meta = b.info(json!({"type": "spotMeta"})).await;
    assert_eq!(meta["tokens"][0]["name"], "USDC");
    assert_eq!(meta["tokens"][0]["index"], 0);
    assert_eq!(meta["tokens"][1]["name"], "UBTC");
    assert_eq!(meta["tokens"][1]["szDecimals"], 5);
    assert_eq!(meta["tokens"][1]["weiDecimals"], 8);
    assert!(meta["tokens"][1]["tokenId"].as_str().is_some_and(|t| t.len() == 34));
    assert_eq!(
        meta["universe"][0],
        json!({"name": "UBTC/USDC", "tokens": [1, 0], "index": 0, "isCanonical": true})
    );
    assert_eq!(meta["universe"][1]["name"], "@1");
    assert_eq!(meta["tokens"][2]["name"], "UETH");

    let ctxs = b.info(json!({"type": "spotMetaAndAssetCtxs"})).await;
    assert_eq!(ctxs[0], meta);
    let ctx = &ctxs[1][0];
    assert_eq!((ctx["coin"].as_str(), ctx["markPx"].as_str()), (Some("UBTC/USDC"), Some("65000")));
    assert_eq!(ctx["midPx"], "65000.005");
    for k in ["dayNtlVlm", "prevDayPx", "circulatingSupply"] {
        assert!(ctx[k].as_str().is_some_and(|v| v.parse::<f64>().is_ok()), "{k}: {ctx}");
    }

    let mids = b.info(json!({"type": "allMids"})).await;
    assert_eq!(mids["UBTC/USDC"], "65000.005");
    assert!(mids["@1"].is_string());

    let book = b.info(json!({"type": "l2Book", "coin": "UBTC/USDC"})).await;
    assert_eq!(book["coin"], "UBTC/USDC");
    assert!(book["time"].is_i64());
    let (bids, asks) =
        (book["levels"][0].as_array().unwrap(), book["levels"][1].as_array().unwrap());
    assert_eq!((bids.len(), asks.len()), (20, 20));
    assert_eq!(
        (&bids[0]["px"], &asks[0]["px"], &bids[0]["n"]),
        (&json!("65000"), &json!("65000.01"), &json!(1))
    );
    let px = |l: &Value| l["px"].as_str().unwrap().parse::<f64>().unwrap();
    assert!(bids.windows(2).all(|w| px(&w[0]) > px(&w[1])), "bids descend");
    assert!(asks.windows(2).all(|w| px(&w[0]) < px(&w[1])), "asks ascend");
    assert_eq!(b.info(json!({"type": "l2Book", "coin": "@999"})).await, Value::Null);

    let now = b.sim.sim.now_ms();
    let intervals =
        ["1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "8h", "12h", "1d", "3d", "1w", "1M"];
    for interval in intervals {
        let req = json!({"coin": "@1", "interval": interval, "startTime": now - 40 * 86_400_000i64, "endTime": now});
        let candles = b.info(json!({"type": "candleSnapshot", "req": req})).await;
        let candles = candles.as_array().unwrap();
        assert!(!candles.is_empty() && candles.len() <= 500, "{interval}: {}", candles.len());
        let c = &candles[0];
        for k in ["t", "T", "s", "i", "o", "c", "h", "l", "v", "n"] {
            assert!(!c[k].is_null(), "{interval}: {k} missing in {c}");
        }
        assert_eq!((c["s"].as_str(), c["i"].as_str()), (Some("@1"), Some(interval)));
        assert!(c["T"].as_i64() > c["t"].as_i64());
        assert!(candles.windows(2).all(|w| w[0]["t"].as_i64() < w[1]["t"].as_i64()));
    }
    let minutes = json!({"coin": "@1", "interval": "1m", "startTime": 0, "endTime": now});
    let minutes = b.info(json!({"type": "candleSnapshot", "req": minutes})).await;
    assert_eq!(minutes.as_array().map(Vec::len), Some(500), "500 per answer");
    let first = minutes[0]["t"].as_i64().unwrap();
    assert!(first >= now - 5000 * 60_000, "only the newest 5000 exist");
    assert_eq!(minutes[0]["T"].as_i64(), Some(first + 59_999));

    let state = b.user_info("spotClearinghouseState").await;
    assert_eq!(
        state["balances"][0],
        json!({"coin": "USDC", "token": 0, "hold": "0", "total": "100000", "entryNtl": "0"})
    );
    assert_eq!(b.user_info("openOrders").await, json!([]));
    assert_eq!(b.user_info("frontendOpenOrders").await, json!([]));
    assert_eq!(b.user_info("userFills").await, json!([]));
    let by_time =
        json!({"type": "userFillsByTime", "user": b.user, "startTime": 0, "endTime": null});
    assert_eq!(b.info(by_time).await, json!([]));
    assert_eq!(b.order_status(json!(12345)).await, json!({"status": "unknownOid"}));
    assert_eq!(b.order_status(json!(CLOID)).await, json!({"status": "unknownOid"}));
    let limits = b.user_info("userRateLimit").await;
    assert_eq!(
        (limits["cumVlm"].as_str(), limits["nRequestsCap"].as_u64()),
        (Some("0"), Some(10_000))
    );
    assert_eq!(b.info(json!({"type": "meta"})).await["universe"], json!([]));
    // Unknown addresses own nothing.
    let stranger = json!({"type": "spotClearinghouseState", "user": PrivateKey::from_hex(OTHER_KEY).unwrap().address().to_string()});
    assert_eq!(b.info(stranger).await, json!({"balances": []}));

    for bad in [
        json!({"type": "nope"}),
        json!({"type": "l2Book"}),
        json!({"type": "openOrders", "user": "0x12"}),
    ] {
        let r = b.post("/info", &bad).await;
        assert_eq!(r.status, 422, "{bad}");
        assert!(
            r.text.starts_with("Failed to deserialize the JSON body into the target type"),
            "{}",
            r.text
        );
    }
}

#[tokio::test]
async fn an_ioc_buy_fills_moves_the_balances_and_reports_its_fill() {
    let b = B::start().await;
    let s = b.order(with_cloid(limit(true, "68250", "0.01", "Ioc"), CLOID)).await;
    let filled = &s["filled"];
    assert_eq!(
        (filled["totalSz"].as_str(), filled["avgPx"].as_str()),
        (Some("0.01"), Some("65000.01")),
        "{s}"
    );
    assert_eq!(filled["cloid"], CLOID);
    let oid = filled["oid"].as_u64().expect("oid");
    // 0.01 BTC at 65000.01 costs 650.0001 USDC; the fee (0.1 %) is taken in the BTC received.
    assert_eq!(b.balance("USDC").await, ("99349.9999".into(), "0".into()));
    assert_eq!(b.balance("UBTC").await, ("0.00999".into(), "0".into()));
    let fills = b.user_info("userFills").await;
    let f = &fills[0];
    assert_eq!(
        (f["coin"].as_str(), f["px"].as_str(), f["sz"].as_str()),
        (Some("UBTC/USDC"), Some("65000.01"), Some("0.01"))
    );
    assert_eq!(
        (f["side"].as_str(), f["dir"].as_str(), f["crossed"].as_bool()),
        (Some("B"), Some("Buy"), Some(true))
    );
    assert_eq!((f["fee"].as_str(), f["feeToken"].as_str()), (Some("0.00001"), Some("UBTC")));
    assert_eq!(f["oid"].as_u64(), Some(oid));
    assert!(f["tid"].is_u64() && f["hash"].as_str().is_some_and(|h| h.len() == 66));
    let by_time = json!({"type": "userFillsByTime", "user": b.user, "startTime": 0});
    assert_eq!(b.info(by_time).await, fills);
    for key in [json!(oid), json!(CLOID)] {
        let st = b.order_status(key).await;
        assert_eq!(
            (st["status"].as_str(), st["order"]["status"].as_str()),
            (Some("order"), Some("filled")),
            "{st}"
        );
        assert_eq!(st["order"]["order"]["cloid"], CLOID);
        assert_eq!(st["order"]["order"]["origSz"], "0.01");
        assert_eq!(st["order"]["order"]["sz"], "0");
    }
    let limits = b.user_info("userRateLimit").await;
    assert_eq!(
        (limits["cumVlm"].as_str(), limits["nRequestsUsed"].as_u64()),
        (Some("650.0001"), Some(1))
    );
}

#[tokio::test]
async fn a_gtc_take_profit_rests_holds_its_size_and_fills_when_the_price_passes_it() {
    let b = B::start().await;
    b.sim.sim.fund(None, "BTC", "0.02".parse().unwrap()).expect("fund");
    let s = b.order(with_cloid(limit(false, "70000", "0.01", "Gtc"), CLOID)).await;
    let oid = s["resting"]["oid"].as_u64().expect("resting");
    assert_eq!(s["resting"]["cloid"], CLOID);
    assert_eq!(b.balance("UBTC").await, ("0.02".into(), "0.01".into()));
    let open = b.user_info("openOrders").await;
    assert_eq!(
        open,
        json!([{"coin": "UBTC/USDC", "limitPx": "70000", "oid": oid, "side": "A", "sz": "0.01", "timestamp": b.sim.sim.now_ms(), "cloid": CLOID}])
    );
    let front = &b.user_info("frontendOpenOrders").await[0];
    assert_eq!(
        (front["tif"].as_str(), front["orderType"].as_str(), front["origSz"].as_str()),
        (Some("Gtc"), Some("Limit"), Some("0.01"))
    );
    assert_eq!(
        (front["isTrigger"].as_bool(), front["reduceOnly"].as_bool()),
        (Some(false), Some(false))
    );
    assert_eq!(b.order_status(json!(oid)).await["order"]["status"], "open");

    b.sim.sim.set_price("BTCUSDT", 70_500.into()).expect("price");
    assert_eq!(b.order_status(json!(CLOID)).await["order"]["status"], "filled");
    assert_eq!(b.user_info("openOrders").await, json!([]));
    // 700 USDC less the 0.1 % fee, in USDC (the token received by a sell).
    assert_eq!(b.balance("USDC").await, ("100699.3".into(), "0".into()));
    assert_eq!(b.balance("UBTC").await, ("0.01".into(), "0".into()));
    let f = &b.user_info("userFills").await[0];
    assert_eq!(
        (f["px"].as_str(), f["side"].as_str(), f["crossed"].as_bool()),
        (Some("70000"), Some("A"), Some(false))
    );
    assert_eq!((f["fee"].as_str(), f["feeToken"].as_str()), (Some("0.7"), Some("USDC")));
    // The admin sees the order as exchange B shows it.
    let orders = b.sim.sim.exchange_b_orders();
    assert_eq!(
        (orders[0]["status"].as_str(), orders[0]["user"].as_str()),
        (Some("filled"), Some(b.user.as_str()))
    );
}

#[tokio::test]
async fn cancels_by_oid_and_by_cloid_release_the_hold() {
    let b = B::start().await;
    let s = b.order(limit(true, "60000", "0.01", "Gtc")).await;
    let oid = s["resting"]["oid"].as_u64().expect("resting");
    assert_eq!(b.balance("USDC").await, ("100000".into(), "600".into()));
    let cancel = json!({"type": "cancel", "cancels": [{"a": BTC, "o": oid}]});
    assert_eq!(b.statuses(cancel.clone()).await, vec![json!("success")]);
    assert_eq!(b.balance("USDC").await, ("100000".into(), "0".into()));
    let again = b.statuses(cancel).await;
    assert_eq!(
        error_of(&again[0]),
        "Order was never placed, already canceled, or filled. asset=10000"
    );
    assert_eq!(b.order_status(json!(oid)).await["order"]["status"], "canceled");

    b.order(with_cloid(limit(true, "60000", "0.01", "Gtc"), CLOID)).await;
    let by_cloid = json!({"type": "cancelByCloid", "cancels": [{"asset": BTC, "cloid": CLOID}]});
    assert_eq!(b.statuses(by_cloid.clone()).await, vec![json!("success")]);
    assert_eq!(b.order_status(json!(CLOID)).await["order"]["status"], "canceled");
    assert!(error_of(&b.statuses(by_cloid).await[0]).starts_with("Order was never placed"));
}

#[tokio::test]
async fn refused_orders_answer_the_exchange_texts_per_order() {
    let b = B::start().await;
    let trigger = json!({"a": BTC, "b": false, "p": "60000", "s": "0.01", "r": false, "t": {"trigger": {"isMarket": true, "triggerPx": "60000", "tpsl": "sl"}}});
    let mut reduce_only = limit(false, "70000", "0.01", "Gtc");
    reduce_only["r"] = json!(true);
    let orders = vec![
        reduce_only,
        trigger,
        limit(true, "65000.5", "0.01", "Gtc"),
        limit(true, "65000", "0.000001", "Gtc"),
        limit(true, "65000", "0.0001", "Gtc"),
        limit(true, "65000", "10", "Gtc"),
        limit(true, "60000", "0.01", "Ioc"),
        limit(true, "66000", "0.01", "Alo"),
        with_cloid(limit(true, "60000", "0.01", "Gtc"), CLOID),
        with_cloid(limit(true, "60001", "0.01", "Gtc"), CLOID),
        json!({"a": 19_999, "b": true, "p": "1", "s": "100", "r": false, "t": {"limit": {"tif": "Gtc"}}}),
        limit(true, "79228162514264337593543950335", "79228162514264337593543950335", "Gtc"),
    ];
    let s = b.statuses(json!({"type": "order", "orders": orders, "grouping": "na"})).await;
    let texts: Vec<&str> = s.iter().map(error_of).collect();
    assert_eq!(
        texts,
        vec![
            "Reduce-only is invalid for spot trading asset=10000",
            "Placing trigger orders is not enabled on spot trading yet asset=10000",
            "Price must be divisible by tick size. asset=10000",
            "Order has invalid size. asset=10000",
            "Order must have minimum value of 10 USDC. asset=10000",
            "Order has insufficient spot balance to trade asset=10000",
            "Order could not immediately match against any resting orders. asset=10000",
            "Post only order would have immediately matched, bbo was 65000@65000.01. asset=10000",
            "",
            "Cloid is already used by an open order. asset=10000",
            "Invalid asset. asset=19999",
            "Price must be divisible by tick size. asset=10000",
        ]
    );
    assert!(s[8]["resting"]["oid"].is_u64());
    // An ALO that does not cross rests; an integer price of more than five figures is valid.
    assert!(b.order(limit(true, "64000", "0.01", "Alo")).await["resting"].is_object());
    assert!(b.order(limit(true, "123456", "0.0001", "Ioc")).await["filled"].is_object());
}

#[tokio::test]
async fn signatures_nonces_and_number_spelling_decide_who_signed() {
    let b = B::start().await;
    let action: Action = serde_json::from_value(
        json!({"type": "order", "orders": [limit(true, "60000", "0.01", "Gtc")], "grouping": "na"}),
    )
    .unwrap();
    let other = PrivateKey::from_hex(OTHER_KEY).unwrap();
    let r = b.post("/exchange", &b.envelope(&other, &action, b.next_nonce())).await;
    let expected = format!("L1 error: User or API Wallet {} does not exist.", other.address());
    assert_eq!(r.body, json!({"status": "err", "response": expected}));

    let nonce = b.next_nonce();
    let first = b.post("/exchange", &b.envelope(&b.key, &action, nonce)).await;
    assert_eq!(first.body["status"], "ok", "{}", first.text);
    let reused = b.post("/exchange", &b.envelope(&b.key, &action, nonce)).await;
    assert_eq!(reused.body, json!({"status": "err", "response": "Invalid nonce: duplicate nonce"}));
    let stale = b.post("/exchange", &b.envelope(&b.key, &action, nonce - 3 * 86_400_000)).await;
    assert!(
        stale.body["response"].as_str().is_some_and(|t| t.starts_with("Invalid nonce")),
        "{}",
        stale.text
    );

    /// An order action written by hand, its price spelled as given.
    #[derive(Serialize)]
    struct RawAction {
        r#type: &'static str,
        orders: Vec<RawOrder>,
        grouping: &'static str,
    }
    #[derive(Serialize)]
    struct RawOrder {
        a: u32,
        b: bool,
        p: &'static str,
        s: &'static str,
        r: bool,
        t: Value,
    }
    let raw = |p| RawAction {
        r#type: "order",
        orders: vec![RawOrder {
            a: BTC,
            b: true,
            p,
            s: "0.01",
            r: false,
            t: json!({"limit": {"tif": "Gtc"}}),
        }],
        grouping: "na",
    };
    let canonical = b.post("/exchange", &b.envelope(&b.key, &raw("60000"), b.next_nonce())).await;
    assert!(
        canonical.body["response"]["data"]["statuses"][0]["resting"].is_object(),
        "{}",
        canonical.text
    );
    let trailing = b.post("/exchange", &b.envelope(&b.key, &raw("60000.0"), b.next_nonce())).await;
    let text = trailing.body["response"].as_str().unwrap_or_default();
    assert!(text.starts_with("L1 error: User or API Wallet 0x"), "{}", trailing.text);
    assert!(!text.contains(&b.user), "another signer is recovered: {text}");

    let mut vault = b.envelope(&b.key, &action, b.next_nonce());
    vault["vaultAddress"] = json!(b.user);
    assert_eq!(b.post("/exchange", &vault).await.body["status"], "err");
    let garbage = b.post("/exchange", &json!({"action": {"type": "order"}})).await;
    assert_eq!(garbage.status, 422);
    assert!(garbage.text.starts_with("Failed to deserialize the JSON body into the target type"));
}

#[tokio::test]
async fn an_api_wallet_signs_for_its_account_and_owns_nothing() {
    let b = B::start().await;
    let agent = PrivateKey::from_hex(OTHER_KEY).unwrap();
    b.sim.sim.add_exchange_b_agent(agent.address(), b.key.address()).expect("agent");
    let action: Action = serde_json::from_value(
        json!({"type": "order", "orders": [limit(true, "60000", "0.01", "Gtc")], "grouping": "na"}),
    )
    .unwrap();
    let r = b.post("/exchange", &b.envelope(&agent, &action, b.next_nonce())).await;
    assert!(r.body["response"]["data"]["statuses"][0]["resting"].is_object(), "{}", r.text);
    assert_eq!(b.user_info("openOrders").await.as_array().map(Vec::len), Some(1));
    let as_agent = json!({"type": "openOrders", "user": agent.address().to_string()});
    assert_eq!(b.info(as_agent).await, json!([]));
}

#[tokio::test]
async fn past_the_weight_limit_the_answer_is_429_until_the_minute_ends() {
    let b = B::start_with(|c| c.weight_limit = 100).await;
    for _ in 0..5 {
        b.info(json!({"type": "spotMeta"})).await;
    }
    let r = b.post("/info", &json!({"type": "allMids"})).await;
    assert_eq!(r.status, 429, "{}", r.text);
    let log = b.sim.sim.requests();
    assert_eq!(log.last().map(|r| (r.path.as_str(), r.status)), Some(("/info", 429)));
    b.sim.sim.advance(60_000);
    b.info(json!({"type": "allMids"})).await;
}

#[tokio::test]
async fn a_server_error_after_execution_leaves_the_order_placed_and_findable() {
    let b = B::start().await;
    let mut fault = Fault::new(FaultKind::ServerError { status: 502, execute: true });
    fault.path = Some("/exchange".into());
    b.sim.sim.inject(fault);
    let action: Action = serde_json::from_value(json!({"type": "order", "orders": [with_cloid(limit(true, "60000", "0.01", "Gtc"), CLOID)], "grouping": "na"})).unwrap();
    let r = b.post("/exchange", &b.envelope(&b.key, &action, b.next_nonce())).await;
    assert_eq!(r.status, 502);
    assert_eq!(b.order_status(json!(CLOID)).await["order"]["status"], "open");
    let log = b.sim.sim.requests();
    let placed = log.iter().find(|r| r.path == "/exchange").expect("logged");
    assert_eq!((placed.status, placed.executed), (502, true));
    assert_eq!(placed.client_order_id.as_deref(), Some(CLOID));
    assert_eq!(placed.kind.as_deref(), Some("order"), "the action's type");
    assert!(placed.fault.as_deref().is_some_and(|f| f.contains("ServerError")));
    assert!(log.iter().any(|r| r.kind.as_deref() == Some("orderStatus") && r.executed));
}

#[tokio::test]
async fn a_fault_with_skip_lets_the_first_actions_through_and_hits_the_next() {
    let b = B::start().await;
    let mut fault = Fault::new(FaultKind::Reject { code: -1, msg: None });
    fault.path = Some("/exchange".into());
    fault.skip = 1;
    b.sim.sim.inject(fault);
    let first = b.order(limit(true, "60000", "0.01", "Gtc")).await;
    assert!(first["resting"]["oid"].is_u64(), "the first action is spared: {first}");
    let action: Action = serde_json::from_value(
        json!({"type": "order", "orders": [limit(true, "60001", "0.01", "Gtc")], "grouping": "na"}),
    )
    .unwrap();
    let second = b.post("/exchange", &b.envelope(&b.key, &action, b.next_nonce())).await;
    assert_eq!(second.body["status"], "err", "the second is hit: {}", second.text);
    let third = b.order(limit(true, "60002", "0.01", "Gtc")).await;
    assert!(third["resting"]["oid"].is_u64(), "count 1: spent: {third}");
}

#[tokio::test]
async fn past_the_address_budget_orders_are_refused_but_cancels_and_one_per_10_s_go_through() {
    let b = B::start_with(|c| c.initial_requests = 3).await;
    let first = b.order(with_cloid(limit(true, "60000", "0.01", "Gtc"), CLOID)).await;
    let oid = first["resting"]["oid"].clone();
    b.order(limit(true, "59999", "0.01", "Gtc")).await;
    b.order(limit(true, "60001", "0.01", "Gtc")).await;
    let over = b.order(limit(true, "60002", "0.01", "Gtc")).await;
    assert!(over["resting"]["oid"].is_u64(), "the first past the cap goes through: {over}");

    let refused = b.act(json!({"type": "order", "orders": [limit(true, "60003", "0.01", "Gtc")], "grouping": "na"})).await;
    assert_eq!(refused["status"], "err", "{refused}");
    assert_eq!(
        refused["response"],
        "Too many cumulative requests sent (5 > 3) for cumulative volume traded $0.00. \
         Place taker orders to free up 1 request per USDC traded."
    );
    let cancelled = b.statuses(json!({"type": "cancel", "cancels": [{"a": BTC, "o": oid}]})).await;
    assert_eq!(cancelled, vec![json!("success")], "cancels have the larger cap (here 6)");

    b.sim.sim.advance(10_000);
    let rested = b.order(limit(true, "60004", "0.01", "Gtc")).await;
    assert!(rested["resting"]["oid"].is_u64(), "10 s later one more goes: {rested}");
    let limits = b.user_info("userRateLimit").await;
    assert_eq!(
        (limits["nRequestsUsed"].as_u64(), limits["nRequestsCap"].as_u64()),
        (Some(7), Some(3))
    );
}
