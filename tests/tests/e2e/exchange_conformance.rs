//! Conformance of the exchange A client and the simulator: every endpoint the service uses,
//! the fields it reads, and the error paths it relies on (including -2010 when selling coin an
//! OCO holds). The scenarios also run on `CoreExchange`, the backtest's in-process exchange on
//! the simulator's matching core, which must answer as the client over HTTP does. The shared scenarios also run against the real testnet when EXCHANGE_API_KEY,
//! EXCHANGE_API_SECRET and EXCHANGE_TESTNET=1 are set; otherwise that test is skipped.

use std::str::FromStr;

use crate::exchange_support::{Harness, start, start_with, testnet_client};
use rust_decimal::Decimal;
use spotbot::exchange::exchange_a::{ClientConfig, ExchangeAClient, Signer};
use spotbot::exchange::{
    Exchange, ExchangeError, NewOco, NewOrder, OrderRef, OrderStatus, OrderType, Price, Qty, Side,
};

fn d(s: &str) -> Decimal {
    Decimal::from_str(s).expect("decimal")
}

fn unique(prefix: &str) -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    format!("{prefix}{}", n % 10_000_000_000)
}

// ------------------------------------------------------------------------------------------
// Scenarios shared by the simulator and the real testnet.

async fn market_data(ex: &dyn Exchange, symbol: &str) {
    let t = ex.server_time().await.expect("server time");
    let now = chrono::Utc::now().timestamp_millis();
    assert!((t - now).abs() < 60_000, "server time {t} vs {now}");

    let rules = ex.symbol_rules(symbol).await.expect("rules");
    assert_eq!(rules.symbol, symbol);
    assert!(rules.trading && rules.oco_allowed);
    assert!(rules.tick_size > Decimal::ZERO && rules.step_size > Decimal::ZERO);
    assert!(rules.min_notional > Decimal::ZERO);
    assert!(!rules.base_asset.is_empty() && !rules.quote_asset.is_empty());
    assert!(matches!(
        ex.symbol_rules("NOPEXYZ").await,
        Err(ExchangeError::InvalidSymbol { code: -1121, .. })
    ));

    for interval in ["15m", "30m", "1h", "4h", "1d", "1w"] {
        let k = ex.klines(symbol, interval, 10, None).await.expect("klines");
        assert_eq!(k.len(), 10, "{interval}");
        for w in k.windows(2) {
            assert!(w[0].open_time < w[1].open_time, "{interval} ascending");
            assert_eq!(w[0].close_time + 1, w[1].open_time, "{interval} contiguous");
        }
        for c in &k {
            assert!(
                c.high >= c.low && c.high >= c.open && c.high >= c.close && c.low.0 > Decimal::ZERO
            );
        }
    }
    let end =
        ex.klines(symbol, "1h", 5, Some(now - 86_400_000)).await.expect("klines with endTime");
    assert!(end.last().is_some_and(|c| c.open_time <= now - 86_400_000));
    assert!(matches!(
        ex.klines("NOPEXYZ", "1h", 5, None).await,
        Err(ExchangeError::InvalidSymbol { code: -1121, .. })
    ));
    assert!(matches!(
        ex.klines(symbol, "2h5", 5, None).await,
        Err(ExchangeError::BadRequest { code: -1120, .. })
    ));

    let one = ex.tickers_24h(&[symbol.to_string()]).await.expect("ticker");
    assert_eq!(one.len(), 1);
    assert!(one[0].last_price.0 > Decimal::ZERO && one[0].quote_volume >= Decimal::ZERO);
    let two = ex.tickers_24h(&[symbol.to_string(), "ETHUSDT".to_string()]).await.expect("tickers");
    assert_eq!(two.len(), 2);
    let all = ex.tickers_24h(&[]).await.expect("all tickers");
    assert!(all.len() >= 2);
    let prices = ex.prices().await.expect("prices");
    assert!(prices.iter().any(|(s, p)| s == symbol && p.0 > Decimal::ZERO));
    assert!(ex.price(symbol).await.expect("price").0 > Decimal::ZERO);
}

/// MARKET entry, OCO bracket, -2010 on selling locked coin, cancel, then the market exit.
async fn bracket_round_trip(ex: &dyn Exchange, symbol: &str) {
    let rules = ex.symbol_rules(symbol).await.expect("rules");
    let price = ex.price(symbol).await.expect("price").0;
    let qty = rules.floor_qty((rules.min_notional * d("3")) / price).0.max(rules.min_qty);
    let buy_id = unique("cf_buy_");
    let buy = ex
        .place_order(&NewOrder::market(symbol, Side::Buy, Qty(qty), &buy_id))
        .await
        .expect("market buy");
    assert_eq!(buy.status, OrderStatus::Filled);
    assert_eq!(buy.client_order_id, buy_id);
    assert_eq!(buy.order_type, OrderType::Market);
    assert_eq!(buy.executed_qty.0, qty);
    assert_eq!(buy.order_list_id, None);
    assert!(!buy.fills.is_empty());
    assert!(buy.avg_price().is_some_and(|p| p.0 > Decimal::ZERO));
    assert_eq!(buy.fills.iter().map(|f| f.qty.0).sum::<Decimal>(), qty);

    let net = rules.floor_qty(buy.executed_qty.0 - buy.commission_in(&rules.base_asset));
    let stop = rules.floor_price(price * d("0.95"));
    let oco = NewOco {
        symbol: symbol.into(),
        side: Side::Sell,
        qty: net,
        take_profit: rules.ceil_price(price * d("1.05")),
        stop_price: stop,
        stop_limit_price: rules.floor_price(stop.0 * d("0.998")),
        list_client_order_id: unique("cf_oco_"),
        take_profit_client_order_id: None,
        stop_client_order_id: None,
    };
    let list = ex.place_oco(&oco).await.expect("oco");
    assert!(list.executing);
    assert_eq!(list.list_client_order_id, oco.list_client_order_id);
    assert_eq!(list.legs.len(), 2);
    assert_eq!(list.orders.len(), 2);
    let tp = list.orders.iter().find(|o| o.order_type == OrderType::LimitMaker).expect("tp leg");
    let sl = list.orders.iter().find(|o| o.order_type == OrderType::StopLossLimit).expect("sl leg");
    assert_eq!(tp.price, oco.take_profit);
    assert_eq!(sl.stop_price, Some(oco.stop_price));
    assert_eq!(sl.price, oco.stop_limit_price);
    assert!(!sl.working, "untriggered stop is not working");
    assert!(
        list.orders
            .iter()
            .all(|o| o.order_list_id == Some(list.order_list_id) && o.orig_qty == net)
    );

    let base = rules.base_asset.clone();
    let balances = ex.balances().await.expect("balances");
    let b = balances.iter().find(|b| b.asset == base).expect("base balance");
    assert!(b.locked >= net.0, "OCO locks the coin: {b:?}");

    // The spec's -2010: a MARKET SELL while the OCO holds the coin.
    let err = ex
        .place_order(&NewOrder::market(symbol, Side::Sell, net, &unique("cf_sell_")))
        .await
        .expect_err("sell of locked coin must fail");
    assert!(
        matches!(&err, ExchangeError::InsufficientBalance { code: -2010, msg } if msg == "Account has insufficient balance for requested action."),
        "{err:?}"
    );

    let open = ex.open_order_lists().await.expect("open lists");
    assert!(open.iter().any(|l| l.order_list_id == list.order_list_id && l.legs.len() == 2));
    let by_id = ex.order_list(&OrderRef::Id(list.order_list_id)).await.expect("list by id");
    assert_eq!(by_id.list_client_order_id, oco.list_client_order_id);
    let by_client = ex
        .order_list(&OrderRef::Client(oco.list_client_order_id.clone()))
        .await
        .expect("list by client id");
    assert_eq!(by_client.order_list_id, list.order_list_id);
    let leg = ex.order(symbol, &OrderRef::Id(sl.order_id)).await.expect("leg");
    assert_eq!(leg.order_list_id, Some(list.order_list_id));
    let open_orders = ex.open_orders(Some(symbol)).await.expect("open orders");
    assert!(
        open_orders.iter().filter(|o| o.order_list_id == Some(list.order_list_id)).count() == 2
    );

    let cancelled =
        ex.cancel_order_list(symbol, &OrderRef::Id(list.order_list_id)).await.expect("cancel list");
    assert!(!cancelled.executing);
    assert!(cancelled.orders.iter().all(|o| o.status == OrderStatus::Canceled));
    assert!(matches!(
        ex.cancel_order_list(symbol, &OrderRef::Id(list.order_list_id)).await,
        Err(ExchangeError::UnknownOrder { code: -2011, .. })
    ));
    let b = ex.balances().await.expect("balances");
    let free = b.iter().find(|b| b.asset == base).map_or(Decimal::ZERO, |b| b.free);
    assert!(free >= net.0);
    let exit = ex
        .place_order(&NewOrder::market(symbol, Side::Sell, net, &unique("cf_exit_")))
        .await
        .expect("market exit after cancel");
    assert_eq!(exit.status, OrderStatus::Filled);

    let history = ex.all_orders(symbol, 50).await.expect("all orders");
    assert!(history.iter().any(|o| o.client_order_id == buy_id && o.status == OrderStatus::Filled));
    assert!(
        history
            .iter()
            .any(|o| o.order_list_id == Some(list.order_list_id)
                && o.status == OrderStatus::Canceled)
    );
    let trades = ex.my_trades(symbol, Some(buy.order_id)).await.expect("trades");
    assert!(!trades.is_empty() && trades.iter().all(|t| t.is_buyer && t.order_id == buy.order_id));
}

/// LIMIT GTC manual entry: place with an MT_ id, query by client id, list open, cancel.
async fn limit_lifecycle(ex: &dyn Exchange, symbol: &str) {
    let rules = ex.symbol_rules(symbol).await.expect("rules");
    let price = ex.price(symbol).await.expect("price").0;
    let px = rules.floor_price(price * d("0.9"));
    let qty = rules.floor_qty(rules.min_notional * d("3") / px.0);
    let id = unique("MT_");
    let o = ex.place_order(&NewOrder::limit(symbol, Side::Buy, qty, px, &id)).await.expect("limit");
    assert_eq!(o.status, OrderStatus::New);
    assert_eq!(o.price, px);
    let q = ex.order(symbol, &OrderRef::Client(id.clone())).await.expect("query by client id");
    assert_eq!((q.order_id, q.status, q.orig_qty), (o.order_id, OrderStatus::New, qty));
    assert!(q.working && q.time > 0);
    assert!(ex.open_orders(None).await.expect("open").iter().any(|x| x.order_id == o.order_id));
    let c = ex.cancel_order(symbol, &OrderRef::Client(id.clone())).await.expect("cancel");
    assert_eq!(c.status, OrderStatus::Canceled);
    assert_eq!(c.client_order_id, id);
    assert!(matches!(
        ex.cancel_order(symbol, &OrderRef::Id(o.order_id)).await,
        Err(ExchangeError::UnknownOrder { code: -2011, .. })
    ));
    assert!(matches!(
        ex.order(symbol, &OrderRef::Client(unique("none_"))).await,
        Err(ExchangeError::UnknownOrder { code: -2013, .. })
    ));
    // An order that cannot satisfy the filters is refused before sending.
    let tiny =
        NewOrder::limit(symbol, Side::Buy, rules.floor_qty(rules.min_qty), px, &unique("cf_tiny_"));
    assert!(matches!(ex.place_order(&tiny).await, Err(ExchangeError::Refused { .. })));
}

// ------------------------------------------------------------------------------------------
// Against the simulator.

#[tokio::test]
async fn market_data_endpoints_against_the_simulator() {
    let h = start().await;
    market_data(h.client.as_ref(), "BTCUSDT").await;
}

#[tokio::test]
async fn bracket_round_trip_against_the_simulator() {
    let h = start().await;
    h.set_price("BTCUSDT", "64000");
    bracket_round_trip(h.client.as_ref(), "BTCUSDT").await;
    // What the simulator saw: one order per client id, the refused sell reached it as -2010.
    let posts = h.seen("POST", "/api/v3/order");
    assert_eq!(posts.iter().filter(|r| r.status == 400).count(), 1);
    assert_eq!(h.seen("POST", "/api/v3/orderList/oco").len(), 1);
}

#[tokio::test]
async fn the_shared_scenarios_on_the_core() {
    let h = start().await;
    let core = h.core();
    market_data(&core, "BTCUSDT").await;
    h.set_price("BTCUSDT", "64000");
    bracket_round_trip(&core, "BTCUSDT").await;
    h.set_price("ETHUSDT", "3000");
    limit_lifecycle(&core, "ETHUSDT").await;
    assert!(h.sim.sim.requests().is_empty(), "no request went over HTTP");
    // What the core received: one order per client id, the refused sell and the tiny order
    // never became orders.
    let orders = h.sim.sim.orders();
    assert!(orders.iter().all(|o| {
        !o["clientOrderId"]
            .as_str()
            .is_some_and(|c| c.starts_with("cf_sell_") || c.starts_with("cf_tiny_"))
    }));
    assert_eq!(
        orders
            .iter()
            .filter(|o| o["clientOrderId"].as_str().is_some_and(|c| c.starts_with("cf_buy_")))
            .count(),
        1
    );
    assert_eq!(
        orders.iter().filter(|o| o["type"] == "LIMIT" && o["status"] == "CANCELED").count(),
        1
    );
}

#[tokio::test]
async fn limit_lifecycle_against_the_simulator() {
    let h = start().await;
    h.set_price("ETHUSDT", "3000");
    limit_lifecycle(h.client.as_ref(), "ETHUSDT").await;
    assert!(
        h.sim
            .sim
            .requests()
            .iter()
            .all(|r| !r.client_order_id.as_deref().is_some_and(|c| c.starts_with("cf_tiny_")))
    );
}

#[tokio::test]
async fn order_types_and_their_exchange_behaviour() {
    let h = start().await;
    order_types(&h, h.client.as_ref()).await;
}

#[tokio::test]
async fn order_types_on_the_core() {
    let h = start().await;
    order_types(&h, &h.core()).await;
    assert!(h.sim.sim.requests().is_empty(), "no request went over HTTP");
}

async fn order_types(h: &Harness, ex: &dyn Exchange) {
    h.set_price("SOLUSDT", "150");
    // LIMIT_MAKER that would take is rejected by the exchange with -2010.
    let lm = NewOrder {
        order_type: OrderType::LimitMaker,
        time_in_force: None,
        ..NewOrder::limit("SOLUSDT", Side::Buy, Qty(d("1")), Price(d("151")), "lm1")
    };
    let err = ex.place_order(&lm).await.expect_err("would cross");
    assert!(
        matches!(&err, ExchangeError::OrderRejected { code: -2010, msg } if msg == "Order would immediately match and take."),
        "{err:?}"
    );
    // A resting LIMIT_MAKER.
    let lm = NewOrder { price: Some(Price(d("149"))), client_order_id: "lm2".into(), ..lm };
    assert_eq!(ex.place_order(&lm).await.expect("maker").status, OrderStatus::New);
    // Quantities are rounded down to the step before sending (SOLUSDT step 0.001).
    let o = ex
        .place_order(&NewOrder::market("SOLUSDT", Side::Buy, Qty(d("1.23456")), "rnd1"))
        .await
        .expect("rounded order");
    assert_eq!(o.executed_qty, Qty(d("1.234")));
    assert!(
        h.sim
            .sim
            .orders()
            .iter()
            .any(|x| x["clientOrderId"] == "rnd1" && x["origQty"] == "1.23400000")
    );
    // MARKET BUY by quote amount.
    let q = NewOrder {
        qty: None,
        quote_qty: Some(d("300")),
        ..NewOrder::market("SOLUSDT", Side::Buy, Qty(d("0")), "qq1")
    };
    let o = ex.place_order(&q).await.expect("quote order");
    assert_eq!(o.status, OrderStatus::Filled);
    assert!(o.cumulative_quote_qty <= d("300") && o.cumulative_quote_qty > d("299"));
    // STOP_LOSS_LIMIT: triggers at the stop, rests at the limit, and a gap leaves it unfilled.
    let sl = NewOrder {
        order_type: OrderType::StopLossLimit,
        stop_price: Some(Price(d("140"))),
        price: Some(Price(d("139.72"))),
        time_in_force: Some(spotbot::exchange::TimeInForce::Gtc),
        ..NewOrder::market("SOLUSDT", Side::Sell, Qty(d("1")), "sl1")
    };
    let placed = ex.place_order(&sl).await.expect("stop limit");
    assert_eq!(placed.status, OrderStatus::New);
    let q = ex.order("SOLUSDT", &OrderRef::Client("sl1".into())).await.expect("query");
    assert!(!q.working);
    h.set_price("SOLUSDT", "130");
    let q = ex.order("SOLUSDT", &OrderRef::Client("sl1".into())).await.expect("query");
    assert!(q.working && q.status == OrderStatus::New, "gap leaves the stop unfilled: {q:?}");
    // A stop that would trigger immediately.
    let again = NewOrder { client_order_id: "sl2".into(), ..sl };
    assert!(matches!(
        ex.place_order(&again).await,
        Err(ExchangeError::OrderRejected { code: -2010, .. })
    ));
}

#[tokio::test]
async fn oco_take_profit_fill_expires_the_stop_leg() {
    let h = start().await;
    oco_take_profit_fill(&h, h.client.as_ref()).await;
}

#[tokio::test]
async fn oco_take_profit_fill_on_the_core() {
    let h = start().await;
    let core = h.core();
    oco_take_profit_fill(&h, &core).await;
    // The fill as the user data stream would push it, from the core's event log.
    let mut cursor = 0;
    let updates = core.order_updates(&mut cursor);
    let ended: Vec<_> = updates
        .iter()
        .filter(|u| !u.status.is_open())
        .map(|u| (u.client_order_id.as_str(), u.status, u.list_id.is_some()))
        .collect();
    assert_eq!(
        ended,
        [
            ("b1", OrderStatus::Filled, false),
            ("oco1_tp", OrderStatus::Filled, true),
            ("oco1_sl", OrderStatus::Expired, true)
        ]
    );
    assert!(core.order_updates(&mut cursor).is_empty(), "the cursor moved past them");
    // What the core holds: the entry and both legs, the stop leg expired by its partner.
    let orders = h.sim.sim.orders();
    assert_eq!(orders.len(), 3);
    assert!(orders.iter().any(|o| o["clientOrderId"] == "oco1_sl" && o["status"] == "EXPIRED"));
    assert!(
        orders.iter().any(|o| o["clientOrderId"] == "oco1_tp" && o["price"] == "3150.00000000")
    );
}

async fn oco_take_profit_fill(h: &Harness, ex: &dyn Exchange) {
    h.set_price("ETHUSDT", "3000");
    ex.place_order(&NewOrder::market("ETHUSDT", Side::Buy, Qty(d("1")), "b1")).await.expect("buy");
    let oco = NewOco {
        take_profit_client_order_id: Some("oco1_tp".into()),
        stop_client_order_id: Some("oco1_sl".into()),
        ..crate::exchange_support::eth_bracket("oco1")
    };
    let list = ex.place_oco(&oco).await.expect("oco");
    h.set_price("ETHUSDT", "3200");
    let tp = ex.order("ETHUSDT", &OrderRef::Client("oco1_tp".into())).await.expect("tp");
    let sl = ex.order("ETHUSDT", &OrderRef::Client("oco1_sl".into())).await.expect("sl");
    assert_eq!((tp.status, sl.status), (OrderStatus::Filled, OrderStatus::Expired));
    assert!(!ex.order_list(&OrderRef::Id(list.order_list_id)).await.expect("list").executing);
    assert!(ex.open_order_lists().await.expect("open").is_empty());
}

#[tokio::test]
async fn exchange_errors_are_typed_with_code_and_message() {
    let h = start().await;
    // Wrong secret: -1022.
    let bad = ExchangeAClient::new(
        ClientConfig::new(h.sim.base_url()),
        Some(Signer::new(
            spotbot::config::Secret::new(crate::exchange_support::KEY),
            spotbot::config::Secret::new("wrong"),
        )),
        std::sync::Arc::new(spotbot::clock::SystemClock),
        spotbot::metrics::Metrics::default(),
    )
    .expect("client");
    let err = bad.balances().await.expect_err("bad signature");
    assert!(
        matches!(&err, ExchangeError::InvalidSignature { code: -1022, msg } if msg == "Signature for this request is not valid.")
    );
    // Unknown key: -2015 (HTTP 401).
    let unknown = ExchangeAClient::new(
        ClientConfig::new(h.sim.base_url()),
        Some(Signer::new(
            spotbot::config::Secret::new("nobody"),
            spotbot::config::Secret::new("x"),
        )),
        std::sync::Arc::new(spotbot::clock::SystemClock),
        spotbot::metrics::Metrics::default(),
    )
    .expect("client");
    assert!(matches!(
        unknown.balances().await,
        Err(ExchangeError::Unauthorized { code: -2015, .. })
    ));
    // No keys at all: signed calls are refused locally.
    let anonymous = ExchangeAClient::new(
        ClientConfig::new(h.sim.base_url()),
        None,
        std::sync::Arc::new(spotbot::clock::SystemClock),
        spotbot::metrics::Metrics::default(),
    )
    .expect("client");
    assert!(matches!(anonymous.balances().await, Err(ExchangeError::NotConfigured { .. })));
    assert!(anonymous.price("BTCUSDT").await.is_ok());
    // -1013 from the exchange (injected: the client's own filter check passed).
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(spotbot_sim::Fault::new(spotbot_sim::FaultKind::Reject {
        code: -1013,
        msg: Some("Filter failure: PERCENT_PRICE_BY_SIDE".into()),
    }));
    let err = h
        .client
        .place_order(&NewOrder::market("BTCUSDT", Side::Buy, Qty(d("0.001")), "f1"))
        .await
        .expect_err("filter");
    assert!(
        matches!(&err, ExchangeError::FilterFailure { code: -1013, msg } if msg == "Filter failure: PERCENT_PRICE_BY_SIDE")
    );
    // Insufficient balance for a buy.
    let err = h
        .client
        .place_order(&NewOrder::market("BTCUSDT", Side::Buy, Qty(d("10")), "big"))
        .await
        .expect_err("too big");
    assert!(matches!(err, ExchangeError::InsufficientBalance { code: -2010, .. }), "{err:?}");
    // Duplicate client order id of an open order.
    let l = NewOrder::limit("BTCUSDT", Side::Buy, Qty(d("0.001")), Price(d("50000")), "dup");
    h.client.place_order(&l).await.expect("first");
    let err = h.client.place_order(&l).await.expect_err("duplicate");
    assert!(
        matches!(&err, ExchangeError::OrderRejected { code: -2010, msg } if msg == "Duplicate order sent.")
    );
}

#[tokio::test]
async fn timestamp_rejection_resyncs_the_clock_and_retries_once() {
    let h = start_with(|c: &mut ClientConfig| c.recv_window_ms = 5000).await;
    h.client.balances().await.expect("first call syncs time");
    // The exchange's clock jumps 30 s ahead: the next signed request is outside recvWindow.
    h.sim.sim.advance(30_000);
    h.client.balances().await.expect("resync and retry");
    let account = h.seen("GET", "/api/v3/account");
    let statuses: Vec<u16> = account.iter().map(|r| r.status).collect();
    assert_eq!(statuses, vec![200, 400, 200]);
    assert_eq!(h.seen("GET", "/api/v3/time").len(), 2);
    assert!(h.client.time_offset_ms() >= 29_000);
}

#[tokio::test]
async fn request_weight_is_read_from_the_headers() {
    let h = start().await;
    h.client.prices().await.expect("prices");
    assert_eq!(h.client.used_weight(), 4);
    h.client.balances().await.expect("balances");
    assert!(h.client.used_weight() >= 25);
    h.set_price("BTCUSDT", "60000");
    for i in 0..3 {
        let id = format!("cnt{i}");
        h.client
            .place_order(&NewOrder::market("BTCUSDT", Side::Buy, Qty(d("0.001")), &id))
            .await
            .expect("order");
    }
    assert_eq!(h.client.order_count_10s(), 3);
}

#[tokio::test]
async fn paper_mode_runs_the_simulator_in_process() {
    let config = spotbot::config::ExchangeConfig::default();
    assert_eq!(config.mode, spotbot::config::ExchangeMode::Paper);
    let connected = spotbot::exchange::connect::connect(
        &config,
        &spotbot::config::Secrets::default(),
        std::sync::Arc::new(spotbot::clock::SystemClock),
        spotbot::metrics::Metrics::default(),
    )
    .await
    .expect("connect");
    let paper = connected.paper.as_ref().expect("simulator");
    assert!(paper.addr.ip().is_loopback());
    let usdt = connected.exchange.balances().await.expect("balances");
    assert!(usdt.iter().any(|b| b.asset == "USDT" && b.free == Decimal::from(10_000)));
    let o = connected
        .exchange
        .place_order(&NewOrder::market("BTCUSDT", Side::Buy, Qty(d("0.001")), "paper1"))
        .await
        .expect("paper order");
    assert_eq!(o.status, OrderStatus::Filled);

    let custom = spotbot::config::ExchangeConfig { paper_seed: 9, paper_usdt: d("500"), ..config };
    let connected = spotbot::exchange::connect::connect(
        &custom,
        &spotbot::config::Secrets::default(),
        std::sync::Arc::new(spotbot::clock::SystemClock),
        spotbot::metrics::Metrics::default(),
    )
    .await
    .expect("connect");
    let usdt = connected.exchange.balances().await.expect("balances");
    assert!(usdt.iter().any(|b| b.asset == "USDT" && b.free == Decimal::from(500)));
}

// ------------------------------------------------------------------------------------------
// Against the real testnet (skipped unless EXCHANGE_API_KEY, EXCHANGE_API_SECRET and
// EXCHANGE_TESTNET=1 are set).

#[tokio::test]
async fn conformance_against_the_real_testnet() {
    let Some(client) = testnet_client() else {
        eprintln!(
            "skipped: set EXCHANGE_API_KEY, EXCHANGE_API_SECRET and EXCHANGE_TESTNET=1 to run against the testnet"
        );
        return;
    };
    market_data(&client, "BTCUSDT").await;
    limit_lifecycle(&client, "BTCUSDT").await;
    bracket_round_trip(&client, "BTCUSDT").await;
}

#[allow(dead_code)]
fn _uses(_: &Harness) {}
