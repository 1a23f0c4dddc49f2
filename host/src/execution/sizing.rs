//! Position sizing, exit quantities and bracket prices, pure functions of balances, config and the symbol's
//! filters. Everything here is a decimal rounded to the filters; nothing here talks to the
//! exchange.

use rust_decimal::Decimal;

use super::trade::Direction;
use crate::exchange::SymbolRules;

/// The stop-loss leg's limit price: 0.2 % beyond its trigger (spec: "Stop-loss limit buffer"),
/// so a fast market still fills it — below the stop (× 0.998, rounded down) when the stop
/// sells a long position, above it (× 1.002, rounded up) when it buys back a sold one.
pub fn stop_limit_px(sl_px: Decimal, direction: Direction, rules: &SymbolRules) -> Decimal {
    match direction {
        Direction::Buy => rules.floor_price(sl_px * Decimal::new(998, 3)).0,
        Direction::Sell => rules.ceil_price(sl_px * Decimal::new(1002, 3)).0,
    }
}

/// How much to buy.
#[derive(Debug, Clone, PartialEq)]
pub struct Sizing {
    /// min(balance, cap) when the cap is positive, else the balance.
    pub capital_base: Decimal,
    /// size_pct of the capital base, in the quote asset.
    pub quote_amount: Decimal,
    /// `quote_amount / price`, rounded down to the step, at most the symbol's maximum.
    pub qty: Decimal,
    /// Why `qty` is less than `quote_amount` buys: the filter that caps it, in words.
    pub capped: Option<String>,
}

/// The order type an entry is sized for: a MARKET order is held to `MARKET_LOT_SIZE` as well as
/// `LOT_SIZE`, and to the maximum notional only when the symbol applies it to market orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryOrder {
    Market,
    Limit,
}

/// The largest quantity the symbol takes for `order` at `price`, and the filter that sets it
/// (none when no filter has a maximum).
fn max_qty(
    rules: &SymbolRules,
    order: EntryOrder,
    price: Decimal,
) -> Option<(Decimal, &'static str)> {
    let mut limits = vec![(rules.max_qty, "LOT_SIZE maxQty")];
    if order == EntryOrder::Market {
        limits.push((rules.market_max_qty, "MARKET_LOT_SIZE maxQty"));
    }
    let notional_applies = order == EntryOrder::Limit || rules.apply_max_to_market;
    if notional_applies && rules.max_notional > Decimal::ZERO && price > Decimal::ZERO {
        limits.push((rules.max_notional / price, "NOTIONAL maxNotional"));
    }
    limits
        .into_iter()
        .filter(|(max, _)| *max > Decimal::ZERO)
        .min_by(|a, b| a.0.cmp(&b.0))
        .map(|(max, name)| (rules.floor_qty(max).0, name))
}

/// Sizes an entry: `size_pct` percent of the capital base at `price`, capped at the largest
/// order the symbol's filters take (`capped` says so). `Err` says why no valid order exists
/// (zero balance, below the minimum quantity or notional).
pub fn size_entry(
    quote_balance: Decimal,
    cap: Decimal,
    size_pct: Decimal,
    price: Decimal,
    rules: &SymbolRules,
    order: EntryOrder,
) -> Result<Sizing, String> {
    let capital_base = if cap > Decimal::ZERO { quote_balance.min(cap) } else { quote_balance };
    if capital_base <= Decimal::ZERO {
        return Err(format!(
            "no {} to trade with (free balance {quote_balance})",
            rules.quote_asset
        ));
    }
    if price <= Decimal::ZERO {
        return Err(format!("{} has no usable price ({price})", rules.symbol));
    }
    let quote_amount = (capital_base * size_pct / Decimal::ONE_HUNDRED).round_dp(8);
    let wanted = rules.floor_qty(quote_amount / price).0;
    let (qty, capped) = match max_qty(rules, order, price) {
        Some((max, filter)) if wanted > max => {
            let why = format!(
                "{} {} ({} {}) capped to {} {} ({} {}) by {filter}",
                wanted.normalize(),
                rules.base_asset,
                quote_amount.normalize(),
                rules.quote_asset,
                max.normalize(),
                rules.base_asset,
                (max * price).round_dp(2).normalize(),
                rules.quote_asset
            );
            (max, Some(why))
        }
        _ => (wanted, None),
    };
    if qty <= Decimal::ZERO || (rules.min_qty > Decimal::ZERO && qty < rules.min_qty) {
        return Err(format!(
            "{size_pct}% of the capital base {} {} buys {qty} {}, below the minimum quantity {}",
            capital_base.normalize(),
            rules.quote_asset,
            rules.base_asset,
            rules.min_qty.normalize()
        ));
    }
    let notional = qty * price;
    if rules.min_notional > Decimal::ZERO && notional < rules.min_notional {
        return Err(format!(
            "the order value {} {} ({size_pct}% of the capital base {}) is below the minimum \
             notional {}",
            notional.round_dp(8).normalize(),
            rules.quote_asset,
            capital_base.normalize(),
            rules.min_notional.normalize()
        ));
    }
    Ok(Sizing { capital_base, quote_amount, qty, capped })
}

/// What a market exit of a long position sells, rounded down to the step and never more than
/// is `free`: the trade's `size`, plus the coin left beyond it when that remainder is too small
/// to sell on its own (below the minimum quantity, or below the minimum notional at `price`):
/// the sub-step dust that rounding sizes to the step left behind, by this trade and earlier
/// ones, is swept into this exit instead of piling up. A sellable amount beyond the size is a
/// holding of the account's own and is left alone.
pub fn exit_qty(free: Decimal, size: Decimal, price: Decimal, rules: &SymbolRules) -> Decimal {
    let beyond = free - size;
    let unsellable = beyond < rules.min_qty.max(rules.step_size)
        || (rules.min_notional > Decimal::ZERO && beyond * price < rules.min_notional);
    let wanted = if beyond > Decimal::ZERO && unsellable { free } else { size };
    rules.floor_qty(free.min(wanted)).0
}

/// The take-profit and stop-loss prices of a position entered at `entry`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BracketPrices {
    pub tp_px: Decimal,
    pub sl_px: Decimal,
    /// The stop leg's limit price (see [`stop_limit_px`]).
    pub sl_limit_px: Decimal,
}

/// For a buy: tp = entry × (1 + tp_pct/100), sl = entry × (1 − sl_pct/100) (the spec's
/// formulas). For a sell, mirrored: tp = entry × (1 − tp_pct/100) below, sl = entry ×
/// (1 + sl_pct/100) above. Both to the nearest tick. `Err` when rounding collapses the bracket
/// (the take-profit must be on the winning side of the entry, the stop on the losing side,
/// the stop's limit beyond the stop, all positive).
pub fn bracket_prices(
    entry: Decimal,
    sl_pct: Decimal,
    tp_pct: Decimal,
    direction: Direction,
    rules: &SymbolRules,
) -> Result<BracketPrices, String> {
    let (tp_sign, sl_sign) = match direction {
        Direction::Buy => (Decimal::ONE, -Decimal::ONE),
        Direction::Sell => (-Decimal::ONE, Decimal::ONE),
    };
    let tp_px =
        rules.round_price(entry * (Decimal::ONE + tp_sign * tp_pct / Decimal::ONE_HUNDRED)).0;
    let sl_px =
        rules.round_price(entry * (Decimal::ONE + sl_sign * sl_pct / Decimal::ONE_HUNDRED)).0;
    let prices = BracketPrices::at(sl_px, tp_px, direction, rules);
    if !prices.brackets(entry, direction) {
        return Err(format!(
            "no valid {} bracket around {entry} with sl_pct {sl_pct} and tp_pct {tp_pct} at \
             tick {}: tp {tp_px}, sl {sl_px}, stop limit {}",
            direction.as_str(),
            rules.tick_size.normalize(),
            prices.sl_limit_px
        ));
    }
    Ok(prices)
}

impl BracketPrices {
    /// The levels `sl_px` and `tp_px` as given (a manual entry's announced ones), with the stop
    /// leg's limit derived as always.
    pub fn at(sl_px: Decimal, tp_px: Decimal, direction: Direction, rules: &SymbolRules) -> Self {
        Self { tp_px, sl_px, sl_limit_px: stop_limit_px(sl_px, direction, rules) }
    }

    /// Whether these levels protect a position entered at `entry`: the take-profit on the
    /// winning side, the stop on the losing side, the stop's limit beyond the stop, all
    /// positive.
    pub fn brackets(&self, entry: Decimal, direction: Direction) -> bool {
        let ordered = match direction {
            Direction::Buy => {
                self.tp_px > entry && entry > self.sl_px && self.sl_px > self.sl_limit_px
            }
            Direction::Sell => {
                self.tp_px < entry && entry < self.sl_px && self.sl_px < self.sl_limit_px
            }
        };
        ordered && self.tp_px > Decimal::ZERO && self.sl_limit_px > Decimal::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    fn rules() -> SymbolRules {
        SymbolRules::example()
    }

    #[test]
    fn the_cap_limits_the_capital_base_as_the_spec_example_says() {
        // balance 10000, cap 2000, size_pct 5 -> 5 % of 2000 = 100 USDT.
        let s =
            size_entry(dec!(10000), dec!(2000), dec!(5), dec!(3000), &rules(), EntryOrder::Market)
                .unwrap();
        assert_eq!(s.capital_base, dec!(2000));
        assert_eq!(s.quote_amount, dec!(100));
        assert_eq!(s.qty, dec!(0.0333), "100 / 3000 rounded down to the step");
        let uncapped = size_entry(
            dec!(10000),
            Decimal::ZERO,
            dec!(5),
            dec!(3000),
            &rules(),
            EntryOrder::Market,
        )
        .unwrap();
        assert_eq!(uncapped.capital_base, dec!(10000));
        assert_eq!(uncapped.quote_amount, dec!(500));
    }

    #[test]
    fn a_filter_maximum_caps_the_order_and_says_which() {
        let pepe = SymbolRules {
            symbol: "PEPEUSDT".into(),
            base_asset: "PEPE".into(),
            step_size: dec!(1),
            min_qty: dec!(1),
            max_qty: dec!(9000000),
            market_max_qty: dec!(1000000),
            max_notional: dec!(9000000),
            ..rules()
        };
        let price = dec!(0.00001);
        let market =
            size_entry(dec!(10000), Decimal::ZERO, dec!(10), price, &pepe, EntryOrder::Market);
        let market = market.unwrap();
        assert_eq!(market.qty, dec!(1000000));
        let why = market.capped.unwrap();
        assert!(
            why.contains("100000000 PEPE (1000 USDT) capped to 1000000 PEPE (10 USDT)"),
            "{why}"
        );
        assert!(why.ends_with("by MARKET_LOT_SIZE maxQty"), "{why}");
        let limit =
            size_entry(dec!(10000), Decimal::ZERO, dec!(10), price, &pepe, EntryOrder::Limit);
        let limit = limit.unwrap();
        assert_eq!(limit.qty, dec!(9000000), "a LIMIT order is held to LOT_SIZE only");
        assert!(limit.capped.unwrap().ends_with("by LOT_SIZE maxQty"));
        // The maximum notional caps a LIMIT order always, a MARKET order when applied to it.
        let eth = SymbolRules { max_notional: dec!(150), ..rules() };
        let capped =
            size_entry(dec!(10000), Decimal::ZERO, dec!(5), dec!(3000), &eth, EntryOrder::Limit);
        assert_eq!(capped.unwrap().qty, dec!(0.05));
        let free =
            size_entry(dec!(10000), Decimal::ZERO, dec!(5), dec!(3000), &eth, EntryOrder::Market);
        assert_eq!(free.unwrap().capped, None);
    }

    #[test]
    fn an_order_below_min_notional_is_refused_with_a_reason() {
        let err =
            size_entry(dec!(400), Decimal::ZERO, dec!(1), dec!(3000), &rules(), EntryOrder::Market)
                .unwrap_err();
        assert!(err.contains("minimum notional 5"), "{err}");
        let err = size_entry(
            Decimal::ZERO,
            Decimal::ZERO,
            dec!(1),
            dec!(3000),
            &rules(),
            EntryOrder::Market,
        )
        .unwrap_err();
        assert!(err.contains("no USDT"), "{err}");
    }

    #[test]
    fn an_exit_sweeps_the_dust_beyond_the_size_but_never_a_sellable_holding() {
        let r = rules();
        // Two trades left 0.0000742 ETH each: together more than a step.
        assert_eq!(exit_qty(dec!(0.0258484), dec!(0.0257), dec!(3836), &r), dec!(0.0258));
        assert_eq!(exit_qty(dec!(0.0257742), dec!(0.0257), dec!(3836), &r), dec!(0.0257));
        assert_eq!(exit_qty(dec!(1.0257), dec!(0.0257), dec!(3836), &r), dec!(0.0257), "held");
        assert_eq!(exit_qty(dec!(0.02), dec!(0.0257), dec!(3836), &r), dec!(0.02), "only free");
        assert_eq!(
            exit_qty(dec!(0.0277), dec!(0.0257), dec!(3836), &r),
            dec!(0.0257),
            "0.002 ETH = 7.67 USDT is sellable alone: the account's"
        );
    }

    #[test]
    fn bracket_prices_follow_the_spec_and_the_tick() {
        let b = bracket_prices(dec!(3000), dec!(2), dec!(5), Direction::Buy, &rules()).unwrap();
        assert_eq!(b.tp_px, dec!(3150));
        assert_eq!(b.sl_px, dec!(2940));
        assert_eq!(b.sl_limit_px, dec!(2934.12), "2940 x 0.998 = 2934.12");
        assert!(b.brackets(dec!(2941), Direction::Buy), "a better fill keeps the levels valid");
        assert!(!b.brackets(dec!(2940), Direction::Buy), "a fill at the stop is not bracketed");
        let coarse = SymbolRules { tick_size: dec!(10), ..rules() };
        assert!(bracket_prices(dec!(30), dec!(1), dec!(1), Direction::Buy, &coarse).is_err());
    }

    #[test]
    fn a_sell_bracket_is_mirrored_with_the_stop_limit_above() {
        let b = bracket_prices(dec!(3000), dec!(2), dec!(5), Direction::Sell, &rules()).unwrap();
        assert_eq!(b.tp_px, dec!(2850), "take-profit below");
        assert_eq!(b.sl_px, dec!(3060), "stop above");
        assert_eq!(b.sl_limit_px, dec!(3066.12), "3060 x 1.002 = 3066.12, rounded up");
    }
}
