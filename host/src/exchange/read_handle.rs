//! The handle agent reads go through: every call made through it draws from the read share of
//! the request budget ([`super::budget`]), so a burst of scans, market contexts or portfolio
//! reads is refused with our own 429 instead of eating the weight orders and stops need.
//! Execution and protection hold the exchange itself, whose calls are money calls. Orders and
//! cancels stay money calls whichever handle they go through: a cancel is never refused.
//! Agents never read order lists (protection is execution's), so the handle offers none.

use crate::config::ExchangeName;
use std::sync::Arc;
use std::time::Duration;

use super::budget::{BudgetUse, as_read};
use super::{
    Balance, BoxFuture, Exchange, ExchangeError, Kline, NewOrder, Order, OrderRef, Price,
    Protection, SymbolRules, Ticker24h, Trade,
};

/// An exchange whose every call is an agent read.
pub struct ReadHandle {
    inner: Arc<dyn Exchange>,
}

impl ReadHandle {
    pub fn wrap(inner: Arc<dyn Exchange>) -> Arc<dyn Exchange> {
        Arc::new(Self { inner })
    }
}

impl Exchange for ReadHandle {
    fn name(&self) -> ExchangeName {
        self.inner.name()
    }
    fn protection(&self) -> Protection {
        self.inner.protection()
    }
    fn budget_use(&self) -> Option<BudgetUse> {
        self.inner.budget_use()
    }
    fn refused_reads(&self) -> u64 {
        self.inner.refused_reads()
    }
    fn reads_blocked_for(&self) -> Option<Duration> {
        self.inner.reads_blocked_for()
    }
    fn server_time(&self) -> BoxFuture<'_, Result<i64, ExchangeError>> {
        Box::pin(as_read(self.inner.server_time()))
    }
    fn symbol_rules<'a>(
        &'a self,
        symbol: &'a str,
    ) -> BoxFuture<'a, Result<SymbolRules, ExchangeError>> {
        Box::pin(as_read(self.inner.symbol_rules(symbol)))
    }
    fn klines<'a>(
        &'a self,
        symbol: &'a str,
        interval: &'a str,
        limit: u32,
        end_time: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Kline>, ExchangeError>> {
        Box::pin(as_read(self.inner.klines(symbol, interval, limit, end_time)))
    }
    fn tickers_24h<'a>(
        &'a self,
        symbols: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Ticker24h>, ExchangeError>> {
        Box::pin(as_read(self.inner.tickers_24h(symbols)))
    }
    fn prices(&self) -> BoxFuture<'_, Result<Vec<(String, Price)>, ExchangeError>> {
        Box::pin(as_read(self.inner.prices()))
    }
    fn price<'a>(&'a self, symbol: &'a str) -> BoxFuture<'a, Result<Price, ExchangeError>> {
        Box::pin(as_read(self.inner.price(symbol)))
    }
    fn balances(&self) -> BoxFuture<'_, Result<Vec<Balance>, ExchangeError>> {
        Box::pin(as_read(self.inner.balances()))
    }
    fn place_order<'a>(
        &'a self,
        order: &'a NewOrder,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        self.inner.place_order(order)
    }
    fn order<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        Box::pin(as_read(self.inner.order(symbol, id)))
    }
    fn cancel_order<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        self.inner.cancel_order(symbol, id)
    }
    fn open_orders<'a>(
        &'a self,
        symbol: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>> {
        Box::pin(as_read(self.inner.open_orders(symbol)))
    }
    fn all_orders<'a>(
        &'a self,
        symbol: &'a str,
        limit: u32,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>> {
        Box::pin(as_read(self.inner.all_orders(symbol, limit)))
    }
    fn my_trades<'a>(
        &'a self,
        symbol: &'a str,
        order_id: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Trade>, ExchangeError>> {
        Box::pin(as_read(self.inner.my_trades(symbol, order_id)))
    }
}
