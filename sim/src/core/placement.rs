//! Placing orders and one-cancels-the-other lists: the symbol's filters, the open-order
//! limits, balance checks and locks, and the immediate part of the execution (market and
//! crossing limit orders take from the book on arrival).

use super::events::OrderChange;
use super::matching::End;
use super::{Engine, Expiry, Filter, Leg, Order, OrderList, OrderType, Placed, Reject, Side};
use super::{PriceRule, Status, Tif};
use crate::clock::Millis;
use crate::market::round_to;
use crate::symbols::SymbolRules;
use rust_decimal::{Decimal, RoundingStrategy};

impl Engine {
    /// Places one order of a base quantity on `symbol`, its prices on the symbol's tick.
    pub fn place_order(
        &mut self,
        account: usize,
        symbol: &str,
        leg: Leg,
        now: Millis,
    ) -> Result<Placed, Reject> {
        self.place_order_by(account, symbol, leg, PriceRule::Tick, now)
    }

    /// [`Engine::place_order`] with the price rule of the front end's exchange.
    pub fn place_order_by(
        &mut self,
        account: usize,
        symbol: &str,
        leg: Leg,
        price_rule: PriceRule,
        now: Millis,
    ) -> Result<Placed, Reject> {
        self.action(now, |e| {
            let rules = e.rules(symbol)?.clone();
            let last = e.market.price(&rules, now);
            if let Some(c) = &leg.client_id {
                e.ensure_client_id_free(account, c)?;
            }
            let Leg { order_type, side, qty, price, stop, tif, .. } = leg;
            check_filters(&rules, &leg, price_rule, last)?;
            e.check_open_counts(account, symbol, &rules, 1, usize::from(order_type.is_stop()))?;
            if let Some(s) = stop
                && stop_would_trigger(order_type, side, s, last)
            {
                return Err(Reject::StopWouldTrigger);
            }
            let book = e.book(&rules, last);
            let best_bid = book.bids.first().map_or(Decimal::ZERO, |b| b.0);
            let best_ask = book.asks.first().map_or(Decimal::MAX, |a| a.0);
            if order_type == OrderType::LimitMaker {
                let px = price.unwrap_or_default();
                let crosses = match side {
                    Side::Buy => px >= best_ask,
                    Side::Sell => px <= best_bid,
                };
                if crosses {
                    return Err(Reject::WouldTake);
                }
            }
            // Balance check and lock.
            let (pay_asset, need) = match side {
                Side::Sell => (rules.base.clone(), qty),
                Side::Buy => {
                    let need = match order_type {
                        OrderType::Market | OrderType::StopLoss | OrderType::TakeProfit => {
                            let ref_px = stop.unwrap_or(last);
                            let (_, cost) = e.market_cost(&rules, side, ref_px, qty);
                            cost
                        }
                        _ => price.unwrap_or_default() * qty,
                    };
                    (rules.quote.clone(), need.round_dp(8))
                }
            };
            if e.free(account, &pay_asset) < need {
                return Err(Reject::InsufficientBalance);
            }
            if order_type == OrderType::Limit && tif == Tif::Fok {
                let avail = e.available(&rules, side, last, price);
                if avail < qty {
                    let idx = e.push_order(account, symbol, &leg, -1, now);
                    let o = &mut e.orders[idx];
                    o.status = Status::Expired;
                    o.expiry_reason = Some(Expiry::UnfilledFok);
                    let order_id = o.order_id;
                    e.emit_order(idx, OrderChange::Expired, now);
                    return Ok(Placed { order_id, fills: Vec::new() });
                }
            }
            let idx = e.push_order(account, symbol, &leg, -1, now);
            let rests = order_type != OrderType::Market
                && !(order_type == OrderType::Limit && tif != Tif::Gtc);
            if rests {
                e.lock(account, &pay_asset, need);
                e.orders[idx].lock = need;
            }
            let fills = match order_type {
                OrderType::Market => {
                    let f = e.take(idx, last, None, now);
                    if e.orders[idx].status.is_open() {
                        e.finish(idx, End::Expired(Expiry::InsufficientLiquidity), now);
                    }
                    f
                }
                OrderType::Limit => {
                    let f = e.take(idx, last, price, now);
                    if tif != Tif::Gtc && e.orders[idx].status.is_open() {
                        e.finish(idx, End::Expired(Expiry::UnfilledIoc), now);
                    }
                    f
                }
                _ => Vec::new(),
            };
            e.release_if_done(idx);
            Ok(Placed { order_id: e.orders[idx].order_id, fills })
        })
    }

    /// Places a market order for `quote_qty` of the quote asset: the base quantity is what
    /// that buys (or sells for) along the book, in whole steps.
    pub fn place_market_by_quote(
        &mut self,
        account: usize,
        symbol: &str,
        side: Side,
        quote_qty: Decimal,
        client_id: Option<String>,
        now: Millis,
    ) -> Result<Placed, Reject> {
        self.action(now, |e| e.take_by_quote(account, symbol, (side, quote_qty), client_id, now))
    }

    fn take_by_quote(
        &mut self,
        account: usize,
        symbol: &str,
        (side, quote_qty): (Side, Decimal),
        client_id: Option<String>,
        now: Millis,
    ) -> Result<Placed, Reject> {
        let rules = self.rules(symbol)?.clone();
        let last = self.market.price(&rules, now);
        if let Some(c) = &client_id {
            self.ensure_client_id_free(account, c)?;
        }
        if quote_qty < rules.min_notional {
            return Err(Reject::Filter(Filter::Notional));
        }
        let mut left = quote_qty;
        let mut qty = Decimal::ZERO;
        for (lp, lq) in self.book(&rules, last).against(side) {
            let q = round_to(left / lp, rules.step, RoundingStrategy::ToZero).min(lq);
            if q <= Decimal::ZERO {
                break;
            }
            qty += q;
            left -= q * lp;
        }
        if qty < rules.min_qty {
            return Err(Reject::BookBelowMinQty);
        }
        let enough = match side {
            Side::Buy => self.free(account, &rules.quote) >= quote_qty - left,
            Side::Sell => self.free(account, &rules.base) >= qty,
        };
        if !enough {
            return Err(Reject::InsufficientBalance);
        }
        let leg = Leg {
            order_type: OrderType::Market,
            side,
            qty,
            price: None,
            stop: None,
            tif: Tif::Gtc,
            client_id,
        };
        let idx = self.push_order(account, symbol, &leg, -1, now);
        self.orders[idx].orig_quote_order_qty = quote_qty;
        let fills = self.take(idx, last, None, now);
        if self.orders[idx].status.is_open() {
            self.finish(idx, End::Expired(Expiry::InsufficientLiquidity), now);
        }
        Ok(Placed { order_id: self.orders[idx].order_id, fills })
    }

    /// Places a one-cancels-the-other list of a stop-loss leg and a take-profit leg (same side
    /// and quantity). `legs` come in the order the client named them, which is the order they
    /// are checked in; the list names its stop leg first. Returns the list id.
    pub fn place_oco(
        &mut self,
        account: usize,
        symbol: &str,
        legs: [Leg; 2],
        list_client_id: Option<String>,
        now: Millis,
    ) -> Result<i64, Reject> {
        self.action(now, |e| {
            let rules = e.rules(symbol)?.clone();
            let [a, b] = legs;
            let (sl, tp) = match (a.order_type.is_stop_loss(), b.order_type.is_stop_loss()) {
                (true, false) => (&a, &b),
                (false, true) => (&b, &a),
                _ => return Err(Reject::ListWithoutStopLoss),
            };
            let last = e.market.price(&rules, now);
            for leg in [&a, &b] {
                check_filters(&rules, leg, PriceRule::Tick, last)?;
            }
            let side = a.side;
            let tp_px = if tp.order_type == OrderType::LimitMaker { tp.price } else { tp.stop }
                .unwrap_or_default();
            let sl_px = sl.stop.unwrap_or_default();
            let ordered = match side {
                Side::Sell => tp_px > last && last > sl_px,
                Side::Buy => tp_px < last && last < sl_px,
            };
            if !ordered {
                return Err(Reject::ListPrices);
            }
            for c in [&a.client_id, &b.client_id].into_iter().flatten() {
                e.ensure_client_id_free(account, c)?;
            }
            if let Some(lc) = &list_client_id
                && e.lists
                    .iter()
                    .any(|l| l.account == account && !l.done && &l.list_client_order_id == lc)
            {
                return Err(Reject::DuplicateClientId);
            }
            e.check_open_counts(account, symbol, &rules, 2, 1)?;
            let qty = a.qty;
            let (asset, need) = match side {
                Side::Sell => (rules.base.clone(), qty),
                Side::Buy => {
                    let px = [a.price, a.stop, b.price, b.stop]
                        .into_iter()
                        .flatten()
                        .max()
                        .unwrap_or_default();
                    (rules.quote.clone(), (px * qty).round_dp(8))
                }
            };
            if e.free(account, &asset) < need {
                return Err(Reject::InsufficientBalance);
            }
            let list_id = e.lists.len() as i64 + 1;
            let list_client_order_id = match list_client_id {
                Some(c) => c,
                None => e.new_client_id(),
            };
            let i1 = e.push_order(account, symbol, sl, list_id, now);
            let i2 = e.push_order(account, symbol, tp, list_id, now);
            e.lock(account, &asset, need);
            e.lists.push(OrderList {
                account,
                order_list_id: list_id,
                list_client_order_id,
                symbol: symbol.to_string(),
                orders: vec![e.orders[i1].order_id, e.orders[i2].order_id],
                done: false,
                transaction_time: now,
                lock: need,
            });
            e.emit_list(e.lists.len() - 1, now);
            Ok(list_id)
        })
    }

    fn check_open_counts(
        &self,
        account: usize,
        symbol: &str,
        rules: &SymbolRules,
        new: usize,
        new_algo: usize,
    ) -> Result<(), Reject> {
        let open: Vec<&Order> =
            self.open_orders().filter(|o| o.account == account && o.symbol == symbol).collect();
        if open.len() + new > rules.max_num_orders {
            return Err(Reject::Filter(Filter::MaxNumOrders));
        }
        let algo = open.iter().filter(|o| o.order_type.is_stop()).count();
        if new_algo > 0 && algo + new_algo > rules.max_num_algo_orders {
            return Err(Reject::Filter(Filter::MaxNumAlgoOrders));
        }
        Ok(())
    }

    fn push_order(
        &mut self,
        account: usize,
        symbol: &str,
        leg: &Leg,
        list_id: i64,
        now: Millis,
    ) -> usize {
        let client_order_id = match &leg.client_id {
            Some(c) => c.clone(),
            None => self.new_client_id(),
        };
        let order = Order {
            account,
            symbol: symbol.to_string(),
            order_id: self.orders.len() as i64 + 1,
            order_list_id: list_id,
            client_order_id,
            price: leg.price.unwrap_or(Decimal::ZERO),
            orig_qty: leg.qty,
            executed_qty: Decimal::ZERO,
            cum_quote: Decimal::ZERO,
            orig_quote_order_qty: Decimal::ZERO,
            status: Status::New,
            tif: leg.tif,
            order_type: leg.order_type,
            side: leg.side,
            stop_price: leg.stop,
            time: now,
            update_time: now,
            working_time: if leg.order_type.is_stop() { -1 } else { now },
            triggered: false,
            expiry_reason: None,
            lock: Decimal::ZERO,
        };
        self.orders.push(order);
        let idx = self.orders.len() - 1;
        self.maybe_open.push(idx);
        self.emit_order(idx, OrderChange::New, now);
        idx
    }
}

/// The symbol's price, quantity and notional filters for one order at last price `p`.
fn check_filters(
    rules: &SymbolRules,
    leg: &Leg,
    price_rule: PriceRule,
    p: Decimal,
) -> Result<(), Reject> {
    let fail = |f| Err(Reject::Filter(f));
    for px in [leg.price, leg.stop].into_iter().flatten() {
        let off_grid = price_rule == PriceRule::Tick && !(px % rules.tick).is_zero();
        if px < rules.min_price || px > rules.max_price || off_grid {
            return fail(Filter::Price);
        }
    }
    if leg.order_type == OrderType::Market {
        if leg.qty > rules.market_max_qty {
            return fail(Filter::MarketLotSize);
        }
        if leg.qty < rules.min_qty || !(leg.qty % rules.step).is_zero() {
            return fail(Filter::LotSize);
        }
    } else if leg.qty < rules.min_qty
        || leg.qty > rules.max_qty
        || !(leg.qty % rules.step).is_zero()
    {
        return fail(Filter::LotSize);
    }
    let ref_price = leg.price.or(leg.stop).unwrap_or(p);
    if let Some(px) = leg.price {
        let (down, up) = (Decimal::new(2, 1), Decimal::from(5));
        if px < p * down || px > p * up {
            return fail(Filter::PercentPriceBySide);
        }
    }
    let notional = ref_price * leg.qty;
    if notional < rules.min_notional {
        return fail(Filter::Notional);
    }
    if leg.order_type != OrderType::Market && notional > rules.max_notional {
        return fail(Filter::Notional);
    }
    Ok(())
}

/// Whether a stop at `stop` would already be triggered by last price `p`.
fn stop_would_trigger(t: OrderType, side: Side, stop: Decimal, p: Decimal) -> bool {
    match (t.is_stop_loss(), side) {
        (true, Side::Sell) | (false, Side::Buy) => stop >= p,
        (true, Side::Buy) | (false, Side::Sell) => stop <= p,
    }
}
