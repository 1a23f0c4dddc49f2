//! Exchange B's spot universe over the core's listing. The core's symbols keep their names
//! (`BTCUSDT`, base `BTC`, quote `USDT`) so tests share them across exchanges; exchange B shows
//! them its own way: tokens with indices (the quote `USDT` is token 0, `USDC`; `BTC`, `ETH` and
//! `SOL` are `UBTC`, `UETH` and `USOL`, as on mainnet, so the service's adapter needs its alias
//! table), and
//! one pair per symbol, named `"<BASE>/USDC"` for pair 0 and `"@<index>"` for the others, traded
//! as asset `10000 + index`.

use crate::market::mix;
use crate::symbols::{QUOTE, SymbolRules};
use rust_decimal::Decimal;

/// The token every pair is quoted in, as exchange B names it.
pub const QUOTE_TOKEN: &str = "USDC";
/// A spot pair's asset id is this plus its universe index.
pub const SPOT_ASSET_OFFSET: u32 = 10_000;
/// Decimals of every token on the chain side (`weiDecimals`).
pub const WEI_DECIMALS: u32 = 8;
/// The smallest order value, in the quote token.
pub const MIN_ORDER_VALUE: Decimal = Decimal::TEN;

/// The name exchange B gives a core asset.
pub fn token_name(asset: &str) -> &str {
    match asset {
        QUOTE => QUOTE_TOKEN,
        "BTC" => "UBTC",
        "ETH" => "UETH",
        "SOL" => "USOL",
        other => other,
    }
}

/// One token of `spotMeta.tokens`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub index: u32,
    /// The core's asset name.
    pub asset: String,
    /// Exchange B's name.
    pub name: String,
    pub sz_decimals: u32,
}

impl Token {
    /// A stable 16-byte id (`tokenId`), derived from the name.
    pub fn token_id(&self) -> String {
        let h = self.name.bytes().fold(0x5350_4f54u64, |h, b| mix(h ^ u64::from(b)));
        format!("0x{:016x}{:016x}", mix(h), mix(h ^ 1))
    }
}

/// One pair of `spotMeta.universe`: a core symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub index: u32,
    /// The `coin` of `/info` requests and answers.
    pub name: String,
    /// The core's symbol.
    pub symbol: String,
    pub base: u32,
    pub quote: u32,
    /// Size decimals of the base token.
    pub sz_decimals: u32,
}

impl Pair {
    /// The `a` / `asset` of `/exchange` actions.
    pub fn asset_id(&self) -> u32 {
        SPOT_ASSET_OFFSET + self.index
    }
}

/// The whole spot universe, in a stable order: the core's symbols as listed.
#[derive(Debug, Clone)]
pub struct Listing {
    pub tokens: Vec<Token>,
    pub pairs: Vec<Pair>,
}

/// The size decimals a step allows (0.00001 → 5, 1 → 0).
fn decimals_of(step: Decimal) -> u32 {
    step.normalize().scale()
}

impl Listing {
    pub fn new(rules: &[SymbolRules]) -> Self {
        let mut tokens = vec![Token {
            index: 0,
            asset: QUOTE.to_string(),
            name: QUOTE_TOKEN.to_string(),
            sz_decimals: WEI_DECIMALS,
        }];
        let mut index_of = |asset: &str, sz_decimals: u32| -> u32 {
            if let Some(t) = tokens.iter().find(|t| t.asset == asset) {
                return t.index;
            }
            let index = tokens.len() as u32;
            let name = token_name(asset).to_string();
            tokens.push(Token { index, asset: asset.to_string(), name, sz_decimals });
            index
        };
        let mut pairs = Vec::with_capacity(rules.len());
        for (i, r) in rules.iter().enumerate() {
            let sz_decimals = decimals_of(r.step);
            let base = index_of(&r.base, sz_decimals);
            let quote = index_of(&r.quote, decimals_of(r.tick));
            let index = i as u32;
            let name = if index == 0 {
                format!("{}/{}", token_name(&r.base), token_name(&r.quote))
            } else {
                format!("@{index}")
            };
            pairs.push(Pair { index, name, symbol: r.symbol.clone(), base, quote, sz_decimals });
        }
        Self { tokens, pairs }
    }

    pub fn pair_by_asset(&self, asset: u32) -> Option<&Pair> {
        let index = asset.checked_sub(SPOT_ASSET_OFFSET)?;
        self.pairs.iter().find(|p| p.index == index)
    }

    pub fn pair_by_coin(&self, coin: &str) -> Option<&Pair> {
        self.pairs.iter().find(|p| p.name == coin)
    }

    pub fn pair_by_symbol(&self, symbol: &str) -> Option<&Pair> {
        self.pairs.iter().find(|p| p.symbol == symbol)
    }

    pub fn token_by_asset(&self, asset: &str) -> Option<&Token> {
        self.tokens.iter().find(|t| t.asset == asset)
    }

    pub fn token(&self, index: u32) -> Option<&Token> {
        self.tokens.iter().find(|t| t.index == index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::default_listing;

    #[test]
    fn the_default_listing_reads_as_exchange_b_names_it() {
        let l = Listing::new(&default_listing());
        assert_eq!(l.tokens[0].name, "USDC");
        let btc = l.pair_by_symbol("BTCUSDT").unwrap();
        assert_eq!((btc.name.as_str(), btc.asset_id(), btc.sz_decimals), ("UBTC/USDC", 10_000, 5));
        let eth = l.pair_by_symbol("ETHUSDT").unwrap();
        assert_eq!((eth.name.as_str(), eth.asset_id()), ("@1", 10_001));
        assert_eq!(l.token(eth.base).unwrap().name, "UETH");
        assert_eq!(l.token(eth.quote).unwrap().name, "USDC");
        assert_eq!(l.pair_by_coin("@1"), Some(eth));
        assert_eq!(l.pair_by_asset(10_001), Some(eth));
        assert_eq!(l.pair_by_asset(1), None);
        let pepe = l.pair_by_symbol("PEPEUSDT").unwrap();
        assert_eq!((l.token(pepe.base).unwrap().name.as_str(), pepe.sz_decimals), ("PEPE", 0));
        assert_eq!(l.token_by_asset("SOL").unwrap().name, "USOL");
        assert_eq!(l.token_by_asset("XRP").unwrap().name, "XRP");
        let id = l.tokens[1].token_id();
        assert_eq!((id.len(), id == l.tokens[2].token_id()), (34, false));
    }
}
