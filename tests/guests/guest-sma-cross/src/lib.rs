//! Benchmark guest `sma_cross`: the textbook strategy other backtesters ship as their first
//! example, so `cargo xtask bench-backtest` can run the same rules in spotbot and in
//! backtesting.py, and `cargo xtask bench-optimize` can search them against Freqtrade's
//! hyperopt. On the closed 1h candles (the candle forming at `now` is left out, as a bar-close
//! backtester sees only finished bars), a buy when SMA(`fast`) crosses above SMA(`slow`)
//! (backtesting.py's `crossover`: below or equal one candle ago is not enough, strictly below
//! then and strictly above now), with a 5 % stop and a 10 % target; skip otherwise, saying
//! where the two averages stand with their numbers (`SMA(10) 101.2345 below SMA(30)
//! 102.5000`): every skip's text is its own, as many authors write them, which the
//! backtest's "why no trade" must group by kind.
//!
//! The two window lengths are the config keys `fast` (default 10) and `slow` (default 30),
//! published in the manifest's default config so that `spotbot optimize` can search them; a
//! section with `fast` below 2, `slow` not above `fast` or `slow` above [`MAX_SLOW`] fails the
//! scan naming the key. The manifest asks for the candles of the longest `slow`; each scan
//! reads only the last `slow + 2` of them (the `slow + 1` closed candles of the cross and the
//! forming one), the same series whatever `MAX_SLOW` is, so the defaults give exactly the
//! trades of the guest that asked for 32 candles. The stop and the target are fixed here; the
//! optimiser searches them with its `sl_pct` / `tp_pct` keys, which override the result's.

use serde::{Deserialize, Serialize};
use spotbot_sdk::indicators::sma;
use spotbot_sdk::*;

pub struct Guest;

const HOUR_MS: i64 = 3_600_000;
/// The longest `slow` a config may set: the manifest asks for its candles.
pub const MAX_SLOW: usize = 60;

/// `[strategy.sma_cross]`: the two window lengths, in 1h candles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// The fast average's length, at least 2.
    pub fast: usize,
    /// The slow average's length, above `fast` and at most [`MAX_SLOW`].
    pub slow: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config { fast: 10, slow: 30 }
    }
}

impl Config {
    /// Parses the request's config and checks the lengths; the error names the key.
    pub fn from_request(json: &str) -> Result<Config, ScanError> {
        let c: Config = config::parse(json)?;
        if c.fast < 2 {
            return Err(config::bad("fast", format!("must be at least 2, got {}", c.fast)));
        }
        if c.slow <= c.fast {
            let why = format!("must be above fast ({}), got {}", c.fast, c.slow);
            return Err(config::bad("slow", why));
        }
        if c.slow > MAX_SLOW {
            return Err(config::bad("slow", format!("must be at most {MAX_SLOW}, got {}", c.slow)));
        }
        Ok(c)
    }
}

impl Strategy for Guest {
    fn describe() -> Manifest {
        // MAX_SLOW + 1 closed candles (the cross compares two candles) and the forming one.
        Manifest::new(
            "sma_cross",
            env!("CARGO_PKG_VERSION"),
            PluginKind::Strategy,
            "SMA(fast)/SMA(slow) cross-up (10/30 by default), stop 5 %, target 10 % (benchmark)",
        )
        .with_candles("1h", MAX_SLOW as u32 + 2)
        .with_default_config(&Config::default())
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let Config { fast: fast_n, slow: slow_n } = Config::from_request(&request.config)?;
        let now = request.now_ms;
        request.evaluate_each(|s| {
            let candles = s
                .candles
                .first()
                .ok_or_else(|| ScanError::MissingData(format!("{}: no 1h candles", s.symbol)))?;
            // The last slow + 2 candles: the series the manifest of this `slow` would ask for.
            let first = candles.open_time.len().saturating_sub(slow_n + 2);
            let times = &candles.open_time[first..];
            let closed = times.iter().take_while(|t| **t + HOUR_MS <= now).count();
            let close = &candles.close[first..first + closed];
            let (fast, slow) = (sma(close, fast_n), sma(close, slow_n));
            let crossed = closed > slow_n
                && fast[closed - 2] < slow[closed - 2]
                && fast[closed - 1] > slow[closed - 1];
            if !crossed {
                let skip = ScanResult::new(&s.symbol, "sma_cross", Direction::Skip, s.last_price);
                let (f, sl) = (fast.last().copied(), slow.last().copied());
                let reason = match (f, sl) {
                    (Some(f), Some(sl)) if f.is_finite() && sl.is_finite() => {
                        let side = if f > sl { "above" } else { "below" };
                        format!("SMA({fast_n}) {f:.4} {side} SMA({slow_n}) {sl:.4}, no cross up")
                    }
                    _ => format!("fewer than {} closed candles", slow_n + 1),
                };
                return Ok(skip.with_reason(reason));
            }
            let mut checklist = Checklist::new();
            let why = format!("SMA({fast_n}) crossed above SMA({slow_n})");
            checklist.check("sma_cross_up", true, why);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_publishes_the_lengths_and_asks_for_the_longest() {
        let m = Guest::describe();
        assert_eq!(m.default_config, r#"{"fast":10,"slow":30}"#);
        assert_eq!(m.candles[0].count, MAX_SLOW as u32 + 2);
    }

    #[test]
    fn a_refused_length_names_its_key() {
        let refused = |json: &str| match Config::from_request(json) {
            Err(ScanError::BadConfig(why)) => why,
            other => panic!("{json}: {other:?}"),
        };
        assert!(refused(r#"{"fast": 1}"#).starts_with("fast: "));
        assert!(refused(r#"{"fast": 20, "slow": 20}"#).starts_with("slow: "));
        assert!(refused(r#"{"slow": 61}"#).starts_with("slow: "));
        assert!(refused(r#"{"fats": 5}"#).starts_with("fats: "));
        let c = Config::from_request(r#"{"fast": 5, "slow": 60}"#).unwrap();
        assert_eq!((c.fast, c.slow), (5, 60));
        assert_eq!(Config::from_request("{}").unwrap(), Config::default());
    }
}
