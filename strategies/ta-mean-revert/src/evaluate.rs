//! The plugin: one symbol's closed candles → indicators → the checks of both stretches → buy,
//! sell or skip, with the bracket and the service's scores. The SDK's [`OneTimeframe`] does
//! the rest (manifest, config, the symbol loop, stale or broken candles).

use spotbot_sdk::ScanResult;
use spotbot_sdk::sides::{OneTimeframe, Opened, Oscillators, Settings, Side};

use crate::checks::{self, Bracket, SideRule, Snapshot};
use crate::config::Config;
use crate::{CANDLES, NAME, TaMeanRevert};

impl OneTimeframe for TaMeanRevert {
    type Config = Config;
    const NAME: &'static str = NAME;
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "Mean reversion: buy an oversold reversal at the lower \
                                       Bollinger band in a range, sell at the upper band \
                                       overbought";
    const CANDLES: u32 = CANDLES;

    /// The bands' window and ADX's lookback (2 × period), with some settling for the
    /// Wilder-type indicators.
    fn min_bars(config: &Config) -> usize {
        (config.bb_period as usize).max(2 * Oscillators::ADX_PERIOD) + 10
    }

    /// The stretch whose checks qualify and whose bracket targets the middle band beyond the
    /// entry, else a skip showing the side the close leans to. Only closed candles count: the
    /// forming one's "reversal" could be gone by its close.
    fn judge(config: &Config, Opened { mut result, bars, live }: Opened<'_>) -> ScanResult {
        let snap = Snapshot::compute(bars, config);
        // Entry at the live price; the last close when the ticker has none.
        let price = live.or(snap.candle.map(|c| c.close)).unwrap_or(0.0);
        result.price = price;
        snap.osc.report(&mut result);
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
            return result.with_reason(why).with_checklist(list);
        };
        let Bracket { sl_pct, tp_pct } = bracket;
        if !(sl_pct > 0.0 && tp_pct > 0.0) {
            let why = format!(
                "no {}: the middle band is not beyond the entry (stop {sl_pct:.3}%, target \
                 {tp_pct:.3}%)",
                side.as_str(),
            );
            return result.with_reason(why).with_checklist(list);
        }
        let why = format!(
            "{} on {}: {}/{} checks passed; target the middle band {tp_pct:.3}%, stop \
             {sl_pct:.3}% (rr {:.2})",
            match side {
                Side::Buy => "oversold at the lower band",
                Side::Sell => "overbought at the upper band, take profit on the coin held",
            },
            config.timeframe(),
            list.passed(),
            list.total(),
            bracket.rr()
        );
        // With the service's ev and confidence (docs/signals.md), so a preview shows what the
        // confirm gates will see.
        result.with_reason(why).with_signal(side.direction(), sl_pct, tp_pct, list)
    }
}
