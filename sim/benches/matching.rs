//! The matching core's throughput, with no wire and no socket: how many orders per second
//! `Engine` places (and cancels or fills) on one thread.
//!
//! `cargo bench -p spotbot-sim --bench matching` prints orders per second for three mixes:
//! resting limit orders placed and cancelled, market orders that take from the book, and
//! bracket lists (OCO) placed and filled by the market moving through the take-profit. The
//! numbers go to docs/benchmarks.md.

use std::time::Instant;

use rust_decimal::Decimal;
use spotbot_sim::core::{Engine, EngineConfig, Leg, OrderType, Side, Tif};
use spotbot_sim::market::Market;
use spotbot_sim::symbols::default_listing;

const T0: i64 = 1_700_000_000_000;

fn engine() -> (Engine, usize) {
    let mut e = Engine::new(default_listing(), Market::new(3), EngineConfig::default());
    let acc = e.add_account("bench", "bench");
    e.fund(acc, "USDT", Decimal::from(1_000_000_000), T0);
    e.fund(acc, "ETH", Decimal::from(1_000_000), T0);
    e.market.set_price("ETHUSDT", T0, Decimal::from(3000));
    (e, acc)
}

fn leg(order_type: OrderType, side: Side, price: Option<i64>, stop: Option<i64>) -> Leg {
    Leg {
        order_type,
        side,
        qty: Decimal::ONE,
        price: price.map(Decimal::from),
        stop: stop.map(Decimal::from),
        tif: Tif::Gtc,
        client_id: None,
    }
}

/// Runs `n` rounds of `round` (which sends `orders_per_round` orders) and prints the rate.
fn measure(name: &str, n: usize, orders_per_round: usize, mut round: impl FnMut(usize)) {
    let start = Instant::now();
    for i in 0..n {
        round(i);
    }
    let secs = start.elapsed().as_secs_f64();
    let orders = n * orders_per_round;
    println!("{name}: {orders} orders in {secs:.3} s = {:.0} orders/s", orders as f64 / secs);
}

fn main() {
    let n: usize =
        std::env::var("BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);

    let (mut e, acc) = engine();
    measure("limit placed and cancelled", n, 1, |i| {
        let t = T0 + i as i64;
        let placed =
            e.place_order(acc, "ETHUSDT", leg(OrderType::Limit, Side::Buy, Some(2900), None), t);
        let id = placed.expect("placed").order_id;
        e.cancel_order(id, "bench-cancel".into(), t).expect("cancelled");
    });

    let (mut e, acc) = engine();
    measure("market buy taking the book", n, 1, |i| {
        let t = T0 + i as i64;
        e.place_order(acc, "ETHUSDT", leg(OrderType::Market, Side::Buy, None, None), t)
            .expect("filled");
    });

    let (mut e, acc) = engine();
    let rounds = n / 4;
    measure("OCO placed, filled by the market (2 legs)", rounds, 2, |i| {
        let t = T0 + 2 * i as i64 * 60_000;
        e.market.set_price("ETHUSDT", t, Decimal::from(3000));
        let tp = leg(OrderType::LimitMaker, Side::Sell, Some(3300), None);
        let sl = leg(OrderType::StopLossLimit, Side::Sell, Some(2690), Some(2700));
        e.place_oco(acc, "ETHUSDT", [tp, sl], None, t).expect("placed");
        e.market.set_price("ETHUSDT", t + 60_000, Decimal::from(3310));
        e.catch_up(t + 60_000);
    });
    println!("events logged: {}", e.event_count());
}
