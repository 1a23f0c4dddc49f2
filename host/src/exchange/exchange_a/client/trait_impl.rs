//! [`Exchange`] for exchange A: the service's view of the client.

use crate::config::ExchangeName;
use std::time::Duration;

use reqwest::Method;

use super::{ExchangeAClient, Security};
use crate::exchange::budget::BudgetUse;
use crate::exchange::exchange_a::filters::SymbolRules;
use crate::exchange::exchange_a::signer::Params;
use crate::exchange::exchange_a::wire::{self};
use crate::exchange::{
    Balance, BoxFuture, Exchange, ExchangeError, Kline, NewOco, NewOrder, Order, OrderList,
    OrderLists, OrderRef, Price, Protection, Ticker24h, Trade,
};

impl Exchange for ExchangeAClient {
    fn name(&self) -> ExchangeName {
        ExchangeName::ExchangeA
    }
    fn order_lists(&self) -> Option<&dyn OrderLists> {
        Some(self)
    }

    fn protection(&self) -> Protection {
        Protection::Native
    }

    fn budget_use(&self) -> Option<BudgetUse> {
        Some(self.budget.usage(self.server_now_ms()))
    }

    fn refused_reads(&self) -> u64 {
        self.budget.refused_reads()
    }

    fn reads_blocked_for(&self) -> Option<Duration> {
        self.budget.reads_blocked_for(self.server_now_ms())
    }

    fn server_time(&self) -> BoxFuture<'_, Result<i64, ExchangeError>> {
        Box::pin(async move {
            let t: wire::ServerTime =
                self.call(Method::GET, "/api/v3/time", Params::new(), Security::Public).await?;
            Ok(t.server_time)
        })
    }

    fn symbol_rules<'a>(
        &'a self,
        symbol: &'a str,
    ) -> BoxFuture<'a, Result<SymbolRules, ExchangeError>> {
        Box::pin(self.rules_for(symbol))
    }

    fn klines<'a>(
        &'a self,
        symbol: &'a str,
        interval: &'a str,
        limit: u32,
        end_time: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Kline>, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push("symbol", symbol)
                .push("interval", interval)
                .push("limit", limit.clamp(1, 1000).to_string())
                .push_opt("endTime", end_time.map(|t| t.to_string()));
            let rows: Vec<wire::KlineRow> =
                self.call(Method::GET, "/api/v3/klines", p, Security::Public).await?;
            Ok(rows.into_iter().map(Kline::from).collect())
        })
    }

    fn tickers_24h<'a>(
        &'a self,
        symbols: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Ticker24h>, ExchangeError>> {
        Box::pin(self.tickers.get_or_fetch(symbols.to_vec(), self.fetch_tickers(symbols)))
    }

    fn prices(&self) -> BoxFuture<'_, Result<Vec<(String, Price)>, ExchangeError>> {
        Box::pin(async move {
            let v: Vec<wire::PriceJson> = self
                .call(Method::GET, "/api/v3/ticker/price", Params::new(), Security::Public)
                .await?;
            for p in &v {
                self.remember_price(&p.symbol, Price(p.price));
            }
            Ok(v.into_iter().map(|p| (p.symbol, Price(p.price))).collect())
        })
    }

    fn price<'a>(&'a self, symbol: &'a str) -> BoxFuture<'a, Result<Price, ExchangeError>> {
        Box::pin(self.last_price(symbol))
    }

    fn balances(&self) -> BoxFuture<'_, Result<Vec<Balance>, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push("omitZeroBalances", "true");
            let a: wire::AccountJson =
                self.call(Method::GET, "/api/v3/account", p, Security::Signed).await?;
            Ok(a.balances.into_iter().map(Balance::from).collect())
        })
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
        Box::pin(async move {
            let mut p = Params::new();
            p.push("symbol", symbol);
            Self::order_ref(&mut p, id, "origClientOrderId");
            let o: wire::OrderJson =
                self.call(Method::DELETE, "/api/v3/order", p, Security::Signed).await?;
            o.into_order().map_err(|e| cancel_unknown("/api/v3/order", e))
        })
    }

    fn open_orders<'a>(
        &'a self,
        symbol: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push_opt("symbol", symbol);
            let v: Vec<wire::OrderJson> =
                self.call(Method::GET, "/api/v3/openOrders", p, Security::Signed).await?;
            v.into_iter().map(|o| o.into_order()).collect()
        })
    }

    fn all_orders<'a>(
        &'a self,
        symbol: &'a str,
        limit: u32,
    ) -> BoxFuture<'a, Result<Vec<Order>, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push("symbol", symbol).push("limit", limit.clamp(1, 1000).to_string());
            let v: Vec<wire::OrderJson> =
                self.call(Method::GET, "/api/v3/allOrders", p, Security::Signed).await?;
            v.into_iter().map(|o| o.into_order()).collect()
        })
    }

    fn my_trades<'a>(
        &'a self,
        symbol: &'a str,
        order_id: Option<i64>,
    ) -> BoxFuture<'a, Result<Vec<Trade>, ExchangeError>> {
        Box::pin(self.trades(symbol, order_id))
    }
}

/// A cancel whose answer cannot be read may have cancelled: its outcome is unknown (the
/// caller reads the order before relying on either state), never a refusal.
fn cancel_unknown(path: &str, e: ExchangeError) -> ExchangeError {
    ExchangeError::Unknown { detail: format!("{path}: unreadable cancel answer: {e}") }
}

impl OrderLists for ExchangeAClient {
    fn place_oco<'a>(&'a self, oco: &'a NewOco) -> BoxFuture<'a, Result<OrderList, ExchangeError>> {
        Box::pin(self.submit_oco(oco))
    }

    fn order_list<'a>(
        &'a self,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<OrderList, ExchangeError>> {
        Box::pin(self.get_list(id))
    }

    fn cancel_order_list<'a>(
        &'a self,
        symbol: &'a str,
        id: &'a OrderRef,
    ) -> BoxFuture<'a, Result<OrderList, ExchangeError>> {
        Box::pin(async move {
            let mut p = Params::new();
            p.push("symbol", symbol);
            match id {
                OrderRef::Id(i) => p.push("orderListId", i.to_string()),
                OrderRef::Client(c) => p.push("listClientOrderId", c),
            };
            let l: wire::OrderListJson =
                self.call(Method::DELETE, "/api/v3/orderList", p, Security::Signed).await?;
            l.into_list().map_err(|e| cancel_unknown("/api/v3/orderList", e))
        })
    }

    fn open_order_lists(&self) -> BoxFuture<'_, Result<Vec<OrderList>, ExchangeError>> {
        Box::pin(async move {
            let v: Vec<wire::OrderListJson> = self
                .call(Method::GET, "/api/v3/openOrderList", Params::new(), Security::Signed)
                .await?;
            v.into_iter().map(wire::OrderListJson::into_list).collect()
        })
    }
}
