//! Benchmark guest `sma_cross`: the textbook strategy other backtesters ship as their first
//! example, so `cargo xtask bench-backtest` can run the same rules in spotbot and in
//! backtesting.py. On the closed 1h candles (the candle forming at `now` is left out, as a
//! bar-close backtester sees only finished bars), a buy when SMA(10) crosses above SMA(30)
//! (backtesting.py's `crossover`: below or equal one candle ago is not enough, strictly below
//! then and strictly above now), with a 5 % stop and a 10 % target; skip otherwise, saying
//! where the two averages stand with their numbers (`SMA(10) 101.2345 below SMA(30)
//! 102.5000`): every skip's text is its own, as many authors write them, which the
//! backtest's "why no trade" must group by kind.

use spotbot_sdk::indicators::sma;
use spotbot_sdk::*;

pub struct Guest;

const HOUR_MS: i64 = 3_600_000;
const FAST: usize = 10;
const SLOW: usize = 30;

impl Strategy for Guest {
    fn describe() -> Manifest {
        // SLOW + 1 closed candles (the cross compares two candles) and the forming one.
        Manifest::new(
            "sma_cross",
            env!("CARGO_PKG_VERSION"),
            PluginKind::Strategy,
            "SMA(10)/SMA(30) cross-up, stop 5 %, target 10 % (benchmark)",
        )
        .with_candles("1h", SLOW as u32 + 2)
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let now = request.now_ms;
        request.evaluate_each(|s| {
            let candles = s
                .candles
                .first()
                .ok_or_else(|| ScanError::MissingData(format!("{}: no 1h candles", s.symbol)))?;
            let closed = candles.open_time.iter().take_while(|t| **t + HOUR_MS <= now).count();
            let close = &candles.close[..closed];
            let (fast, slow) = (sma(close, FAST), sma(close, SLOW));
            let crossed = closed > SLOW
                && fast[closed - 2] < slow[closed - 2]
                && fast[closed - 1] > slow[closed - 1];
            if !crossed {
                let skip = ScanResult::new(&s.symbol, "sma_cross", Direction::Skip, s.last_price);
                let (f, sl) = (fast.last().copied(), slow.last().copied());
                let reason = match (f, sl) {
                    (Some(f), Some(sl)) if f.is_finite() && sl.is_finite() => {
                        let side = if f > sl { "above" } else { "below" };
                        format!("SMA({FAST}) {f:.4} {side} SMA({SLOW}) {sl:.4}, no cross up")
                    }
                    _ => format!("fewer than {} closed candles", SLOW + 1),
                };
                return Ok(skip.with_reason(reason));
            }
            let mut checklist = Checklist::new();
            checklist.check("sma_cross_up", true, "SMA(10) crossed above SMA(30)");
            let mut r = ScanResult::new(&s.symbol, "sma_cross", Direction::Buy, s.last_price)
                .with_checklist(checklist);
            r.ask_coo = false;
            r.sl_pct = 5.0;
            r.tp_pct = 10.0;
            Ok(r)
        })
    }
}

export_strategy!(Guest);
