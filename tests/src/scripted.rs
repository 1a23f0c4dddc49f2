//! Scripted candle paths on the exchange simulator: a strategy scenario's candles become the
//! simulator's price and volume script, so the host reads back, over HTTP and through its
//! candle cache, the candles the scenario describes (the simulator aggregates coarser
//! timeframes from the same script).

use rust_decimal::Decimal;
use spotbot_sdk::Candles;
use spotbot_sim::Sim;
use spotbot_sim::market::{Ohlc, path_from_candles};

fn dec(x: f64) -> Decimal {
    Decimal::from_f64_retain(x).unwrap_or_default().round_dp(8)
}

/// Scripts `symbol` so that its candles of `candles.timeframe` are `candles`: the price path of
/// [`path_from_candles`] (per candle the open at its open time, the two extremes a quarter and
/// a half into it, the close three quarters in); the candle's volume is traded at its open.
pub fn script(sim: &Sim, symbol: &str, candles: &Candles) {
    let len = spotbot_sdk::testing::timeframe_ms(&candles.timeframe).expect("a fixed timeframe");
    let ohlc: Vec<Ohlc> = (0..candles.len())
        .map(|i| Ohlc {
            open_time: candles.open_time[i],
            open: candles.open[i],
            high: candles.high[i],
            low: candles.low[i],
            close: candles.close[i],
        })
        .collect();
    let volumes =
        (0..candles.len()).map(|i| (candles.open_time[i], dec(candles.volume[i]))).collect();
    sim.set_path(symbol, path_from_candles(len, &ohlc, None))
        .expect("the simulator lists the symbol");
    sim.set_volumes(symbol, volumes).expect("the simulator lists the symbol");
}
