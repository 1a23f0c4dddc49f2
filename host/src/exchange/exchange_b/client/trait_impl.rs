//! [`Exchange`] for exchange B: the service's view of the client.

use crate::config::ExchangeName;
use std::time::Duration;

use super::ExchangeBClient;
use crate::exchange::budget::BudgetUse;
use crate::exchange::{
    Balance, BoxFuture, Exchange, ExchangeError, Kline, NewOrder, Order, OrderRef, Price,
    Protection, SymbolRules, Ticker24h, Trade,
};

impl Exchange for ExchangeBClient {
    fn name(&self) -> ExchangeName {
        ExchangeName::ExchangeB
    }

    fn protection(&self) -> Protection {
        Protection::Watched
    }

    fn budget_use(&self) -> Option<BudgetUse> {
        Some(self.budget.usage(self.clock.now_ms()))
    }

    fn refused_reads(&self) -> u64 {
        self.budget.refused_reads()
    }

    fn reads_blocked_for(&self) -> Option<Duration> {
        self.budget.reads_blocked_for(self.clock.now_ms())
    }

    /// Exchange B has no time endpoint (actions carry the service's own time as nonce): the
    /// service clock's now.
    fn server_time(&self) -> BoxFuture<'_, Result<i64, ExchangeError>> {
        Box::pin(async move { Ok(self.clock.now_ms()) })
    }

    fn symbol_rules<'a>(
        &'a self,
        symbol: &'a str,
    ) -> BoxFuture<'a, Result<SymbolRules, ExchangeError>> {
        Box::pin(async move { Ok(self.pair(symbol).await?.rules()) })
    }

    fn klines<'a>(
        &'a self,
        symbol: &'a str,
        interval: &'a str,
        limit: u32,
        end_time: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Kline>, ExchangeError>> {
        Box::pin(self.candles(symbol, interval, limit, end_time))
    }

    fn tickers_24h<'a>(
        &'a self,
        symbols: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Ticker24h>, ExchangeError>> {
        Box::pin(self.tickers.get_or_fetch(symbols.to_vec(), self.fetch_tickers(symbols)))
    }

    fn prices(&self) -> BoxFuture<'_, Result<Vec<(String, Price)>, ExchangeError>> {
        Box::pin(self.all_prices())
    }

    fn price<'a>(&'a self, symbol: &'a str) -> BoxFuture<'a, Result<Price, ExchangeError>> {
        Box::pin(async move { self.mid(&self.pair(symbol).await?).await })
    }

    fn balances(&self) -> BoxFuture<'_, Result<Vec<Balance>, ExchangeError>> {
        Box::pin(self.fetch_balances())
    }

    fn place_order<'a>(
        &'a self,
        order: &'a NewOrder,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        Box::pin(self.submit_order(order))
    }

    fn order<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        Box::pin(self.get_order(symbol, id))
    }

    fn cancel_order<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<Order, ExchangeError>> {
        Box::pin(self.cancel(symbol, id))
    }

    fn open_orders<'a>(
        &'a self,
        symbol: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>> {
        Box::pin(self.fetch_open_orders(symbol))
    }

    fn all_orders<'a>(
        &'a self,
        symbol: &'a str,
        limit: u32,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>> {
        Box::pin(self.recent_orders(symbol, limit))
    }

    fn my_trades<'a>(
        &'a self,
        symbol: &'a str,
        order_id: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Trade>, ExchangeError>> {
        Box::pin(self.trades(symbol, order_id))
    }
}
