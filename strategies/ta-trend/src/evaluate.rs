//! The plugin: one symbol's closed candles → indicators → both sides' checks → buy, sell or
//! skip, with the bracket and the service's scores. The SDK's [`OneTimeframe`] does the rest
//! (manifest, config, the symbol loop, stale or broken candles).

use spotbot_sdk::ScanResult;
use spotbot_sdk::sides::{OneTimeframe, Opened, Settings, Side};

use crate::checks::{MACD, SideChecks, Snapshot};
use crate::config::Config;
use crate::{CANDLES, NAME, TaTrend};

impl OneTimeframe for TaTrend {
    type Config = Config;
    const NAME: &'static str = NAME;
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "Trend following: EMA20/50, ADX, MACD, RSI and volume on \
                                       one timeframe; sell exits when the trend turns";
    const CANDLES: u32 = CANDLES;

    /// The slow EMA's seed plus some settling, and MACD's lookback plus one bar for "rising".
    fn min_bars(config: &Config) -> usize {
        let macd = MACD.1 + MACD.2;
        (config.ema_slow as usize + 10).max(macd + 1)
    }

    /// The side whose checks qualify, else a skip showing the side the EMAs lean to.
    fn judge(config: &Config, Opened { mut result, bars, live }: Opened<'_>) -> ScanResult {
        let snap = Snapshot::compute(bars, config);
        let buy = Side::Buy.checklist(&snap, config);
        let sell = Side::Sell.checklist(&snap, config);
        snap.osc.report(&mut result);
        result.macd_hist = snap.macd_hist;
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
        let stop = snap.osc.atr.map(|atr| config.sl_atr_multiplier * atr / price * 100.0);
        let Some(sl_pct) = stop.filter(|v| v.is_finite() && *v > 0.0) else {
            let why = "data: no ATR or price for a stop-loss";
            return result.with_reason(why).with_checklist(list);
        };
        let Some(side) = signal else {
            let why = side.shortfall(&list, config.min_passed);
            return result.with_reason(why).with_checklist(list);
        };
        // A sell closes the position at market; its distances mirror a buy's only because the
        // service scores every signal by its reward/risk.
        let tp_pct = config.reward_risk * sl_pct;
        let why = format!(
            "{} on {}: {}/{} trend checks passed; stop {:.2} ATR = {sl_pct:.3}%, target \
             {tp_pct:.3}% (rr {})",
            match side {
                Side::Buy => "uptrend",
                Side::Sell => "trend turned down, exit the coin held",
            },
            config.timeframe(),
            list.passed(),
            list.total(),
            config.sl_atr_multiplier,
            config.reward_risk,
        );
        // With the service's ev and confidence (docs/signals.md), so a preview shows what the
        // confirm gates will see.
        result.with_reason(why).with_signal(side.direction(), sl_pct, tp_pct, list)
    }
}
