//! Matching: fills against the synthetic book with fees and trade records, the end of an
//! order (and the release of its lock), and the catch-up that walks the market's price path
//! since the last look, triggering stops and filling resting limits at the time it happened.

use super::book::book_top;
use super::events::OrderChange;
use super::{Engine, Expiry, Fill, Reject, Side, Status, Trade};
use crate::clock::Millis;
use crate::symbols::SymbolRules;
use rust_decimal::Decimal;

impl Engine {
    /// Books one fill of order `idx`: balances (locked first, then free), fees, trade record.
    pub(super) fn fill(
        &mut self,
        idx: usize,
        price: Decimal,
        qty: Decimal,
        maker: bool,
        t: Millis,
    ) -> Fill {
        let (account, side, symbol) = {
            let o = &self.orders[idx];
            (o.account, o.side, o.symbol.clone())
        };
        let (base, quote) = match self.rules(&symbol) {
            Ok(r) => (r.base.clone(), r.quote.clone()),
            Err(_) => (String::new(), String::new()),
        };
        let quote_qty = (price * qty).round_dp(8);
        let rate = if maker { self.config.maker_fee } else { self.config.taker_fee };
        let (pay_asset, pay_amount, get_asset, get_amount) = match side {
            Side::Buy => (quote, quote_qty, base, qty),
            Side::Sell => (base, qty, quote, quote_qty),
        };
        let commission = (get_amount * rate).round_dp(8);
        let from_lock = self.take_lock(idx, pay_amount);
        if let Some(b) = self.balance_mut(account, &pay_asset) {
            b.locked = (b.locked - from_lock).max(Decimal::ZERO);
            b.free -= pay_amount - from_lock;
        }
        if let Some(b) = self.balance_mut(account, &get_asset) {
            b.free += get_amount - commission;
        }
        if let Some(a) = self.accounts.get_mut(account) {
            a.update_time = t;
        }
        let trade_id = self.trades.len() as i64 + 1;
        let o = &mut self.orders[idx];
        o.executed_qty += qty;
        o.cum_quote += quote_qty;
        o.update_time = t;
        o.status =
            if o.executed_qty >= o.orig_qty { Status::Filled } else { Status::PartiallyFilled };
        let order_id = o.order_id;
        let order_list_id = o.order_list_id;
        self.trades.push(Trade {
            account,
            symbol,
            id: trade_id,
            order_id,
            order_list_id,
            price,
            qty,
            quote_qty,
            commission,
            commission_asset: get_asset.clone(),
            time: t,
            is_buyer: side == Side::Buy,
            is_maker: maker,
        });
        let fill =
            Fill { price, qty, commission, commission_asset: get_asset, trade_id, is_maker: maker };
        self.emit_order(idx, OrderChange::Trade(fill.clone()), t);
        fill
    }

    /// Test control: a counterparty takes `qty` of resting LIMIT order `order_id` at the
    /// order's own price (maker); the order stays PARTIALLY_FILLED. The matching engine itself
    /// fills resting orders completely, so this is the only way to a partial fill.
    pub fn fill_partially(&mut self, order_id: i64, qty: Decimal, t: Millis) -> Result<(), Reject> {
        let idx = self.order_idx(order_id).ok_or(Reject::UnknownOrder)?;
        let o = &self.orders[idx];
        let resting = o.status.is_open() && o.order_type.has_limit_price() && o.is_working();
        if !resting || qty <= Decimal::ZERO || qty >= o.remaining() {
            return Err(Reject::PartialFillImpossible);
        }
        let price = o.price;
        self.fill(idx, price, qty, true, t);
        self.flush_balances(t);
        Ok(())
    }

    /// Ends an open order and releases what it still locks.
    pub(super) fn finish(&mut self, idx: usize, end: End, t: Millis) {
        let o = &mut self.orders[idx];
        if !o.status.is_open() {
            return;
        }
        o.update_time = t;
        let change = match end {
            End::Canceled { cancel_client_id } => {
                o.status = Status::Canceled;
                OrderChange::Canceled { cancel_client_id }
            }
            End::Expired(reason) => {
                o.status = Status::Expired;
                o.expiry_reason = Some(reason);
                OrderChange::Expired
            }
        };
        self.emit_order(idx, change, t);
        self.release_if_done(idx);
    }

    /// Releases the remaining lock of a finished order, or of a list whose legs are all done.
    pub(super) fn release_if_done(&mut self, idx: usize) {
        let o = self.orders[idx].clone();
        let asset = self.lock_asset(&o);
        if o.order_list_id > 0 {
            let Some(li) = self.list_idx(o.order_list_id) else { return };
            let all_done = self.lists[li]
                .orders
                .iter()
                .filter_map(|id| self.order_idx(*id))
                .all(|i| !self.orders[i].status.is_open());
            if all_done {
                let amount = std::mem::take(&mut self.lists[li].lock);
                self.unlock(o.account, &asset, amount);
                if !self.lists[li].done {
                    self.lists[li].done = true;
                    self.emit_list(li, o.update_time);
                }
            }
        } else if !o.status.is_open() {
            let amount = std::mem::take(&mut self.orders[idx].lock);
            self.unlock(o.account, &asset, amount);
        }
    }

    /// Taker execution of order `idx` against the synthetic book at price `p`, up to its
    /// limit price (none for market). Returns the fills.
    pub(super) fn take(
        &mut self,
        idx: usize,
        p: Decimal,
        limit: Option<Decimal>,
        t: Millis,
    ) -> Vec<Fill> {
        let Ok(rules) = self.rules(&self.orders[idx].symbol).cloned() else {
            return Vec::new();
        };
        let side = self.orders[idx].side;
        let mut fills = Vec::new();
        for (lp, lq) in self.book(&rules, p).against(side) {
            let remaining = self.orders[idx].remaining();
            if remaining <= Decimal::ZERO {
                break;
            }
            if let Some(l) = limit {
                let crosses = match side {
                    Side::Buy => lp <= l,
                    Side::Sell => lp >= l,
                };
                if !crosses {
                    break;
                }
            }
            let q = lq.min(remaining);
            fills.push(self.fill(idx, lp, q, false, t));
        }
        fills
    }

    /// Brings resting orders up to date with the market from the last evaluation to `now`:
    /// stops trigger on the price path, resting limits fill when the market trades through.
    pub fn catch_up(&mut self, now: Millis) {
        let orders = &self.orders;
        self.maybe_open.retain(|&i| orders[i].status.is_open());
        let from = self.evaluated_until.unwrap_or(now);
        // Every window ends now; symbols without open orders simply start theirs now.
        self.evaluated_until = Some(now);
        if self.maybe_open.is_empty() {
            return;
        }
        // The open orders of each symbol that has some, found once: nothing is placed while
        // the market is walked.
        let mut by_symbol: Vec<(usize, Vec<usize>)> = Vec::new();
        for &i in &self.maybe_open {
            let Some(&symbol) = self.index.get(&self.orders[i].symbol) else { continue };
            match by_symbol.iter_mut().find(|(s, _)| *s == symbol) {
                Some((_, orders)) => orders.push(i),
                None => by_symbol.push((symbol, vec![i])),
            }
        }
        // In the symbols' name order, as the walk always went (fills of different symbols
        // share the quote balance and the trade ids).
        by_symbol
            .sort_unstable_by(|(a, _), (b, _)| self.rules[*a].symbol.cmp(&self.rules[*b].symbol));
        for (symbol, open) in by_symbol {
            let rules = self.rules[symbol].clone();
            for (t, p) in self.market.samples(&rules, from, now) {
                self.evaluate(&rules, &open, t, p);
                self.flush_balances(t);
            }
        }
    }

    /// Whether some open order of `symbol` would trigger or fill at a price between `low` and
    /// `high` (a tick wider on each side): whether a price path inside that range can do
    /// anything at all. Every condition of [`Engine::evaluate`] is a threshold on the price,
    /// so one that holds anywhere in the range holds at one of its ends. A path that stays
    /// inside a range where this is false fills nothing and triggers nothing, however finely it
    /// is sampled (a backtest scripts such candles with their four prices only).
    pub fn acts_between(&self, symbol: &str, low: Decimal, high: Decimal) -> bool {
        let Ok(rules) = self.rules(symbol) else { return false };
        let ends = [(low - rules.tick).max(Decimal::ZERO), high + rules.tick]
            .map(|p| (p, book_top(rules, p)));
        self.open_orders().filter(|o| o.symbol == symbol).any(|o| {
            ends.iter().any(|&(p, (bid, ask))| o.triggers_at(p) || o.fills_against(bid, ask))
        })
    }

    /// One price sample `p` at `t`: stops trigger on it, then resting limits it crosses fill
    /// (`open`: the symbol's orders open when the walk began, oldest first).
    fn evaluate(&mut self, rules: &SymbolRules, open: &[usize], t: Millis, p: Decimal) {
        let (book_bid, book_ask) = book_top(rules, p);
        // 1. Stop triggers on the last price.
        for &i in open {
            if !self.orders[i].triggers_at(p) {
                continue;
            }
            let o = &mut self.orders[i];
            o.triggered = true;
            o.working_time = t;
            o.update_time = t;
            let list_id = o.order_list_id;
            let limit = o.order_type.has_limit_price().then_some(o.price);
            self.expire_partners(list_id, i, t);
            // The stop works from now on (the stream shows it as a repeated NEW).
            self.emit_order(i, OrderChange::New, t);
            self.take(i, p, limit, t);
            if limit.is_none() && self.orders[i].status.is_open() {
                self.finish(i, End::Expired(Expiry::InsufficientLiquidity), t);
            }
            self.release_if_done(i);
        }
        // 2. Resting limits fill at their price when the market trades through.
        for &i in open {
            let o = &self.orders[i];
            if !o.fills_against(book_bid, book_ask) {
                continue;
            }
            let (price, qty, list_id) = (o.price, o.remaining(), o.order_list_id);
            self.fill(i, price, qty, true, t);
            self.expire_partners(list_id, i, t);
            self.release_if_done(i);
        }
    }

    /// The other legs of list `list_id` expire because leg `idx` filled or started working.
    fn expire_partners(&mut self, list_id: i64, idx: usize, t: Millis) {
        if list_id <= 0 {
            return;
        }
        let Some(li) = self.list_idx(list_id) else { return };
        if self.lists[li].done {
            return;
        }
        let legs: Vec<i64> = self.lists[li].orders.clone();
        for id in legs {
            if let Some(j) = self.order_idx(id)
                && j != idx
                && self.orders[j].status.is_open()
            {
                let o = &mut self.orders[j];
                o.status = Status::Expired;
                o.expiry_reason = Some(Expiry::PartnerTriggered);
                o.update_time = t;
                self.emit_order(j, OrderChange::Expired, t);
            }
        }
        self.lists[li].done = true;
        self.lists[li].transaction_time = t;
        self.emit_list(li, t);
    }
}

/// How an open order ends other than by filling.
pub(super) enum End {
    Canceled { cancel_client_id: String },
    Expired(Expiry),
}
