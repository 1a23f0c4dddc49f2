//! The client survives every fault the simulator injects without placing an order twice:
//! each test asserts what the simulator saw (requests and orders), not only what the client
//! answered.

use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::exchange_support::start;
use rust_decimal::Decimal;
use spotbot::exchange::{Exchange, ExchangeError, NewOrder, OrderStatus, Qty, Side};
use spotbot_sim::{Fault, FaultKind};

fn d(s: &str) -> Decimal {
    Decimal::from_str(s).expect("decimal")
}

fn buy(id: &str) -> NewOrder {
    NewOrder::market("BTCUSDT", Side::Buy, Qty(d("0.001")), id)
}

#[tokio::test]
async fn connection_dropped_after_execution_is_resolved_by_lookup_not_resent() {
    let h = start().await;
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(Fault::new(FaultKind::DropAfterExecute));
    let o = h.client.place_order(&buy("drop1")).await.expect("resolved by lookup");
    assert_eq!(o.status, OrderStatus::Filled);
    assert_eq!(o.client_order_id, "drop1");
    assert!(!o.fills.is_empty(), "fills recovered from myTrades");
    assert_eq!(h.orders_with_client_id("drop1"), 1);
    assert_eq!(h.seen("POST", "/api/v3/order").len(), 1, "sent once");
    assert!(!h.seen("GET", "/api/v3/order").is_empty(), "looked up by client order id");
}

#[tokio::test]
async fn server_error_after_execution_is_resolved_by_lookup() {
    let h = start().await;
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(Fault::new(FaultKind::ServerError { status: 503, execute: true }));
    let o = h.client.place_order(&buy("5xx1")).await.expect("resolved");
    assert_eq!(o.status, OrderStatus::Filled);
    assert_eq!(h.orders_with_client_id("5xx1"), 1);
    assert_eq!(h.seen("POST", "/api/v3/order").len(), 1);
}

#[tokio::test]
async fn server_error_without_execution_is_sent_again_only_after_the_lookup_says_absent() {
    let h = start().await;
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(Fault::new(FaultKind::ServerError { status: 500, execute: false }));
    let o = h.client.place_order(&buy("5xx2")).await.expect("placed on the second send");
    assert_eq!(o.status, OrderStatus::Filled);
    assert_eq!(h.orders_with_client_id("5xx2"), 1);
    let seen: Vec<(String, u16)> = h
        .sim
        .sim
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/v3/order")
        .map(|r| (r.method, r.status))
        .collect();
    assert_eq!(
        seen,
        vec![("POST".into(), 500), ("GET".into(), 400), ("GET".into(), 400), ("POST".into(), 200)],
        "lookup (-2013 twice) before the second send"
    );
}

#[tokio::test]
async fn timeout_after_execution_is_resolved_by_lookup() {
    let h = start().await;
    h.set_price("BTCUSDT", "60000");
    // The client gives up after 1.5 s; the simulator answers after 2.5 s.
    h.sim.sim.inject(Fault::new(FaultKind::Delay { ms: 2500, before: false }));
    let o = h.client.place_order(&buy("slow1")).await.expect("resolved");
    assert_eq!(o.status, OrderStatus::Filled);
    assert_eq!(h.orders_with_client_id("slow1"), 1);
    assert_eq!(h.seen("POST", "/api/v3/order").len(), 1);
}

#[tokio::test]
async fn rate_limit_429_is_waited_out_per_retry_after_then_sent_once() {
    let h = start().await;
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(Fault::new(FaultKind::RateLimit { retry_after: 1 }));
    let started = Instant::now();
    let o = h.client.place_order(&buy("rl1")).await.expect("placed after the wait");
    assert!(started.elapsed() >= Duration::from_millis(950), "honours Retry-After");
    assert_eq!(o.status, OrderStatus::Filled);
    let posts: Vec<u16> = h.seen("POST", "/api/v3/order").iter().map(|r| r.status).collect();
    assert_eq!(posts, vec![429, 200]);
    assert_eq!(h.orders_with_client_id("rl1"), 1);
}

#[tokio::test]
async fn long_retry_after_is_reported_not_waited() {
    let h = start().await;
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(Fault::new(FaultKind::RateLimit { retry_after: 30 }));
    let err = h.client.place_order(&buy("rl2")).await.expect_err("rate limited");
    assert!(
        matches!(err, ExchangeError::RateLimited { retry_after } if retry_after >= Duration::from_secs(29))
    );
    // The next call inside the window is refused without touching the exchange.
    let before = h.sim.sim.requests().len();
    assert!(matches!(h.client.balances().await, Err(ExchangeError::RateLimited { .. })));
    assert_eq!(h.sim.sim.requests().len(), before);
    assert_eq!(h.orders_with_client_id("rl2"), 0);
}

#[tokio::test]
async fn ban_418_stops_every_request_until_it_ends() {
    let h = start().await;
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(Fault::new(FaultKind::Ban { retry_after: 120 }));
    let err = h.client.place_order(&buy("ban1")).await.expect_err("banned");
    assert!(matches!(err, ExchangeError::Banned { .. }));
    let before = h.sim.sim.requests().len();
    assert!(matches!(h.client.price("BTCUSDT").await, Err(ExchangeError::Banned { .. })));
    assert!(matches!(h.client.place_order(&buy("ban2")).await, Err(ExchangeError::Banned { .. })));
    assert_eq!(h.sim.sim.requests().len(), before, "nothing sent while banned");
    assert_eq!(h.sim.sim.orders().len(), 0);
}

#[tokio::test]
async fn rejection_with_a_code_is_final_and_not_retried() {
    let h = start().await;
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(Fault::new(FaultKind::Reject { code: -2010, msg: None }));
    let err = h.client.place_order(&buy("rej1")).await.expect_err("rejected");
    assert!(matches!(err, ExchangeError::InsufficientBalance { code: -2010, .. }));
    assert_eq!(h.seen("POST", "/api/v3/order").len(), 1);
    assert!(h.seen("GET", "/api/v3/order").is_empty(), "a definite rejection needs no lookup");
}

#[tokio::test]
async fn unresolvable_outcome_is_unknown_never_failed() {
    let h = start().await;
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(Fault::new(FaultKind::DropAfterExecute));
    // Every lookup fails too.
    h.sim.sim.inject(Fault {
        kind: FaultKind::ServerError { status: 502, execute: false },
        count: 100,
        path: Some("/api/v3/order".into()),
        method: Some("GET".into()),
    });
    let err = h.client.place_order(&buy("unk1")).await.expect_err("cannot tell");
    assert!(err.is_unknown_outcome(), "{err:?}");
    assert_eq!(h.orders_with_client_id("unk1"), 1, "the order exists once on the exchange");
    assert_eq!(h.seen("POST", "/api/v3/order").len(), 1, "and was not sent again");
}

#[tokio::test]
async fn oco_outcome_lost_with_the_connection_is_found_by_list_client_id() {
    let h = start().await;
    h.set_price("ETHUSDT", "3000");
    h.client
        .place_order(&NewOrder::market("ETHUSDT", Side::Buy, Qty(d("1")), "e1"))
        .await
        .expect("buy");
    h.sim.sim.inject(Fault {
        path: Some("/api/v3/orderList/oco".into()),
        ..Fault::new(FaultKind::DropAfterExecute)
    });
    let oco = crate::exchange_support::eth_bracket("oco_drop");
    let list = h.client.place_oco(&oco).await.expect("found by lookup");
    assert!(list.executing);
    assert_eq!(list.orders.len(), 2, "legs fetched");
    assert_eq!(h.seen("POST", "/api/v3/orderList/oco").len(), 1);
    assert_eq!(h.sim.sim.requests().iter().filter(|r| r.path == "/api/v3/orderList").count(), 1);
    assert_eq!(h.client.open_order_lists().await.expect("open").len(), 1);
}
