//! The core on its own: no wire, no socket, no clock. Prices are scripted with
//! `Market::set_price`, time is the argument of each call.

use super::*;
use crate::market::Market;
use crate::symbols::default_listing;
use rust_decimal_macros::dec;

const T0: Millis = 1_700_000_000_000;
const ETH: &str = "ETHUSDT";

/// A core with one account holding 10 000 USDT and ETH at 3000 from `T0`.
fn core() -> (Engine, usize) {
    let mut e = Engine::new(default_listing(), Market::new(7), EngineConfig::default());
    let acc = e.add_account("key", "secret");
    e.fund(acc, "USDT", dec!(10000), T0);
    e.market.set_price(ETH, T0, dec!(3000));
    e.catch_up(T0);
    (e, acc)
}

fn move_price(e: &mut Engine, t: Millis, price: Decimal) {
    e.market.set_price(ETH, t, price);
    e.catch_up(t);
}

fn leg(order_type: OrderType, side: Side, qty: Decimal) -> Leg {
    Leg { order_type, side, qty, price: None, stop: None, tif: Tif::Gtc, client_id: None }
}

fn limit(side: Side, qty: Decimal, price: Decimal, tif: Tif) -> Leg {
    Leg { price: Some(price), tif, ..leg(OrderType::Limit, side, qty) }
}

/// A sell OCO in exchange A's above/below order: take-profit at 3300, stop 2700 limit 2690.
fn sell_oco_legs(qty: Decimal) -> [Leg; 2] {
    let tp = Leg { price: Some(dec!(3300)), ..leg(OrderType::LimitMaker, Side::Sell, qty) };
    let sl = Leg {
        price: Some(dec!(2690)),
        stop: Some(dec!(2700)),
        ..leg(OrderType::StopLossLimit, Side::Sell, qty)
    };
    [tp, sl]
}

/// [`core`] holding 1 ETH, sold by an OCO of [`sell_oco_legs`]: (engine, account, list id,
/// stop leg id, take-profit leg id).
fn core_with_sell_oco() -> (Engine, usize, i64, i64, i64) {
    let (mut e, acc) = core();
    e.fund(acc, "ETH", dec!(1), T0);
    let list_id = e.place_oco(acc, ETH, sell_oco_legs(dec!(1)), None, T0).unwrap();
    let [stop_id, tp_id] = e.list(list_id).unwrap().orders[..] else { panic!("two legs") };
    (e, acc, list_id, stop_id, tp_id)
}

fn bal(e: &Engine, acc: usize, asset: &str) -> (Decimal, Decimal) {
    let b = e.balance(acc, asset);
    (b.free, b.locked)
}

#[test]
fn a_market_buy_takes_the_best_ask_and_pays_the_fee_in_the_coin() {
    let (mut e, acc) = core();
    let placed = e.place_order(acc, ETH, leg(OrderType::Market, Side::Buy, dec!(1)), T0).unwrap();
    let fill = &placed.fills[0];
    assert_eq!((fill.price, fill.qty, fill.commission), (dec!(3000.01), dec!(1), dec!(0.001)));
    assert_eq!(fill.commission_asset, "ETH");
    assert_eq!(bal(&e, acc, "USDT"), (dec!(6999.99), dec!(0)));
    assert_eq!(bal(&e, acc, "ETH"), (dec!(0.999), dec!(0)));
    let o = e.order(placed.order_id).unwrap();
    assert_eq!((o.status, o.cum_quote), (Status::Filled, dec!(3000.01)));
    assert!(!e.trades[0].is_maker);
}

#[test]
fn a_resting_limit_locks_its_cost_and_fills_at_its_price_when_the_market_trades_through() {
    let (mut e, acc) = core();
    let buy = limit(Side::Buy, dec!(1), dec!(2900), Tif::Gtc);
    let placed = e.place_order(acc, ETH, buy, T0).unwrap();
    assert!(placed.fills.is_empty());
    assert_eq!(bal(&e, acc, "USDT"), (dec!(7100), dec!(2900)));
    move_price(&mut e, T0 + 60_000, dec!(2899));
    let o = e.order(placed.order_id).unwrap();
    assert_eq!((o.status, o.update_time), (Status::Filled, T0 + 60_000));
    assert_eq!(bal(&e, acc, "USDT"), (dec!(7100), dec!(0)));
    assert_eq!(bal(&e, acc, "ETH"), (dec!(0.999), dec!(0)));
    let t = &e.trades[0];
    assert_eq!((t.price, t.is_maker, t.time), (dec!(2900), true, T0 + 60_000));
}

#[test]
fn a_take_profit_fill_expires_the_stop_and_frees_the_list_s_lock() {
    let (mut e, acc) = core();
    e.fund(acc, "ETH", dec!(1), T0);
    let list_id = e.place_oco(acc, ETH, sell_oco_legs(dec!(1)), None, T0).unwrap();
    assert_eq!(bal(&e, acc, "ETH"), (dec!(0), dec!(1)));
    let [stop_id, tp_id] = e.list(list_id).unwrap().orders[..] else { panic!("two legs") };
    assert!(e.order(stop_id).unwrap().order_type.is_stop_loss(), "the stop leg is listed first");
    assert_eq!(e.order(stop_id).unwrap().working_time, -1);

    move_price(&mut e, T0 + 60_000, dec!(3310));
    let (stop, tp) = (e.order(stop_id).unwrap(), e.order(tp_id).unwrap());
    assert_eq!(tp.status, Status::Filled);
    assert_eq!(
        (stop.status, stop.expiry_reason),
        (Status::Expired, Some(Expiry::PartnerTriggered))
    );
    assert!(e.list(list_id).unwrap().done);
    assert_eq!(bal(&e, acc, "ETH"), (dec!(0), dec!(0)));
    assert_eq!(bal(&e, acc, "USDT"), (dec!(10000) + dec!(3300) - dec!(3.3), dec!(0)));
}

#[test]
fn a_gap_through_a_stop_limit_leaves_it_triggered_unfilled_and_still_locking() {
    let (mut e, acc, _, stop_id, tp_id) = core_with_sell_oco();

    move_price(&mut e, T0 + 60_000, dec!(2600));
    let stop = e.order(stop_id).unwrap();
    assert_eq!((stop.status, stop.triggered, stop.working_time), (Status::New, true, T0 + 60_000));
    assert!(stop.is_working());
    assert_eq!(e.order(tp_id).unwrap().status, Status::Expired);
    assert_eq!(bal(&e, acc, "ETH"), (dec!(0), dec!(1)), "the coin stays locked");
    assert!(e.trades.is_empty());

    // Cancelling the leg of a finished list still cancels it and frees the coin.
    e.cancel_order(stop_id, "cx".to_string(), T0 + 120_000).unwrap();
    assert_eq!(e.order(stop_id).unwrap().status, Status::Canceled);
    assert_eq!(bal(&e, acc, "ETH"), (dec!(1), dec!(0)));
    assert_eq!(e.cancel_order(stop_id, "cx".to_string(), T0 + 120_000), Err(Reject::UnknownOrder));
}

#[test]
fn a_list_needs_a_stop_loss_leg_and_prices_in_order() {
    let (mut e, acc) = core();
    e.fund(acc, "ETH", dec!(1), T0);
    let [tp, _] = sell_oco_legs(dec!(1));
    let no_stop = e.place_oco(acc, ETH, [tp.clone(), tp.clone()], None, T0);
    assert_eq!(no_stop, Err(Reject::ListWithoutStopLoss));
    let [_, sl] = sell_oco_legs(dec!(1));
    let low_tp = Leg { price: Some(dec!(2990)), ..tp };
    assert_eq!(e.place_oco(acc, ETH, [low_tp, sl], None, T0), Err(Reject::ListPrices));
    assert!(e.orders.is_empty() && e.lists.is_empty());
    assert_eq!(bal(&e, acc, "ETH"), (dec!(1), dec!(0)));
}

#[test]
fn coin_locked_by_a_list_cannot_be_sold_again() {
    let (mut e, acc) = core();
    e.fund(acc, "ETH", dec!(1), T0);
    e.place_oco(acc, ETH, sell_oco_legs(dec!(1)), None, T0).unwrap();
    let sell = e.place_order(acc, ETH, leg(OrderType::Market, Side::Sell, dec!(1)), T0);
    assert_eq!(sell.map(|p| p.order_id), Err(Reject::InsufficientBalance));
}

#[test]
fn a_fill_or_kill_the_book_cannot_fill_expires_and_touches_nothing() {
    let (mut e, acc) = core();
    e.fund(acc, "USDT", dec!(90000), T0);
    // Only the best ask (16.6666 ETH) is at or below 3001.
    let fok = limit(Side::Buy, dec!(20), dec!(3001), Tif::Fok);
    let placed = e.place_order(acc, ETH, fok, T0).unwrap();
    let o = e.order(placed.order_id).unwrap();
    assert_eq!((o.status, o.expiry_reason), (Status::Expired, Some(Expiry::UnfilledFok)));
    assert!(placed.fills.is_empty() && e.trades.is_empty());
    assert_eq!(bal(&e, acc, "USDT"), (dec!(100000), dec!(0)));

    // An IOC takes what crosses and expires the rest.
    let ioc = limit(Side::Buy, dec!(20), dec!(3001), Tif::Ioc);
    let placed = e.place_order(acc, ETH, ioc, T0).unwrap();
    let o = e.order(placed.order_id).unwrap();
    assert_eq!((o.status, o.executed_qty), (Status::Expired, dec!(16.6666)));
    assert_eq!(o.expiry_reason, Some(Expiry::UnfilledIoc));
}

#[test]
fn a_client_id_is_refused_while_an_open_order_carries_it() {
    let (mut e, acc) = core();
    let named = |id: &str| Leg {
        client_id: Some(id.to_string()),
        ..limit(Side::Buy, dec!(1), dec!(2900), Tif::Gtc)
    };
    let first = e.place_order(acc, ETH, named("x1"), T0).unwrap();
    assert_eq!(
        e.place_order(acc, ETH, named("x1"), T0).map(|_| ()),
        Err(Reject::DuplicateClientId)
    );
    assert_eq!(e.order_by_client_id(acc, ETH, "x1"), Some(first.order_id));
    e.cancel_order(first.order_id, "cx".to_string(), T0).unwrap();
    assert_eq!(bal(&e, acc, "USDT"), (dec!(10000), dec!(0)));
    let again = e.place_order(acc, ETH, named("x1"), T0).unwrap();
    assert_eq!(e.order_by_client_id(acc, ETH, "x1"), Some(again.order_id), "the newest wins");
}

#[test]
fn filters_and_placement_rules_refuse_before_anything_is_placed() {
    let (mut e, acc) = core();
    let refused = |e: &mut Engine, l: Leg| e.place_order(acc, ETH, l, T0).map(|_| ()).unwrap_err();
    let off_tick = limit(Side::Buy, dec!(1), dec!(2900.005), Tif::Gtc);
    assert_eq!(refused(&mut e, off_tick), Reject::Filter(Filter::Price));
    let tiny = limit(Side::Buy, dec!(0.001), dec!(2900), Tif::Gtc);
    assert_eq!(refused(&mut e, tiny), Reject::Filter(Filter::Notional));
    let off_step = limit(Side::Buy, dec!(0.00001), dec!(2900), Tif::Gtc);
    assert_eq!(refused(&mut e, off_step), Reject::Filter(Filter::LotSize));
    let far = limit(Side::Buy, dec!(1), dec!(100), Tif::Gtc);
    assert_eq!(refused(&mut e, far), Reject::Filter(Filter::PercentPriceBySide));
    let taker =
        Leg { price: Some(dec!(3000.01)), ..leg(OrderType::LimitMaker, Side::Buy, dec!(1)) };
    assert_eq!(refused(&mut e, taker), Reject::WouldTake);
    let stop = Leg { stop: Some(dec!(3100)), ..leg(OrderType::StopLoss, Side::Sell, dec!(1)) };
    assert_eq!(refused(&mut e, stop), Reject::StopWouldTrigger);
    assert_eq!(
        e.place_order(acc, "NOPEUSDT", leg(OrderType::Market, Side::Buy, dec!(1)), T0).map(|_| ()),
        Err(Reject::UnknownSymbol)
    );
    assert!(e.orders.is_empty());
}

#[test]
fn a_market_buy_by_quote_amount_buys_whole_steps() {
    let (mut e, acc) = core();
    let placed = e.place_market_by_quote(acc, ETH, Side::Buy, dec!(100), None, T0).unwrap();
    let o = e.order(placed.order_id).unwrap();
    assert_eq!(
        (o.orig_qty, o.orig_quote_order_qty, o.status),
        (dec!(0.0333), dec!(100), Status::Filled)
    );
    assert_eq!(
        e.place_market_by_quote(acc, ETH, Side::Buy, dec!(1), None, T0).map(|_| ()),
        Err(Reject::Filter(Filter::Notional))
    );
}

#[test]
fn a_scripted_partial_fill_needs_a_resting_limit_and_less_than_its_remainder() {
    let (mut e, acc) = core();
    let placed =
        e.place_order(acc, ETH, limit(Side::Buy, dec!(1), dec!(2900), Tif::Gtc), T0).unwrap();
    assert_eq!(e.fill_partially(placed.order_id, dec!(1), T0), Err(Reject::PartialFillImpossible));
    e.fill_partially(placed.order_id, dec!(0.4), T0).unwrap();
    let o = e.order(placed.order_id).unwrap();
    assert_eq!((o.status, o.remaining()), (Status::PartiallyFilled, dec!(0.6)));
    assert_eq!(bal(&e, acc, "USDT"), (dec!(7100), dec!(1740)));
    assert_eq!(e.fill_partially(99, dec!(0.1), T0), Err(Reject::UnknownOrder));
}

#[test]
fn order_counts_cover_the_window_asked_for() {
    let (mut e, acc) = core();
    for t in [T0, T0 + 5_000, T0 + 11_000] {
        e.place_order(acc, ETH, limit(Side::Buy, dec!(0.01), dec!(2900), Tif::Gtc), t).unwrap();
    }
    assert_eq!(e.order_count_since(acc, T0 + 11_000 - 10_000), 2);
    assert_eq!(e.order_count_since(acc, T0), 3);
}

/// The log as (order id or 0, a short name of the change) pairs, from `from` on.
fn log(e: &Engine, from: u64) -> Vec<(i64, &'static str)> {
    e.events_since(from)
        .iter()
        .map(|ev| match &ev.kind {
            EventKind::Order { order, change } => (
                order.order_id,
                match change {
                    OrderChange::New => "new",
                    OrderChange::Trade(_) => "trade",
                    OrderChange::Canceled { .. } => "canceled",
                    OrderChange::Expired => "expired",
                },
            ),
            EventKind::List(l) => (l.order_list_id, if l.done { "list done" } else { "list open" }),
            EventKind::Balances { .. } => (0, "balances"),
            EventKind::Transfer { .. } => (0, "transfer"),
        })
        .collect()
}

#[test]
fn the_log_tells_each_order_change_then_the_balances_it_moved() {
    let (mut e, acc) = core();
    assert_eq!(log(&e, 0), vec![(0, "transfer"), (0, "balances")]);
    let from = e.event_count();
    e.place_order(acc, ETH, leg(OrderType::Market, Side::Buy, dec!(1)), T0).unwrap();
    assert_eq!(log(&e, from), vec![(1, "new"), (1, "trade"), (0, "balances")]);
    let EventKind::Balances { balances, .. } = &e.events.last().unwrap().kind else { panic!() };
    let assets: Vec<&str> = balances.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(assets, ["ETH", "USDT"], "only the assets the trade moved");

    let from = e.event_count();
    let list = e.place_oco(acc, ETH, sell_oco_legs(dec!(0.5)), None, T0).unwrap();
    assert_eq!(log(&e, from), vec![(2, "new"), (3, "new"), (list, "list open"), (0, "balances")]);
    let from = e.event_count();
    move_price(&mut e, T0 + 60_000, dec!(3310));
    assert_eq!(
        log(&e, from),
        vec![(3, "trade"), (2, "expired"), (list, "list done"), (0, "balances")],
        "the take-profit's fill, its partner's expiry, the list, the balances"
    );

    move_price(&mut e, T0 + 60_500, dec!(3000));
    let from = e.event_count();
    let list = e.place_oco(acc, ETH, sell_oco_legs(dec!(0.4)), None, T0 + 60_500).unwrap();
    e.cancel_list(list, "cx9", T0 + 61_000).unwrap();
    let first_cancel = &e.events_since(from + 4)[0].kind;
    let EventKind::Order { change: OrderChange::Canceled { cancel_client_id }, .. } = first_cancel
    else {
        panic!("{first_cancel:?}")
    };
    assert_eq!(cancel_client_id, "cx9");
    assert_eq!(
        log(&e, from + 4),
        vec![(4, "canceled"), (5, "canceled"), (list, "list done"), (0, "balances")]
    );
    let EventKind::List(l) = &e.events[e.events.len() - 2].kind else { panic!() };
    assert_eq!(l.transaction_time, T0 + 61_000);
}

#[test]
fn a_triggered_stop_shows_as_new_again_once_it_works() {
    let (mut e, acc) = core();
    e.fund(acc, "ETH", dec!(1), T0);
    let list = e.place_oco(acc, ETH, sell_oco_legs(dec!(1)), None, T0).unwrap();
    let from = e.event_count();
    move_price(&mut e, T0 + 60_000, dec!(2600));
    assert_eq!(log(&e, from), vec![(2, "expired"), (list, "list done"), (1, "new")]);
    let EventKind::Order { order, .. } = &e.events.last().unwrap().kind else { panic!() };
    assert!(order.is_working() && order.status.is_open());
}

#[test]
fn acts_between_says_whether_a_price_range_can_trigger_or_fill_an_order() {
    let (mut e, _, _, stop_id, _) = core_with_sell_oco();
    // Take-profit at 3300, stop 2700: the range is widened by a tick (0.01) on each side.
    assert!(!e.acts_between(ETH, dec!(2700.02), dec!(3299.98)));
    assert!(e.acts_between(ETH, dec!(2700.01), dec!(3000)), "a tick from the stop");
    assert!(e.acts_between(ETH, dec!(3000), dec!(3299.99)), "a tick from the take-profit");
    assert!(!e.acts_between("BTCUSDT", dec!(1), dec!(100000)), "no order of that symbol");

    // Where it says no, a walk through the whole range fills and triggers nothing.
    let walk: Vec<_> =
        (0..=40).map(|k| (T0 + 1000 * k, dec!(2701) + Decimal::from(k * 14))).collect();
    e.market.set_path(ETH, walk);
    e.catch_up(T0 + 40_000);
    assert!(e.trades.is_empty());
    assert!(!e.order(stop_id).unwrap().triggered);

    // A stop that gapped past its limit works as a resting sell at 2690.
    move_price(&mut e, T0 + 60_000, dec!(2600));
    assert!(e.order(stop_id).unwrap().triggered);
    assert!(!e.acts_between(ETH, dec!(2500), dec!(2689.98)));
    assert!(e.acts_between(ETH, dec!(2500), dec!(2689.99)));
}

#[test]
fn a_price_off_the_tick_rests_only_when_the_front_end_checked_it() {
    let (mut e, acc) = core();
    let off_tick = limit(Side::Buy, dec!(0.01), dec!(2900.005), Tif::Gtc);
    let refused = e.place_order(acc, ETH, off_tick.clone(), T0 + 1);
    assert_eq!(refused.unwrap_err(), Reject::Filter(Filter::Price));
    let placed = e.place_order_by(acc, ETH, off_tick, PriceRule::FrontEnd, T0 + 1).unwrap();
    assert_eq!(e.order(placed.order_id).unwrap().price, dec!(2900.005));
    let too_high = limit(Side::Buy, dec!(0.01), dec!(2000000), Tif::Gtc);
    let out_of_range = e.place_order_by(acc, ETH, too_high, PriceRule::FrontEnd, T0 + 1);
    assert_eq!(out_of_range.unwrap_err(), Reject::Filter(Filter::Price));
}
