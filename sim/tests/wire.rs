//! Wire-level tests of the simulator: raw HTTP with hand-signed requests, asserting exactly
//! what exchange A answers (status, code, fields) and what the engine did.

use reqwest::Method;
use serde_json::Value;
use spotbot_sim::{Fault, FaultKind, RunningSim};

mod common;

use common::{KEY, SECRET};

struct Client {
    sim: RunningSim,
    http: reqwest::Client,
}

struct Reply {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Value,
}

impl Reply {
    fn code(&self) -> i64 {
        self.body["code"].as_i64().unwrap_or(0)
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Client {
    async fn start() -> Self {
        let sim = common::funded_sim().await;
        Self { sim, http: reqwest::Client::new() }
    }

    async fn public(&self, path: &str, query: &str) -> Reply {
        let url = format!("{}{}?{}", self.sim.base_url(), path, query);
        let r = self.http.get(url).send().await.expect("send");
        reply(r).await
    }

    /// Signed request with every parameter in the query string.
    async fn signed(&self, method: Method, path: &str, params: &str) -> Reply {
        let ts = self.sim.sim.now_ms();
        let q = if params.is_empty() {
            format!("timestamp={ts}")
        } else {
            format!("{params}&timestamp={ts}")
        };
        let sig = spotbot_sim::params::sign(SECRET, &q);
        let url = format!("{}{}?{}&signature={}", self.sim.base_url(), path, q, sig);
        let r =
            self.http.request(method, url).header("X-MBX-APIKEY", KEY).send().await.expect("send");
        reply(r).await
    }

    async fn try_signed(
        &self,
        method: Method,
        path: &str,
        params: &str,
    ) -> Result<Reply, reqwest::Error> {
        let ts = self.sim.sim.now_ms();
        let q = format!("{params}&timestamp={ts}");
        let sig = spotbot_sim::params::sign(SECRET, &q);
        let url = format!("{}{}?{}&signature={}", self.sim.base_url(), path, q, sig);
        let r = self.http.request(method, url).header("X-MBX-APIKEY", KEY).send().await?;
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let bytes = r.bytes().await?;
        Ok(Reply { status, headers, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) })
    }

    async fn balance(&self, asset: &str) -> (String, String) {
        let a = self.signed(Method::GET, "/api/v3/account", "").await;
        assert_eq!(a.status, 200, "{}", a.body);
        let b = a.body["balances"]
            .as_array()
            .and_then(|v| v.iter().find(|b| b["asset"] == asset).cloned())
            .unwrap_or(Value::Null);
        (
            b["free"].as_str().unwrap_or("0.00000000").to_string(),
            b["locked"].as_str().unwrap_or("0.00000000").to_string(),
        )
    }

    fn set_price(&self, symbol: &str, price: &str) {
        self.sim.sim.set_price(symbol, price.parse().expect("decimal")).expect("set price");
    }
}

async fn reply(r: reqwest::Response) -> Reply {
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let bytes = r.bytes().await.expect("body");
    Reply { status, headers, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) }
}

#[tokio::test]
async fn public_endpoints_have_the_exchange_shapes() {
    let c = Client::start().await;
    let t = c.public("/api/v3/time", "").await;
    assert!(t.body["serverTime"].is_i64());
    assert!(t.headers.contains_key("x-mbx-used-weight-1m"));
    assert_eq!(t.headers["content-type"], "application/json;charset=UTF-8");
    assert_eq!(c.public("/api/v3/ping", "").await.body, serde_json::json!({}));

    let info = c.public("/api/v3/exchangeInfo", "symbol=BTCUSDT").await;
    let s = &info.body["symbols"][0];
    assert_eq!(s["symbol"], "BTCUSDT");
    assert_eq!(s["baseAsset"], "BTC");
    assert_eq!(s["quoteAsset"], "USDT");
    assert_eq!(s["ocoAllowed"], true);
    let filters: Vec<&str> = s["filters"]
        .as_array()
        .map(|f| f.iter().filter_map(|x| x["filterType"].as_str()).collect())
        .unwrap_or_default();
    for f in ["PRICE_FILTER", "LOT_SIZE", "MARKET_LOT_SIZE", "NOTIONAL"] {
        assert!(filters.contains(&f), "{f} missing");
    }
    assert!(info.body["rateLimits"].as_array().is_some_and(|r| r.len() >= 3));
    let all = c.public("/api/v3/exchangeInfo", "").await;
    assert!(all.body["symbols"].as_array().is_some_and(|v| v.len() >= 20));
    let bad = c.public("/api/v3/exchangeInfo", "symbol=NOPEUSDT").await;
    assert_eq!((bad.status, bad.code()), (400, -1121));

    for interval in ["1m", "15m", "30m", "1h", "4h", "1d", "1w", "1M"] {
        let k = c
            .public("/api/v3/klines", &format!("symbol=ETHUSDT&interval={interval}&limit=50"))
            .await;
        let rows = k.body.as_array().cloned().unwrap_or_default();
        assert_eq!(rows.len(), 50, "{interval}");
        for w in rows.windows(2) {
            assert_eq!(
                w[0][6].as_i64().unwrap_or(0) + 1,
                w[1][0].as_i64().unwrap_or(-1),
                "{interval} contiguous"
            );
        }
        let row = &rows[0];
        assert_eq!(row.as_array().map(Vec::len), Some(12));
        let (o, h, l, cl): (f64, f64, f64, f64) = (
            row[1].as_str().and_then(|v| v.parse().ok()).unwrap_or(0.0),
            row[2].as_str().and_then(|v| v.parse().ok()).unwrap_or(0.0),
            row[3].as_str().and_then(|v| v.parse().ok()).unwrap_or(0.0),
            row[4].as_str().and_then(|v| v.parse().ok()).unwrap_or(0.0),
        );
        assert!(h >= o.max(cl) && l <= o.min(cl) && l > 0.0, "{interval}: {row}");
        assert!(row[8].is_u64());
        assert_eq!(row[11], "0");
    }
    let k = c.public("/api/v3/klines", "symbol=ETHUSDT&interval=2x").await;
    assert_eq!((k.status, k.code()), (400, -1120));

    let t = c.public("/api/v3/ticker/24hr", "symbol=SOLUSDT").await;
    for f in [
        "priceChangePercent",
        "lastPrice",
        "quoteVolume",
        "highPrice",
        "lowPrice",
        "bidPrice",
        "askPrice",
    ] {
        assert!(t.body[f].is_string(), "{f}");
    }
    let all = c.public("/api/v3/ticker/24hr", "").await;
    assert!(all.body.as_array().is_some_and(|v| v.len() >= 20));
    let p = c.public("/api/v3/ticker/price", "symbols=%5B%22BTCUSDT%22,%22ETHUSDT%22%5D").await;
    assert_eq!(p.body.as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn security_errors_match_the_exchange() {
    let c = Client::start().await;
    // No key.
    let r = c
        .http
        .get(format!("{}/api/v3/account?timestamp=1&signature=00", c.sim.base_url()))
        .send()
        .await
        .expect("send");
    let r = reply(r).await;
    assert_eq!((r.status, r.code()), (401, -2014));
    // Unknown key.
    let r = c
        .http
        .get(format!("{}/api/v3/account?timestamp=1&signature=00", c.sim.base_url()))
        .header("X-MBX-APIKEY", "other")
        .send()
        .await
        .expect("send");
    assert_eq!(reply(r).await.code(), -2015);
    // Bad signature.
    let ts = c.sim.sim.now_ms();
    let r = c
        .http
        .get(format!("{}/api/v3/account?timestamp={ts}&signature=deadbeef", c.sim.base_url()))
        .header("X-MBX-APIKEY", KEY)
        .send()
        .await
        .expect("send");
    let r = reply(r).await;
    assert_eq!((r.status, r.code()), (400, -1022));
    assert_eq!(r.body["msg"], "Signature for this request is not valid.");
    // Stale timestamp.
    let q = format!("timestamp={}", now_ms() - 60_000);
    let sig = spotbot_sim::params::sign(SECRET, &q);
    let r = c
        .http
        .get(format!("{}/api/v3/account?{q}&signature={sig}", c.sim.base_url()))
        .header("X-MBX-APIKEY", KEY)
        .send()
        .await
        .expect("send");
    let r = reply(r).await;
    assert_eq!((r.status, r.code()), (400, -1021));
    // Mixed query + body, the query's symbol wins (body says ETHUSDT).
    c.set_price("BTCUSDT", "60000");
    let query = "symbol=BTCUSDT&side=BUY&type=MARKET";
    let body = format!("symbol=ETHUSDT&quantity=0.001&timestamp={}", c.sim.sim.now_ms());
    let sig = spotbot_sim::params::sign(SECRET, &format!("{query}{body}"));
    let r = c
        .http
        .post(format!("{}/api/v3/order?{query}", c.sim.base_url()))
        .header("X-MBX-APIKEY", KEY)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("{body}&signature={sig}"))
        .send()
        .await
        .expect("send");
    let r = reply(r).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["symbol"], "BTCUSDT");
    assert!(r.headers.contains_key("x-mbx-order-count-10s"));
    assert!(r.headers.contains_key("x-mbx-order-count-1d"));
}

#[tokio::test]
async fn market_buy_then_oco_locks_coin_and_market_sell_gets_2010() {
    let c = Client::start().await;
    c.set_price("BTCUSDT", "60000");
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.01000&newClientOrderId=E1",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let b = &r.body;
    assert_eq!(b["status"], "FILLED");
    assert_eq!(b["clientOrderId"], "E1");
    assert_eq!(b["orderListId"], -1);
    assert_eq!(b["type"], "MARKET");
    assert_eq!(b["price"], "0.00000000");
    assert_eq!(b["executedQty"], "0.01000000");
    assert_eq!(b["cummulativeQuoteQty"], "600.00010000");
    assert_eq!(b["fills"][0]["price"], "60000.01000000");
    assert_eq!(b["fills"][0]["commission"], "0.00001000");
    assert_eq!(b["fills"][0]["commissionAsset"], "BTC");
    assert!(b["transactTime"].is_i64() && b["workingTime"].is_i64());
    assert_eq!(c.balance("BTC").await, ("0.00999000".into(), "0.00000000".into()));
    assert_eq!(c.balance("USDT").await.0, "99399.99990000");

    // OCO bracket: LIMIT_MAKER take profit above, STOP_LOSS_LIMIT below.
    let oco = c
        .signed(
            Method::POST,
            "/api/v3/orderList/oco",
            "symbol=BTCUSDT&side=SELL&quantity=0.00999&aboveType=LIMIT_MAKER&abovePrice=63000&belowType=STOP_LOSS_LIMIT&belowStopPrice=57000&belowPrice=56886&belowTimeInForce=GTC&listClientOrderId=L1&newOrderRespType=RESULT",
        )
        .await;
    assert_eq!(oco.status, 200, "{}", oco.body);
    assert_eq!(oco.body["contingencyType"], "OCO");
    assert_eq!(oco.body["listStatusType"], "EXEC_STARTED");
    assert_eq!(oco.body["listOrderStatus"], "EXECUTING");
    assert_eq!(oco.body["listClientOrderId"], "L1");
    assert!(oco.body["transactionTime"].is_i64());
    let reports = oco.body["orderReports"].as_array().cloned().unwrap_or_default();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0]["type"], "STOP_LOSS_LIMIT");
    assert_eq!(reports[0]["workingTime"], -1);
    assert_eq!(reports[0]["stopPrice"], "57000.00000000");
    assert_eq!(reports[1]["type"], "LIMIT_MAKER");
    let list_id = oco.body["orderListId"].as_i64().unwrap_or(0);
    assert!(reports.iter().all(|r| r["orderListId"] == list_id));
    assert_eq!(c.balance("BTC").await, ("0.00000000".into(), "0.00999000".into()));

    // Selling the locked coin fails with the exchange's -2010.
    let sell = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=BTCUSDT&side=SELL&type=MARKET&quantity=0.00999",
        )
        .await;
    assert_eq!((sell.status, sell.code()), (400, -2010));
    assert_eq!(sell.body["msg"], "Account has insufficient balance for requested action.");

    let open = c.signed(Method::GET, "/api/v3/openOrderList", "").await;
    assert_eq!(open.body.as_array().map(Vec::len), Some(1));
    assert!(open.body[0].get("orderReports").is_none());

    // Cancel the list, the coin is free again, the market sell works.
    let cancel = c
        .signed(
            Method::DELETE,
            "/api/v3/orderList",
            &format!("symbol=BTCUSDT&orderListId={list_id}"),
        )
        .await;
    assert_eq!(cancel.status, 200, "{}", cancel.body);
    assert_eq!(cancel.body["listOrderStatus"], "ALL_DONE");
    assert!(
        cancel.body["orderReports"]
            .as_array()
            .is_some_and(|v| v.iter().all(|o| o["status"] == "CANCELED"))
    );
    assert_eq!(c.balance("BTC").await, ("0.00999000".into(), "0.00000000".into()));
    let again = c
        .signed(
            Method::DELETE,
            "/api/v3/orderList",
            &format!("symbol=BTCUSDT&orderListId={list_id}"),
        )
        .await;
    assert_eq!((again.status, again.code()), (400, -2011));
    assert_eq!(again.body["msg"], "Unknown order list sent.");
    let sell = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=BTCUSDT&side=SELL&type=MARKET&quantity=0.00999",
        )
        .await;
    assert_eq!(sell.status, 200, "{}", sell.body);
    assert_eq!(sell.body["fills"][0]["commissionAsset"], "USDT");
}

async fn bracket(c: &Client) -> (i64, i64, i64) {
    c.set_price("ETHUSDT", "3000");
    let r = c
        .signed(Method::POST, "/api/v3/order", "symbol=ETHUSDT&side=BUY&type=MARKET&quantity=1")
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let oco = c
        .signed(
            Method::POST,
            "/api/v3/orderList/oco",
            "symbol=ETHUSDT&side=SELL&quantity=0.999&aboveType=LIMIT_MAKER&abovePrice=3300&belowType=STOP_LOSS_LIMIT&belowStopPrice=2900&belowPrice=2894.2&belowTimeInForce=GTC&newOrderRespType=FULL",
        )
        .await;
    assert_eq!(oco.status, 200, "{}", oco.body);
    let legs = oco.body["orders"].as_array().cloned().unwrap_or_default();
    (
        oco.body["orderListId"].as_i64().unwrap_or(0),
        legs[0]["orderId"].as_i64().unwrap_or(0),
        legs[1]["orderId"].as_i64().unwrap_or(0),
    )
}

#[tokio::test]
async fn oco_take_profit_fill_expires_the_stop() {
    let c = Client::start().await;
    let (list, sl, tp) = bracket(&c).await;
    c.set_price("ETHUSDT", "3350");
    let tp_o =
        c.signed(Method::GET, "/api/v3/order", &format!("symbol=ETHUSDT&orderId={tp}")).await;
    assert_eq!(tp_o.body["status"], "FILLED");
    assert_eq!(tp_o.body["cummulativeQuoteQty"], "3296.70000000");
    let sl_o =
        c.signed(Method::GET, "/api/v3/order", &format!("symbol=ETHUSDT&orderId={sl}")).await;
    assert_eq!(sl_o.body["status"], "EXPIRED");
    let l = c.signed(Method::GET, "/api/v3/orderList", &format!("orderListId={list}")).await;
    assert_eq!(l.body["listOrderStatus"], "ALL_DONE");
    assert_eq!(c.balance("ETH").await.1, "0.00000000");
    let trades =
        c.signed(Method::GET, "/api/v3/myTrades", &format!("symbol=ETHUSDT&orderId={tp}")).await;
    assert_eq!(trades.body[0]["isMaker"], true);
    assert_eq!(trades.body[0]["orderListId"], list);
}

#[tokio::test]
async fn stop_limit_gap_leaves_the_stop_unfilled_then_fills_on_recovery() {
    let c = Client::start().await;
    let (_list, sl, tp) = bracket(&c).await;
    // Gap straight through stop (2900) and limit (2894.2).
    c.set_price("ETHUSDT", "2800");
    let sl_o =
        c.signed(Method::GET, "/api/v3/order", &format!("symbol=ETHUSDT&orderId={sl}")).await;
    assert_eq!(sl_o.body["status"], "NEW");
    assert_eq!(sl_o.body["isWorking"], true);
    assert!(sl_o.body["workingTime"].as_i64().unwrap_or(-1) > 0);
    let tp_o =
        c.signed(Method::GET, "/api/v3/order", &format!("symbol=ETHUSDT&orderId={tp}")).await;
    assert_eq!(tp_o.body["status"], "EXPIRED");
    assert_eq!(c.balance("ETH").await.1, "0.99900000");
    // Back above the limit: the working stop-limit sells at its limit.
    c.set_price("ETHUSDT", "2895");
    let sl_o =
        c.signed(Method::GET, "/api/v3/order", &format!("symbol=ETHUSDT&orderId={sl}")).await;
    assert_eq!(sl_o.body["status"], "FILLED");
    assert_eq!(c.balance("ETH").await, ("0.00000000".into(), "0.00000000".into()));
}

#[tokio::test]
async fn limit_order_types_and_rejections() {
    let c = Client::start().await;
    c.set_price("SOLUSDT", "150");
    // LIMIT_MAKER that would cross.
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=SOLUSDT&side=BUY&type=LIMIT_MAKER&quantity=1&price=151",
        )
        .await;
    assert_eq!((r.status, r.code()), (400, -2010));
    assert_eq!(r.body["msg"], "Order would immediately match and take.");
    // LIMIT GTC rests and locks quote, then fills when the market trades down to it.
    let r = c
        .signed(Method::POST, "/api/v3/order", "symbol=SOLUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=2&price=140&newClientOrderId=MT_1")
        .await;
    assert_eq!(r.body["status"], "NEW", "{}", r.body);
    assert_eq!(c.balance("USDT").await.1, "280.00000000");
    let dup = c
        .signed(Method::POST, "/api/v3/order", "symbol=SOLUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=2&price=139&newClientOrderId=MT_1")
        .await;
    assert_eq!((dup.code(), dup.body["msg"].as_str()), (-2010, Some("Duplicate order sent.")));
    let open = c.signed(Method::GET, "/api/v3/openOrders", "symbol=SOLUSDT").await;
    assert_eq!(open.body.as_array().map(Vec::len), Some(1));
    c.set_price("SOLUSDT", "139.5");
    let q = c.signed(Method::GET, "/api/v3/order", "symbol=SOLUSDT&origClientOrderId=MT_1").await;
    assert_eq!(q.body["status"], "FILLED");
    assert_eq!(q.body["price"], "140.00000000");
    assert_eq!(c.balance("USDT").await.1, "0.00000000");
    // FOK bigger than the book: expires with nothing filled.
    c.sim.sim.fund(None, "USDT", 500_000.into()).expect("fund");
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=SOLUSDT&side=BUY&type=LIMIT&timeInForce=FOK&quantity=2000&price=139.6",
        )
        .await;
    assert_eq!(r.body["status"], "EXPIRED", "{}", r.body);
    assert_eq!(r.body["executedQty"], "0.00000000");
    // IOC: fills what the book has at the limit, the rest expires.
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=SOLUSDT&side=BUY&type=LIMIT&timeInForce=IOC&quantity=2000&price=139.6",
        )
        .await;
    assert_eq!(r.body["status"], "EXPIRED", "{}", r.body);
    assert_ne!(r.body["executedQty"], "0.00000000");
    // STOP_LOSS_LIMIT whose stop is already crossed.
    let r = c
        .signed(Method::POST, "/api/v3/order", "symbol=SOLUSDT&side=SELL&type=STOP_LOSS_LIMIT&timeInForce=GTC&quantity=1&price=145&stopPrice=146")
        .await;
    assert_eq!(r.code(), -2010, "{}", r.body);
    // Filters.
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=SOLUSDT&side=BUY&type=MARKET&quantity=0.0001",
        )
        .await;
    assert_eq!((r.code(), r.body["msg"].as_str()), (-1013, Some("Filter failure: LOT_SIZE")));
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=SOLUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=100.001",
        )
        .await;
    assert_eq!((r.code(), r.body["msg"].as_str()), (-1013, Some("Filter failure: PRICE_FILTER")));
    let r = c
        .signed(Method::POST, "/api/v3/order", "symbol=SOLUSDT&side=BUY&type=MARKET&quantity=0.01")
        .await;
    assert_eq!((r.code(), r.body["msg"].as_str()), (-1013, Some("Filter failure: NOTIONAL")));
    let r = c
        .signed(Method::POST, "/api/v3/order", "symbol=SOLUSDT&side=BUY&type=MARKET&quantity=1e2")
        .await;
    assert_eq!(r.code(), -1100);
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=SOLUSDT&side=BUY&type=MARKET&timeInForce=GTC&quantity=1",
        )
        .await;
    assert_eq!(r.code(), -1106);
    let r = c
        .signed(Method::POST, "/api/v3/order", "symbol=NOPE&side=BUY&type=MARKET&quantity=1")
        .await;
    assert_eq!(r.code(), -1121);
    let r = c.signed(Method::GET, "/api/v3/order", "symbol=SOLUSDT&orderId=999").await;
    assert_eq!((r.code(), r.body["msg"].as_str()), (-2013, Some("Order does not exist.")));
    let r = c.signed(Method::DELETE, "/api/v3/order", "symbol=SOLUSDT&orderId=999").await;
    assert_eq!((r.code(), r.body["msg"].as_str()), (-2011, Some("Unknown order sent.")));
    // quoteOrderQty market buy.
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=SOLUSDT&side=BUY&type=MARKET&quoteOrderQty=100",
        )
        .await;
    assert_eq!(r.body["status"], "FILLED", "{}", r.body);
    assert_eq!(r.body["origQuoteOrderQty"], "100.00000000");
}

#[tokio::test]
async fn faults_are_injected_and_recorded() {
    let c = Client::start().await;
    c.set_price("BTCUSDT", "60000");
    // Drop the connection after executing: the client sees an error, the order exists.
    c.sim.sim.inject(Fault::new(FaultKind::DropAfterExecute));
    let r = c
        .try_signed(
            Method::POST,
            "/api/v3/order",
            "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.001&newClientOrderId=D1",
        )
        .await;
    assert!(r.is_err(), "connection should drop");
    let q = c.signed(Method::GET, "/api/v3/order", "symbol=BTCUSDT&origClientOrderId=D1").await;
    assert_eq!(q.body["status"], "FILLED");
    // 429 with Retry-After, not executed.
    c.sim.sim.inject(Fault::new(FaultKind::RateLimit { retry_after: 3 }));
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.001&newClientOrderId=R1",
        )
        .await;
    assert_eq!((r.status, r.code()), (429, -1003));
    assert_eq!(r.headers["retry-after"], "3");
    // 5xx after executing.
    c.sim.sim.inject(Fault::new(FaultKind::ServerError { status: 503, execute: true }));
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.001&newClientOrderId=S1",
        )
        .await;
    assert_eq!(r.status, 503);
    // Reject the next order with a chosen code.
    c.sim.sim.inject(Fault::new(FaultKind::Reject { code: -2010, msg: None }));
    let r = c
        .signed(
            Method::POST,
            "/api/v3/order",
            "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.001&newClientOrderId=X1",
        )
        .await;
    assert_eq!((r.status, r.code()), (400, -2010));
    let seen = c.sim.sim.requests();
    let by_id = |id: &str| seen.iter().find(|r| r.client_order_id.as_deref() == Some(id)).cloned();
    assert_eq!(by_id("D1").map(|r| (r.status, r.executed)), Some((0, true)));
    assert_eq!(by_id("R1").map(|r| (r.status, r.executed)), Some((429, false)));
    assert_eq!(by_id("S1").map(|r| (r.status, r.executed)), Some((503, true)));
    assert_eq!(by_id("X1").map(|r| (r.status, r.executed)), Some((400, false)));
    let orders = c.sim.sim.orders();
    assert_eq!(orders.len(), 2, "only D1 and S1 executed");
}

#[tokio::test]
async fn admin_api_over_http() {
    let c = Client::start().await;
    let base = c.sim.base_url();
    let post = |path: &str, body: Value| c.http.post(format!("{base}{path}")).json(&body).send();
    assert!(
        post("/sim/price", serde_json::json!({"symbol": "BTCUSDT", "price": "12345.67"}))
            .await
            .expect("send")
            .status()
            .is_success()
    );
    let p = c.public("/api/v3/ticker/price", "symbol=BTCUSDT").await;
    assert_eq!(p.body["price"], "12345.67000000");
    let t0 = c.sim.sim.now_ms();
    assert!(
        post("/sim/time/advance", serde_json::json!({"ms": 3_600_000}))
            .await
            .expect("send")
            .status()
            .is_success()
    );
    assert!(c.sim.sim.now_ms() >= t0 + 3_600_000);
    assert!(
        post("/sim/fund", serde_json::json!({"asset": "BNB", "amount": "5"}))
            .await
            .expect("send")
            .status()
            .is_success()
    );
    assert_eq!(c.balance("BNB").await.0, "5.00000000");
    let r = post(
        "/sim/faults",
        serde_json::json!({"kind": "reject", "code": -1013, "msg": "Filter failure: LOT_SIZE"}),
    )
    .await
    .expect("send");
    assert!(r.status().is_success());
    let r = c
        .signed(Method::POST, "/api/v3/order", "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.001")
        .await;
    assert_eq!(r.code(), -1013);
    let csv = c
        .http
        .post(format!("{base}/sim/csv?symbol=ETHUSDT"))
        .body(format!("time,price\n{},2000\n", c.sim.sim.now_ms() - 1))
        .send()
        .await
        .expect("send");
    assert!(csv.status().is_success());
    let p = c.public("/api/v3/ticker/price", "symbol=ETHUSDT").await;
    assert_eq!(p.body["price"], "2000.00000000");
    let reqs: Value = c
        .http
        .get(format!("{base}/sim/requests"))
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    assert!(reqs.as_array().is_some_and(|v| !v.is_empty()));
}

#[tokio::test]
async fn hostile_input_gets_an_error_answer_not_a_crash() {
    let c = Client::start().await;
    let cases = [
        (Method::GET, "/api/v3/order", "symbol=BTCUSDT&orderId=-9223372036854775808"),
        (Method::DELETE, "/api/v3/orderList", "symbol=BTCUSDT&orderListId=-9223372036854775808"),
        (
            Method::GET,
            "/api/v3/myTrades",
            "symbol=BTCUSDT&startTime=-9223372036854775808&endTime=9223372036854775807",
        ),
        (
            Method::POST,
            "/api/v3/order",
            "symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=99999999999999999999.99999999&price=99999999999999999999.99999999",
        ),
        (
            Method::POST,
            "/api/v3/order",
            "symbol=BTCUSDT&side=BUY&type=MARKET&quoteOrderQty=99999999999999999999",
        ),
        (Method::POST, "/api/v3/order", "symbol=BTCUSDT&side=SIDEWAYS&type=MARKET&quantity=1"),
        (
            Method::POST,
            "/api/v3/orderList/oco",
            "symbol=BTCUSDT&side=SELL&quantity=1&aboveType=MARKET&belowType=LIMIT",
        ),
        (Method::GET, "/api/v3/allOrders", "symbol=BTCUSDT&limit=-5"),
    ];
    for (m, path, q) in cases {
        let r = c.signed(m.clone(), path, q).await;
        assert!((400..500).contains(&r.status), "{m} {path}?{q} -> {} {}", r.status, r.body);
        assert!(r.body["code"].as_i64().is_some_and(|code| code < 0));
    }
    for q in [
        "symbol=BTCUSDT&interval=1M&startTime=-9223372036854775808&limit=3",
        "symbol=BTCUSDT&interval=1w&endTime=-9223372036854775808",
        "symbols=not-json",
    ] {
        let path = if q.starts_with("symbols") { "/api/v3/ticker/price" } else { "/api/v3/klines" };
        let r = c.public(path, q).await;
        assert!(r.status == 200 || (400..500).contains(&r.status), "{path}?{q} -> {}", r.status);
    }
    // Timestamps far out of range.
    for ts in ["-9223372036854775808", "9223372036854775807"] {
        let q = format!("timestamp={ts}");
        let sig = spotbot_sim::params::sign(SECRET, &q);
        let r = c
            .http
            .get(format!("{}/api/v3/account?{q}&signature={sig}", c.sim.base_url()))
            .header("X-MBX-APIKEY", KEY)
            .send()
            .await
            .expect("send");
        assert_eq!(reply(r).await.code(), -1021);
    }
    // The server is still answering.
    assert_eq!(c.public("/api/v3/ping", "").await.status, 200);
}
