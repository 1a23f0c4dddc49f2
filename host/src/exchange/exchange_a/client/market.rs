//! Market data and trading rules: exchangeInfo (its filters and rate limits), last prices with
//! a short cache, 24 h tickers.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use reqwest::Method;

use super::{ExchangeAClient, MISS_RELOAD_AFTER, Security, lock};
use crate::exchange::budget::Limits;
use crate::exchange::exchange_a::filters::SymbolRules;
use crate::exchange::exchange_a::signer::Params;
use crate::exchange::exchange_a::wire::{self};
use crate::exchange::{ExchangeError, Price, Ticker24h};

impl ExchangeAClient {
    pub(super) async fn load_exchange_info(&self) -> Result<(), ExchangeError> {
        let info: wire::ExchangeInfo =
            self.call(Method::GET, "/api/v3/exchangeInfo", Params::new(), Security::Public).await?;
        self.budget.set_limits(limits_of(&info.rate_limits));
        let map: HashMap<String, Result<SymbolRules, String>> =
            info.symbols.iter().map(|s| (s.symbol.clone(), SymbolRules::from_info(s))).collect();
        for (symbol, reason) in map.iter().filter_map(|(s, r)| Some((s, r.as_ref().err()?))) {
            tracing::warn!(%symbol, %reason, "unusable filters: orders of this symbol are refused");
        }
        *self.rules.write().unwrap_or_else(|e| e.into_inner()) = map;
        *lock(&self.rules_fetched) = Some(Instant::now());
        Ok(())
    }

    /// Symbol rules from the cached exchangeInfo (refreshed when stale or missing). A listed
    /// symbol with unusable filters is `Refused` with the reason; an unlisted one is
    /// `InvalidSymbol`. A symbol missing from a listing younger than [`MISS_RELOAD_AFTER`] is
    /// unlisted without asking again, so unknown symbols (typos, garbage from a caller) cost
    /// at most one exchangeInfo (weight 20) a minute instead of one each.
    pub async fn rules_for(&self, symbol: &str) -> Result<SymbolRules, ExchangeError> {
        let age = lock(&self.rules_fetched).map(|t| t.elapsed());
        let fresh = age.is_some_and(|age| age < self.config.exchange_info_ttl);
        let cached = || self.rules.read().unwrap_or_else(|e| e.into_inner()).get(symbol).cloned();
        let rules = match cached().filter(|_| fresh) {
            Some(rules) => rules,
            None => {
                let recent = age.is_some_and(|age| age < MISS_RELOAD_AFTER);
                if !(fresh && recent) {
                    self.load_exchange_info().await?;
                }
                cached().ok_or_else(|| ExchangeError::InvalidSymbol {
                    code: -1121,
                    msg: "Invalid symbol.".into(),
                })?
            }
        };
        rules.map_err(|reason| ExchangeError::Refused {
            reason: format!("{symbol} cannot be traded: {reason}"),
        })
    }

    pub(super) async fn last_price(&self, symbol: &str) -> Result<Price, ExchangeError> {
        let mut p = Params::new();
        p.push("symbol", symbol);
        let v: wire::PriceJson =
            self.call(Method::GET, "/api/v3/ticker/price", p, Security::Public).await?;
        self.remember_price(symbol, Price(v.price));
        Ok(Price(v.price))
    }

    pub(super) fn remember_price(&self, symbol: &str, p: Price) {
        self.last_prices
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(symbol.to_string(), (p, Instant::now()));
    }

    /// A price seen in the last 10 seconds, else a fresh one from the ticker.
    pub(super) async fn recent_price(&self, symbol: &str) -> Result<Price, ExchangeError> {
        let cached =
            self.last_prices.read().unwrap_or_else(|e| e.into_inner()).get(symbol).copied();
        match cached {
            Some((p, at)) if at.elapsed() < Duration::from_secs(10) => Ok(p),
            _ => self.last_price(symbol).await,
        }
    }

    /// 24 h tickers of `symbols` (all when empty) from the exchange, uncached.
    pub(super) async fn fetch_tickers(
        &self,
        symbols: &[String],
    ) -> Result<Vec<Ticker24h>, ExchangeError> {
        let mut p = Params::new();
        match symbols {
            [] => {}
            [one] => {
                p.push("symbol", one);
                let t: wire::Ticker24hJson =
                    self.call(Method::GET, "/api/v3/ticker/24hr", p, Security::Public).await?;
                return Ok(vec![t.into()]);
            }
            many => {
                let list = serde_json::to_string(many).unwrap_or_default();
                p.push("symbols", list);
            }
        }
        let v: Vec<wire::Ticker24hJson> =
            self.call(Method::GET, "/api/v3/ticker/24hr", p, Security::Public).await?;
        Ok(v.into_iter().map(Ticker24h::from).collect())
    }
}

/// The budget's limits from exchangeInfo's `rateLimits` (the documented values where one is
/// missing).
fn limits_of(rate_limits: &[wire::RateLimit]) -> Limits {
    let find = |kind: &str, interval: &str, num: u32| {
        rate_limits
            .iter()
            .find(|l| l.rate_limit_type == kind && l.interval == interval && l.interval_num == num)
            .map(|l| l.limit)
    };
    let documented = Limits::default();
    Limits {
        weight_per_minute: find("REQUEST_WEIGHT", "MINUTE", 1)
            .unwrap_or(documented.weight_per_minute),
        orders_per_10s: find("ORDERS", "SECOND", 10).unwrap_or(documented.orders_per_10s),
        orders_per_day: find("ORDERS", "DAY", 1).unwrap_or(documented.orders_per_day),
    }
}
