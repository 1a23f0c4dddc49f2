//! One read of the account for valuing it — the portfolio (`GET /api/portfolio`: every
//! holding) and the equity the drawdown limit watches (the quote balance and the open
//! positions) both start from it, so the quote the account holds and what a holding is worth
//! are decided once.
//!
//! The quote is the one the exchange lists for the reference symbol: exchange A's account
//! holds USDT, exchange B's holds USDC while the service still names its symbols `<BASE>USDT`
//! ([`held_quote`]). A holding counts free and locked alike (an order that locks coin or quote
//! does not make it someone else's).

use std::collections::HashMap;

use rust_decimal::Decimal;

use super::{Balance, Exchange, ExchangeError};
use crate::config::MarketConfig;

/// The asset the account holds its quote in: the quote of `reference_symbol` as the exchange
/// lists it, or `fallback` when the exchange cannot say.
pub async fn held_quote(exchange: &dyn Exchange, reference_symbol: &str, fallback: &str) -> String {
    match exchange.symbol_rules(reference_symbol).await {
        Ok(rules) => rules.quote_asset,
        Err(_) => fallback.to_string(),
    }
}

/// Which last prices an [`Account`] read fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prices {
    /// One request for every symbol's last price.
    All,
    /// None (nothing to value but the quote itself).
    None,
}

/// The account's balances, its quote asset and, when read, the last prices.
#[derive(Debug, Clone)]
pub struct Account {
    /// The asset the account holds its quote in (see [`held_quote`]).
    pub quote: String,
    /// The quote of the service's symbols (`[market] quote_asset`).
    symbol_quote: String,
    pub balances: Vec<Balance>,
    prices: HashMap<String, Decimal>,
}

impl Account {
    /// Reads the account: its quote, its balances, and the last prices when `prices` says so.
    pub async fn read(
        exchange: &dyn Exchange,
        market: &MarketConfig,
        prices: Prices,
    ) -> Result<Self, ExchangeError> {
        let quote = held_quote(exchange, &market.reference_symbol, &market.quote_asset).await;
        let balances = exchange.balances().await?;
        let prices = match prices {
            Prices::All => {
                exchange.prices().await?.into_iter().map(|(s, price)| (s, price.0)).collect()
            }
            Prices::None => HashMap::new(),
        };
        Ok(Self { quote, symbol_quote: market.quote_asset.clone(), balances, prices })
    }

    /// What the account holds of `asset` (free + locked).
    pub fn held(&self, asset: &str) -> Decimal {
        self.balances.iter().filter(|b| b.asset == asset).map(|b| b.free + b.locked).sum()
    }

    pub fn quote_balance(&self) -> Decimal {
        self.held(&self.quote)
    }

    /// The last price of `symbol`, when read.
    pub fn price(&self, symbol: &str) -> Option<Decimal> {
        self.prices.get(symbol).copied()
    }

    /// What one unit of `asset` is worth in the quote: 1 for the quote itself, else the last
    /// price of `<asset><symbol quote>` (`None` when the exchange lists no such symbol).
    pub fn unit_value(&self, asset: &str) -> Option<Decimal> {
        if asset == self.quote {
            Some(Decimal::ONE)
        } else {
            self.price(&format!("{asset}{}", self.symbol_quote))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn an_account_holding_usdc_values_its_coin_at_the_usdt_symbols_price() {
        let balance = |asset: &str, free, locked| Balance { asset: asset.into(), free, locked };
        let account = Account {
            quote: "USDC".into(),
            symbol_quote: "USDT".into(),
            balances: vec![
                balance("USDC", dec!(900), dec!(100)),
                balance("ETH", dec!(1), dec!(0.5)),
            ],
            prices: HashMap::from([("ETHUSDT".to_string(), dec!(3000))]),
        };
        assert_eq!(account.quote_balance(), dec!(1000), "locked quote is still the account's");
        assert_eq!(account.held("ETH"), dec!(1.5));
        assert_eq!(account.unit_value("USDC"), Some(Decimal::ONE));
        assert_eq!(account.unit_value("ETH"), Some(dec!(3000)));
        assert_eq!(account.unit_value("DOGE"), None, "no such symbol, no value");
    }
}
