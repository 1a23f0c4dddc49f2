//! Reconciliation against what the account holds: the exchange's balances are the truth about
//! positions, whatever the service believed from the answers it got. A damaged or lost answer
//! can leave coin bought with no trade to protect it, or a trade whose coin was already sold:
//!
//! - a trade whose coin the account no longer holds is settled: its protection's filled leg
//!   closes it when it has one, else the account's sells since it opened do (reason `market`);
//! - coin held with no open trade is adopted as a trade and protected
//!   (`[protection] adopt_holdings`): by default only when the order journal shows the service
//!   bought it (the symbol's newest entry never became a trade), at that signal's levels;
//! - coin held beyond an open trade's size is reported (one trade per symbol: the boss decides).
//!
//! Each symbol is settled under its lock, with the balances read again under it, so an entry
//! or a close in flight is never mistaken for a difference.

use rust_decimal::Decimal;

use super::book::open_trade_in;
use super::client_id::{ClientOrderId, Purpose};
use super::close::{CloseRow, closed_by};
use super::journal::{JournalEntry, OrderKind, Outcome};
use super::reconcile::ReconcileReport;
use super::sizing::bracket_prices;
use super::trade::TradeProtection;
use super::trade::{Direction, ProtectionState, Trade, TradeSource};
use super::{Execution, ExecutionError};
use crate::config::AdoptHoldings;
use crate::exchange::rules::round_to_step;
use crate::exchange::{
    Exchange, Fill, Order, OrderStatus, OrderType, Price, Qty, Side, SymbolRules, lookup,
};
use rust_decimal::RoundingStrategy;

/// How many of a symbol's newest journal entries are searched for its last entry.
const JOURNAL_DEPTH: usize = 50;

/// A holding the service may adopt: its symbol, the free quantity and its rules.
struct Holding {
    symbol: String,
    free: Decimal,
    rules: SymbolRules,
}

impl Execution {
    /// Compares every open long trade with the coin the account holds: a trade whose coin is
    /// gone is settled (before anything tries to protect it again), a difference is reported.
    /// A trade whose protection is pending is left to the next step: a crash can lose the row
    /// of a protection that was placed (and may have filled since), and only the lookup by its
    /// client id finds it.
    pub(super) async fn compare_trades_with_holdings(
        &self,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        let exchange = self.orders()?.exchange.clone();
        let trades = self.inner.book.open_trades()?;
        if trades.is_empty() {
            return Ok(());
        }
        // One read for every trade; a trade is read again under its lock only when this one
        // shows a difference (an entry or a close may be in flight).
        let snapshot = match exchange.balances().await {
            Ok(balances) => balances,
            Err(e) => {
                report.actions.push(format!("trades not compared: balances cannot be read ({e})"));
                return Ok(());
            }
        };
        for trade in trades {
            if trade.direction == Direction::Buy
                && trade.protection.state() != ProtectionState::Pending
            {
                let rules = self.symbol_rules(&trade.symbol).await?;
                let held: Decimal = snapshot
                    .iter()
                    .filter(|b| b.asset == rules.base_asset)
                    .map(|b| b.free + b.locked)
                    .sum();
                if held >= trade.size && !tradeable(held - trade.size, trade.entry_px, &rules) {
                    continue;
                }
                let _symbol = self.lock_symbol(&trade.symbol).await;
                if let Some(trade) = self.inner.book.open_trade(&trade.symbol)?
                    && trade.protection.state() != ProtectionState::Pending
                {
                    self.compare_trade(exchange.as_ref(), &trade, report).await?;
                }
            }
        }
        Ok(())
    }

    /// Adopts coin the account holds without an open trade, as `[protection] adopt_holdings`
    /// says (see the module doc).
    pub(super) async fn adopt_holdings(
        &self,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        let exchange = self.orders()?.exchange.clone();
        let balances = match exchange.balances().await {
            Ok(balances) => balances,
            Err(e) => {
                report
                    .actions
                    .push(format!("holdings not compared: balances cannot be read ({e})"));
                return Ok(());
            }
        };
        let market = &self.inner.config.market;
        let quote = crate::exchange::account::held_quote(
            exchange.as_ref(),
            &market.reference_symbol,
            &market.quote_asset,
        )
        .await;
        let ignored = &self.inner.config.protection.ignore_assets;
        for balance in balances {
            let asset = balance.asset;
            if asset == quote || asset == market.quote_asset || ignored.contains(&asset) {
                continue;
            }
            let symbol = format!("{asset}{}", market.quote_asset);
            let _symbol = self.lock_symbol(&symbol).await;
            if self.inner.book.open_trade(&symbol)?.is_some()
                || self.pending_entry_for(&symbol)?.is_some()
            {
                continue;
            }
            self.consider_holding(exchange.as_ref(), &symbol, report).await?;
        }
        Ok(())
    }

    /// The quantity of `rules`' coin the account holds now (free, locked).
    async fn held_now(
        exchange: &dyn Exchange,
        rules: &SymbolRules,
    ) -> Result<(Decimal, Decimal), String> {
        let balances = exchange.balances().await.map_err(|e| e.to_string())?;
        Ok(balances
            .into_iter()
            .find(|b| b.asset == rules.base_asset)
            .map_or((Decimal::ZERO, Decimal::ZERO), |b| (b.free, b.locked)))
    }

    /// An open long trade against the coin held: gone → settled; short of the trade or beyond
    /// it by a tradeable quantity → reported.
    async fn compare_trade(
        &self,
        exchange: &dyn Exchange,
        trade: &Trade,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        let rules = self.symbol_rules(&trade.symbol).await?;
        let (free, locked) = match Self::held_now(exchange, &rules).await {
            Ok(held) => held,
            Err(e) => {
                report.actions.push(format!("{}: holdings cannot be read ({e})", trade.symbol));
                return Ok(());
            }
        };
        let held = free + locked;
        if !tradeable(held, trade.entry_px, &rules) {
            return self.settle_sold_outside(exchange, trade, &rules, report).await;
        }
        let excess = held - trade.size;
        if excess > Decimal::ZERO && tradeable(excess, trade.entry_px, &rules) {
            report.actions.push(format!(
                "{}: the account holds {held}, {excess} more than the trade's {}; the extra is \
                 not protected (one trade per symbol: close or sell it by hand)",
                trade.symbol, trade.size
            ));
        } else if held < trade.size && trade.protection.state() != ProtectionState::Protected {
            // Its protection could not be placed for coin that is not there (a fee in the coin
            // its sizing missed, or a part sold outside): it covers what the account holds.
            self.resize_to_held(trade, held, &rules, report)?;
        } else if trade.size - held > rules.step_size.max(Decimal::ZERO)
            && tradeable(trade.size - held, trade.entry_px, &rules)
        {
            report.actions.push(format!(
                "{}: the account holds only {held} of the trade's {}; part was sold outside the \
                 service",
                trade.symbol, trade.size
            ));
        }
        Ok(())
    }

    /// Shrinks an unprotected trade to the coin the account holds (down to the symbol's step),
    /// so the protection that reconciliation places next covers exactly that.
    fn resize_to_held(
        &self,
        trade: &Trade,
        held: Decimal,
        rules: &SymbolRules,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        let size = round_to_step(held, rules.step_size, RoundingStrategy::ToZero);
        if size <= Decimal::ZERO || size >= trade.size {
            return Ok(());
        }
        let entry_quote = (trade.entry_quote * size / trade.size).round_dp(8);
        self.inner.book.put_trade(&Trade { size, entry_quote, ..trade.clone() })?;
        report.actions.push(format!(
            "{}: the trade's size {} is more than the account holds ({held}); it now covers {size}",
            trade.symbol, trade.size
        ));
        Ok(())
    }

    /// A trade whose coin is gone: its protection's filled leg closes it when it has one;
    /// otherwise the account's sells of the symbol since the trade opened do.
    async fn settle_sold_outside(
        &self,
        exchange: &dyn Exchange,
        trade: &Trade,
        rules: &SymbolRules,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        // A protection that ended with a fill closes the trade at its price; one known dead
        // (unprotected) is not read again.
        let finished = match trade.protection.state() {
            ProtectionState::Protected => self.settle_finished(trade, true).await?,
            _ => None,
        };
        if let Some(closed) = finished {
            report.actions.push(format!(
                "{}: {:?} filled at {}; pnl {}",
                trade.symbol, closed.reason, closed.exit_px, closed.pnl
            ));
            report.closed.push(CloseRow::closed(&closed));
            return Ok(());
        }
        let now = self.inner.clock.now_ms();
        let since = match lookup::exchange_time_of(exchange, &trade.opened_at, now).await {
            Ok(since) => since,
            Err(why) => {
                report.actions.push(format!("{}: coin gone, sells not read ({why})", trade.symbol));
                return Ok(());
            }
        };
        let sells = match exchange.my_trades(&trade.symbol, None).await {
            Ok(trades) => trades
                .into_iter()
                .filter(|t| !t.is_buyer && t.time >= since - lookup::TRADE_SLACK_MS)
                .collect::<Vec<_>>(),
            Err(e) => {
                report.actions.push(format!("{}: coin gone, sells not read ({e})", trade.symbol));
                return Ok(());
            }
        };
        if sells.is_empty() {
            report.actions.push(format!(
                "{}: the account no longer holds the trade's {} and no sell of it is found; the \
                 trade stays open until the boss closes or restores it",
                trade.symbol, trade.size
            ));
            return Ok(());
        }
        let exit = exit_of(trade, &sells);
        let Some(closed) =
            closed_by(trade, &exit, rules, super::trade::CloseReason::Market, &self.now_iso())
        else {
            return Ok(());
        };
        let today = self.today();
        self.inner.book.store().write(|w| super::book::close_trade_in(w, &closed, today))?;
        report.actions.push(format!(
            "{}: the account no longer holds the trade's {}; closed from the exchange's sells \
             at {} (pnl {})",
            trade.symbol, trade.size, closed.exit_px, closed.pnl
        ));
        report.closed.push(CloseRow::closed(&closed));
        Ok(())
    }

    /// Coin held with no trade: adopted and protected when `[protection] adopt_holdings`
    /// allows, reported when the journal attributes it to the service but adopting is off.
    async fn consider_holding(
        &self,
        exchange: &dyn Exchange,
        symbol: &str,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        // The journal first: coin the service never bought costs no request unless "all".
        let entry = self.unaccounted_entry(symbol)?;
        let mode = self.inner.config.protection.adopt_holdings;
        if entry.is_none() && mode != AdoptHoldings::All {
            return Ok(());
        }
        let Ok(rules) = exchange.symbol_rules(symbol).await else {
            return Ok(()); // not a pair the service can trade against its quote asset
        };
        let price = match exchange.price(symbol).await {
            Ok(price) => price.0,
            Err(e) => {
                report.actions.push(format!("{symbol}: holding not compared ({e})"));
                return Ok(());
            }
        };
        let (free, locked) = match Self::held_now(exchange, &rules).await {
            Ok(held) => held,
            Err(e) => {
                report.actions.push(format!("{symbol}: holdings cannot be read ({e})"));
                return Ok(());
            }
        };
        if !tradeable(free + locked, price, &rules) {
            return Ok(()); // dust
        }
        let adopt = match (&entry, mode) {
            (Some(_), AdoptHoldings::Journal | AdoptHoldings::All) => true,
            (None, AdoptHoldings::All) => true,
            (Some(entry), AdoptHoldings::Off) => {
                report.actions.push(format!(
                    "{symbol}: the account holds {} bought by entry {} that the service has no \
                     trade for; not adopted ([protection] adopt_holdings = \"off\")",
                    free + locked,
                    entry.client_order_id
                ));
                false
            }
            (None, _) => false,
        };
        if !adopt {
            return Ok(());
        }
        if locked > Decimal::ZERO || !tradeable(free, price, &rules) {
            report.actions.push(format!(
                "{symbol}: the account holds {} with {locked} locked by an open order the \
                 service does not know; not adopted",
                free + locked
            ));
            return Ok(());
        }
        let holding = Holding { symbol: symbol.to_string(), free, rules };
        self.adopt(exchange, holding, entry.as_ref(), price, report).await
    }

    /// The symbol's newest entry when it never became a trade: the service sent it, and its
    /// outcome is not a placed order it recorded (unknown, lost, or taken as refused).
    fn unaccounted_entry(&self, symbol: &str) -> Result<Option<JournalEntry>, ExecutionError> {
        let newest = self.journal().newest(Some(symbol), JOURNAL_DEPTH)?;
        let entry = newest.into_iter().map(|(_, e)| e).find(|e| {
            e.kind == OrderKind::Entry
                && e.plan.as_ref().is_some_and(|p| p.direction == Direction::Buy)
        });
        Ok(entry.filter(|e| !matches!(e.outcome, Outcome::Placed { .. })))
    }

    /// Records `holding` as a trade (source `recovered`) and protects it.
    async fn adopt(
        &self,
        exchange: &dyn Exchange,
        holding: Holding,
        entry: Option<&JournalEntry>,
        price: Decimal,
        report: &mut ReconcileReport,
    ) -> Result<(), ExecutionError> {
        let Holding { symbol, free, rules } = holding;
        let protection = &self.inner.config.protection;
        let plan = entry.and_then(|e| e.plan.as_ref());
        let (sl_pct, tp_pct) = plan
            .map_or((protection.adopt_sl_pct, protection.adopt_tp_pct), |p| (p.sl_pct, p.tp_pct));
        let entry_px = match entry_price(exchange, &symbol, free).await {
            Some(px) => px,
            None => price,
        };
        let Ok(prices) = bracket_prices(entry_px, sl_pct, tp_pct, Direction::Buy, &rules) else {
            report.actions.push(format!(
                "{symbol}: the account holds {free} with no trade; no valid bracket at {entry_px}, \
                 not adopted"
            ));
            return Ok(());
        };
        let now = self.inner.clock.now_ms();
        let trade = Trade {
            symbol: symbol.clone(),
            direction: Direction::Buy,
            bot: plan.map_or_else(|| "recovered".to_string(), |p| p.bot.clone()),
            exchange: self.exchange_name(),
            size: free,
            entry_px,
            entry_quote: (entry_px * free).round_dp(8),
            sl_px: prices.sl_px,
            tp_px: prices.tp_px,
            sl_pct,
            tp_pct,
            protection: TradeProtection::pending(
                self.stop_placement(),
                prices.sl_limit_px,
                Some(ClientOrderId::fresh(Purpose::Reprotect, now, &symbol).into_string()),
            ),
            entry_order_id: None,
            entry_client_order_id: entry.map(|e| e.client_order_id.clone()),
            source: TradeSource::Recovered,
            date: self.today().iso(),
            opened_at: self.now_iso(),
        };
        let today = self.today();
        // An entry the service sent counts as today's trade, as it would have when it filled.
        if entry.is_some() {
            self.inner.book.store().write(|w| open_trade_in(w, &trade, today))?;
        } else {
            self.inner.book.put_trade(&trade)?;
        }
        let protected = self.protect(trade, super::journal::Commit::Durable).await;
        let outcome = match protected.protection.state() {
            ProtectionState::Protected => "protected".to_string(),
            ProtectionState::Unprotected { reason } => format!("still UNPROTECTED: {reason}"),
            ProtectionState::Pending => "protection pending".to_string(),
        };
        let why = entry.map_or_else(
            || "not bought by the service ([protection] adopt_holdings = \"all\")".to_string(),
            |e| format!("bought by entry {} whose answer the service never had", e.client_order_id),
        );
        report.actions.push(format!(
            "{symbol}: the account holds {free} with no trade ({why}); adopted at {entry_px}, \
             stop {}, target {}: {outcome}",
            protected.sl_px, protected.tp_px
        ));
        report.recovered.push(protected.view());
        Ok(())
    }
}

/// Whether `qty` at `price` can be traded at all (at least the symbol's minimum quantity and
/// notional): below that it is dust, which no order could sell or protect.
fn tradeable(qty: Decimal, price: Decimal, rules: &SymbolRules) -> bool {
    qty > Decimal::ZERO && qty >= rules.min_qty && qty * price >= rules.min_notional
}

/// The price the account paid for `qty` of `symbol`: its newest buys covering that quantity,
/// weighted; `None` when they cannot be read.
async fn entry_price(exchange: &dyn Exchange, symbol: &str, qty: Decimal) -> Option<Decimal> {
    let trades = exchange.my_trades(symbol, None).await.ok()?;
    let (mut bought, mut paid) = (Decimal::ZERO, Decimal::ZERO);
    for buy in trades.iter().rev().filter(|t| t.is_buyer) {
        let take = buy.qty.0.min(qty - bought);
        bought += take;
        paid += take * buy.price.0;
        if bought >= qty {
            break;
        }
    }
    (bought > Decimal::ZERO).then(|| (paid / bought).round_dp(8))
}

/// The sells of a trade's coin as one exit order, for [`closed_by`].
fn exit_of(trade: &Trade, sells: &[crate::exchange::Trade]) -> Order {
    let qty: Decimal = sells.iter().map(|t| t.qty.0).sum::<Decimal>().min(trade.size);
    let quote: Decimal = sells.iter().map(|t| t.quote_qty).sum();
    let sold: Decimal = sells.iter().map(|t| t.qty.0).sum();
    // Only the trade's share of the sells counts (the account may have sold more by hand).
    let share = if sold.is_zero() { Decimal::ONE } else { qty / sold };
    let last = sells.last().map_or(0, |t| t.time);
    Order {
        symbol: trade.symbol.clone(),
        order_id: sells.last().map_or(0, |t| t.order_id),
        order_list_id: None,
        client_order_id: String::new(),
        side: Side::Sell,
        order_type: OrderType::Market,
        status: OrderStatus::Filled,
        price: Price(Decimal::ZERO),
        stop_price: None,
        orig_qty: Qty(qty),
        executed_qty: Qty(qty),
        cumulative_quote_qty: (quote * share).round_dp(8),
        time_in_force: None,
        time: last,
        update_time: last,
        working: true,
        fills: sells
            .iter()
            .map(|t| Fill {
                commission: (t.commission * share).round_dp(8),
                ..Fill::from(t.clone())
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn sell(qty: Decimal, price: Decimal, fee: Decimal) -> crate::exchange::Trade {
        crate::exchange::Trade {
            symbol: "BTCUSDT".into(),
            id: 1,
            order_id: 9,
            order_list_id: None,
            price: Price(price),
            qty: Qty(qty),
            quote_qty: qty * price,
            commission: fee,
            commission_asset: "USDT".into(),
            time: 5,
            is_buyer: false,
            is_maker: false,
        }
    }

    #[test]
    fn dust_is_not_tradeable() {
        let rules =
            SymbolRules { min_qty: dec!(0.001), min_notional: dec!(5), ..SymbolRules::example() };
        assert!(tradeable(dec!(0.01), dec!(1000), &rules));
        assert!(!tradeable(dec!(0.0009), dec!(100000), &rules), "below the minimum quantity");
        assert!(!tradeable(dec!(0.004), dec!(1000), &rules), "below the minimum notional");
        assert!(!tradeable(Decimal::ZERO, dec!(1000), &rules));
    }

    #[test]
    fn the_exit_counts_only_the_trades_share_of_the_sells() {
        let trade = Trade { size: dec!(1), ..Trade::example(Direction::Buy) };
        let exit = exit_of(
            &trade,
            &[sell(dec!(1), dec!(100), dec!(0.1)), sell(dec!(1), dec!(110), dec!(0.1))],
        );
        assert_eq!(exit.executed_qty.0, dec!(1));
        assert_eq!(exit.cumulative_quote_qty, dec!(105), "half of 210");
        assert_eq!(exit.commission_in("USDT"), dec!(0.1));
        assert_eq!(exit.avg_price().map(|p| p.0), Some(dec!(105)));
    }
}
