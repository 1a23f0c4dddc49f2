//! One symbol: closed candles → indicators → both sides' checks → buy, sell or skip, with the
//! bracket and the service's scores.

use spotbot_sdk::{Direction, ScanError, ScanResult, SymbolData};

use crate::NAME;
use crate::checks::{MACD, Side, Snapshot};
use crate::config::Config;

/// Closed candles needed before any check runs: the slow EMA's seed plus some settling, and
/// MACD's lookback plus one bar for "rising".
pub fn min_bars(config: &Config) -> usize {
    let macd = MACD.1 + MACD.2;
    (config.ema_slow as usize + 10).max(macd + 1)
}

/// Evaluates one symbol. `Err` only when the configured timeframe is missing altogether (the
/// host must send what the config asks for); anything else about a symbol ends in a result.
pub fn evaluate(config: &Config, data: &SymbolData, now_ms: i64) -> Result<ScanResult, ScanError> {
    let tf = config.timeframe();
    let live = data.live_price();
    let mut result = ScanResult::new(&data.symbol, NAME, Direction::Skip, live.unwrap_or(0.0));
    // Only closed, fresh candles count (the SDK's rule): the host's last candle may still be
    // forming, and a check that read it would change its mind within the candle.
    let bars = match data.closed_candles(tf, now_ms, min_bars(config))? {
        Ok(bars) => bars,
        Err(why) => return Ok(result.with_reason(format!("data: {why}"))),
    };
    let snap = Snapshot::compute(bars, config);
    let buy = Side::Buy.checklist(&snap, config);
    let sell = Side::Sell.checklist(&snap, config);
    result.rsi = snap.rsi;
    result.macd_hist = snap.macd_hist;
    result.adx = snap.adx;
    result.vol_ratio = snap.vol_ratio;
    result.buy_signals = Some(buy.passed());
    result.sell_signals = Some(sell.passed());

    let signal = if Side::Buy.qualifies(&buy, config.min_passed) {
        Some(Side::Buy)
    } else if Side::Sell.qualifies(&sell, config.min_passed) {
        Some(Side::Sell)
    } else {
        None
    };
    let side = signal.unwrap_or_else(|| snap.leaning());
    let list = if side == Side::Buy { buy } else { sell };
    // Entry at the live price; the last close when the ticker has none.
    let price = live.or(snap.close).unwrap_or(0.0);
    result.price = price;
    let stop = snap.atr.map(|atr| config.sl_atr_multiplier * atr / price * 100.0);
    let Some(sl_pct) = stop.filter(|v| v.is_finite() && *v > 0.0) else {
        let why = "data: no ATR or price for a stop-loss";
        return Ok(result.with_reason(why).with_checklist(list));
    };
    let Some(side) = signal else {
        let why = side.shortfall(&list, config.min_passed);
        return Ok(result.with_reason(why).with_checklist(list));
    };
    // A sell closes the position at market; its distances mirror a buy's only because the
    // service scores every signal by its reward/risk.
    let tp_pct = config.reward_risk * sl_pct;
    let why = format!(
        "{} on {tf}: {}/{} trend checks passed; stop {:.2} ATR = {sl_pct:.3}%, target \
         {tp_pct:.3}% (rr {})",
        match side {
            Side::Buy => "uptrend",
            Side::Sell => "trend turned down, exit the coin held",
        },
        list.passed(),
        list.total(),
        config.sl_atr_multiplier,
        config.reward_risk,
    );
    // With the service's ev and confidence (docs/signals.md), so a preview shows what the
    // confirm gates will see.
    Ok(result.with_reason(why).with_signal(side.direction(), sl_pct, tp_pct, list))
}
