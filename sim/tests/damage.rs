//! Damaged answers over real HTTP: a damage armed on exchange A's order placement leaves the
//! order in the engine while the client meets the damaged answer; on exchange B's `/info` the
//! same; the random mode damages every answer at share 1 and none at 0, one seed giving one
//! sequence of kinds; an armed fault wins over it; the request log names every damage.

use reqwest::Method;
use serde_json::{Value, json};
use spotbot_sim::{Damage, Fault, FaultKind, RequestRecord, RunningSim};
use std::time::{Duration, Instant};

mod common;

use common::{KEY, SECRET};

struct Client {
    sim: RunningSim,
    http: reqwest::Client,
}

/// An answer as the client met it: None when the connection was cut.
struct Met {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
}

impl Met {
    fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Client {
    async fn start() -> Self {
        let sim = common::funded_sim().await;
        sim.sim.set_price("BTCUSDT", 65_000.into()).expect("price");
        Self { sim, http: reqwest::Client::new() }
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Option<Met> {
        let r = request.send().await.ok()?;
        let (status, headers) = (r.status().as_u16(), r.headers().clone());
        let body = r.bytes().await.ok()?.to_vec();
        Some(Met { status, headers, body })
    }

    /// A MARKET buy of 0.001 BTC with client order id `id`.
    async fn buy(&self, id: &str) -> Option<Met> {
        let q = format!(
            "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.001&newClientOrderId={id}&timestamp={}",
            self.sim.sim.now_ms()
        );
        let sig = spotbot_sim::params::sign(SECRET, &q);
        let url = format!("{}/api/v3/order?{q}&signature={sig}", self.sim.base_url());
        self.send(self.http.request(Method::POST, url).header("X-MBX-APIKEY", KEY)).await
    }

    async fn get(&self, path: &str) -> Option<Met> {
        self.send(self.http.get(format!("{}{path}", self.sim.base_url()))).await
    }

    async fn info(&self, body: Value) -> Option<Met> {
        self.send(self.http.post(format!("{}/info", self.sim.base_url())).json(&body)).await
    }

    async fn admin(&self, method: Method, body: Option<Value>) -> Value {
        let url = format!("{}/sim/mutation", self.sim.base_url());
        let mut request = self.http.request(method, url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let met = self.send(request).await.expect("admin answers");
        assert_eq!(met.status, 200, "{}", String::from_utf8_lossy(&met.body));
        met.json().expect("json")
    }

    /// One request of each REST kind the random mode covers: exchange A public and signed,
    /// exchange B's `/info`. Returns what the client met.
    async fn round(&self, i: usize) -> Vec<Option<Met>> {
        vec![
            self.get("/api/v3/time").await,
            self.get("/api/v3/ticker/price?symbol=BTCUSDT").await,
            self.buy(&format!("m{i}")).await,
            self.info(json!({"type": "allMids"})).await,
        ]
    }
}

fn damage_fault(damage: Damage, seed: u64) -> Fault {
    Fault::new(FaultKind::Damage { damage, seed, ms: None, retry_after: None })
}

/// The damage kind a request record names, as `Damage { damage: <Kind>, .. }` spells it.
fn kind_in(record: &RequestRecord) -> Option<String> {
    let fault = record.fault.as_deref()?;
    let rest = fault.strip_prefix("Damage { damage: ")?;
    rest.split(',').next().map(String::from)
}

#[tokio::test]
async fn a_damaged_answer_to_an_order_leaves_the_order_placed() {
    let c = Client::start().await;
    let clean = c.buy("clean").await.and_then(|m| m.json()).expect("a clean answer");
    let clean_keys = clean.as_object().map_or(0, |o| o.len());
    for (i, damage) in Damage::ALL.into_iter().enumerate() {
        let id = format!("d{i}");
        let mut fault = damage_fault(damage, i as u64);
        if let FaultKind::Damage { ms, .. } = &mut fault.kind {
            *ms = Some(300);
        }
        c.sim.sim.inject(fault);
        let started = Instant::now();
        let met = c.buy(&id).await;
        let took = started.elapsed();

        let orders = c.sim.sim.orders();
        let order = orders.iter().find(|o| o["clientOrderId"] == id.as_str());
        assert_eq!(order.map(|o| &o["status"]), Some(&json!("FILLED")), "{damage:?}: placed");
        let log = c.sim.sim.requests();
        let record = log.last().expect("logged");
        assert!(record.executed, "{damage:?}: executed");
        assert_eq!(record.client_order_id.as_deref(), Some(id.as_str()));
        let expected = format!("Damage {{ damage: {damage:?}, seed: {i}, ms: Some(300)");
        assert!(record.fault.as_deref().is_some_and(|f| f.starts_with(&expected)), "{record:?}");

        if damage == Damage::Dropped {
            assert!(met.is_none(), "cut without an answer");
            assert_eq!(record.status, 0);
            continue;
        }
        let met = met.expect("answered");
        assert_eq!(record.status, met.status, "the log has the status the client met");
        let body = met.json();
        let text = String::from_utf8_lossy(&met.body);
        let keys = body.as_ref().and_then(Value::as_object).map(|o| o.len());
        match damage {
            Damage::Truncated => {
                assert!(body.is_none() && met.status == 200 && !met.body.is_empty())
            }
            Damage::HugeNumber => assert!(body.is_none() || text.contains("\"1e400\""), "{text}"),
            Damage::WrongShape => assert!(body.is_some_and(|b| b.is_array())),
            Damage::MissingField => assert_eq!(keys, Some(clean_keys - 1), "{text}"),
            Damage::WrongType => assert_eq!(keys, Some(clean_keys), "{text}"),
            Damage::NegativeNumber => assert!(text.contains("-0.0001"), "{text}"),
            Damage::UnknownEnum => assert!(text.contains("\"MYSTERY_VALUE\""), "{text}"),
            Damage::DuplicateKeys | Damage::ReorderedKeys => {
                let b = body.expect("parses");
                assert_eq!(b["orderId"], order.map_or(Value::Null, |o| o["orderId"].clone()));
            }
            Damage::HtmlError => {
                assert!([502, 503, 504].contains(&met.status));
                assert_eq!(met.header("content-type"), Some("text/html"));
                assert!(met.body.starts_with(b"<html>"));
            }
            Damage::EmptyOk => assert!(met.status == 200 && met.body.is_empty()),
            Damage::Slow => {
                assert!(took >= Duration::from_millis(300), "held back: {took:?}");
                assert_eq!(body.map(|b| b["clientOrderId"].clone()), Some(json!(id)));
            }
            Damage::RateLimited | Damage::Banned => {
                let (status, retry) =
                    if damage == Damage::Banned { (418, "2") } else { (429, "1") };
                assert_eq!((met.status, met.header("retry-after")), (status, Some(retry)));
                assert_eq!(body.map(|b| b["code"].clone()), Some(json!(-1003)));
                let ping = c.get("/api/v3/ping").await.expect("answered");
                assert_eq!(ping.status, 200, "a lie in transit: nothing is throttled");
            }
            Damage::Dropped => unreachable!("handled above"),
        }
    }
}

#[tokio::test]
async fn exchange_b_s_info_answers_are_damaged_after_running() {
    let c = Client::start().await;
    let mut fault = damage_fault(Damage::RateLimited, 0);
    fault.path = Some("/info".into());
    c.sim.sim.inject(fault);
    let met = c.info(json!({"type": "allMids"})).await.expect("answered");
    assert_eq!((met.status, met.header("retry-after")), (429, Some("1")));
    assert_eq!(met.body, b"Too many requests", "exchange B's text");
    let record = c.sim.sim.requests().pop().expect("logged");
    assert_eq!((record.path.as_str(), record.executed, record.status), ("/info", true, 429));

    let mut fault = damage_fault(Damage::UnknownEnum, 0);
    fault.path = Some("/info".into());
    c.sim.sim.inject(fault);
    let nobody = "0x0000000000000000000000000000000000000000";
    let met = c.info(json!({"type": "orderStatus", "user": nobody, "oid": 1})).await;
    let body = met.and_then(|m| m.json()).expect("parses");
    assert_eq!(body["status"], "MYSTERY_VALUE", "{body}");
}

#[tokio::test]
async fn the_random_mode_damages_its_share_with_one_sequence_per_seed() {
    let c = Client::start().await;
    let off = c.admin(Method::GET, None).await;
    assert_eq!(off["config"], Value::Null);

    // Share 1: every answer damaged, each named in the log, the orders placed all the same.
    c.admin(Method::POST, Some(json!({"share": 1.0, "seed": 7, "slow_ms": 10}))).await;
    for i in 0..6 {
        c.round(i).await;
    }
    let status = c.admin(Method::GET, None).await;
    assert_eq!(status["config"]["seed"], 7);
    assert_eq!(
        (status["stats"]["seen"].as_u64(), status["stats"]["damaged"].as_u64()),
        (Some(24), Some(24))
    );
    let by_kind = status["stats"]["by_kind"].as_object().expect("per kind");
    assert_eq!(by_kind.values().filter_map(Value::as_u64).sum::<u64>(), 24);
    assert!(by_kind.len() >= 5, "the kinds are drawn from all of them: {by_kind:?}");
    let first: Vec<RequestRecord> = c.sim.sim.requests();
    assert_eq!(first.len(), 24);
    assert!(first.iter().all(|r| kind_in(r).is_some()), "every answer damaged: {first:?}");
    assert!(first.iter().filter(|r| r.path == "/api/v3/order").all(|r| r.executed));
    assert!(first.iter().any(|r| r.path == "/info"), "exchange B's answers too");
    assert_eq!(c.sim.sim.orders().len(), 6, "every order placed");

    // The same seed again: the same kinds in the same order.
    c.admin(Method::POST, Some(json!({"share": 1.0, "seed": 7, "slow_ms": 10}))).await;
    for i in 6..12 {
        c.round(i).await;
    }
    let second = c.sim.sim.requests().split_off(24);
    let kinds = |log: &[RequestRecord]| log.iter().map(kind_in).collect::<Vec<_>>();
    assert_eq!(kinds(&second), kinds(&first));

    // An armed fault wins over the random mode and is not counted by it.
    let mut fault = damage_fault(Damage::EmptyOk, 1);
    fault.path = Some("/api/v3/time".into());
    c.sim.sim.inject(fault);
    let met = c.get("/api/v3/time").await.expect("answered");
    assert!(met.body.is_empty());
    let record = c.sim.sim.requests().pop().expect("logged");
    assert_eq!(kind_in(&record).as_deref(), Some("EmptyOk"));
    assert_eq!(c.sim.sim.mutation_status().stats.seen, 24);

    // Share 0: nothing damaged; off: nothing counted.
    c.admin(Method::POST, Some(json!({"share": 0.0, "seed": 7}))).await;
    let before = c.sim.sim.requests().len();
    for i in 12..15 {
        let met = c.round(i).await;
        assert!(
            met.iter().all(|m| m.as_ref().is_some_and(|m| m.status == 200 && m.json().is_some()))
        );
    }
    assert!(c.sim.sim.requests()[before..].iter().all(|r| r.fault.is_none()));
    assert_eq!(c.sim.sim.mutation_status().stats.seen, 12);
    c.admin(Method::DELETE, None).await;
    c.round(15).await;
    let status = c.sim.sim.mutation_status();
    assert_eq!((status.config, status.stats.seen, status.stats.damaged), (None, 12, 0));
}

#[tokio::test]
async fn the_random_mode_keeps_to_its_paths_and_kinds_and_refuses_bad_settings() {
    let c = Client::start().await;
    let settings = json!({"share": 1.0, "seed": 3, "damages": ["wrong_shape"], "paths": ["/info"]});
    c.admin(Method::POST, Some(settings)).await;
    let met = c.round(0).await;
    let bodies: Vec<Option<Value>> = met.iter().map(|m| m.as_ref().and_then(Met::json)).collect();
    assert!(bodies[..3].iter().all(|b| b.as_ref().is_some_and(|b| b.is_object())), "A untouched");
    assert!(bodies[3].as_ref().is_some_and(Value::is_array), "B's object answer wrapped");
    let status = c.sim.sim.mutation_status();
    assert_eq!((status.stats.seen, status.stats.damaged), (1, 1));
    assert_eq!(status.stats.by_kind.get(&Damage::WrongShape), Some(&1));

    let url = format!("{}/sim/mutation", c.sim.base_url());
    for bad in [
        json!({"share": 2}),
        json!({"share": 0.5, "damages": []}),
        json!({"share": 0.5, "damages": ["melted"]}),
    ] {
        let r = c.http.post(&url).json(&bad).send().await.expect("send");
        assert!(r.status().is_client_error(), "{bad}: {}", r.status());
    }
    assert_eq!(c.sim.sim.mutation_status().config.map(|s| s.seed), Some(3), "unchanged");
}
