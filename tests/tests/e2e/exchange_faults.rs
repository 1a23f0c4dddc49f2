//! The clients survive every fault the simulator injects without placing an order twice:
//! each test asserts what the simulator saw (requests and orders), not only what the client
//! answered. The faults of the [`Exchange`](spotbot::exchange::Exchange) contract run on
//! exchange A's client and exchange B's client (`on_a::`, `on_b::`); where the exchanges'
//! rules differ (A sends an order again once the lookup says it is absent, B never does; A's
//! 418 ban, its OCO lists) the tests are per exchange.

use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::exchange_support::{Harness, Venue, lists, on_both, start};
use rust_decimal::Decimal;
use spotbot::exchange::{ExchangeError, NewOrder, OrderStatus, Price, Qty, Side};
use spotbot_sim::{Damage, Fault, FaultKind};

fn d(s: &str) -> Decimal {
    Decimal::from_str(s).expect("decimal")
}

fn buy(id: &str) -> NewOrder {
    NewOrder::market("BTCUSDT", Side::Buy, Qty(d("0.001")), id)
}

/// The harness with BTCUSDT at 60 000 and `fault` armed on order placement.
fn armed(h: &Harness, fault: FaultKind) {
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(h.placement_fault(fault));
}

on_both!(
    connection_dropped_after_execution_is_resolved_by_lookup_not_resent,
    server_error_after_execution_is_resolved_by_lookup,
    timeout_after_execution_is_resolved_by_lookup,
    rate_limit_429_on_an_order_is_looked_up_before_anything_is_sent_again,
    long_retry_after_is_reported_not_waited,
    rejection_is_final_and_not_retried,
    unresolvable_outcome_is_unknown_never_failed,
    every_damaged_answer_to_an_executed_order_is_the_order_or_unknown,
    a_read_that_times_out_is_an_error_after_a_few_attempts,
);

/// An ambiguous placement of `id` was resolved to the filled order: one order at the
/// simulator, sent once, looked up.
fn resolved_once(h: &Harness, o: &spotbot::exchange::Order, id: &str) {
    assert_eq!((o.status, o.client_order_id.as_str()), (OrderStatus::Filled, id));
    assert_eq!(o.executed_qty.0, d("0.001"));
    assert_eq!(h.orders_with_client_id(id), 1, "one order at the simulator");
    assert_eq!(h.placements(id).len(), 1, "sent once");
    assert!(!h.lookups_after(id).is_empty(), "looked up by client order id");
}

async fn connection_dropped_after_execution_is_resolved_by_lookup_not_resent(h: Harness) {
    armed(&h, FaultKind::DropAfterExecute);
    let o = h.ex().place_order(&buy("drop1")).await.expect("resolved by lookup");
    resolved_once(&h, &o, "drop1");
    assert!(!o.fills.is_empty(), "fills recovered from the account's trades");
    assert_eq!(h.placements("drop1")[0].status, 0, "the answer was dropped");
}

async fn server_error_after_execution_is_resolved_by_lookup(h: Harness) {
    armed(&h, FaultKind::ServerError { status: 503, execute: true });
    let o = h.ex().place_order(&buy("5xx1")).await.expect("resolved");
    resolved_once(&h, &o, "5xx1");
    let sent = &h.placements("5xx1")[0];
    assert!((sent.status, sent.executed) == (503, true), "{sent:?}");
}

async fn timeout_after_execution_is_resolved_by_lookup(h: Harness) {
    // The client gives up after 1.5 s; the simulator answers after 2.5 s.
    armed(&h, FaultKind::Delay { ms: 2500, before: false });
    let o = h.ex().place_order(&buy("slow1")).await.expect("resolved");
    resolved_once(&h, &o, "slow1");
}

/// A 429 to an order may come from a gateway that forwarded it: the outcome is unknown and
/// the order is looked up once Retry-After has passed. Exchange A sends it again when the
/// lookups say absent and the account's trades show nothing of it; exchange B never sends an
/// action again.
async fn rate_limit_429_on_an_order_is_looked_up_before_anything_is_sent_again(h: Harness) {
    armed(&h, FaultKind::RateLimit { retry_after: 1 });
    let started = Instant::now();
    let placed = h.ex().place_order(&buy("rl1")).await;
    assert!(started.elapsed() >= Duration::from_millis(950), "honours Retry-After");
    assert!(!h.lookups_after("rl1").is_empty(), "looked up by client order id");
    let posts: Vec<u16> = h.placements("rl1").iter().map(|r| r.status).collect();
    match h.venue {
        Venue::A => {
            assert_eq!(placed.expect("placed after the lookup").status, OrderStatus::Filled);
            assert_eq!(posts, vec![429, 200]);
            assert_eq!(h.orders_with_client_id("rl1"), 1);
        }
        Venue::B => {
            assert!(placed.expect_err("unknown").is_unknown_outcome());
            assert_eq!(posts, vec![429], "never sent again on exchange B");
            assert_eq!(h.orders_with_client_id("rl1"), 0);
        }
    }
}

/// A Retry-After too long to wait: the order's outcome is unknown (the lookup cannot run
/// before it ends), and every request inside the window is refused without being sent.
async fn long_retry_after_is_reported_not_waited(h: Harness) {
    armed(&h, FaultKind::RateLimit { retry_after: 30 });
    let err = h.ex().place_order(&buy("rl2")).await.expect_err("rate limited");
    assert!(err.is_unknown_outcome(), "{err:?}");
    assert!(err.to_string().contains("retry after"), "{err}");
    // The next call inside the window is refused without touching the exchange.
    let before = h.sim.sim.requests().len();
    assert!(matches!(h.ex().balances().await, Err(ExchangeError::RateLimited { .. })));
    assert_eq!(h.sim.sim.requests().len(), before);
    assert_eq!(h.orders_with_client_id("rl2"), 0);
}

/// A definite rejection (exchange A's -2010, exchange B's top-level `err`) is the answer:
/// no lookup, no second send.
async fn rejection_is_final_and_not_retried(h: Harness) {
    armed(&h, FaultKind::Reject { code: -2010, msg: None });
    let err = h.ex().place_order(&buy("rej1")).await.expect_err("rejected");
    match h.venue {
        Venue::A => assert!(matches!(err, ExchangeError::InsufficientBalance { code: -2010, .. })),
        Venue::B => assert!(matches!(err, ExchangeError::BadRequest { code: 0, .. }), "{err:?}"),
    }
    assert_eq!(h.placements("rej1").len(), 1);
    assert!(h.lookups_after("rej1").is_empty(), "a definite rejection needs no lookup");
    assert_eq!(h.orders_with_client_id("rej1"), 0);
}

async fn unresolvable_outcome_is_unknown_never_failed(h: Harness) {
    h.set_price("BTCUSDT", "60000");
    h.ex().symbol_rules("BTCUSDT").await.expect("the listing, read before the faults");
    h.sim.sim.inject(h.placement_fault(FaultKind::DropAfterExecute));
    // Every lookup fails too (on exchange B every `/info` read).
    let lookup_path = match h.venue {
        Venue::A => "/api/v3/order",
        Venue::B => "/info",
    };
    h.sim.sim.inject(Fault {
        kind: FaultKind::ServerError { status: 502, execute: false },
        count: 100,
        path: Some(lookup_path.into()),
        method: (h.venue == Venue::A).then(|| "GET".into()),
        skip: 0,
    });
    // A resting LIMIT: nothing else is read before it is sent.
    let o = NewOrder::limit("BTCUSDT", Side::Buy, Qty(d("0.001")), Price(d("55000")), "unk1");
    let err = h.ex().place_order(&o).await.expect_err("cannot tell");
    assert!(err.is_unknown_outcome(), "{err:?}");
    assert_eq!(h.orders_with_client_id("unk1"), 1, "the order exists once on the exchange");
    assert_eq!(h.placements("unk1").len(), 1, "and was not sent again");
}

/// Each kind of answer damaged after the exchange executed the order (the simulator's
/// `damage` fault; docs/execution.md, "A misbehaving exchange"): the client answers the order
/// it finds by lookup, or an unknown outcome — never a rejection, never "absent" — and the
/// order exists once at the exchange, sent once.
async fn every_damaged_answer_to_an_executed_order_is_the_order_or_unknown(h: Harness) {
    h.set_price("BTCUSDT", "60000");
    for (i, damage) in Damage::ALL.iter().enumerate() {
        let id = format!("dmg{i}");
        let kind = FaultKind::Damage { damage: *damage, seed: 5, ms: None, retry_after: None };
        h.sim.sim.inject(h.placement_fault(kind));
        match h.ex().place_order(&buy(&id)).await {
            Ok(o) => {
                assert_eq!(
                    (o.status, o.client_order_id.as_str()),
                    (OrderStatus::Filled, id.as_str()),
                    "{damage:?}"
                );
                assert_eq!(o.executed_qty.0, d("0.001"), "{damage:?}");
            }
            Err(e) => assert!(e.is_unknown_outcome(), "{damage:?}: {e:?}"),
        }
        assert_eq!(h.orders_with_client_id(&id), 1, "{damage:?}: one order at the exchange");
        assert_eq!(h.placements(&id).len(), 1, "{damage:?}: sent once");
        if *damage == Damage::Banned {
            // The client keeps the 418's ban (2 s) and sends nothing meanwhile.
            tokio::time::sleep(Duration::from_millis(2100)).await;
        }
    }
}

/// A read that gets no answer in time is an error after at most three attempts (reads are
/// retried, never in a storm), and the next read goes out as usual.
async fn a_read_that_times_out_is_an_error_after_a_few_attempts(h: Harness) {
    h.ex().balances().await.expect("balances (and exchange A's time sync)");
    h.sim.sim.inject(h.read_fault(FaultKind::Delay { ms: 2500, before: false }, 10));
    let started = Instant::now();
    let err = h.ex().balances().await.expect_err("no answer in time");
    assert!(
        err.is_unknown_outcome() || matches!(err, ExchangeError::Unreachable { .. }),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(7), "gave up: {:?}", started.elapsed());
    let log = h.sim.sim.requests();
    let attempts = log.iter().filter(|r| r.path == h.balance_path() && r.fault.is_some()).count();
    assert!((1..=3).contains(&attempts), "{attempts} attempts");
    h.sim.sim.clear_faults();
    h.ex().balances().await.expect("answered again");
}

// ------------------------------------------------------------------------------------------
// Per exchange.

#[tokio::test]
async fn server_error_without_execution_is_sent_again_only_after_the_lookup_says_absent() {
    let h = start(Venue::A).await;
    armed(&h, FaultKind::ServerError { status: 500, execute: false });
    let o = h.ex().place_order(&buy("5xx2")).await.expect("placed on the second send");
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
async fn exchange_b_never_sends_an_order_again_after_a_server_error() {
    let h = start(Venue::B).await;
    armed(&h, FaultKind::ServerError { status: 500, execute: false });
    let err = h.ex().place_order(&buy("5xx3")).await.expect_err("absent, but maybe not yet");
    assert!(err.is_unknown_outcome(), "{err:?}");
    assert!(err.to_string().contains("not resolved by its cloid"), "{err}");
    assert_eq!(h.placements("5xx3").len(), 1, "sent once, never again");
    assert_eq!(h.orders_with_client_id("5xx3"), 0);
    assert!(h.lookups_after("5xx3").len() >= 2, "looked up by cloid");
}

#[tokio::test]
async fn ban_418_stops_every_request_until_it_ends() {
    let h = start(Venue::A).await;
    armed(&h, FaultKind::Ban { retry_after: 120 });
    let err = h.ex().place_order(&buy("ban1")).await.expect_err("banned");
    // A 418 to an order may come from a gateway that forwarded it: unknown, not refused.
    assert!(err.is_unknown_outcome(), "{err:?}");
    let before = h.sim.sim.requests().len();
    assert!(matches!(h.ex().price("BTCUSDT").await, Err(ExchangeError::Banned { .. })));
    assert!(matches!(h.ex().place_order(&buy("ban2")).await, Err(ExchangeError::Banned { .. })));
    assert_eq!(h.sim.sim.requests().len(), before, "nothing sent while banned");
    assert_eq!(h.sim.sim.orders().len(), 0);
}

#[tokio::test]
async fn oco_outcome_lost_with_the_connection_is_found_by_list_client_id() {
    let h = start(Venue::A).await;
    h.set_price("ETHUSDT", "3000");
    h.ex()
        .place_order(&NewOrder::market("ETHUSDT", Side::Buy, Qty(d("1")), "e1"))
        .await
        .expect("buy");
    h.sim.sim.inject(Fault {
        path: Some("/api/v3/orderList/oco".into()),
        ..Fault::new(FaultKind::DropAfterExecute)
    });
    let oco = crate::exchange_support::eth_bracket("oco_drop");
    let list = lists(h.ex()).place_oco(&oco).await.expect("found by lookup");
    assert!(list.executing);
    assert_eq!(list.orders.len(), 2, "legs fetched");
    assert_eq!(h.seen("POST", "/api/v3/orderList/oco").len(), 1);
    assert_eq!(h.sim.sim.requests().iter().filter(|r| r.path == "/api/v3/orderList").count(), 1);
    assert_eq!(lists(h.ex()).open_order_lists().await.expect("open").len(), 1);
}
