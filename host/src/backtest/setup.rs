//! What a run reads and lists before it replays: the checks of the command line, the series
//! the plugin's scans need (with their warm-up), where they come from (CSV files or the
//! exchange's klines through the cache), and how each traded symbol is listed at the
//! simulator (tick, step, minimum quantity and notional).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::bail;
use rust_decimal::Decimal;

use super::history::{self, History, Need};
use super::progress::Progress;
use super::{Spec, klines};
use crate::config::Config;
use crate::market::Timeframe;
use crate::market::contexts::CONTEXT_CANDLES;

pub(super) fn check(config: &Config, spec: &Spec) -> anyhow::Result<()> {
    if spec.symbols.is_empty() {
        bail!("--symbols names no symbol");
    }
    let quote = &config.market.quote_asset;
    for s in &spec.symbols {
        let ok = s.len() >= 2
            && s.len() <= 20
            && s.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
        if !ok || s.strip_suffix(quote.as_str()).is_none_or(str::is_empty) {
            bail!("{s:?} is not a symbol quoted in {quote} (such as BTC{quote})");
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(twice) = spec.symbols.iter().find(|s| !seen.insert(*s)) {
        bail!("--symbols lists {twice} twice");
    }
    if spec.to_ms <= spec.from_ms {
        bail!("--to must be after --from");
    }
    if config.exchange.paper_usdt <= rust_decimal::Decimal::ZERO {
        bail!("[exchange] paper_usdt must be above 0: it is the backtest's starting balance");
    }
    Ok(())
}

/// The series a run reads: each timeframe the plugin asks for, for the traded symbols and the
/// reference symbol, from the warm-up of its count before the first step through the last;
/// the market context's 4h and 1d series when asked.
pub(super) fn needs(
    spec: &Spec,
    query: &crate::plugins::MarketQuery,
    timeframes: &[(Timeframe, u32)],
    t0: i64,
    to: i64,
) -> Vec<Need> {
    let mut wanted: BTreeMap<(String, Timeframe), u32> = BTreeMap::new();
    let mut want = |symbol: &str, tf: Timeframe, count: u32| {
        let slot = wanted.entry((symbol.to_string(), tf)).or_insert(0);
        *slot = (*slot).max(count);
    };
    let finest = timeframes.iter().map(|(tf, _)| *tf).min().unwrap_or(Timeframe::H1);
    for symbol in &spec.symbols {
        for (tf, count) in timeframes {
            want(symbol, *tf, *count);
        }
        if query.market_context {
            want(symbol, Timeframe::H4, CONTEXT_CANDLES);
            want(symbol, Timeframe::D1, CONTEXT_CANDLES);
        }
        want(symbol, finest, 1);
    }
    if let Some(reference) = &query.reference {
        for (tf, count) in timeframes {
            want(reference, *tf, *count);
        }
        want(reference, finest, 1);
    }
    wanted
        .into_iter()
        .map(|((symbol, timeframe), count)| Need {
            symbol,
            timeframe,
            warmup: count,
            first_step: history::candle_open(timeframe, t0),
            last_open: history::candle_open(timeframe, to),
        })
        .collect()
}

pub(super) type ExchangeRules = BTreeMap<String, crate::exchange::SymbolRules>;

/// Reads the history from the CSV folder, or from the configured exchange's klines through
/// the cache (whose symbol rules then list the symbols at the simulator too).
pub(super) async fn load_history(
    config: &Config,
    spec: &Spec,
    needs: &[Need],
    finest: Timeframe,
    progress: &mut Progress,
) -> anyhow::Result<(History, String, ExchangeRules)> {
    if let Some(dir) = &spec.candles {
        progress.note(&format!("reading {} series from {}", needs.len(), dir.display()));
        let history = history::from_csv_dir(dir, needs, finest)?;
        return Ok((history, format!("CSV files in {}", dir.display()), ExchangeRules::new()));
    }
    let connected = crate::exchange::connect::connect(
        &config.exchange,
        &config.secrets,
        Arc::new(crate::clock::SystemClock),
        crate::metrics::Metrics::default(),
    )
    .await
    .map_err(|e| anyhow::anyhow!("cannot reach the exchange for klines: {e}"))?;
    let exchange = connected.exchange.clone();
    let cache = klines::source_dir(Path::new(&config.server.data_dir), &config.exchange);
    progress.note(&format!(
        "reading {} series from {} klines (cache {})",
        needs.len(),
        exchange.name(),
        cache.display()
    ));
    let total = needs.len();
    let mut done = 0;
    let (history, stats) = klines::load(exchange.as_ref(), &cache, needs, |need| {
        done += 1;
        if done % 10 == 0 || done == total {
            progress.note(&format!("  {done}/{total} series ({} {})", need.symbol, need.timeframe));
        }
    })
    .await?;
    let mut rules = ExchangeRules::new();
    if connected.paper.is_none() {
        for symbol in &spec.symbols {
            let r = exchange
                .symbol_rules(symbol)
                .await
                .map_err(|e| anyhow::anyhow!("{symbol}: the exchange's trading rules: {e}"))?;
            rules.insert(symbol.clone(), r);
        }
    }
    progress.note(&format!(
        "klines: {} request(s), {} candle(s) fetched; {} candles in the history",
        stats.requests,
        stats.candles,
        history.candle_count()
    ));
    let source = match crate::exchange::connect::base_url(&config.exchange) {
        None => format!(
            "paper exchange klines (seed {}), cached in {}",
            config.exchange.paper_seed,
            cache.display()
        ),
        Some(url) => {
            format!("{} klines from {url}, cached in {}", exchange.name(), cache.display())
        }
    };
    Ok((history, source, rules))
}

/// The simulator's listing of a symbol from the exchange's rules.
pub(super) fn sim_rules_from_exchange(
    r: &crate::exchange::SymbolRules,
) -> spotbot_sim::symbols::SymbolRules {
    let positive = |d: Decimal, fallback: Decimal| if d > Decimal::ZERO { d } else { fallback };
    spotbot_sim::symbols::SymbolRules {
        symbol: r.symbol.clone(),
        base: r.base_asset.clone(),
        quote: r.quote_asset.clone(),
        base_price: Decimal::ONE,
        tick: r.tick_size,
        step: r.step_size,
        min_qty: r.min_qty,
        max_qty: positive(r.max_qty, Decimal::from(1_000_000_000_000i64)),
        min_price: r.min_price,
        max_price: positive(r.max_price, Decimal::from(1_000_000_000_000i64)),
        market_max_qty: positive(
            r.market_max_qty,
            positive(r.max_qty, Decimal::from(1_000_000_000_000i64)),
        ),
        min_notional: r.min_notional,
        max_notional: positive(r.max_notional, Decimal::from(1_000_000_000_000i64)),
        vol: 1.0,
        max_num_orders: 200,
        max_num_algo_orders: 5,
    }
}

/// The simulator's listing of a symbol from CSV history: the default listing's rules when it
/// knows the symbol, else a tick of about five significant digits and a step small enough for
/// the minimum notional at the symbol's median price.
pub(super) fn sim_rules(
    symbol: &str,
    quote: &str,
    candles: Option<&crate::plugins::model::Candles>,
) -> anyhow::Result<spotbot_sim::symbols::SymbolRules> {
    let base = symbol.strip_suffix(quote).unwrap_or(symbol).to_string();
    if let Some(known) = spotbot_sim::symbols::default_listing()
        .into_iter()
        .find(|r| r.symbol == symbol && r.quote == quote)
    {
        return Ok(known);
    }
    let mut closes: Vec<f64> = candles.map(|c| c.close.clone()).unwrap_or_default();
    if closes.is_empty() {
        bail!("{symbol}: no candles to derive its trading rules from");
    }
    closes.sort_by(f64::total_cmp);
    let median = closes[closes.len() / 2];
    let digits = median.log10().floor() as i32;
    let power = |exp: i32| -> Decimal {
        let exp = exp.clamp(-8, 8);
        if exp >= 0 { Decimal::from(10i64.pow(exp as u32)) } else { Decimal::new(1, (-exp) as u32) }
    };
    let tick = power(digits - 4).min(Decimal::ONE);
    let step = power((-digits - 1).min(0));
    let big = Decimal::from(1_000_000_000_000i64);
    Ok(spotbot_sim::symbols::SymbolRules {
        symbol: symbol.to_string(),
        base,
        quote: quote.to_string(),
        base_price: Decimal::ONE,
        tick,
        step,
        min_qty: step,
        max_qty: big,
        min_price: tick,
        max_price: big,
        market_max_qty: big,
        min_notional: Decimal::from(5),
        max_notional: big,
        vol: 1.0,
        max_num_orders: 200,
        max_num_algo_orders: 5,
    })
}
