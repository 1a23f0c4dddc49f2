//! Bias test guest `short_warmup`: a planted recursive dependence. It declares 12 1h candles
//! but decides on an EMA(20) of every closed candle it is given, which needs 20 to exist: with
//! the 12 it asked for it never has an average and always skips; given more warm-up it buys
//! whenever the close is above the average. The same step decides differently with more
//! history — `spotbot check-bias` must name the step and the checklist line
//! (`close_above_ema`) where that first happens.

use spotbot_sdk::indicators::ema;
use spotbot_sdk::*;

pub struct Guest;

const DECLARED: u32 = 12;
const PERIOD: usize = 20;

impl Strategy for Guest {
    fn describe() -> Manifest {
        Manifest::new(
            "short_warmup",
            env!("CARGO_PKG_VERSION"),
            PluginKind::Strategy,
            "EMA(20) on 12 declared candles (bias test guest)",
        )
        .with_candles("1h", DECLARED)
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let now = request.now_ms;
        request.evaluate_each(|s| {
            let closed = s
                .candles
                .first()
                .ok_or_else(|| "no 1h candles".to_string())
                .and_then(|c| c.closed(now, 1))
                .map_err(|e| ScanError::MissingData(format!("{}: {e}", s.symbol)))?;
            let close = closed.close;
            let average = ema(close, PERIOD).last().copied().unwrap_or(f64::NAN);
            let last = close.last().copied().unwrap_or(f64::NAN);
            let above = last > average;
            let mut checklist = Checklist::new();
            checklist.check(
                "close_above_ema",
                above,
                format!("close {last:.4} vs EMA {average:.4}"),
            );
            let direction = if above { Direction::Buy } else { Direction::Skip };
            let mut r = ScanResult::new(&s.symbol, "short_warmup", direction, s.last_price)
                .with_checklist(checklist);
            r.sl_pct = 2.0;
            r.tp_pct = 4.0;
            if !above {
                r = r.with_reason("close below its EMA");
            }
            Ok(r)
        })
    }
}

export_strategy!(Guest);
