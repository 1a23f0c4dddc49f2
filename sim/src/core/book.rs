//! The synthetic counterparty: a ladder of levels on each side of the market price, and what
//! a taker can get from it.

use super::{Book, Engine, Side};
use crate::market::round_to;
use crate::symbols::SymbolRules;
use rust_decimal::{Decimal, RoundingStrategy};

impl Engine {
    /// The synthetic book around price `p`: best bid = p rounded down to the tick, best ask one
    /// tick above, then `levels` levels spaced by `level_spacing`.
    pub fn book(&self, rules: &SymbolRules, p: Decimal) -> Book {
        let tick = rules.tick;
        let (best_bid, best_ask) = book_top(rules, p);
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
                bids.push((b, self.level_qty(rules, b)));
            }
            asks.push((a, self.level_qty(rules, a)));
        }
        Book { bids, asks }
    }

    /// The quantity one level at `price` offers: its notional, rounded down to the step.
    fn level_qty(&self, rules: &SymbolRules, price: Decimal) -> Decimal {
        round_to(self.config.level_notional / price, rules.step, RoundingStrategy::ToZero)
            .max(rules.step)
    }

    /// Quantity available to a taker at or better than `limit` (or all levels).
    pub(super) fn available(
        &self,
        rules: &SymbolRules,
        side: Side,
        p: Decimal,
        limit: Option<Decimal>,
    ) -> Decimal {
        self.book(rules, p)
            .against(side)
            .iter()
            .filter(|(lp, _)| match (side, limit) {
                (_, None) => true,
                (Side::Buy, Some(l)) => *lp <= l,
                (Side::Sell, Some(l)) => *lp >= l,
            })
            .map(|(_, q)| *q)
            .sum()
    }

    /// (Quantity, quote cost) of taking `qty` from the book, as far as the book reaches.
    pub(super) fn market_cost(
        &self,
        rules: &SymbolRules,
        side: Side,
        p: Decimal,
        mut qty: Decimal,
    ) -> (Decimal, Decimal) {
        let mut cost = Decimal::ZERO;
        let mut filled = Decimal::ZERO;
        for (lp, lq) in self.book(rules, p).against(side) {
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
}

/// The best bid and ask of the synthetic book when the last price is `p`: the bid is `p`
/// rounded down to the tick (at least one tick), the ask one tick above it.
pub(super) fn book_top(rules: &SymbolRules, p: Decimal) -> (Decimal, Decimal) {
    let bid = round_to(p, rules.tick, RoundingStrategy::ToNegativeInfinity).max(rules.tick);
    (bid, bid + rules.tick)
}
