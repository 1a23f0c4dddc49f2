//! Which symbols a scan looks at when the caller names none: the strategy's liquidity-filtered
//! universe (`use_universe = true`), else its `watchlist_override` when not empty, else the
//! `[market] watchlist`.

use crate::config::{Config, StrategyKeys};
use crate::exchange::Exchange;
use rust_decimal::prelude::ToPrimitive;

/// The symbols to scan for a strategy with `keys`, or one sentence saying why the universe is
/// unavailable.
pub async fn symbols(
    keys: &StrategyKeys,
    config: &Config,
    exchange: Option<&dyn Exchange>,
) -> Result<Vec<String>, String> {
    if keys.use_universe {
        let exchange = exchange.ok_or("the universe needs an exchange client")?;
        return universe(exchange, config, keys.min_quote_volume_usd).await;
    }
    if !keys.watchlist_override.is_empty() {
        return Ok(keys.watchlist_override.clone());
    }
    Ok(config.market.watchlist.clone())
}

/// Symbols quoted in `[market] quote_asset` whose 24 h quote volume is at least `min_volume`,
/// highest volume first, at most `[market] universe_max_symbols`, without the reference
/// symbol (relative strength against itself means nothing).
async fn universe(
    exchange: &dyn Exchange,
    config: &Config,
    min_volume: f64,
) -> Result<Vec<String>, String> {
    let tickers = exchange.tickers_24h(&[]).await.map_err(|e| format!("24h tickers: {e}"))?;
    let market = &config.market;
    let mut liquid: Vec<(f64, String)> = tickers
        .into_iter()
        .filter(|t| t.symbol.ends_with(&market.quote_asset) && t.symbol != market.reference_symbol)
        .filter_map(|t| {
            let volume = t.quote_volume.to_f64()?;
            (volume >= min_volume).then_some((volume, t.symbol))
        })
        .collect();
    liquid.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    liquid.truncate(market.universe_max_symbols as usize);
    Ok(liquid.into_iter().map(|(_, symbol)| symbol).collect())
}
