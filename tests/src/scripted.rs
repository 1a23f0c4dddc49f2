//! Scripted candle paths on the exchange simulator: a strategy scenario's candles become the
//! simulator's price and volume script, so the host reads back, over HTTP and through its
//! candle cache, the candles the scenario describes (the simulator aggregates coarser
//! timeframes from the same script).

use rust_decimal::Decimal;
use spotbot_sdk::Candles;
use spotbot_sim::server::Sim;

fn dec(x: f64) -> Decimal {
    Decimal::from_f64_retain(x).unwrap_or_default().round_dp(8)
}

/// Scripts `symbol` so that its candles of `candles.timeframe` are `candles`: per candle, the
/// open at its open time, the two extremes (low first on an up candle) a quarter and a half
/// into it, the close three quarters in; the candle's volume is traded at its open.
pub fn script(sim: &Sim, symbol: &str, candles: &Candles) {
    let len = spotbot_sdk::testing::timeframe_ms(&candles.timeframe).expect("a fixed timeframe");
    let mut prices = Vec::with_capacity(candles.len() * 4);
    let mut volumes = Vec::with_capacity(candles.len());
    for i in 0..candles.len() {
        let t = candles.open_time[i];
        let (open, close) = (candles.open[i], candles.close[i]);
        let (first, second) = if close >= open {
            (candles.low[i], candles.high[i])
        } else {
            (candles.high[i], candles.low[i])
        };
        prices.push((t, dec(open)));
        prices.push((t + len / 4, dec(first)));
        prices.push((t + len / 2, dec(second)));
        prices.push((t + 3 * len / 4, dec(close)));
        volumes.push((t, dec(candles.volume[i])));
    }
    sim.set_path(symbol, prices).expect("the simulator lists the symbol");
    sim.set_volumes(symbol, volumes).expect("the simulator lists the symbol");
}
