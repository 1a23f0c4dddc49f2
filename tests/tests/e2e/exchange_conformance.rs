//! Conformance of the exchange clients and the simulator, one suite over `&dyn Exchange`:
//! every endpoint the service uses, the fields it reads, and the error paths it relies on.
//!
//! - The scenarios of the [`Exchange`] contract (market data, balances, a MARKET round trip
//!   with its trades and history, a LIMIT that rests and is cancelled, typed refusals, the
//!   order types both exchanges take) run against exchange A's client and exchange B's client
//!   on the simulator (`on_a::` and `on_b::`), each asserting what the simulator received in
//!   that exchange's terms. The refusals they meet are checked against each exchange's own
//!   codes and texts ([`check_refusals`]).
//! - Exchange A only: OCO brackets (and -2010 when selling coin an OCO holds), stop orders,
//!   its numeric codes, signatures, keys, the timestamp resync, weights and paper mode.
//! - Exchange B only: no OCO lists and no stops (`Refused` before sending), prices of five
//!   significant figures, orders found by their 16-byte cloid.
//! - The shared scenarios also run on `CoreExchange`, the backtest's in-process exchange on
//!   the simulator's matching core, which must answer as exchange A's client over HTTP does,
//!   and against the real testnet when EXCHANGE_API_KEY, EXCHANGE_API_SECRET and
//!   EXCHANGE_TESTNET=1 are set (otherwise that test is skipped).

use std::str::FromStr;

use crate::exchange_support::{
    Harness, KEY, Venue, exchange_b_client, lists, on_both, start, start_with, testnet_client,
};
use rust_decimal::Decimal;
use spotbot::exchange::exchange_a::{ClientConfig, ExchangeAClient, Signer};
use spotbot::exchange::exchange_b::cloid::cloid_of;
use spotbot::exchange::{
    Exchange, ExchangeError, NewOco, NewOrder, Order, OrderRef, OrderStatus, OrderType, Price,
    Protection, Qty, Side, SymbolRules,
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

/// Free and locked balance of `asset` (zero when the exchange lists none).
async fn balance(ex: &dyn Exchange, asset: &str) -> (Decimal, Decimal) {
    let all = ex.balances().await.expect("balances");
    all.iter()
        .find(|b| b.asset == asset)
        .map_or((Decimal::ZERO, Decimal::ZERO), |b| (b.free, b.locked))
}

// ------------------------------------------------------------------------------------------
// Scenarios over `&dyn Exchange`: both exchanges on the simulator, the core, the testnet.

/// The refusals the scenarios met, checked per exchange by [`check_refusals`].
#[derive(Debug, Default)]
struct Refusals {
    invalid_symbol: Option<ExchangeError>,
    bad_interval: Option<ExchangeError>,
    second_cancel: Option<ExchangeError>,
    unknown_lookup: Option<ExchangeError>,
    over_balance: Option<ExchangeError>,
    duplicate: Option<ExchangeError>,
    would_take: Option<ExchangeError>,
}

/// Each refusal's code and a text it contains, as the exchange of `venue` answers them:
/// exchange A's numeric codes and messages, exchange B's texts (code 0: it has no codes).
fn check_refusals(venue: Venue, r: &Refusals) {
    let expected: [(&Option<ExchangeError>, Option<i64>, &str); 7] = match venue {
        Venue::A => [
            (&r.invalid_symbol, Some(-1121), ""),
            (&r.bad_interval, Some(-1120), ""),
            (&r.second_cancel, Some(-2011), ""),
            (&r.unknown_lookup, Some(-2013), ""),
            (&r.over_balance, Some(-2010), ""),
            (&r.duplicate, Some(-2010), "Duplicate order sent."),
            (&r.would_take, Some(-2010), "Order would immediately match and take."),
        ],
        Venue::B => [
            (&r.invalid_symbol, Some(0), "is not a spot pair"),
            (&r.bad_interval, None, "is not one exchange B serves"),
            (&r.second_cancel, Some(0), "Order was never placed, already canceled, or filled"),
            (&r.unknown_lookup, Some(0), "unknownOid"),
            (&r.over_balance, Some(0), "insufficient spot balance"),
            (&r.duplicate, Some(0), "Cloid is already used by an open order."),
            (&r.would_take, Some(0), "Post only order would have immediately matched"),
        ],
    };
    for (err, code, text) in expected {
        if let Some(e) = err {
            assert_eq!(e.code(), code, "{venue:?}: {e:?}");
            assert!(e.to_string().contains(text), "{venue:?}: {e}");
        }
    }
}

async fn market_data(ex: &dyn Exchange, symbol: &str) -> Refusals {
    let t = ex.server_time().await.expect("server time");
    let now = chrono::Utc::now().timestamp_millis();
    assert!((t - now).abs() < 60_000, "server time {t} vs {now}");

    let rules = ex.symbol_rules(symbol).await.expect("rules");
    assert_eq!(rules.symbol, symbol);
    assert!(rules.trading);
    assert_eq!(rules.oco_allowed, ex.protection() == Protection::Native, "OCO only when native");
    assert!(rules.tick_size > Decimal::ZERO && rules.step_size > Decimal::ZERO);
    assert!(rules.min_notional > Decimal::ZERO);
    assert!(!rules.base_asset.is_empty() && !rules.quote_asset.is_empty());
    let invalid = ex.symbol_rules("NOPEXYZ").await.expect_err("unknown symbol");
    assert!(matches!(invalid, ExchangeError::InvalidSymbol { .. }), "{invalid:?}");

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
    assert_eq!(end.len(), 5);
    assert!(end.last().is_some_and(|c| c.open_time <= now - 86_400_000));
    assert!(end.last().is_some_and(|c| c.open_time > now - 86_400_000 - 3_600_000), "the newest");
    let no_klines = ex.klines("NOPEXYZ", "1h", 5, None).await.expect_err("unknown symbol");
    assert!(matches!(no_klines, ExchangeError::InvalidSymbol { .. }), "{no_klines:?}");
    let bad_interval = ex.klines(symbol, "2h5", 5, None).await.expect_err("no such interval");
    assert!(
        matches!(bad_interval, ExchangeError::BadRequest { .. } | ExchangeError::Refused { .. }),
        "{bad_interval:?}"
    );

    let one = ex.tickers_24h(&[symbol.to_string()]).await.expect("ticker");
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].symbol, symbol);
    assert!(one[0].last_price.0 > Decimal::ZERO && one[0].quote_volume >= Decimal::ZERO);
    assert!(one[0].high_price >= one[0].low_price);
    let two = ex.tickers_24h(&[symbol.to_string(), "ETHUSDT".to_string()]).await.expect("tickers");
    assert_eq!(two.len(), 2);
    let all = ex.tickers_24h(&[]).await.expect("all tickers");
    assert!(all.len() >= 2);
    let prices = ex.prices().await.expect("prices");
    assert!(prices.iter().any(|(s, p)| s == symbol && p.0 > Decimal::ZERO));
    assert!(ex.price(symbol).await.expect("price").0 > Decimal::ZERO);
    Refusals {
        invalid_symbol: Some(invalid),
        bad_interval: Some(bad_interval),
        ..Refusals::default()
    }
}

/// A MARKET buy of about three times the minimum order value, filled.
async fn market_buy(ex: &dyn Exchange, symbol: &str) -> Order {
    let (rules, price) = rules_and_price(ex, symbol).await;
    let qty = rules.floor_qty((rules.min_notional * d("3")) / price).0.max(rules.min_qty);
    let buy_id = unique("cf_buy_");
    let buy = ex
        .place_order(&NewOrder::market(symbol, Side::Buy, Qty(qty), &buy_id))
        .await
        .expect("market buy");
    assert_eq!(buy.status, OrderStatus::Filled);
    assert_eq!(buy.client_order_id, buy_id);
    assert_eq!(buy.order_type, OrderType::Market);
    assert_eq!((buy.symbol.as_str(), buy.side), (symbol, Side::Buy));
    assert_eq!(buy.executed_qty.0, qty);
    assert_eq!(buy.order_list_id, None);
    assert!(buy.avg_price().is_some_and(|p| p.0 > Decimal::ZERO));
    assert!(buy.fills.is_empty() || buy.fills.iter().map(|f| f.qty.0).sum::<Decimal>() == qty);
    buy
}

/// The buy's trades with their commissions, and the buy in the order history.
async fn trades_and_history(ex: &dyn Exchange, symbol: &str, buy: &Order) {
    let trades = ex.my_trades(symbol, Some(buy.order_id)).await.expect("trades");
    assert!(!trades.is_empty() && trades.iter().all(|t| t.is_buyer && t.order_id == buy.order_id));
    assert_eq!(trades.iter().map(|t| t.qty.0).sum::<Decimal>(), buy.executed_qty.0);
    assert!(trades.iter().all(|t| t.commission >= Decimal::ZERO && !t.commission_asset.is_empty()));
    assert!(trades.iter().all(|t| t.symbol == symbol && t.price.0 > Decimal::ZERO));
    let all = ex.my_trades(symbol, None).await.expect("all trades");
    assert!(all.iter().any(|t| t.order_id == buy.order_id));
    let history = ex.all_orders(symbol, 50).await.expect("all orders");
    let found = history.iter().find(|o| o.client_order_id == buy.client_order_id);
    assert!(found.is_some_and(|o| o.status == OrderStatus::Filled && o.order_id == buy.order_id));
    let by_id = ex.order(symbol, &OrderRef::Id(buy.order_id)).await.expect("buy by id");
    assert_eq!((by_id.status, by_id.executed_qty), (OrderStatus::Filled, buy.executed_qty));
}

/// A MARKET sell of what the buy left after its base-asset fee.
async fn market_exit(ex: &dyn Exchange, symbol: &str, buy: &Order) -> Order {
    let rules = ex.symbol_rules(symbol).await.expect("rules");
    // The fee from the trades: an answer may come without fills (exchange B's does).
    let trades = ex.my_trades(symbol, Some(buy.order_id)).await.expect("trades");
    let fee: Decimal = trades
        .iter()
        .filter(|t| t.commission_asset == rules.base_asset)
        .map(|t| t.commission)
        .sum();
    let net = rules.floor_qty(buy.executed_qty.0 - fee);
    let exit = ex
        .place_order(&NewOrder::market(symbol, Side::Sell, net, &unique("cf_exit_")))
        .await
        .expect("market exit");
    assert_eq!((exit.status, exit.executed_qty, exit.side), (OrderStatus::Filled, net, Side::Sell));
    exit
}

/// What a scenario sent (its two client order ids, as the scenario says) and the refusals
/// it met.
struct Run {
    ids: [String; 2],
    refusals: Refusals,
}

/// The symbol's rules and its price now.
async fn rules_and_price(ex: &dyn Exchange, symbol: &str) -> (SymbolRules, Decimal) {
    let rules = ex.symbol_rules(symbol).await.expect("rules");
    (rules, ex.price(symbol).await.expect("price").0)
}

/// LIMIT GTC manual entry: place with an MT_ id, find it by client id and by id, list it
/// open, see the quote it locks, cancel it; then `UnknownOrder` on a second cancel. Its ids:
/// the LIMIT's, and that of an order too small to be sent.
async fn limit_lifecycle(ex: &dyn Exchange, symbol: &str) -> Run {
    let (rules, price) = rules_and_price(ex, symbol).await;
    let px = rules.floor_price(price * d("0.9"));
    let qty = rules.floor_qty(rules.min_notional * d("3") / px.0);
    let (_, locked_before) = balance(ex, &rules.quote_asset).await;
    let id = unique("MT_");
    let o = ex.place_order(&NewOrder::limit(symbol, Side::Buy, qty, px, &id)).await.expect("limit");
    assert_eq!(
        (o.status, o.order_type, o.price, o.orig_qty),
        (OrderStatus::New, OrderType::Limit, px, qty)
    );
    assert_eq!(o.client_order_id, id);
    let q = ex.order(symbol, &OrderRef::Client(id.clone())).await.expect("query by client id");
    assert_eq!((q.order_id, q.status, q.orig_qty), (o.order_id, OrderStatus::New, qty));
    assert!(q.working && q.time > 0);
    let by_id = ex.order(symbol, &OrderRef::Id(o.order_id)).await.expect("query by id");
    assert_eq!((by_id.client_order_id.as_str(), by_id.price), (id.as_str(), px));
    assert!(ex.open_orders(None).await.expect("open").iter().any(|x| x.order_id == o.order_id));
    let of_symbol = ex.open_orders(Some(symbol)).await.expect("open of the symbol");
    assert!(of_symbol.iter().any(|x| x.client_order_id == id && x.status == OrderStatus::New));
    let (_, locked) = balance(ex, &rules.quote_asset).await;
    assert!(locked - locked_before >= px.0 * qty.0, "the buy locks its quote: {locked}");
    let c = ex.cancel_order(symbol, &OrderRef::Client(id.clone())).await.expect("cancel");
    assert_eq!((c.status, c.order_id), (OrderStatus::Canceled, o.order_id));
    assert_eq!(c.client_order_id, id);
    assert!(
        !ex.open_orders(Some(symbol)).await.expect("open").iter().any(|x| x.order_id == o.order_id)
    );
    let second_cancel = ex.cancel_order(symbol, &OrderRef::Id(o.order_id)).await.expect_err("gone");
    assert!(matches!(second_cancel, ExchangeError::UnknownOrder { .. }), "{second_cancel:?}");
    let unknown_lookup =
        ex.order(symbol, &OrderRef::Client(unique("none_"))).await.expect_err("never placed");
    assert!(matches!(unknown_lookup, ExchangeError::UnknownOrder { .. }), "{unknown_lookup:?}");
    // An order that cannot satisfy the filters is refused before sending.
    let tiny_id = unique("cf_tiny_");
    let tiny = NewOrder::limit(symbol, Side::Buy, rules.floor_qty(rules.min_qty), px, &tiny_id);
    assert!(matches!(ex.place_order(&tiny).await, Err(ExchangeError::Refused { .. })));
    Run {
        ids: [id, tiny_id],
        refusals: Refusals {
            second_cancel: Some(second_cancel),
            unknown_lookup: Some(unknown_lookup),
            ..Refusals::default()
        },
    }
}

/// Refusals by the exchange, typed: a buy over the balance, a client id an open order holds.
/// Its ids: the buy's and the duplicated one.
async fn definite_rejections(ex: &dyn Exchange, symbol: &str) -> Run {
    let (rules, price) = rules_and_price(ex, symbol).await;
    let (free, _) = balance(ex, &rules.quote_asset).await;
    let over_balance_id = unique("cf_big_");
    let big = NewOrder::market(
        symbol,
        Side::Buy,
        rules.floor_qty(free * d("2") / price),
        &over_balance_id,
    );
    let over_balance = ex.place_order(&big).await.expect_err("over the balance");
    assert!(matches!(over_balance, ExchangeError::InsufficientBalance { .. }), "{over_balance:?}");

    let px = rules.floor_price(price * d("0.8"));
    let duplicate_id = unique("cf_dup_");
    let limit = NewOrder::limit(
        symbol,
        Side::Buy,
        rules.floor_qty(rules.min_notional * d("3") / px.0),
        px,
        &duplicate_id,
    );
    assert_eq!(ex.place_order(&limit).await.expect("first").status, OrderStatus::New);
    let duplicate = ex.place_order(&limit).await.expect_err("duplicate");
    assert!(matches!(duplicate, ExchangeError::OrderRejected { .. }), "{duplicate:?}");
    ex.cancel_order(symbol, &OrderRef::Client(duplicate_id.clone()))
        .await
        .expect("cancel the first");
    Run {
        ids: [over_balance_id, duplicate_id],
        refusals: Refusals {
            over_balance: Some(over_balance),
            duplicate: Some(duplicate),
            ..Refusals::default()
        },
    }
}

/// The order types both exchanges take: LIMIT_MAKER (refused when it would take, resting
/// otherwise), quantities rounded down to the step, a MARKET BUY by quote amount.
async fn order_types(h: &Harness, ex: &dyn Exchange) -> Refusals {
    h.set_price("SOLUSDT", "150");
    let lm = NewOrder {
        order_type: OrderType::LimitMaker,
        time_in_force: None,
        ..NewOrder::limit("SOLUSDT", Side::Buy, Qty(d("1")), Price(d("151")), "lm1")
    };
    let would_take = ex.place_order(&lm).await.expect_err("would cross");
    assert!(matches!(would_take, ExchangeError::OrderRejected { .. }), "{would_take:?}");
    // A resting LIMIT_MAKER.
    let lm = NewOrder { price: Some(Price(d("149"))), client_order_id: "lm2".into(), ..lm };
    let maker = ex.place_order(&lm).await.expect("maker");
    assert_eq!((maker.status, maker.order_type), (OrderStatus::New, OrderType::LimitMaker));
    // Quantities are rounded down to the step before sending (SOLUSDT step 0.001).
    let o = ex
        .place_order(&NewOrder::market("SOLUSDT", Side::Buy, Qty(d("1.23456")), "rnd1"))
        .await
        .expect("rounded order");
    assert_eq!(o.executed_qty, Qty(d("1.234")));
    let sent = h.engine_orders("rnd1");
    assert!(sent.len() == 1 && sent[0]["origQty"] == "1.23400000", "{sent:?}");
    // MARKET BUY by quote amount.
    let q = NewOrder {
        qty: None,
        quote_qty: Some(d("300")),
        ..NewOrder::market("SOLUSDT", Side::Buy, Qty(d("0")), "qq1")
    };
    let o = ex.place_order(&q).await.expect("quote order");
    assert_eq!(o.status, OrderStatus::Filled);
    assert!(o.cumulative_quote_qty <= d("300") && o.cumulative_quote_qty > d("299"), "{o:?}");
    Refusals { would_take: Some(would_take), ..Refusals::default() }
}

// ------------------------------------------------------------------------------------------
// The scenarios on both exchanges' clients against the simulator.

on_both!(
    market_data_endpoints,
    a_market_round_trip_with_trades_and_history,
    a_limit_rests_is_found_and_cancelled,
    refusals_by_the_exchange_are_typed,
    order_types_both_exchanges_take,
);

async fn market_data_endpoints(h: Harness) {
    let refusals = market_data(h.ex(), "BTCUSDT").await;
    check_refusals(h.venue, &refusals);
}

/// What the simulator received for a MARKET order: exchange A's MARKET, or exchange B's IOC
/// limit at the mid ± 5 % (five significant figures) — B has no market orders.
async fn assert_received_market(h: &Harness, o: &Order) {
    match h.venue {
        Venue::A => {
            let sent = h.engine_orders(&o.client_order_id);
            assert_eq!(sent.len(), 1, "{sent:?}");
            assert_eq!(
                (sent[0]["type"].as_str(), sent[0]["status"].as_str()),
                (Some("MARKET"), Some("FILLED"))
            );
            let side = if o.side == Side::Buy { "BUY" } else { "SELL" };
            assert_eq!(sent[0]["side"], side);
            assert_eq!(d(sent[0]["origQty"].as_str().expect("origQty")), o.orig_qty.0);
        }
        Venue::B => {
            let rules = h.ex().symbol_rules(&o.symbol).await.expect("rules");
            let mid = h.ex().price(&o.symbol).await.expect("mid").0;
            let buy = o.side == Side::Buy;
            let slipped = spotbot_exchange_b_protocol::numbers::slippage_price(
                mid,
                buy,
                d("0.05"),
                rules.step_size.scale(),
            );
            let sent = h.exchange_b_order(&o.client_order_id);
            let field = |name: &str| sent["order"][name].as_str().map(String::from);
            assert_eq!(field("tif").as_deref(), Some("Ioc"), "{sent}");
            assert_eq!(field("side").as_deref(), Some(if buy { "B" } else { "A" }));
            assert_eq!(field("limitPx").map(|p| d(&p)), Some(slipped), "mid {mid} ± 5 %: {sent}");
            assert_eq!(field("origSz").map(|s| d(&s)), Some(o.orig_qty.0));
            assert_eq!(sent["status"], "filled");
            assert_eq!(h.orders_with_client_id(&o.client_order_id), 1);
        }
    }
}

async fn a_market_round_trip_with_trades_and_history(h: Harness) {
    h.set_price("BTCUSDT", "64000");
    let ex = h.ex();
    let rules = ex.symbol_rules("BTCUSDT").await.expect("rules");
    assert_eq!(balance(ex, &rules.quote_asset).await, (d("100000"), Decimal::ZERO));
    let buy = market_buy(ex, "BTCUSDT").await;
    assert_received_market(&h, &buy).await;
    trades_and_history(ex, "BTCUSDT", &buy).await;
    // The simulator's fee: 0.1 % in the asset received.
    let trades = ex.my_trades("BTCUSDT", Some(buy.order_id)).await.expect("trades");
    assert!(trades.iter().all(|t| t.commission_asset == rules.base_asset));
    let fee = trades.iter().map(|t| t.commission).sum::<Decimal>();
    assert_eq!(fee, buy.executed_qty.0 * d("0.001"));
    let (base, _) = balance(ex, &rules.base_asset).await;
    assert_eq!(base, buy.executed_qty.0 - fee);
    let (quote, _) = balance(ex, &rules.quote_asset).await;
    assert_eq!(quote, d("100000") - buy.cumulative_quote_qty);

    let exit = market_exit(ex, "BTCUSDT", &buy).await;
    assert_received_market(&h, &exit).await;
    let sold = ex.my_trades("BTCUSDT", Some(exit.order_id)).await.expect("exit trades");
    assert!(sold.iter().all(|t| !t.is_buyer && t.commission_asset == rules.quote_asset));
}

async fn a_limit_rests_is_found_and_cancelled(h: Harness) {
    h.set_price("ETHUSDT", "3000");
    let run = limit_lifecycle(h.ex(), "ETHUSDT").await;
    check_refusals(h.venue, &run.refusals);
    let [id, tiny_id] = &run.ids;
    let held = h.engine_orders(id);
    assert!(held.len() == 1 && held[0]["status"] == "CANCELED", "{held:?}");
    assert_eq!(held[0]["type"], "LIMIT");
    assert!(h.placements(tiny_id).is_empty(), "refused before sending");
}

async fn refusals_by_the_exchange_are_typed(h: Harness) {
    h.set_price("BTCUSDT", "60000");
    let run = definite_rejections(h.ex(), "BTCUSDT").await;
    check_refusals(h.venue, &run.refusals);
    let [over_balance, duplicate] = &run.ids;
    assert_eq!(h.placements(over_balance).len(), 1, "refused by the exchange");
    assert_eq!(h.orders_with_client_id(over_balance), 0);
    assert_eq!(h.orders_with_client_id(duplicate), 1, "the first one only");
}

async fn order_types_both_exchanges_take(h: Harness) {
    let refusals = order_types(&h, h.ex()).await;
    check_refusals(h.venue, &refusals);
}

// ------------------------------------------------------------------------------------------
// Exchange A only: OCO lists, stop orders, its keys, clock and weights.

/// The OCO bracket over a bought position, -2010 on selling the coin it holds, the list's
/// queries, its cancel (and -2011 on a second cancel), the freed coin.
async fn oco_bracket(ex: &dyn Exchange, symbol: &str, buy: &Order) {
    let (rules, price) = rules_and_price(ex, symbol).await;
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
    let list = lists(ex).place_oco(&oco).await.expect("oco");
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
    let (_, locked) = balance(ex, &base).await;
    assert!(locked >= net.0, "OCO locks the coin: {locked}");

    // The spec's -2010: a MARKET SELL while the OCO holds the coin.
    let err = ex
        .place_order(&NewOrder::market(symbol, Side::Sell, net, &unique("cf_sell_")))
        .await
        .expect_err("sell of locked coin must fail");
    assert!(
        matches!(&err, ExchangeError::InsufficientBalance { code: -2010, msg } if msg == "Account has insufficient balance for requested action."),
        "{err:?}"
    );

    let open = lists(ex).open_order_lists().await.expect("open lists");
    assert!(open.iter().any(|l| l.order_list_id == list.order_list_id && l.legs.len() == 2));
    let by_id = lists(ex).order_list(&OrderRef::Id(list.order_list_id)).await.expect("list by id");
    assert_eq!(by_id.list_client_order_id, oco.list_client_order_id);
    let by_client = lists(ex)
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

    let cancelled = lists(ex)
        .cancel_order_list(symbol, &OrderRef::Id(list.order_list_id))
        .await
        .expect("cancel list");
    assert!(!cancelled.executing);
    assert!(cancelled.orders.iter().all(|o| o.status == OrderStatus::Canceled));
    assert!(matches!(
        lists(ex).cancel_order_list(symbol, &OrderRef::Id(list.order_list_id)).await,
        Err(ExchangeError::UnknownOrder { code: -2011, .. })
    ));
    let (free, _) = balance(ex, &base).await;
    assert!(free >= net.0);
    let history = ex.all_orders(symbol, 50).await.expect("all orders");
    assert!(
        history
            .iter()
            .any(|o| o.order_list_id == Some(list.order_list_id)
                && o.status == OrderStatus::Canceled)
    );
}

/// MARKET entry, OCO bracket, -2010 on selling locked coin, cancel, then the market exit.
async fn bracket_round_trip(ex: &dyn Exchange, symbol: &str) {
    let buy = market_buy(ex, symbol).await;
    assert!(!buy.fills.is_empty(), "exchange A answers a MARKET with its fills");
    oco_bracket(ex, symbol, &buy).await;
    market_exit(ex, symbol, &buy).await;
    trades_and_history(ex, symbol, &buy).await;
}

#[tokio::test]
async fn bracket_round_trip_against_the_simulator() {
    let h = start(Venue::A).await;
    h.set_price("BTCUSDT", "64000");
    bracket_round_trip(h.ex(), "BTCUSDT").await;
    // What the simulator saw: one order per client id, the refused sell reached it as -2010.
    let posts = h.seen("POST", "/api/v3/order");
    assert_eq!(posts.iter().filter(|r| r.status == 400).count(), 1);
    assert_eq!(h.seen("POST", "/api/v3/orderList/oco").len(), 1);
}

#[tokio::test]
async fn the_shared_scenarios_on_the_core() {
    let h = start(Venue::A).await;
    let core = h.core();
    check_refusals(Venue::A, &market_data(&core, "BTCUSDT").await);
    h.set_price("BTCUSDT", "64000");
    bracket_round_trip(&core, "BTCUSDT").await;
    h.set_price("ETHUSDT", "3000");
    check_refusals(Venue::A, &limit_lifecycle(&core, "ETHUSDT").await.refusals);
    check_refusals(Venue::A, &definite_rejections(&core, "ETHUSDT").await.refusals);
    assert!(h.sim.sim.requests().is_empty(), "no request went over HTTP");
    // What the core received: one order per client id, the refused sell, the tiny order and
    // the buy over the balance never became orders.
    let orders = h.sim.sim.orders();
    assert!(orders.iter().all(|o| {
        !o["clientOrderId"].as_str().is_some_and(|c| {
            c.starts_with("cf_sell_") || c.starts_with("cf_tiny_") || c.starts_with("cf_big_")
        })
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
        2,
        "the lifecycle's LIMIT and the first of the duplicates"
    );
}

#[tokio::test]
async fn order_types_and_stops_on_exchange_a() {
    let h = start(Venue::A).await;
    order_types(&h, h.ex()).await;
    stop_orders(&h, h.ex()).await;
}

#[tokio::test]
async fn order_types_on_the_core() {
    let h = start(Venue::A).await;
    check_refusals(Venue::A, &order_types(&h, &h.core()).await);
    stop_orders(&h, &h.core()).await;
    assert!(h.sim.sim.requests().is_empty(), "no request went over HTTP");
}

/// A STOP_LOSS_LIMIT SELL GTC of `qty` at `stop`, resting at `limit` once triggered.
fn stop_loss_limit(symbol: &str, qty: &str, stop: &str, limit: &str, id: &str) -> NewOrder {
    NewOrder {
        order_type: OrderType::StopLossLimit,
        stop_price: Some(Price(d(stop))),
        price: Some(Price(d(limit))),
        time_in_force: Some(spotbot::exchange::TimeInForce::Gtc),
        ..NewOrder::market(symbol, Side::Sell, Qty(d(qty)), id)
    }
}

/// STOP_LOSS_LIMIT: triggers at the stop, rests at the limit, and a gap leaves it unfilled;
/// one that would trigger at once is rejected with -2010.
async fn stop_orders(h: &Harness, ex: &dyn Exchange) {
    h.set_price("SOLUSDT", "150");
    let sl = stop_loss_limit("SOLUSDT", "1", "140", "139.72", "sl1");
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
    let h = start(Venue::A).await;
    oco_take_profit_fill(&h, h.ex()).await;
}

#[tokio::test]
async fn oco_take_profit_fill_on_the_core() {
    let h = start(Venue::A).await;
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
    let list = lists(ex).place_oco(&oco).await.expect("oco");
    h.set_price("ETHUSDT", "3200");
    let tp = ex.order("ETHUSDT", &OrderRef::Client("oco1_tp".into())).await.expect("tp");
    let sl = ex.order("ETHUSDT", &OrderRef::Client("oco1_sl".into())).await.expect("sl");
    assert_eq!((tp.status, sl.status), (OrderStatus::Filled, OrderStatus::Expired));
    assert!(
        !lists(ex).order_list(&OrderRef::Id(list.order_list_id)).await.expect("list").executing
    );
    assert!(lists(ex).open_order_lists().await.expect("open").is_empty());
}

/// An exchange A client of the simulator signing as `key` with `secret` (none: unsigned).
fn exchange_a_client(h: &Harness, keys: Option<(&str, &str)>) -> ExchangeAClient {
    let signer = keys.map(|(key, secret)| {
        Signer::new(spotbot::config::Secret::new(key), spotbot::config::Secret::new(secret))
    });
    ExchangeAClient::new(
        ClientConfig::new(h.sim.base_url()),
        signer,
        std::sync::Arc::new(spotbot::clock::SystemClock),
        spotbot::metrics::Metrics::default(),
    )
    .expect("client")
}

#[tokio::test]
async fn exchange_a_errors_are_typed_with_code_and_message() {
    let h = start(Venue::A).await;
    // Wrong secret: -1022.
    let err =
        exchange_a_client(&h, Some((KEY, "wrong"))).balances().await.expect_err("bad signature");
    assert!(
        matches!(&err, ExchangeError::InvalidSignature { code: -1022, msg } if msg == "Signature for this request is not valid.")
    );
    // Unknown key: -2015 (HTTP 401).
    assert!(matches!(
        exchange_a_client(&h, Some(("nobody", "x"))).balances().await,
        Err(ExchangeError::Unauthorized { code: -2015, .. })
    ));
    // No keys at all: signed calls are refused locally.
    let anonymous = exchange_a_client(&h, None);
    assert!(matches!(anonymous.balances().await, Err(ExchangeError::NotConfigured { .. })));
    assert!(anonymous.price("BTCUSDT").await.is_ok());
    // -1013 from the exchange (injected: the client's own filter check passed).
    h.set_price("BTCUSDT", "60000");
    h.sim.sim.inject(spotbot_sim::Fault::new(spotbot_sim::FaultKind::Reject {
        code: -1013,
        msg: Some("Filter failure: PERCENT_PRICE_BY_SIDE".into()),
    }));
    let err = h
        .ex()
        .place_order(&NewOrder::market("BTCUSDT", Side::Buy, Qty(d("0.001")), "f1"))
        .await
        .expect_err("filter");
    assert!(
        matches!(&err, ExchangeError::FilterFailure { code: -1013, msg } if msg == "Filter failure: PERCENT_PRICE_BY_SIDE")
    );
}

#[tokio::test]
async fn timestamp_rejection_resyncs_the_clock_and_retries_once() {
    let h = start_with(Venue::A, |c: &mut ClientConfig| c.recv_window_ms = 5000).await;
    h.ex().balances().await.expect("first call syncs time");
    // The exchange's clock jumps 30 s ahead: the next signed request is outside recvWindow.
    h.sim.sim.advance(30_000);
    h.ex().balances().await.expect("resync and retry");
    let account = h.seen("GET", "/api/v3/account");
    let statuses: Vec<u16> = account.iter().map(|r| r.status).collect();
    assert_eq!(statuses, vec![200, 400, 200]);
    assert_eq!(h.seen("GET", "/api/v3/time").len(), 2);
    assert!(h.a().time_offset_ms() >= 29_000);
}

#[tokio::test]
async fn request_weight_is_read_from_the_headers() {
    let h = start(Venue::A).await;
    h.ex().prices().await.expect("prices");
    assert_eq!(h.a().used_weight(), 4);
    h.ex().balances().await.expect("balances");
    assert!(h.a().used_weight() >= 25);
    h.set_price("BTCUSDT", "60000");
    for i in 0..3 {
        let id = format!("cnt{i}");
        h.ex()
            .place_order(&NewOrder::market("BTCUSDT", Side::Buy, Qty(d("0.001")), &id))
            .await
            .expect("order");
    }
    assert_eq!(h.a().order_count_10s(), 3);
}

/// The active exchange as `config` builds it, with no secrets (paper mode needs none).
async fn paper(
    config: &spotbot::config::ExchangeConfig,
) -> spotbot::exchange::connect::ConnectedExchange {
    spotbot::exchange::connect::connect(
        config,
        &spotbot::config::Secrets::default(),
        std::sync::Arc::new(spotbot::clock::SystemClock),
        spotbot::metrics::Metrics::default(),
    )
    .await
    .expect("connect")
}

#[tokio::test]
async fn paper_mode_runs_the_simulator_in_process_on_either_exchange() {
    let config = spotbot::config::ExchangeConfig::default();
    assert_eq!(config.mode, spotbot::config::ExchangeMode::Paper);
    for (active, quote) in [
        (spotbot::config::ExchangeName::ExchangeA, "USDT"),
        (spotbot::config::ExchangeName::ExchangeB, "USDC"),
    ] {
        let connected = paper(&spotbot::config::ExchangeConfig { active, ..config.clone() }).await;
        assert_eq!(connected.exchange.name(), active);
        assert_eq!(
            connected.exchange_b().is_some(),
            active == spotbot::config::ExchangeName::ExchangeB
        );
        let sim = connected.paper.as_ref().expect("simulator");
        assert!(sim.addr.ip().is_loopback());
        let balances = connected.exchange.balances().await.expect("balances");
        assert!(
            balances.iter().any(|b| b.asset == quote && b.free == Decimal::from(10_000)),
            "{balances:?}"
        );
        let o = connected
            .exchange
            .place_order(&NewOrder::market(
                "BTCUSDT",
                Side::Buy,
                Qty(d("0.001")),
                "SE_paper_BTCUSDT",
            ))
            .await
            .expect("paper order");
        assert_eq!(o.status, OrderStatus::Filled, "{active:?}");
    }

    let custom = spotbot::config::ExchangeConfig { paper_seed: 9, paper_usdt: d("500"), ..config };
    let usdt = paper(&custom).await.exchange.balances().await.expect("balances");
    assert!(usdt.iter().any(|b| b.asset == "USDT" && b.free == Decimal::from(500)));
}

// ------------------------------------------------------------------------------------------
// Exchange B only: what it cannot hold, its price rule, its cloids.

#[tokio::test]
async fn exchange_b_refuses_lists_and_stops_before_sending() {
    let h = start(Venue::B).await;
    let ex = h.ex();
    assert_eq!(ex.protection(), Protection::Watched);
    h.set_price("ETHUSDT", "3000");
    // Its adapter offers no order lists: a list call is refused before anything is sent.
    assert!(ex.order_lists().is_none(), "exchange B has no order lists");
    let lists = spotbot::exchange::lists_of(ex).map(|_| ());
    assert!(matches!(lists, Err(ExchangeError::Refused { .. })), "{lists:?}");
    assert!(spotbot::exchange::open_lists(ex).await.expect("lists").is_empty());
    let stop = stop_loss_limit("ETHUSDT", "0.01", "2900", "2890", "sl_b");
    let refused = ex.place_order(&stop).await.expect_err("no stops on spot");
    assert!(
        matches!(&refused, ExchangeError::Refused { reason } if reason.contains("no stop orders")),
        "{refused:?}"
    );
    assert!(h.seen("POST", "/exchange").is_empty(), "nothing was sent");
    assert!(h.sim.sim.orders().is_empty());
}

#[tokio::test]
async fn exchange_b_prices_are_rounded_to_five_significant_figures() {
    let h = start(Venue::B).await;
    h.set_price("ETHUSDT", "3000");
    let o = NewOrder::limit(
        "ETHUSDT",
        Side::Buy,
        Qty(d("0.01")),
        Price(d("2712.345")),
        "MT_sig_ETHUSDT",
    );
    let placed = h.ex().place_order(&o).await.expect("rounded, then placed");
    assert_eq!((placed.status, placed.price), (OrderStatus::New, Price(d("2712.3"))));
    let sent = h.exchange_b_order("MT_sig_ETHUSDT");
    assert_eq!(sent["order"]["limitPx"], "2712.3", "{sent}");
    // Five figures and an integer price are taken as they are.
    let five = NewOrder {
        price: Some(Price(d("2712.4"))),
        client_order_id: "MT_five_ETHUSDT".into(),
        ..o.clone()
    };
    assert_eq!(h.ex().place_order(&five).await.expect("five figures").price, Price(d("2712.4")));
    let whole =
        NewOrder { price: Some(Price(d("2712"))), client_order_id: "MT_int_ETHUSDT".into(), ..o };
    assert_eq!(h.ex().place_order(&whole).await.expect("integer").price, Price(d("2712")));
    let limits: Vec<String> = h
        .sim
        .sim
        .exchange_b_orders()
        .iter()
        .filter_map(|o| o["order"]["limitPx"].as_str().map(String::from))
        .collect();
    assert_eq!(limits, ["2712.3", "2712.4", "2712"]);
}

#[tokio::test]
async fn exchange_b_finds_orders_by_their_cloid() {
    let h = start(Venue::B).await;
    h.set_price("ETHUSDT", "3000");
    let id = "MT_k9_ETHUSDT";
    let o = NewOrder::limit("ETHUSDT", Side::Buy, Qty(d("0.01")), Price(d("2700")), id);
    let placed = h.ex().place_order(&o).await.expect("rests");
    let sent = h.exchange_b_order(id);
    let cloid = cloid_of(id).to_string();
    assert_eq!(sent["order"]["cloid"], cloid.as_str());
    assert!(cloid.starts_with("0x4d545f"), "the MT_ prefix stays readable: {cloid}");
    assert_eq!(h.placements(id).len(), 1);
    // A client that never placed it (a restart) shows the cloid until it learns the id…
    let fresh = exchange_b_client(&h.sim);
    let open = fresh.open_orders(Some("ETHUSDT")).await.expect("open");
    assert_eq!(
        open.iter().map(|o| o.client_order_id.as_str()).collect::<Vec<_>>(),
        [cloid.as_str()]
    );
    fresh.learn_client_ids([id.to_string()]);
    let open = fresh.open_orders(Some("ETHUSDT")).await.expect("open");
    assert_eq!((open[0].client_order_id.as_str(), open[0].order_id), (id, placed.order_id));
    // …and finds it by the id alone: the cloid is derived from it, never stored first.
    let other = exchange_b_client(&h.sim);
    let found = other.order("ETHUSDT", &OrderRef::Client(id.into())).await.expect("by cloid");
    assert_eq!((found.order_id, found.client_order_id.as_str()), (placed.order_id, id));
    let cancelled =
        other.cancel_order("ETHUSDT", &OrderRef::Client(id.into())).await.expect("cancel by cloid");
    assert_eq!(cancelled.status, OrderStatus::Canceled);
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
    check_refusals(Venue::A, &market_data(&client, "BTCUSDT").await);
    check_refusals(Venue::A, &limit_lifecycle(&client, "BTCUSDT").await.refusals);
    bracket_round_trip(&client, "BTCUSDT").await;
}
