//! The service's symbols (`<BASE>USDT`) on exchange B's spot pairs (`<token>/USDC`, wire
//! reference §2). The map goes through token names, never display names: a pair's base token
//! name is turned into the service's base name by [`ALIASES`] (mainnet lists bitcoin as `UBTC`,
//! ether as `UETH`, solana as `USOL`), the quote must be the token `USDC`, and the symbol is
//! `<base>USDT`. A token whose own name is one of the aliased service names (a token called
//! `BTC` that is not the one `UBTC` wraps) is left out, so `BTCUSDT` always means `UBTC/USDC`.
//! When two pairs give the same symbol the first one listed wins (as the official SDK keeps the
//! first pair of a name).
//!
//! A pair's rules follow from its base token's `szDecimals` (§5): the size step is
//! `10^-szDecimals`, prices have at most `8 − szDecimals` decimals (the tick) and at most 5
//! significant figures unless integer, and an order is worth at least 10 USDC.

use std::collections::HashMap;

use rust_decimal::Decimal;

use super::wire::SpotMeta;
use crate::exchange::SymbolRules;
use spotbot_exchange_b_protocol::SPOT_MAX_DECIMALS;
use spotbot_exchange_b_protocol::numbers::PRICE_SIG_FIGS;

/// Service base name ↔ exchange B token name, for the tokens whose names differ.
pub const ALIASES: [(&str, &str); 3] = [("BTC", "UBTC"), ("ETH", "UETH"), ("SOL", "USOL")];

/// The quote token of every pair the service trades.
pub const QUOTE_TOKEN: &str = "USDC";

/// The quote the service's symbols are spelled with.
const SERVICE_QUOTE: &str = "USDT";

/// The smallest order value on spot, in USDC.
const MIN_ORDER_VALUE: i64 = 10;

/// The asset id of spot pair `index` (`None` past the id range).
pub fn asset_id(index: u32) -> Option<u32> {
    index.checked_add(10_000)
}

/// The service's name of exchange token `token` (`UBTC` → `BTC`; `USDC` stays `USDC`).
pub fn service_asset(token: &str) -> &str {
    ALIASES.iter().find(|(_, t)| *t == token).map_or(token, |(s, _)| s)
}

/// The exchange token the service's base `asset` trades as (`BTC` → `UBTC`).
pub fn exchange_token(asset: &str) -> &str {
    ALIASES.iter().find(|(s, _)| *s == asset).map_or(asset, |(_, t)| t)
}

/// One spot pair the service can trade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// The service's symbol, `BTCUSDT`.
    pub symbol: String,
    /// The name `/info` uses: `PURR/USDC` for pair 0, `@<index>` for the others.
    pub coin: String,
    /// `10000 + index`, what `/exchange` actions name.
    pub asset: u32,
    /// The service's base name (`BTC`).
    pub base: String,
    /// The base token's size decimals.
    pub sz_decimals: u32,
}

impl Pair {
    /// The symbol's rules in the exchange-neutral form.
    pub fn rules(&self) -> SymbolRules {
        let step = Decimal::new(1, self.sz_decimals);
        let tick = Decimal::new(1, SPOT_MAX_DECIMALS.saturating_sub(self.sz_decimals));
        SymbolRules {
            symbol: self.symbol.clone(),
            base_asset: self.base.clone(),
            quote_asset: QUOTE_TOKEN.into(),
            trading: true,
            tick_size: tick,
            min_price: Decimal::ZERO,
            max_price: Decimal::ZERO,
            step_size: step,
            min_qty: step,
            max_qty: Decimal::ZERO,
            market_step_size: Decimal::ZERO,
            market_min_qty: Decimal::ZERO,
            market_max_qty: Decimal::ZERO,
            min_notional: Decimal::from(MIN_ORDER_VALUE),
            max_notional: Decimal::ZERO,
            apply_min_to_market: true,
            apply_max_to_market: false,
            order_types: ["LIMIT", "LIMIT_MAKER", "MARKET"].map(String::from).to_vec(),
            oco_allowed: false,
            price_sig_figs: PRICE_SIG_FIGS,
        }
    }
}

/// Every tradable pair by symbol and by coin.
#[derive(Debug, Clone, Default)]
pub struct SymbolMap {
    by_symbol: HashMap<String, Pair>,
    /// coin → symbol.
    by_coin: HashMap<String, String>,
}

impl SymbolMap {
    /// The map of a `spotMeta` answer.
    pub fn from_meta(meta: &SpotMeta) -> Self {
        let tokens: HashMap<u32, _> = meta.tokens.iter().map(|t| (t.index, t)).collect();
        let mut map = Self::default();
        for pair in &meta.universe {
            let [base, quote] = pair.tokens[..] else { continue };
            let (Some(base), Some(quote)) = (tokens.get(&base), tokens.get(&quote)) else {
                continue;
            };
            let aliased_away = ALIASES.iter().any(|(service, _)| *service == base.name);
            // More size decimals than a price may have leaves no valid price: not tradable.
            let sane = base.sz_decimals <= SPOT_MAX_DECIMALS;
            if quote.name != QUOTE_TOKEN || aliased_away || base.name == QUOTE_TOKEN || !sane {
                continue;
            }
            let Some(asset) = asset_id(pair.index) else { continue };
            let service_base = service_asset(&base.name).to_string();
            let symbol = format!("{service_base}{SERVICE_QUOTE}");
            if map.by_symbol.contains_key(&symbol) {
                continue;
            }
            let coin =
                if pair.name.is_empty() { format!("@{}", pair.index) } else { pair.name.clone() };
            map.by_coin.insert(coin.clone(), symbol.clone());
            let entry = Pair {
                symbol: symbol.clone(),
                coin,
                asset,
                base: service_base,
                sz_decimals: base.sz_decimals,
            };
            map.by_symbol.insert(symbol, entry);
        }
        map
    }

    pub fn pair(&self, symbol: &str) -> Option<&Pair> {
        self.by_symbol.get(symbol)
    }

    /// The pair `/info` names `coin`, if the service trades it.
    pub fn by_coin(&self, coin: &str) -> Option<&Pair> {
        self.by_coin.get(coin).and_then(|s| self.by_symbol.get(s))
    }

    /// Every pair, in no particular order.
    pub fn pairs(&self) -> impl Iterator<Item = &Pair> {
        self.by_symbol.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::exchange_b::wire::{SpotMeta, fixtures};
    use rust_decimal_macros::dec;

    fn map() -> SymbolMap {
        SymbolMap::from_meta(&serde_json::from_str(fixtures::SPOT_META).unwrap())
    }

    #[test]
    fn symbols_map_through_token_names_and_the_alias_table() {
        let m = map();
        let btc = m.pair("BTCUSDT").expect("UBTC/USDC");
        assert_eq!((btc.coin.as_str(), btc.asset, btc.base.as_str()), ("@142", 10142, "BTC"));
        assert_eq!(m.pair("ETHUSDT").map(|p| p.coin.as_str()), Some("@151"));
        let purr = m.pair("PURRUSDT").expect("pair 0");
        assert_eq!((purr.coin.as_str(), purr.asset), ("PURR/USDC", 10000));
        assert_eq!(m.by_coin("@142").map(|p| p.symbol.as_str()), Some("BTCUSDT"));
        assert!(m.by_coin("@170").is_none(), "UBTC against another quote is not traded");
        assert!(m.by_coin("@180").is_none(), "a token named BTC is not bitcoin");
        assert_eq!(m.pairs().count(), 3);
        let mut odd: SpotMeta = serde_json::from_str(fixtures::SPOT_META).unwrap();
        odd.tokens[1].sz_decimals = 40;
        odd.universe[1].index = u32::MAX;
        let odd = SymbolMap::from_meta(&odd);
        assert!(odd.pair("PURRUSDT").is_none() && odd.pair("BTCUSDT").is_none(), "unusable pairs");
        assert_eq!(service_asset("UBTC"), "BTC");
        assert_eq!(service_asset("USDC"), "USDC");
        assert_eq!(service_asset("HYPE"), "HYPE");
        assert_eq!(exchange_token("SOL"), "USOL");
    }

    #[test]
    fn rules_follow_the_size_decimals() {
        let r = map().pair("BTCUSDT").unwrap().rules();
        assert_eq!(
            (r.symbol.as_str(), r.base_asset.as_str(), r.quote_asset.as_str()),
            ("BTCUSDT", "BTC", "USDC")
        );
        assert_eq!(
            (r.step_size, r.min_qty, r.tick_size),
            (dec!(0.00001), dec!(0.00001), dec!(0.001))
        );
        assert_eq!((r.price_sig_figs, r.min_notional, r.oco_allowed), (5, dec!(10), false));
        assert_eq!(r.order_types, ["LIMIT", "LIMIT_MAKER", "MARKET"]);
        let purr = map().pair("PURRUSDT").unwrap().rules();
        assert_eq!((purr.step_size, purr.tick_size), (dec!(1), dec!(0.00000001)));
    }
}
