//! One symbol: closed candles → indicators → the checks of both stretches → buy, sell or skip,
//! with the bracket and the service's scores.

use spotbot_sdk::{Direction, ScanError, ScanResult, SymbolData};

use crate::NAME;
use crate::checks::{self, ADX_PERIOD, Bracket, Side, Snapshot};
use crate::config::Config;

/// Closed candles needed before any check runs: the bands' window and ADX's lookback
/// (2 × period), with some settling for the Wilder-type indicators.
pub fn min_bars(config: &Config) -> usize {
    (config.bb_period as usize).max(2 * ADX_PERIOD) + 10
}

/// Evaluates one symbol. `Err` only when the configured timeframe is missing altogether;
/// anything else about a symbol ends in a result.
pub fn evaluate(config: &Config, data: &SymbolData, now_ms: i64) -> Result<ScanResult, ScanError> {
    let tf = config.timeframe();
    let live = data.live_price();
    let mut result = ScanResult::new(&data.symbol, NAME, Direction::Skip, live.unwrap_or(0.0));
    // Only closed, fresh candles count (the SDK's rule): the host's last candle may still be
    // forming, and its "reversal" could be gone by its close.
    let bars = match data.closed_candles(tf, now_ms, min_bars(config))? {
        Ok(bars) => bars,
        Err(why) => return Ok(result.with_reason(format!("data: {why}"))),
    };
    let snap = Snapshot::compute(bars, config);
    // Entry at the live price; the last close when the ticker has none.
    let price = live.or(snap.candle.map(|c| c.close)).unwrap_or(0.0);
    result.price = price;
    result.rsi = snap.rsi;
    result.adx = snap.adx;
    result.vol_ratio = snap.vol_ratio;
    result.bb_lower = snap.bb_lower;
    result.bb_mid = snap.bb_mid;
    result.bb_upper = snap.bb_upper;

    let buy_bracket = Bracket::compute(Side::Buy, &snap, config, price);
    let sell_bracket = Bracket::compute(Side::Sell, &snap, config, price);
    let buy = checks::buy_checklist(&snap, config, buy_bracket);
    let sell = checks::sell_checklist(&snap, config);
    result.buy_signals = Some(buy.passed());
    result.sell_signals = Some(sell.passed());

    let signal = if buy_bracket.is_some() && Side::Buy.qualifies(&buy, config) {
        Some(Side::Buy)
    } else if sell_bracket.is_some() && Side::Sell.qualifies(&sell, config) {
        Some(Side::Sell)
    } else {
        None
    };
    let side = signal.unwrap_or_else(|| snap.leaning());
    let (list, bracket) = match side {
        Side::Buy => (buy, buy_bracket),
        Side::Sell => (sell, sell_bracket),
    };
    let (Some(side), Some(bracket)) = (signal, bracket) else {
        let why = side.shortfall(&list, config);
        return Ok(result.with_reason(why).with_checklist(list));
    };
    let Bracket { sl_pct, tp_pct } = bracket;
    if !(sl_pct > 0.0 && tp_pct > 0.0) {
        let why = format!(
            "no {}: the middle band is not beyond the entry (stop {sl_pct:.3}%, target \
             {tp_pct:.3}%)",
            side.as_str(),
        );
        return Ok(result.with_reason(why).with_checklist(list));
    }
    let why = format!(
        "{} on {tf}: {}/{} checks passed; target the middle band {tp_pct:.3}%, stop \
         {sl_pct:.3}% (rr {:.2})",
        match side {
            Side::Buy => "oversold at the lower band",
            Side::Sell => "overbought at the upper band, take profit on the coin held",
        },
        list.passed(),
        list.total(),
        bracket.rr()
    );
    // With the service's ev and confidence (docs/signals.md), so a preview shows what the
    // confirm gates will see.
    Ok(result.with_reason(why).with_signal(side.direction(), sl_pct, tp_pct, list))
}
