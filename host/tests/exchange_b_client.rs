//! Exchange B's client against the simulator over loopback HTTP: the listing and rules,
//! prices, paged klines, balances, a MARKET buy as the IOC the simulator received, a resting
//! take-profit cancelled by client id, an ambiguous answer (5xx after execution) resolved by
//! lookup without a second order, and a wrong key refused as a bad signature.

use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde_json::Value;
use spotbot::clock::{SharedClock, SystemClock, TestClock};
use spotbot::exchange::exchange_b::cloid::cloid_of;
use spotbot::exchange::exchange_b::{ClientConfig, ExchangeBClient};
use spotbot::exchange::{
    Exchange, ExchangeError, NewOrder, OrderRef, OrderStatus, Price, Protection, Qty, Side,
};
use spotbot::metrics::Metrics;
use spotbot_exchange_b_protocol::{Network, PrivateKey};
use spotbot_sim::{ExchangeBConfig, Fault, FaultKind, ManualClock, RunningSim, SimConfig, serve};

const KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";
const OTHER_KEY: &str = "0x1111111111111111111111111111111111111111111111111111111111111111";

/// A simulator whose default account (100 000 USDT, i.e. USDC on exchange B) belongs to
/// [`KEY`]'s address, BTC at 65 000 (bid 65000, ask 65000.01), and a client signing with `key`
/// for that account.
async fn start(key: &str) -> (RunningSim, ExchangeBClient) {
    let sim = start_sim(|_| {}).await;
    let client = client_for(&sim, key, |_| {});
    (sim, client)
}

/// The simulator of [`start`], exchange B's front end set up by `edit`.
async fn start_sim(edit: fn(&mut ExchangeBConfig)) -> RunningSim {
    let owner = PrivateKey::from_hex(KEY).expect("key");
    let mut config = SimConfig::new(42, "test-key", "test-secret");
    config.clock = Arc::new(ManualClock::starting_now());
    config.exchange_b = ExchangeBConfig::owned_by(owner.address());
    edit(&mut config.exchange_b);
    config.initial_funds = vec![("USDT".into(), 100_000.into())];
    let sim = serve(config, "127.0.0.1:0").await.expect("bind");
    sim.sim.set_price("BTCUSDT", 65_000.into()).expect("price");
    sim
}

/// A client of `sim` signing with `key` for the default account, its config changed by `tweak`.
fn client_for(
    sim: &RunningSim,
    key: &str,
    tweak: impl FnOnce(&mut ClientConfig),
) -> ExchangeBClient {
    let owner = PrivateKey::from_hex(KEY).expect("key");
    let mut cc = ClientConfig::new(sim.base_url(), Network::Testnet);
    cc.lookup_delay = Duration::from_millis(20);
    tweak(&mut cc);
    let key = PrivateKey::from_hex(key).expect("key");
    let clock = Arc::new(SystemClock);
    ExchangeBClient::new(cc, Some(key), Some(owner.address()), clock, Metrics::default())
        .expect("client")
}

/// As [`client_for`] on `clock`, waiting out nothing by itself.
fn impatient_client_on(sim: &RunningSim, clock: SharedClock) -> ExchangeBClient {
    let owner = PrivateKey::from_hex(KEY).expect("key");
    let mut cc = ClientConfig::new(sim.base_url(), Network::Testnet);
    cc.max_auto_wait = Duration::ZERO;
    let key = PrivateKey::from_hex(KEY).expect("key");
    ExchangeBClient::new(cc, Some(key), Some(owner.address()), clock, Metrics::default())
        .expect("client")
}

/// The order the simulator holds for client order id `id`, as `orderStatus` shows it.
fn sim_order(sim: &RunningSim, id: &str) -> Value {
    let cloid = cloid_of(id).to_string();
    let orders = sim.sim.exchange_b_orders();
    orders
        .into_iter()
        .find(|o| o["order"]["cloid"] == cloid.as_str())
        .unwrap_or_else(|| panic!("the simulator has no order with cloid {cloid}"))
}

fn sent_with(sim: &RunningSim, id: &str) -> usize {
    let cloid = cloid_of(id).to_string();
    let log = sim.sim.requests();
    log.iter()
        .filter(|r| r.path == "/exchange" && r.kind.as_deref() == Some("order"))
        .filter(|r| r.client_order_id.as_deref() == Some(&cloid))
        .count()
}

#[tokio::test]
async fn reads_rules_prices_klines_and_balances() {
    let (_sim, b) = start(KEY).await;
    assert_eq!(
        (b.name(), b.protection()),
        (spotbot::config::ExchangeName::ExchangeB, Protection::Watched)
    );
    let rules = b.symbol_rules("BTCUSDT").await.expect("rules");
    assert_eq!((rules.base_asset.as_str(), rules.quote_asset.as_str()), ("BTC", "USDC"));
    assert_eq!(
        (rules.step_size, rules.tick_size, rules.price_sig_figs),
        (dec!(0.00001), dec!(0.001), 5)
    );
    assert!(matches!(b.symbol_rules("NOPEUSDT").await, Err(ExchangeError::InvalidSymbol { .. })));

    assert_eq!(b.price("BTCUSDT").await.expect("price").0, dec!(65000.005));
    let prices = b.prices().await.expect("prices");
    assert!(prices.iter().any(|(s, _)| s == "ETHUSDT"), "{prices:?}");

    let klines = b.klines("BTCUSDT", "1h", 600, None).await.expect("klines");
    assert_eq!(klines.len(), 600, "two pages of at most 500");
    assert!(klines.windows(2).all(|w| w[1].open_time == w[0].open_time + 3_600_000));
    let end = klines[299].open_time;
    let older = b.klines("BTCUSDT", "1h", 10, Some(end)).await.expect("older");
    assert_eq!(older.last().map(|k| k.open_time), Some(end));

    let balances = b.balances().await.expect("balances");
    let usdc = balances.iter().find(|x| x.asset == "USDC").expect("USDC");
    assert_eq!((usdc.free, usdc.locked), (dec!(100000), Decimal::ZERO));
    let used = b.budget_use().expect("budget").weight_used;
    assert!(used >= 20 + 2 + 2 + 20 * 3 + 2, "weights counted: {used}");
}

#[tokio::test]
async fn a_market_buy_then_a_take_profit_resting_and_cancelled_by_client_id() {
    let (sim, b) = start(KEY).await;
    let buy = NewOrder::market("BTCUSDT", Side::Buy, Qty(dec!(0.01)), "TE_k1_BTCUSDT");
    let filled = b.place_order(&buy).await.expect("buy");
    assert_eq!((filled.status, filled.executed_qty.0), (OrderStatus::Filled, dec!(0.01)));
    assert_eq!(filled.client_order_id, "TE_k1_BTCUSDT");
    let seen = sim_order(&sim, "TE_k1_BTCUSDT");
    // mid 65000.005 × 1.05 = 68250.00525, five significant figures.
    assert_eq!(seen["order"]["limitPx"], "68250", "{seen}");
    assert_eq!(seen["order"]["origSz"], "0.01");
    assert_eq!(seen["order"]["tif"], "Ioc");
    let trades = b.my_trades("BTCUSDT", Some(filled.order_id)).await.expect("trades");
    assert!(!trades.is_empty() && trades.iter().all(|t| t.is_buyer && t.commission_asset == "BTC"));
    let looked_up = b.order("BTCUSDT", &OrderRef::Id(filled.order_id)).await.expect("lookup");
    assert_eq!(
        (looked_up.status, looked_up.client_order_id.as_str()),
        (OrderStatus::Filled, "TE_k1_BTCUSDT")
    );
    assert!(looked_up.cumulative_quote_qty > dec!(650));

    let tp = NewOrder::limit(
        "BTCUSDT",
        Side::Sell,
        Qty(dec!(0.005)),
        Price(dec!(70000)),
        "SO_k1_BTCUSDT",
    );
    let resting = b.place_order(&tp).await.expect("take-profit");
    assert_eq!(resting.status, OrderStatus::New);
    assert_eq!(sim_order(&sim, "SO_k1_BTCUSDT")["order"]["tif"], "Gtc");
    let open = b.open_orders(Some("BTCUSDT")).await.expect("open");
    assert_eq!(
        open.iter().map(|o| o.client_order_id.as_str()).collect::<Vec<_>>(),
        ["SO_k1_BTCUSDT"]
    );
    let btc =
        b.balances().await.expect("balances").into_iter().find(|x| x.asset == "BTC").expect("BTC");
    assert_eq!(btc.locked, dec!(0.005));

    let cancelled =
        b.cancel_order("BTCUSDT", &OrderRef::Client("SO_k1_BTCUSDT".into())).await.expect("cancel");
    assert_eq!((cancelled.status, cancelled.order_id), (OrderStatus::Canceled, resting.order_id));
    let again = b.cancel_order("BTCUSDT", &OrderRef::Client("SO_k1_BTCUSDT".into())).await;
    assert!(matches!(again, Err(ExchangeError::UnknownOrder { .. })), "{again:?}");
    assert!(b.open_orders(None).await.expect("open").is_empty());
    let recent = b.all_orders("BTCUSDT", 10).await.expect("recent");
    assert!(recent.iter().any(|o| o.client_order_id == "TE_k1_BTCUSDT"), "{recent:?}");
}

#[tokio::test]
async fn an_answer_lost_after_execution_is_resolved_by_lookup_without_a_second_order() {
    let (sim, b) = start(KEY).await;
    let mut fault = Fault::new(FaultKind::ServerError { status: 502, execute: true });
    fault.path = Some("/exchange".into());
    sim.sim.inject(fault);
    let buy = NewOrder::market("BTCUSDT", Side::Buy, Qty(dec!(0.002)), "SE_k2_BTCUSDT");
    let found = b.place_order(&buy).await.expect("resolved by lookup");
    assert_eq!((found.status, found.executed_qty.0), (OrderStatus::Filled, dec!(0.002)));
    assert_eq!(found.client_order_id, "SE_k2_BTCUSDT");
    assert_eq!(sent_with(&sim, "SE_k2_BTCUSDT"), 1, "sent once, never again");
    let log = sim.sim.requests();
    assert!(log.iter().any(|r| r.path == "/exchange" && r.status == 502 && r.executed));

    let mut fault = Fault::new(FaultKind::DropAfterExecute);
    fault.path = Some("/exchange".into());
    sim.sim.inject(fault);
    // A LIMIT buy below the market rests (the fee left less than 0.002 BTC to sell).
    let entry = NewOrder::limit(
        "BTCUSDT",
        Side::Buy,
        Qty(dec!(0.002)),
        Price(dec!(60000)),
        "MT_k2_BTCUSDT",
    );
    let resting = b.place_order(&entry).await.expect("resolved after the dropped connection");
    assert_eq!(
        (resting.status, resting.client_order_id.as_str()),
        (OrderStatus::New, "MT_k2_BTCUSDT")
    );
    assert_eq!(resting.price.0, dec!(60000));
    assert_eq!(sent_with(&sim, "MT_k2_BTCUSDT"), 1, "sent once, never again");
}

#[tokio::test]
async fn a_signature_from_a_wrong_key_is_refused_as_invalid() {
    let (sim, b) = start(OTHER_KEY).await;
    let buy = NewOrder::market("BTCUSDT", Side::Buy, Qty(dec!(0.002)), "SE_k3_BTCUSDT");
    let err = b.place_order(&buy).await.expect_err("unknown signer");
    assert!(matches!(err, ExchangeError::InvalidSignature { .. }), "{err:?}");
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert!(!err.to_string().contains(&OTHER_KEY[2..]), "no key in errors");
    assert!(sim.sim.exchange_b_orders().is_empty());
}

#[tokio::test]
async fn a_429_is_waited_out_when_short_and_answered_as_rate_limited_when_not() {
    let (sim, b) = start(KEY).await;
    let mut fault = Fault::new(FaultKind::RateLimit { retry_after: 1 });
    fault.path = Some("/info".into());
    sim.sim.inject(fault.clone());
    assert_eq!(b.price("BTCUSDT").await.expect("after the wait").0, dec!(65000.005));
    let statuses: Vec<u16> =
        sim.sim.requests().iter().filter(|r| r.path == "/info").map(|r| r.status).collect();
    assert!(statuses[0] == 429 && statuses[1..].iter().all(|s| *s == 200), "{statuses:?}");

    let impatient = client_for(&sim, KEY, |c| c.max_auto_wait = Duration::ZERO);
    sim.sim.inject(fault);
    let err = impatient.price("BTCUSDT").await.expect_err("not waited");
    assert_eq!(err, ExchangeError::RateLimited { retry_after: Duration::from_secs(1) });
    let again = impatient.price("BTCUSDT").await.expect_err("still inside Retry-After");
    assert!(matches!(again, ExchangeError::RateLimited { .. }), "{again:?}");
}

/// Past the account's address budget (wire reference §3.1) an order is refused with the
/// exchange's text: the client answers RateLimited for the exchange's 10 s, holds further
/// orders unsent until then (a refusal spends the budget too), and still cancels.
#[tokio::test]
async fn a_spent_address_budget_holds_orders_for_10_s_and_lets_cancels_through() {
    // A budget of 3 (the exchange's is 10 000): cancels may go to twice that.
    let sim = start_sim(|c| c.initial_requests = 3).await;
    let clock = TestClock::new(chrono::Utc::now());
    let b = impatient_client_on(&sim, Arc::new(clock.clone()));
    let resting = |i: u32| {
        let price = Price(Decimal::from(60_000 - i));
        NewOrder::limit("BTCUSDT", Side::Buy, Qty(dec!(0.001)), price, &format!("MT_b{i}_BTCUSDT"))
    };
    for i in 0..4 {
        b.place_order(&resting(i)).await.expect("inside the budget, then the first past it");
    }
    let refused = b.place_order(&resting(4)).await.expect_err("past the budget");
    assert_eq!(refused, ExchangeError::RateLimited { retry_after: Duration::from_secs(10) });
    let actions = || sim.sim.requests().iter().filter(|r| r.path == "/exchange").count();
    let sent = actions();
    let held = b.place_order(&resting(5)).await.expect_err("held");
    assert!(matches!(held, ExchangeError::RateLimited { .. }), "{held:?}");
    assert_eq!(actions(), sent, "held here, not sent to be refused");

    let first = OrderRef::Client("MT_b0_BTCUSDT".into());
    b.cancel_order("BTCUSDT", &first).await.expect("cancels are not held");
    assert_eq!(actions(), sent + 1);

    clock.advance(chrono::Duration::seconds(10));
    sim.sim.advance(10_000);
    let placed = b.place_order(&resting(6)).await.expect("10 s later the exchange takes one");
    assert_eq!(placed.status, OrderStatus::New);
}
