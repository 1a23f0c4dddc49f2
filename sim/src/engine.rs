//! The matching engine and the accounts: orders, OCO order lists, trades, free/locked balances
//! and fees. The counterparty is a synthetic order book around the market price (see
//! [`Book`]); resting orders fill when the market trades through them, stops trigger on the
//! last price and then rest at their limit (so a gap can leave them unfilled).

use crate::clock::Millis;
use crate::market::{Market, round_to};
use crate::params::{ApiError, Params};
use crate::symbols::{SymbolRules, fmt8};
use crate::wire::{
    AccountJson, BalanceJson, CommissionRatesJson, FillJson, ListLegJson, OrderJson, OrderListJson,
    TradeJson,
};
use rust_decimal::{Decimal, RoundingStrategy};
use std::collections::{BTreeMap, HashMap};
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Buy,
    Sell,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Buy => "BUY",
            Side::Sell => "SELL",
        }
    }
    fn parse(s: &str) -> Result<Self, ApiError> {
        match s {
            "BUY" => Ok(Side::Buy),
            "SELL" => Ok(Side::Sell),
            _ => Err(ApiError::bad(-1117, "Invalid side.")),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderType {
    Limit,
    Market,
    StopLoss,
    StopLossLimit,
    TakeProfit,
    TakeProfitLimit,
    LimitMaker,
}

impl OrderType {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderType::Limit => "LIMIT",
            OrderType::Market => "MARKET",
            OrderType::StopLoss => "STOP_LOSS",
            OrderType::StopLossLimit => "STOP_LOSS_LIMIT",
            OrderType::TakeProfit => "TAKE_PROFIT",
            OrderType::TakeProfitLimit => "TAKE_PROFIT_LIMIT",
            OrderType::LimitMaker => "LIMIT_MAKER",
        }
    }
    fn parse(s: &str) -> Result<Self, ApiError> {
        Ok(match s {
            "LIMIT" => OrderType::Limit,
            "MARKET" => OrderType::Market,
            "STOP_LOSS" => OrderType::StopLoss,
            "STOP_LOSS_LIMIT" => OrderType::StopLossLimit,
            "TAKE_PROFIT" => OrderType::TakeProfit,
            "TAKE_PROFIT_LIMIT" => OrderType::TakeProfitLimit,
            "LIMIT_MAKER" => OrderType::LimitMaker,
            _ => return Err(ApiError::bad(-1116, "Invalid orderType.")),
        })
    }
    fn is_stop(self) -> bool {
        matches!(
            self,
            OrderType::StopLoss
                | OrderType::StopLossLimit
                | OrderType::TakeProfit
                | OrderType::TakeProfitLimit
        )
    }
    fn is_stop_loss(self) -> bool {
        matches!(self, OrderType::StopLoss | OrderType::StopLossLimit)
    }
    fn has_limit_price(self) -> bool {
        matches!(
            self,
            OrderType::Limit
                | OrderType::LimitMaker
                | OrderType::StopLossLimit
                | OrderType::TakeProfitLimit
        )
    }
    fn needs_tif(self) -> bool {
        matches!(self, OrderType::Limit | OrderType::StopLossLimit | OrderType::TakeProfitLimit)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tif {
    Gtc,
    Ioc,
    Fok,
}

impl Tif {
    pub fn as_str(self) -> &'static str {
        match self {
            Tif::Gtc => "GTC",
            Tif::Ioc => "IOC",
            Tif::Fok => "FOK",
        }
    }
    fn parse(s: &str) -> Result<Self, ApiError> {
        match s {
            "GTC" => Ok(Tif::Gtc),
            "IOC" => Ok(Tif::Ioc),
            "FOK" => Ok(Tif::Fok),
            _ => Err(ApiError::bad(-1115, "Invalid timeInForce.")),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    New,
    PartiallyFilled,
    Filled,
    Canceled,
    Expired,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::New => "NEW",
            Status::PartiallyFilled => "PARTIALLY_FILLED",
            Status::Filled => "FILLED",
            Status::Canceled => "CANCELED",
            Status::Expired => "EXPIRED",
        }
    }
    pub fn is_open(self) -> bool {
        matches!(self, Status::New | Status::PartiallyFilled)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RespType {
    Ack,
    Result,
    Full,
}

fn resp_type(p: &Params, default: RespType) -> Result<RespType, ApiError> {
    match p.get("newOrderRespType") {
        None => Ok(default),
        Some("ACK") => Ok(RespType::Ack),
        Some("RESULT") => Ok(RespType::Result),
        Some("FULL") => Ok(RespType::Full),
        Some(_) => Err(ApiError::bad(
            -1100,
            "Illegal characters found in parameter 'newOrderRespType'; legal range is 'ACK, RESULT, FULL'.",
        )),
    }
}

/// One order, in whatever state it is.
#[derive(Debug, Clone)]
pub struct Order {
    pub account: usize,
    pub symbol: String,
    pub order_id: i64,
    pub order_list_id: i64,
    pub client_order_id: String,
    pub price: Decimal,
    pub orig_qty: Decimal,
    pub executed_qty: Decimal,
    pub cum_quote: Decimal,
    pub orig_quote_order_qty: Decimal,
    pub status: Status,
    pub tif: Tif,
    pub order_type: OrderType,
    pub side: Side,
    pub stop_price: Option<Decimal>,
    pub time: Millis,
    pub update_time: Millis,
    pub working_time: Millis,
    pub triggered: bool,
    pub expiry_reason: Option<&'static str>,
    /// Amount of the lock asset this order still holds (list legs hold theirs on the list).
    lock: Decimal,
}

impl Order {
    fn is_working(&self) -> bool {
        !self.order_type.is_stop() || self.triggered
    }
    fn remaining(&self) -> Decimal {
        self.orig_qty - self.executed_qty
    }
}

#[derive(Debug, Clone)]
pub struct OrderList {
    pub account: usize,
    pub order_list_id: i64,
    pub list_client_order_id: String,
    pub symbol: String,
    /// Leg order ids: the stop leg first, then the limit leg.
    pub orders: Vec<i64>,
    pub done: bool,
    pub transaction_time: Millis,
    lock: Decimal,
}

#[derive(Debug, Clone)]
pub struct Trade {
    pub account: usize,
    pub symbol: String,
    pub id: i64,
    pub order_id: i64,
    pub order_list_id: i64,
    pub price: Decimal,
    pub qty: Decimal,
    pub quote_qty: Decimal,
    pub commission: Decimal,
    pub commission_asset: String,
    pub time: Millis,
    pub is_buyer: bool,
    pub is_maker: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Balance {
    pub free: Decimal,
    pub locked: Decimal,
}

#[derive(Debug, Clone)]
pub struct Account {
    pub api_key: String,
    pub secret: String,
    pub balances: BTreeMap<String, Balance>,
    pub update_time: Millis,
}

/// The synthetic counterparty: a ladder of levels on each side of the market price.
#[derive(Debug, Clone)]
pub struct Book {
    pub bids: Vec<(Decimal, Decimal)>,
    pub asks: Vec<(Decimal, Decimal)>,
}

/// Engine tunables.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub maker_fee: Decimal,
    pub taker_fee: Decimal,
    /// Quote notional available at each synthetic book level.
    pub level_notional: Decimal,
    pub levels: usize,
    /// Distance between synthetic levels as a fraction of the price.
    pub level_spacing: Decimal,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            maker_fee: Decimal::new(1, 3),
            taker_fee: Decimal::new(1, 3),
            level_notional: Decimal::from(50_000),
            levels: 20,
            level_spacing: Decimal::new(5, 4),
        }
    }
}

fn gen_client_id(seed: u64) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut z = seed;
    (0..22)
        .map(|_| {
            z = crate::market::mix(z);
            let x = z;
            ALPHABET[(x % ALPHABET.len() as u64) as usize] as char
        })
        .collect()
}

/// A validated leg of an order or an OCO.
#[derive(Debug, Clone)]
struct LegSpec {
    order_type: OrderType,
    side: Side,
    qty: Decimal,
    price: Option<Decimal>,
    stop: Option<Decimal>,
    tif: Tif,
    client_id: Option<String>,
}

/// Everything the simulated exchange knows.
#[derive(Debug)]
pub struct Engine {
    pub config: EngineConfig,
    pub rules: Vec<SymbolRules>,
    index: HashMap<String, usize>,
    pub market: Market,
    pub orders: Vec<Order>,
    pub lists: Vec<OrderList>,
    pub trades: Vec<Trade>,
    pub accounts: Vec<Account>,
    last_eval: HashMap<String, Millis>,
    id_seed: u64,
    /// Every order below this index is finished: scans for open orders start here.
    first_open: usize,
}

impl Engine {
    pub fn new(rules: Vec<SymbolRules>, market: Market, config: EngineConfig) -> Self {
        let index = rules.iter().enumerate().map(|(i, r)| (r.symbol.clone(), i)).collect();
        let id_seed = market.synthetic.seed;
        Self {
            config,
            rules,
            index,
            market,
            orders: Vec::new(),
            lists: Vec::new(),
            trades: Vec::new(),
            accounts: Vec::new(),
            last_eval: HashMap::new(),
            id_seed,
            first_open: 0,
        }
    }

    pub fn add_account(&mut self, api_key: &str, secret: &str) -> usize {
        if let Some(i) = self.account_by_key(api_key) {
            return i;
        }
        self.accounts.push(Account {
            api_key: api_key.to_string(),
            secret: secret.to_string(),
            balances: BTreeMap::new(),
            update_time: 0,
        });
        self.accounts.len() - 1
    }

    pub fn account_by_key(&self, api_key: &str) -> Option<usize> {
        self.accounts.iter().position(|a| a.api_key == api_key)
    }

    /// Adds (or with a negative amount removes, down to zero) free balance.
    pub fn fund(&mut self, account: usize, asset: &str, amount: Decimal) {
        if let Some(acc) = self.accounts.get_mut(account) {
            let b = acc.balances.entry(asset.to_string()).or_default();
            b.free = b.free.checked_add(amount).unwrap_or(b.free).max(Decimal::ZERO);
        }
    }

    pub fn rules(&self, symbol: &str) -> Result<&SymbolRules, ApiError> {
        self.index
            .get(symbol)
            .and_then(|i| self.rules.get(*i))
            .ok_or_else(|| ApiError::bad(-1121, "Invalid symbol."))
    }

    pub fn price(&self, symbol: &str, t: Millis) -> Result<Decimal, ApiError> {
        let r = self.rules(symbol)?;
        Ok(self.market.price(r, t))
    }

    /// The synthetic book around price `p`: best bid = p rounded down to the tick, best ask one
    /// tick above, then `levels` levels spaced by `level_spacing`.
    pub fn book(&self, rules: &SymbolRules, p: Decimal) -> Book {
        let tick = rules.tick;
        let best_bid = round_to(p, tick, RoundingStrategy::ToNegativeInfinity).max(tick);
        let best_ask = best_bid + tick;
        let mut bids = Vec::new();
        let mut asks = Vec::new();
        let mut last_bid = None::<Decimal>;
        let mut last_ask = None::<Decimal>;
        for k in 0..self.config.levels {
            let f = self.config.level_spacing * Decimal::from(k as u64);
            let mut b =
                round_to(best_bid * (Decimal::ONE - f), tick, RoundingStrategy::ToNegativeInfinity);
            let mut a =
                round_to(best_ask * (Decimal::ONE + f), tick, RoundingStrategy::ToPositiveInfinity);
            if let Some(lb) = last_bid {
                b = b.min(lb - tick);
            }
            if let Some(la) = last_ask {
                a = a.max(la + tick);
            }
            last_bid = Some(b);
            last_ask = Some(a);
            if b > Decimal::ZERO {
                let q =
                    round_to(self.config.level_notional / b, rules.step, RoundingStrategy::ToZero)
                        .max(rules.step);
                bids.push((b, q));
            }
            let q = round_to(self.config.level_notional / a, rules.step, RoundingStrategy::ToZero)
                .max(rules.step);
            asks.push((a, q));
        }
        Book { bids, asks }
    }

    fn next_order_id(&self) -> i64 {
        self.orders.len() as i64 + 1
    }

    fn new_client_id(&mut self) -> String {
        self.id_seed = self.id_seed.wrapping_add(1);
        gen_client_id(self.id_seed ^ (self.orders.len() as u64) << 20)
    }

    fn balance_mut(&mut self, account: usize, asset: &str) -> Option<&mut Balance> {
        self.accounts.get_mut(account).map(|a| a.balances.entry(asset.to_string()).or_default())
    }

    fn free(&self, account: usize, asset: &str) -> Decimal {
        self.accounts
            .get(account)
            .and_then(|a| a.balances.get(asset))
            .map_or(Decimal::ZERO, |b| b.free)
    }

    /// Moves `amount` from free to locked.
    fn lock(&mut self, account: usize, asset: &str, amount: Decimal) {
        if let Some(b) = self.balance_mut(account, asset) {
            b.free -= amount;
            b.locked += amount;
        }
    }

    /// Moves `amount` from locked back to free.
    fn unlock(&mut self, account: usize, asset: &str, amount: Decimal) {
        if amount <= Decimal::ZERO {
            return;
        }
        if let Some(b) = self.balance_mut(account, asset) {
            let a = amount.min(b.locked);
            b.locked -= a;
            b.free += a;
        }
    }

    fn order_idx(&self, order_id: i64) -> Option<usize> {
        let i = usize::try_from(order_id.checked_sub(1)?).ok()?;
        (i < self.orders.len()).then_some(i)
    }

    fn list_idx(&self, list_id: i64) -> Option<usize> {
        let i = usize::try_from(list_id.checked_sub(1)?).ok()?;
        (i < self.lists.len()).then_some(i)
    }

    fn lock_asset(&self, o: &Order) -> String {
        let rules = self.rules(&o.symbol).ok();
        match o.side {
            Side::Sell => rules.map(|r| r.base.clone()).unwrap_or_default(),
            Side::Buy => rules.map(|r| r.quote.clone()).unwrap_or_default(),
        }
    }

    /// Takes `amount` out of the order's (or its list's) lock, returning how much came from it.
    fn take_lock(&mut self, idx: usize, amount: Decimal) -> Decimal {
        let list = self.orders[idx].order_list_id;
        let holder = if list > 0 {
            match self.list_idx(list) {
                Some(li) => &mut self.lists[li].lock,
                None => &mut self.orders[idx].lock,
            }
        } else {
            &mut self.orders[idx].lock
        };
        let from_lock = amount.min(*holder).max(Decimal::ZERO);
        *holder -= from_lock;
        from_lock
    }

    /// Books one fill of order `idx`: balances (locked first, then free), fees, trade record.
    fn fill(
        &mut self,
        idx: usize,
        price: Decimal,
        qty: Decimal,
        maker: bool,
        t: Millis,
    ) -> FillJson {
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
            Side::Buy => (quote.clone(), quote_qty, base.clone(), qty),
            Side::Sell => (base.clone(), qty, quote.clone(), quote_qty),
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
        FillJson {
            price: fmt8(price),
            qty: fmt8(qty),
            commission: fmt8(commission),
            commission_asset: get_asset,
            trade_id,
        }
    }

    /// Test control: a counterparty takes `qty` of resting LIMIT order `order_id` at the
    /// order's own price (maker); the order stays PARTIALLY_FILLED. The matching engine itself
    /// fills resting orders completely, so this is the only way to a partial fill.
    pub fn fill_partially(
        &mut self,
        order_id: i64,
        qty: Decimal,
        t: Millis,
    ) -> Result<(), ApiError> {
        let idx = self
            .order_idx(order_id)
            .ok_or_else(|| ApiError::new(400, -2013, "Order does not exist."))?;
        let o = &self.orders[idx];
        let resting = o.status.is_open() && o.order_type.has_limit_price() && o.is_working();
        if !resting || qty <= Decimal::ZERO || qty >= o.remaining() {
            return Err(ApiError::new(
                400,
                -1013,
                "A partial fill needs a resting limit order and 0 < qty < its remaining quantity.",
            ));
        }
        let price = o.price;
        self.fill(idx, price, qty, true, t);
        Ok(())
    }

    /// Ends an order (CANCELED or EXPIRED) and releases what it still locks.
    fn finish(&mut self, idx: usize, status: Status, reason: Option<&'static str>, t: Millis) {
        let o = &mut self.orders[idx];
        if !o.status.is_open() {
            return;
        }
        o.status = status;
        o.update_time = t;
        if status == Status::Expired {
            o.expiry_reason = reason;
        }
        self.release_if_done(idx);
    }

    /// Releases the remaining lock of a finished order, or of a list whose legs are all done.
    fn release_if_done(&mut self, idx: usize) {
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
                self.lists[li].done = true;
                self.unlock(o.account, &asset, amount);
            }
        } else if !o.status.is_open() {
            let amount = std::mem::take(&mut self.orders[idx].lock);
            self.unlock(o.account, &asset, amount);
        }
    }

    /// Taker execution of order `idx` against the synthetic book at price `p`, up to its
    /// limit price (none for market). Returns the fills.
    fn take(&mut self, idx: usize, p: Decimal, limit: Option<Decimal>, t: Millis) -> Vec<FillJson> {
        let Ok(rules) = self.rules(&self.orders[idx].symbol).cloned() else {
            return Vec::new();
        };
        let book = self.book(&rules, p);
        let side = self.orders[idx].side;
        let levels = match side {
            Side::Buy => book.asks,
            Side::Sell => book.bids,
        };
        let mut fills = Vec::new();
        for (lp, lq) in levels {
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

    /// Quantity available to a taker at or better than `limit` (or all levels).
    fn available(
        &self,
        rules: &SymbolRules,
        side: Side,
        p: Decimal,
        limit: Option<Decimal>,
    ) -> Decimal {
        let book = self.book(rules, p);
        let levels = match side {
            Side::Buy => book.asks,
            Side::Sell => book.bids,
        };
        levels
            .iter()
            .filter(|(lp, _)| match (side, limit) {
                (_, None) => true,
                (Side::Buy, Some(l)) => *lp <= l,
                (Side::Sell, Some(l)) => *lp >= l,
            })
            .map(|(_, q)| *q)
            .sum()
    }

    /// Quote cost of taking `qty` (BUY) from the book, or None if the book cannot fill it.
    fn market_cost(
        &self,
        rules: &SymbolRules,
        side: Side,
        p: Decimal,
        mut qty: Decimal,
    ) -> (Decimal, Decimal) {
        let book = self.book(rules, p);
        let levels = match side {
            Side::Buy => book.asks,
            Side::Sell => book.bids,
        };
        let mut cost = Decimal::ZERO;
        let mut filled = Decimal::ZERO;
        for (lp, lq) in levels {
            if qty <= Decimal::ZERO {
                break;
            }
            let q = lq.min(qty);
            cost += lp * q;
            filled += q;
            qty -= q;
        }
        (filled, cost)
    }

    /// Brings resting orders up to date with the market from the last evaluation to `now`:
    /// stops trigger on the price path, resting limits fill when the market trades through.
    pub fn catch_up(&mut self, now: Millis) {
        while self.first_open < self.orders.len() && !self.orders[self.first_open].status.is_open()
        {
            self.first_open += 1;
        }
        let symbols: Vec<String> = {
            let mut s: Vec<String> = self.open_orders_iter().map(|o| o.symbol.clone()).collect();
            s.sort();
            s.dedup();
            s
        };
        for symbol in &symbols {
            let Ok(rules) = self.rules(symbol).cloned() else { continue };
            let from = self.last_eval.get(symbol).copied().unwrap_or(now);
            for (t, p) in self.market.samples(&rules, from, now) {
                self.evaluate(&rules, t, p);
            }
        }
        // Every window ends now; symbols without open orders simply start theirs now.
        for r in &self.rules {
            self.last_eval.insert(r.symbol.clone(), now);
        }
    }

    /// Orders that may still be open (everything from the first unfinished one on).
    fn open_orders_iter(&self) -> impl Iterator<Item = &Order> {
        self.orders[self.first_open.min(self.orders.len())..].iter().filter(|o| o.status.is_open())
    }

    fn evaluate(&mut self, rules: &SymbolRules, t: Millis, p: Decimal) {
        let book_bid =
            round_to(p, rules.tick, RoundingStrategy::ToNegativeInfinity).max(rules.tick);
        let book_ask = book_bid + rules.tick;
        let open: Vec<usize> = (self.first_open.min(self.orders.len())..self.orders.len())
            .filter(|&i| self.orders[i].symbol == rules.symbol && self.orders[i].status.is_open())
            .collect();
        // 1. Stop triggers on the last price.
        for &i in &open {
            let o = &self.orders[i];
            if !o.status.is_open() || !o.order_type.is_stop() || o.triggered {
                continue;
            }
            let Some(stop) = o.stop_price else { continue };
            let hit = match (o.order_type.is_stop_loss(), o.side) {
                (true, Side::Sell) | (false, Side::Buy) => p <= stop,
                (true, Side::Buy) | (false, Side::Sell) => p >= stop,
            };
            if !hit {
                continue;
            }
            let o = &mut self.orders[i];
            o.triggered = true;
            o.working_time = t;
            o.update_time = t;
            let list_id = o.order_list_id;
            let limit = o.order_type.has_limit_price().then_some(o.price);
            self.expire_partners(list_id, i, t);
            self.take(i, p, limit, t);
            if limit.is_none() && self.orders[i].status.is_open() {
                self.finish(i, Status::Expired, Some("INSUFFICIENT_LIQUIDITY"), t);
            }
            self.release_if_done(i);
        }
        // 2. Resting limits fill at their price when the market trades through.
        for &i in &open {
            let o = &self.orders[i];
            if !o.status.is_open() || !o.is_working() || !o.order_type.has_limit_price() {
                continue;
            }
            let crosses = match o.side {
                Side::Buy => book_ask <= o.price,
                Side::Sell => book_bid >= o.price,
            };
            if !crosses {
                continue;
            }
            let (price, qty, list_id) = (o.price, o.remaining(), o.order_list_id);
            self.expire_partners(list_id, i, t);
            self.fill(i, price, qty, true, t);
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
                o.expiry_reason = Some("OCO_TRIGGER");
                o.update_time = t;
            }
        }
        self.lists[li].done = true;
        self.lists[li].transaction_time = t;
    }

    fn check_filters(
        &self,
        rules: &SymbolRules,
        leg: &LegSpec,
        p: Decimal,
    ) -> Result<(), ApiError> {
        for px in [leg.price, leg.stop].into_iter().flatten() {
            if px < rules.min_price || px > rules.max_price || !(px % rules.tick).is_zero() {
                return Err(ApiError::filter("PRICE_FILTER"));
            }
        }
        if leg.order_type == OrderType::Market {
            if leg.qty > rules.market_max_qty {
                return Err(ApiError::filter("MARKET_LOT_SIZE"));
            }
            if leg.qty < rules.min_qty || !(leg.qty % rules.step).is_zero() {
                return Err(ApiError::filter("LOT_SIZE"));
            }
        } else if leg.qty < rules.min_qty
            || leg.qty > rules.max_qty
            || !(leg.qty % rules.step).is_zero()
        {
            return Err(ApiError::filter("LOT_SIZE"));
        }
        let ref_price = leg.price.or(leg.stop).unwrap_or(p);
        if let Some(px) = leg.price {
            let (down, up) = (Decimal::new(2, 1), Decimal::from(5));
            if px < p * down || px > p * up {
                return Err(ApiError::filter("PERCENT_PRICE_BY_SIDE"));
            }
        }
        let notional = ref_price * leg.qty;
        if notional < rules.min_notional {
            return Err(ApiError::filter("NOTIONAL"));
        }
        if leg.order_type != OrderType::Market && notional > rules.max_notional {
            return Err(ApiError::filter("NOTIONAL"));
        }
        Ok(())
    }

    fn check_open_counts(
        &self,
        account: usize,
        symbol: &str,
        rules: &SymbolRules,
        new: usize,
        new_algo: usize,
    ) -> Result<(), ApiError> {
        let open: Vec<&Order> = self
            .open_orders_iter()
            .filter(|o| o.account == account && o.symbol == symbol)
            .collect();
        if open.len() + new > rules.max_num_orders {
            return Err(ApiError::filter("MAX_NUM_ORDERS"));
        }
        let algo = open.iter().filter(|o| o.order_type.is_stop()).count();
        if new_algo > 0 && algo + new_algo > rules.max_num_algo_orders {
            return Err(ApiError::filter("MAX_NUM_ALGO_ORDERS"));
        }
        Ok(())
    }

    fn client_id_in_use(&self, account: usize, id: &str) -> bool {
        self.open_orders_iter().any(|o| o.account == account && o.client_order_id == id)
    }

    fn stop_would_trigger(t: OrderType, side: Side, stop: Decimal, p: Decimal) -> bool {
        match (t.is_stop_loss(), side) {
            (true, Side::Sell) | (false, Side::Buy) => stop >= p,
            (true, Side::Buy) | (false, Side::Sell) => stop <= p,
        }
    }

    fn push_order(
        &mut self,
        account: usize,
        symbol: &str,
        leg: &LegSpec,
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
            order_id: self.next_order_id(),
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
        self.orders.len() - 1
    }

    /// `POST /api/v3/order`.
    pub fn new_order(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let symbol = p.req("symbol")?.to_string();
        let rules = self.rules(&symbol)?.clone();
        let side = Side::parse(p.req("side")?)?;
        let order_type = OrderType::parse(p.req("type")?)?;
        let client_id = p.client_id("newClientOrderId")?;
        let resp = resp_type(
            p,
            if matches!(order_type, OrderType::Market | OrderType::Limit) {
                RespType::Full
            } else {
                RespType::Ack
            },
        )?;
        // Parameter presence per type.
        if order_type.needs_tif() {
            p.req("timeInForce")?;
        } else if p.has("timeInForce") {
            return Err(ApiError::not_required("timeInForce"));
        }
        if order_type.has_limit_price() {
            p.req("price")?;
        } else if p.has("price") {
            return Err(ApiError::not_required("price"));
        }
        if order_type.is_stop() {
            p.req("stopPrice")?;
        } else if p.has("stopPrice") {
            return Err(ApiError::not_required("stopPrice"));
        }
        let tif = match p.get("timeInForce") {
            Some(t) => Tif::parse(t)?,
            None => Tif::Gtc,
        };
        let price = p.decimal("price")?;
        let stop = p.decimal("stopPrice")?;
        let quote_qty = p.decimal("quoteOrderQty")?;
        let qty = p.decimal("quantity")?;
        if quote_qty.is_some() && order_type != OrderType::Market {
            return Err(ApiError::not_required("quoteOrderQty"));
        }
        if quote_qty.is_some() && qty.is_some() {
            return Err(ApiError::not_required("quoteOrderQty"));
        }
        if order_type == OrderType::Market && qty.is_none() && quote_qty.is_none() {
            return Err(ApiError::bad(
                -1102,
                "Param 'quantity' or 'quoteOrderQty' must be sent, but both were empty/null!",
            ));
        }
        let last = self.market.price(&rules, now);
        if let Some(c) = &client_id
            && self.client_id_in_use(account, c)
        {
            return Err(ApiError::bad(-2010, "Duplicate order sent."));
        }
        if let Some(q) = quote_qty {
            return self.market_quote_order(account, &rules, side, q, client_id, resp, last, now);
        }
        let qty = match qty {
            Some(q) => q,
            None => return Err(ApiError::mandatory("quantity")),
        };
        let leg = LegSpec { order_type, side, qty, price, stop, tif, client_id };
        self.check_filters(&rules, &leg, last)?;
        self.check_open_counts(account, &symbol, &rules, 1, usize::from(order_type.is_stop()))?;
        if let Some(s) = stop
            && Self::stop_would_trigger(order_type, side, s, last)
        {
            return Err(ApiError::bad(-2010, "Stop price would trigger immediately."));
        }
        let book = self.book(&rules, last);
        let best_bid = book.bids.first().map_or(Decimal::ZERO, |b| b.0);
        let best_ask = book.asks.first().map_or(Decimal::MAX, |a| a.0);
        if order_type == OrderType::LimitMaker {
            let px = price.unwrap_or_default();
            let crosses = match side {
                Side::Buy => px >= best_ask,
                Side::Sell => px <= best_bid,
            };
            if crosses {
                return Err(ApiError::bad(-2010, "Order would immediately match and take."));
            }
        }
        // Balance check and lock.
        let (pay_asset, need) = match side {
            Side::Sell => (rules.base.clone(), qty),
            Side::Buy => {
                let need = match order_type {
                    OrderType::Market | OrderType::StopLoss | OrderType::TakeProfit => {
                        let ref_px = stop.unwrap_or(last);
                        let (_, cost) = self.market_cost(&rules, side, ref_px, qty);
                        cost
                    }
                    _ => price.unwrap_or_default() * qty,
                };
                (rules.quote.clone(), need.round_dp(8))
            }
        };
        if self.free(account, &pay_asset) < need {
            return Err(ApiError::insufficient_balance());
        }
        if order_type == OrderType::Limit && tif == Tif::Fok {
            let avail = self.available(&rules, side, last, price);
            if avail < qty {
                let idx = self.push_order(account, &symbol, &leg, -1, now);
                let o = &mut self.orders[idx];
                o.status = Status::Expired;
                o.expiry_reason = Some("UNFILLED_FOK_ORDER_EXPIRED");
                return Ok(self.placement_json(idx, resp, now, Vec::new()));
            }
        }
        let idx = self.push_order(account, &symbol, &leg, -1, now);
        let rests =
            order_type != OrderType::Market && !(order_type == OrderType::Limit && tif != Tif::Gtc);
        if rests {
            self.lock(account, &pay_asset, need);
            self.orders[idx].lock = need;
        }
        let fills = match order_type {
            OrderType::Market => {
                let f = self.take(idx, last, None, now);
                if self.orders[idx].status.is_open() {
                    self.finish(idx, Status::Expired, Some("INSUFFICIENT_LIQUIDITY"), now);
                }
                f
            }
            OrderType::Limit => {
                let f = self.take(idx, last, price, now);
                if tif != Tif::Gtc && self.orders[idx].status.is_open() {
                    self.finish(idx, Status::Expired, Some("UNFILLED_IOC_QUANTITY_EXPIRED"), now);
                }
                f
            }
            _ => Vec::new(),
        };
        self.release_if_done(idx);
        Ok(self.placement_json(idx, resp, now, fills))
    }

    #[allow(clippy::too_many_arguments)]
    fn market_quote_order(
        &mut self,
        account: usize,
        rules: &SymbolRules,
        side: Side,
        quote_qty: Decimal,
        client_id: Option<String>,
        resp: RespType,
        last: Decimal,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        if quote_qty < rules.min_notional {
            return Err(ApiError::filter("NOTIONAL"));
        }
        // Derive the base quantity from the book, respecting LOT_SIZE.
        let book = self.book(rules, last);
        let levels = match side {
            Side::Buy => book.asks,
            Side::Sell => book.bids,
        };
        let mut left = quote_qty;
        let mut qty = Decimal::ZERO;
        for (lp, lq) in &levels {
            let q = round_to(left / lp, rules.step, RoundingStrategy::ToZero).min(*lq);
            if q <= Decimal::ZERO {
                break;
            }
            qty += q;
            left -= q * lp;
        }
        if qty < rules.min_qty {
            return Err(ApiError::bad(
                -2010,
                "Order book liquidity is less than `LOT_SIZE` filter minimum quantity.",
            ));
        }
        let need_ok = match side {
            Side::Buy => self.free(account, &rules.quote) >= quote_qty - left,
            Side::Sell => self.free(account, &rules.base) >= qty,
        };
        if !need_ok {
            return Err(ApiError::insufficient_balance());
        }
        let leg = LegSpec {
            order_type: OrderType::Market,
            side,
            qty,
            price: None,
            stop: None,
            tif: Tif::Gtc,
            client_id,
        };
        let idx = self.push_order(account, &rules.symbol, &leg, -1, now);
        self.orders[idx].orig_quote_order_qty = quote_qty;
        let fills = self.take(idx, last, None, now);
        if self.orders[idx].status.is_open() {
            self.finish(idx, Status::Expired, Some("INSUFFICIENT_LIQUIDITY"), now);
        }
        Ok(self.placement_json(idx, resp, now, fills))
    }

    fn leg_from(p: &Params, prefix: &str, side: Side, qty: Decimal) -> Result<LegSpec, ApiError> {
        let name = |s: &str| format!("{prefix}{s}");
        let order_type = OrderType::parse(p.req(&name("Type"))?)
            .map_err(|_| ApiError::bad(-1158, "Order type not supported in OCO."))?;
        if matches!(order_type, OrderType::Limit | OrderType::Market) {
            return Err(ApiError::bad(-1158, "Order type not supported in OCO."));
        }
        let price = p.decimal(&name("Price"))?;
        let stop = p.decimal(&name("StopPrice"))?;
        if order_type.has_limit_price() && price.is_none() {
            return Err(ApiError::mandatory(&name("Price")));
        }
        if !order_type.has_limit_price() && price.is_some() {
            return Err(ApiError::not_required(&name("Price")));
        }
        if order_type.is_stop() && stop.is_none() {
            return Err(ApiError::mandatory(&name("StopPrice")));
        }
        if !order_type.is_stop() && stop.is_some() {
            return Err(ApiError::not_required(&name("StopPrice")));
        }
        let tif = match (order_type.needs_tif(), p.get(&name("TimeInForce"))) {
            (true, Some(t)) => Tif::parse(t)?,
            (true, None) => return Err(ApiError::mandatory(&name("TimeInForce"))),
            (false, Some(_)) => return Err(ApiError::not_required(&name("TimeInForce"))),
            (false, None) => Tif::Gtc,
        };
        Ok(LegSpec {
            order_type,
            side,
            qty,
            price,
            stop,
            tif,
            client_id: p.client_id(&name("ClientOrderId"))?,
        })
    }

    /// Side and quantity of an OCO (both forms), after checking the symbol.
    fn oco_basics(&self, p: &Params) -> Result<(Side, Decimal), ApiError> {
        self.rules(p.req("symbol")?)?;
        Ok((Side::parse(p.req("side")?)?, p.req_decimal("quantity")?))
    }

    /// `POST /api/v3/orderList/oco`.
    pub fn new_oco(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        let (side, qty) = self.oco_basics(p)?;
        let above = Self::leg_from(p, "above", side, qty)?;
        let below = Self::leg_from(p, "below", side, qty)?;
        self.place_oco(account, p, now, above, below)
    }

    /// `POST /api/v3/order/oco` (deprecated form): translated to above/below legs.
    pub fn new_oco_legacy(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        let (side, qty) = self.oco_basics(p)?;
        let price = p.req_decimal("price")?;
        let stop = p.req_decimal("stopPrice")?;
        let stop_limit = p.decimal("stopLimitPrice")?;
        let stop_tif = match (stop_limit, p.get("stopLimitTimeInForce")) {
            (Some(_), Some(t)) => Tif::parse(t)?,
            (Some(_), None) => return Err(ApiError::mandatory("stopLimitTimeInForce")),
            (None, Some(_)) => return Err(ApiError::not_required("stopLimitTimeInForce")),
            (None, None) => Tif::Gtc,
        };
        let limit_leg = LegSpec {
            order_type: OrderType::LimitMaker,
            side,
            qty,
            price: Some(price),
            stop: None,
            tif: Tif::Gtc,
            client_id: p.client_id("limitClientOrderId")?,
        };
        let stop_leg = LegSpec {
            order_type: if stop_limit.is_some() {
                OrderType::StopLossLimit
            } else {
                OrderType::StopLoss
            },
            side,
            qty,
            price: stop_limit,
            stop: Some(stop),
            tif: stop_tif,
            client_id: p.client_id("stopClientOrderId")?,
        };
        let (above, below) = match side {
            Side::Sell => (limit_leg, stop_leg),
            Side::Buy => (stop_leg, limit_leg),
        };
        self.place_oco(account, p, now, above, below)
    }

    fn place_oco(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
        above: LegSpec,
        below: LegSpec,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let symbol = p.req("symbol")?.to_string();
        let rules = self.rules(&symbol)?.clone();
        let side = above.side;
        let resp = resp_type(p, RespType::Full)?;
        let list_client_id = p.client_id("listClientOrderId")?;
        // One leg must be a stop loss, the other a limit maker / take profit, on the right side.
        let (tp, sl) = match side {
            Side::Sell => {
                if above.order_type.is_stop_loss() {
                    return Err(ApiError::bad(-1166, "A limit order in a sell OCO must be above."));
                }
                (&above, &below)
            }
            Side::Buy => {
                if below.order_type.is_stop_loss() {
                    return Err(ApiError::bad(-1165, "A limit order in a buy OCO must be below."));
                }
                (&below, &above)
            }
        };
        if !sl.order_type.is_stop_loss() {
            return Err(ApiError::bad(-1168, "At least one OCO order must be contingent."));
        }
        for leg in [&above, &below] {
            self.check_filters(&rules, leg, self.market.price(&rules, now))?;
        }
        let last = self.market.price(&rules, now);
        let tp_px = if tp.order_type == OrderType::LimitMaker { tp.price } else { tp.stop }
            .unwrap_or_default();
        let sl_px = sl.stop.unwrap_or_default();
        let ok = match side {
            Side::Sell => tp_px > last && last > sl_px,
            Side::Buy => tp_px < last && last < sl_px,
        };
        if !ok {
            return Err(ApiError::bad(
                -2010,
                "The relationship of the prices for the orders is not correct.",
            ));
        }
        for c in [&above.client_id, &below.client_id].into_iter().flatten() {
            if self.client_id_in_use(account, c) {
                return Err(ApiError::bad(-2010, "Duplicate order sent."));
            }
        }
        if let Some(lc) = &list_client_id
            && self
                .lists
                .iter()
                .any(|l| l.account == account && !l.done && &l.list_client_order_id == lc)
        {
            return Err(ApiError::bad(-2010, "Duplicate order sent."));
        }
        self.check_open_counts(account, &symbol, &rules, 2, 1)?;
        let qty = above.qty;
        let (asset, need) = match side {
            Side::Sell => (rules.base.clone(), qty),
            Side::Buy => {
                let px = [above.price, above.stop, below.price, below.stop]
                    .into_iter()
                    .flatten()
                    .max()
                    .unwrap_or_default();
                (rules.quote.clone(), (px * qty).round_dp(8))
            }
        };
        if self.free(account, &asset) < need {
            return Err(ApiError::insufficient_balance());
        }
        let list_id = self.lists.len() as i64 + 1;
        let list_client_order_id = match list_client_id {
            Some(c) => c,
            None => self.new_client_id(),
        };
        // The stop leg is listed first, as in every documented example.
        let (first, second) =
            if above.order_type.is_stop_loss() { (above, below) } else { (below, above) };
        let i1 = self.push_order(account, &symbol, &first, list_id, now);
        let i2 = self.push_order(account, &symbol, &second, list_id, now);
        self.lock(account, &asset, need);
        self.lists.push(OrderList {
            account,
            order_list_id: list_id,
            list_client_order_id,
            symbol,
            orders: vec![self.orders[i1].order_id, self.orders[i2].order_id],
            done: false,
            transaction_time: now,
            lock: need,
        });
        let li = self.lists.len() - 1;
        let reports = vec![
            self.placement_order_json(i1, resp, now, None),
            self.placement_order_json(i2, resp, now, None),
        ];
        Ok(to_value(&self.list_json(li, Some(reports))))
    }

    fn placement_order_json(
        &self,
        idx: usize,
        resp: RespType,
        now: Millis,
        fills: Option<Vec<FillJson>>,
    ) -> OrderJson {
        let o = &self.orders[idx];
        if resp == RespType::Ack {
            return OrderJson {
                symbol: o.symbol.clone(),
                order_id: o.order_id,
                order_list_id: o.order_list_id,
                client_order_id: o.client_order_id.clone(),
                transact_time: Some(now),
                ..OrderJson::default()
            };
        }
        OrderJson {
            transact_time: Some(now),
            working_time: Some(o.working_time),
            expiry_reason: (o.status == Status::Expired)
                .then_some(o.expiry_reason.unwrap_or("NONE")),
            fills: (resp == RespType::Full).then(|| fills.unwrap_or_default()),
            ..Self::detail_json(o)
        }
    }

    fn placement_json(
        &self,
        idx: usize,
        resp: RespType,
        now: Millis,
        fills: Vec<FillJson>,
    ) -> serde_json::Value {
        to_value(&self.placement_order_json(idx, resp, now, Some(fills)))
    }

    /// Fields every full order shape (RESULT, query, cancel) has.
    fn detail_json(o: &Order) -> OrderJson {
        OrderJson {
            symbol: o.symbol.clone(),
            order_id: o.order_id,
            order_list_id: o.order_list_id,
            client_order_id: o.client_order_id.clone(),
            price: Some(fmt8(o.price)),
            orig_qty: Some(fmt8(o.orig_qty)),
            executed_qty: Some(fmt8(o.executed_qty)),
            orig_quote_order_qty: Some(fmt8(o.orig_quote_order_qty)),
            cummulative_quote_qty: Some(fmt8(o.cum_quote)),
            status: Some(o.status.as_str()),
            time_in_force: Some(o.tif.as_str()),
            order_type: Some(o.order_type.as_str()),
            side: Some(o.side.as_str()),
            stop_price: o.stop_price.map(fmt8),
            self_trade_prevention_mode: Some("NONE"),
            ..OrderJson::default()
        }
    }

    /// The query shape (`GET /api/v3/order`, `openOrders`, `allOrders`).
    pub fn query_json(&self, o: &Order) -> OrderJson {
        OrderJson {
            stop_price: Some(fmt8(o.stop_price.unwrap_or_default())),
            iceberg_qty: Some(fmt8(Decimal::ZERO)),
            time: Some(o.time),
            update_time: Some(o.update_time),
            is_working: Some(o.is_working()),
            working_time: Some(o.working_time),
            expiry_reason: (o.status == Status::Expired)
                .then_some(o.expiry_reason.unwrap_or("NONE")),
            ..Self::detail_json(o)
        }
    }

    fn cancel_json(&self, o: &Order, cancel_id: &str, now: Millis) -> OrderJson {
        OrderJson {
            orig_client_order_id: Some(o.client_order_id.clone()),
            client_order_id: cancel_id.to_string(),
            transact_time: Some(now),
            ..Self::detail_json(o)
        }
    }

    fn list_json(&self, li: usize, reports: Option<Vec<OrderJson>>) -> OrderListJson {
        let l = &self.lists[li];
        let (status_type, order_status) =
            if l.done { ("ALL_DONE", "ALL_DONE") } else { ("EXEC_STARTED", "EXECUTING") };
        OrderListJson {
            order_list_id: l.order_list_id,
            contingency_type: "OCO",
            list_status_type: status_type,
            list_order_status: order_status,
            list_client_order_id: l.list_client_order_id.clone(),
            transaction_time: l.transaction_time,
            symbol: l.symbol.clone(),
            orders: l
                .orders
                .iter()
                .filter_map(|id| self.order_idx(*id))
                .map(|i| ListLegJson {
                    symbol: self.orders[i].symbol.clone(),
                    order_id: self.orders[i].order_id,
                    client_order_id: self.orders[i].client_order_id.clone(),
                })
                .collect(),
            order_reports: reports,
        }
    }

    /// Finds an order of `account` on `symbol` by orderId and/or origClientOrderId.
    fn find_order(&self, account: usize, p: &Params, unknown: ApiError) -> Result<usize, ApiError> {
        let symbol = p.req("symbol")?;
        self.rules(symbol)?;
        let id = p.long("orderId")?;
        let cid = p.get("origClientOrderId");
        let idx = match (id, cid) {
            (None, None) => {
                return Err(ApiError::bad(
                    -1102,
                    "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!",
                ));
            }
            (Some(id), _) => self.order_idx(id),
            (None, Some(c)) => self.orders.iter().rposition(|o| {
                o.account == account && o.symbol == symbol && o.client_order_id == c
            }),
        };
        let idx = idx.ok_or_else(|| unknown.clone())?;
        let o = &self.orders[idx];
        if o.account != account || o.symbol != symbol || cid.is_some_and(|c| c != o.client_order_id)
        {
            return Err(unknown);
        }
        Ok(idx)
    }

    /// `GET /api/v3/order`.
    pub fn query_order(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let idx = self.find_order(account, p, ApiError::bad(-2013, "Order does not exist."))?;
        Ok(to_value(&self.query_json(&self.orders[idx])))
    }

    /// `DELETE /api/v3/order`. Cancelling a leg cancels its whole list.
    pub fn cancel_order(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let unknown = ApiError::bad(-2011, "Unknown order sent.");
        let idx = self.find_order(account, p, unknown.clone())?;
        let (status, list_id) = (self.orders[idx].status, self.orders[idx].order_list_id);
        if !status.is_open() {
            return Err(unknown);
        }
        match p.get("cancelRestrictions") {
            Some("ONLY_NEW") if status != Status::New => {
                return Err(ApiError::bad(
                    -2011,
                    "Order was not canceled due to cancel restrictions.",
                ));
            }
            Some("ONLY_PARTIALLY_FILLED") if status != Status::PartiallyFilled => {
                return Err(ApiError::bad(
                    -2011,
                    "Order was not canceled due to cancel restrictions.",
                ));
            }
            _ => {}
        }
        let cancel_id = match p.client_id("newClientOrderId")? {
            Some(c) => c,
            None => self.new_client_id(),
        };
        if list_id > 0 {
            if let Some(li) = self.list_idx(list_id) {
                self.cancel_list_legs(li, now);
            }
        } else {
            self.finish(idx, Status::Canceled, None, now);
        }
        Ok(to_value(&self.cancel_json(&self.orders[idx], &cancel_id, now)))
    }

    fn cancel_list_legs(&mut self, li: usize, now: Millis) {
        let legs = self.lists[li].orders.clone();
        for id in legs {
            if let Some(j) = self.order_idx(id) {
                if self.orders[j].status.is_open() {
                    self.orders[j].status = Status::Canceled;
                    self.orders[j].update_time = now;
                }
                self.release_if_done(j);
            }
        }
        self.lists[li].done = true;
        self.lists[li].transaction_time = now;
    }

    fn find_list(
        &self,
        account: usize,
        p: &Params,
        id_name: &str,
        cid_name: &str,
        unknown: ApiError,
    ) -> Result<usize, ApiError> {
        let id = p.long(id_name)?;
        let cid = p.get(cid_name);
        let li = match (id, cid) {
            (None, None) => {
                return Err(ApiError::bad(
                    -1102,
                    format!(
                        "Param '{id_name}' or '{cid_name}' must be sent, but both were empty/null!"
                    ),
                ));
            }
            (Some(id), _) => self.list_idx(id),
            (None, Some(c)) => {
                self.lists.iter().rposition(|l| l.account == account && l.list_client_order_id == c)
            }
        };
        let li = li.ok_or_else(|| unknown.clone())?;
        let l = &self.lists[li];
        if l.account != account || cid.is_some_and(|c| c != l.list_client_order_id) {
            return Err(unknown);
        }
        Ok(li)
    }

    /// `DELETE /api/v3/orderList`.
    pub fn cancel_list(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let symbol = p.req("symbol")?;
        self.rules(symbol)?;
        let unknown = ApiError::bad(-2011, "Unknown order list sent.");
        let li = self.find_list(account, p, "orderListId", "listClientOrderId", unknown.clone())?;
        if self.lists[li].done || self.lists[li].symbol != symbol {
            return Err(unknown);
        }
        let cancel_id = match p.client_id("newClientOrderId")? {
            Some(c) => c,
            None => self.new_client_id(),
        };
        self.cancel_list_legs(li, now);
        let reports = self.lists[li]
            .orders
            .iter()
            .filter_map(|id| self.order_idx(*id))
            .map(|i| self.cancel_json(&self.orders[i], &cancel_id, now))
            .collect();
        Ok(to_value(&self.list_json(li, Some(reports))))
    }

    /// `GET /api/v3/orderList`.
    pub fn query_list(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let li = self.find_list(
            account,
            p,
            "orderListId",
            "origClientOrderId",
            ApiError::bad(-2013, "Order list does not exist."),
        )?;
        Ok(to_value(&self.list_json(li, None)))
    }

    /// `GET /api/v3/openOrderList`.
    pub fn open_lists(&mut self, account: usize, now: Millis) -> serde_json::Value {
        self.catch_up(now);
        let v: Vec<OrderListJson> = (0..self.lists.len())
            .filter(|&i| self.lists[i].account == account && !self.lists[i].done)
            .map(|i| self.list_json(i, None))
            .collect();
        to_value(&v)
    }

    /// `GET /api/v3/allOrderList`.
    pub fn all_lists(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let from = p.long("fromId")?.unwrap_or(0);
        let start = p.long("startTime")?.unwrap_or(i64::MIN);
        let end = p.long("endTime")?.unwrap_or(i64::MAX);
        let limit = limit_param(p, 500, 1000)?;
        let v: Vec<OrderListJson> = (0..self.lists.len())
            .filter(|&i| {
                let l = &self.lists[i];
                l.account == account
                    && l.order_list_id >= from
                    && l.transaction_time >= start
                    && l.transaction_time <= end
            })
            .take(limit)
            .map(|i| self.list_json(i, None))
            .collect();
        Ok(to_value(&v))
    }

    /// `GET /api/v3/openOrders`.
    pub fn open_orders(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let symbol = p.get("symbol");
        if let Some(s) = symbol {
            self.rules(s)?;
        }
        let v: Vec<OrderJson> = self
            .orders
            .iter()
            .filter(|o| {
                o.account == account && o.status.is_open() && symbol.is_none_or(|s| s == o.symbol)
            })
            .map(|o| self.query_json(o))
            .collect();
        Ok(to_value(&v))
    }

    /// `DELETE /api/v3/openOrders`: cancels plain orders and order lists of the symbol.
    pub fn cancel_open_orders(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let symbol = p.req("symbol")?.to_string();
        self.rules(&symbol)?;
        let mut out: Vec<serde_json::Value> = Vec::new();
        let ids: Vec<usize> = (0..self.orders.len())
            .filter(|&i| {
                let o = &self.orders[i];
                o.account == account && o.symbol == symbol && o.status.is_open()
            })
            .collect();
        let mut seen_lists = Vec::new();
        for i in ids {
            if !self.orders[i].status.is_open() {
                continue;
            }
            let cancel_id = self.new_client_id();
            let list_id = self.orders[i].order_list_id;
            if list_id > 0 {
                if seen_lists.contains(&list_id) {
                    continue;
                }
                seen_lists.push(list_id);
                if let Some(li) = self.list_idx(list_id) {
                    self.cancel_list_legs(li, now);
                    let reports = self.lists[li]
                        .orders
                        .iter()
                        .filter_map(|id| self.order_idx(*id))
                        .map(|j| self.cancel_json(&self.orders[j], &cancel_id, now))
                        .collect();
                    out.push(to_value(&self.list_json(li, Some(reports))));
                }
            } else {
                self.finish(i, Status::Canceled, None, now);
                out.push(to_value(&self.cancel_json(&self.orders[i], &cancel_id, now)));
            }
        }
        if out.is_empty() {
            return Err(ApiError::bad(-2011, "Unknown order sent."));
        }
        Ok(serde_json::Value::Array(out))
    }

    /// `GET /api/v3/allOrders`.
    pub fn all_orders(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let symbol = p.req("symbol")?;
        self.rules(symbol)?;
        let from = p.long("orderId")?.unwrap_or(0);
        let start = p.long("startTime")?.unwrap_or(i64::MIN);
        let end = p.long("endTime")?.unwrap_or(i64::MAX);
        let limit = limit_param(p, 500, 1000)?;
        let matching: Vec<&Order> = self
            .orders
            .iter()
            .filter(|o| {
                o.account == account
                    && o.symbol == symbol
                    && o.order_id >= from
                    && o.time >= start
                    && o.time <= end
            })
            .collect();
        let skip = if p.has("orderId") || p.has("startTime") {
            0
        } else {
            matching.len().saturating_sub(limit)
        };
        let v: Vec<OrderJson> =
            matching.into_iter().skip(skip).take(limit).map(|o| self.query_json(o)).collect();
        Ok(to_value(&v))
    }

    /// `GET /api/v3/myTrades`.
    pub fn my_trades(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let symbol = p.req("symbol")?;
        self.rules(symbol)?;
        let order_id = p.long("orderId")?;
        let from = p.long("fromId")?;
        let start = p.long("startTime")?;
        let end = p.long("endTime")?;
        if from.is_some() && (start.is_some() || end.is_some()) {
            return Err(ApiError::bad(-1128, "Combination of optional parameters invalid."));
        }
        if let (Some(s), Some(e)) = (start, end)
            && e.saturating_sub(s) > 24 * 3_600_000
        {
            return Err(ApiError::bad(-1127, "More than 24 hours between startTime and endTime."));
        }
        let limit = limit_param(p, 500, 1000)?;
        let matching: Vec<&Trade> = self
            .trades
            .iter()
            .filter(|t| {
                t.account == account
                    && t.symbol == symbol
                    && order_id.is_none_or(|o| t.order_id == o)
                    && from.is_none_or(|f| t.id >= f)
                    && start.is_none_or(|s| t.time >= s)
                    && end.is_none_or(|e| t.time <= e)
            })
            .collect();
        let skip = if from.is_some() || start.is_some() {
            0
        } else {
            matching.len().saturating_sub(limit)
        };
        let v: Vec<TradeJson> = matching
            .into_iter()
            .skip(skip)
            .take(limit)
            .map(|t| TradeJson {
                symbol: t.symbol.clone(),
                id: t.id,
                order_id: t.order_id,
                order_list_id: t.order_list_id,
                price: fmt8(t.price),
                qty: fmt8(t.qty),
                quote_qty: fmt8(t.quote_qty),
                commission: fmt8(t.commission),
                commission_asset: t.commission_asset.clone(),
                time: t.time,
                is_buyer: t.is_buyer,
                is_maker: t.is_maker,
                is_best_match: true,
            })
            .collect();
        Ok(to_value(&v))
    }

    /// `GET /api/v3/account`.
    pub fn account_json(
        &mut self,
        account: usize,
        p: &Params,
        now: Millis,
    ) -> Result<serde_json::Value, ApiError> {
        self.catch_up(now);
        let omit_zero = p.get("omitZeroBalances") == Some("true");
        let acc = self.accounts.get(account).ok_or_else(|| {
            ApiError::new(401, -2015, "Invalid API-key, IP, or permissions for action.")
        })?;
        let bps = |d: Decimal| {
            (d * Decimal::from(10_000)).trunc().to_string().parse::<i64>().unwrap_or(0)
        };
        let balances = acc
            .balances
            .iter()
            .filter(|(_, b)| !(omit_zero && b.free.is_zero() && b.locked.is_zero()))
            .map(|(a, b)| BalanceJson {
                asset: a.clone(),
                free: fmt8(b.free),
                locked: fmt8(b.locked),
            })
            .collect();
        Ok(to_value(&AccountJson {
            maker_commission: bps(self.config.maker_fee),
            taker_commission: bps(self.config.taker_fee),
            buyer_commission: 0,
            seller_commission: 0,
            commission_rates: CommissionRatesJson {
                maker: fmt8(self.config.maker_fee),
                taker: fmt8(self.config.taker_fee),
                buyer: fmt8(Decimal::ZERO),
                seller: fmt8(Decimal::ZERO),
            },
            can_trade: true,
            can_withdraw: true,
            can_deposit: true,
            brokered: false,
            require_self_trade_prevention: false,
            prevent_sor: false,
            update_time: acc.update_time,
            account_type: "SPOT",
            balances,
            permissions: vec!["SPOT"],
            uid: 100_000 + account as i64,
        }))
    }

    /// Order count of `account` in [since, now] (for the ORDER-COUNT headers).
    pub fn order_count_since(&self, account: usize, since: Millis) -> usize {
        // Orders are created in time order: walk back from the newest.
        self.orders
            .iter()
            .rev()
            .take_while(|o| o.time >= since)
            .filter(|o| o.account == account)
            .count()
    }

    /// Decimal from a string, for the admin API.
    pub fn parse_amount(s: &str) -> Option<Decimal> {
        Decimal::from_str(s).ok()
    }
}

pub fn limit_param(p: &Params, default: usize, max: usize) -> Result<usize, ApiError> {
    match p.long("limit")? {
        None => Ok(default),
        Some(l) if l >= 1 => Ok((l as usize).min(max)),
        Some(_) => Err(ApiError::bad(
            -1100,
            "Illegal characters found in parameter 'limit'; legal range is '1-1000'.",
        )),
    }
}

pub fn to_value<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}
