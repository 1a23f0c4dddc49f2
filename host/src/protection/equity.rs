//! The account's equity in the quote asset: the quote balance (free + locked: an order that
//! locks quote is still the account's money) plus every open position at its last price, from
//! one read of the account (`exchange::account`, the one the portfolio is valued from too).
//!
//! Positions are the book's open trades, valued at what the account actually holds: coin the
//! service does not manage (a long-term holding) is not part of what the drawdown limit
//! protects, and coin the exchange already sold (a stop that filled before the service settled
//! it) is not counted twice — its proceeds are in the quote balance. A buy position holds coin
//! (+ min(size, coin held) × price); a sell position sold coin the account held, its proceeds
//! are in the quote balance and it owes the buy-back (− size × price), so opening it leaves
//! equity unchanged and equity then moves with its pnl.

use rust_decimal::Decimal;

use super::{Protection, ProtectionError};
use crate::exchange::account::{Account, Prices};
use crate::execution::{Direction, Trade};

/// An open position at its last price.
#[derive(Debug, Clone)]
pub struct Valued {
    pub trade: Trade,
    pub price: Decimal,
    /// Coin of a buy position the account holds (free + locked), at most the trade's size.
    pub held: Decimal,
}

impl Valued {
    /// What the position adds to equity (negative for a sell position: the buy-back it owes).
    pub fn value(&self) -> Decimal {
        match self.trade.direction {
            Direction::Buy => self.held * self.price,
            Direction::Sell => -(self.trade.size * self.price),
        }
    }

    /// Pnl if the position closed at the last price, before the exit fee.
    pub fn unrealized(&self) -> Decimal {
        let at_market = self.trade.size * self.price;
        match self.trade.direction {
            Direction::Buy => at_market - self.trade.entry_quote,
            Direction::Sell => self.trade.entry_quote - at_market,
        }
    }
}

/// One measurement of the account.
#[derive(Debug, Clone)]
pub struct Equity {
    pub quote_balance: Decimal,
    pub positions: Vec<Valued>,
}

impl Equity {
    pub fn positions_value(&self) -> Decimal {
        self.positions.iter().map(Valued::value).sum()
    }

    pub fn total(&self) -> Decimal {
        self.quote_balance + self.positions_value()
    }

    /// The open positions' pnl at their last prices, before exit fees.
    pub fn unrealized(&self) -> Decimal {
        self.positions.iter().map(Valued::unrealized).sum()
    }
}

impl Protection {
    /// Reads the balances and, when positions are open, every last price (one call).
    pub(super) async fn measure(&self) -> Result<Equity, ProtectionError> {
        let inner = &self.inner;
        let exchange = inner
            .exchange
            .as_ref()
            .ok_or(ProtectionError::NoExchange(inner.execution.exchange_name()))?;
        let trades = inner.execution.book().open_trades()?;
        let prices = if trades.is_empty() { Prices::None } else { Prices::All };
        let account = Account::read(exchange.as_ref(), &inner.config.market, prices).await?;
        let mut positions = Vec::with_capacity(trades.len());
        for trade in trades {
            let Some(price) = account.price(&trade.symbol) else {
                return Err(ProtectionError::NoPrice(trade.symbol));
            };
            let base = exchange.symbol_rules(&trade.symbol).await?.base_asset;
            let held = account.held(&base).min(trade.size);
            positions.push(Valued { trade, price, held });
        }
        Ok(Equity { quote_balance: account.quote_balance(), positions })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn trade(direction: Direction, size: &str, entry_quote: &str) -> Trade {
        Trade {
            size: d(size),
            entry_quote: d(entry_quote),
            date: "2026-03-02".into(),
            opened_at: "2026-03-02T08:00:00+00:00".into(),
            ..Trade::example(direction)
        }
    }

    #[test]
    fn a_buy_adds_its_coin_at_market_and_a_sell_owes_its_buy_back() {
        let long = Valued {
            trade: trade(Direction::Buy, "0.5", "1501"),
            price: d("2800"),
            held: d("0.5"),
        };
        assert_eq!(long.value(), d("1400"));
        assert_eq!(long.unrealized(), d("-101"), "the entry fee is in entry_quote");
        let short = Valued {
            trade: trade(Direction::Sell, "0.5", "1499"),
            price: d("2800"),
            held: Decimal::ZERO,
        };
        assert_eq!(short.value(), d("-1400"));
        assert_eq!(short.unrealized(), d("99"));
        let equity = Equity { quote_balance: d("10000"), positions: vec![long, short] };
        assert_eq!(equity.positions_value(), Decimal::ZERO);
        assert_eq!(equity.total(), d("10000"));
    }

    #[test]
    fn coin_the_exchange_already_sold_is_not_counted() {
        let stopped_out =
            Valued { trade: trade(Direction::Buy, "0.5", "1501"), price: d("2800"), held: d("0") };
        assert_eq!(stopped_out.value(), Decimal::ZERO, "its proceeds are in the quote balance");
        let partly = Valued { held: d("0.2"), ..stopped_out };
        assert_eq!(partly.value(), d("560"));
    }
}
