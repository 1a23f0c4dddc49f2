//! `template`: a complete, small spotbot strategy to copy.
//!
//! Idea: buy pullbacks in an uptrend. The daily and 4h trends must point up, the 1h chart must
//! be stretched down (RSI low, price near the lower Bollinger band) and turning (MACD histogram
//! rising), the 15m stochastic oversold, volume present and ADX showing a real trend. Each
//! condition is one checklist line; the result is a buy when enough lines pass, otherwise a
//! skip with the reason. Stop-loss is a multiple of the 1h ATR, take-profit a reward/risk
//! multiple of it. The plugin remembers when it last signalled each symbol (plugin state) and
//! stays quiet for a cooldown.
//!
//! This is an example of the SDK, not a trading edge.

use serde::Deserialize;
use spotbot_sdk::indicators::{self as ind, last, nth_last};
use spotbot_sdk::{
    CandleNeed, Checklist, Direction, Manifest, PluginKind, ScanError, ScanRequest, ScanResponse,
    ScanResult, StateEntry, Strategy, SymbolData, export_strategy, parse_config, set_state,
    state_value,
};

/// The plugin name: `bot` of every result, `[strategy.template]` in the config.
pub const NAME: &str = "template";

/// Candles per timeframe the strategy computes over.
pub const CANDLES: u32 = 200;

/// The configuration, `[strategy.template]`. Every key is optional.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// RSI(14) on 1h must be below this.
    pub rsi_max: f64,
    /// Close on 1h must be within this many percent above the lower Bollinger band.
    pub band_proximity_pct: f64,
    /// ADX(14) on 4h must be at least this.
    pub adx_min: f64,
    /// Slow %K on 15m must be below this.
    pub stoch_max: f64,
    /// 1h volume / mean of the 20 previous must be at least this.
    pub vol_ratio_min: f64,
    /// 24 h quote volume must be at least this (quote currency).
    pub min_quote_volume: f64,
    /// Checklist lines that must pass for a buy.
    pub min_passed: u32,
    /// Stop-loss = this × ATR(14, 1h).
    pub sl_atr_mult: f64,
    /// Take-profit = this × stop-loss distance.
    pub reward_risk: f64,
    /// No new buy for a symbol within this many minutes of the previous one.
    pub cooldown_minutes: i64,
    /// Ask the boss before trading (keep true).
    pub ask_coo: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            rsi_max: 40.0,
            band_proximity_pct: 1.0,
            adx_min: 20.0,
            stoch_max: 30.0,
            vol_ratio_min: 1.0,
            min_quote_volume: 1_000_000.0,
            min_passed: 7,
            sl_atr_mult: 1.5,
            reward_risk: 2.0,
            cooldown_minutes: 240,
            ask_coo: true,
        }
    }
}

/// The default config as JSON, published in the manifest.
pub fn default_config_json() -> String {
    let c = Config::default();
    format!(
        concat!(
            "{{\"rsi_max\":{},\"band_proximity_pct\":{},\"adx_min\":{},\"stoch_max\":{},",
            "\"vol_ratio_min\":{},\"min_quote_volume\":{},\"min_passed\":{},\"sl_atr_mult\":{},",
            "\"reward_risk\":{},\"cooldown_minutes\":{},\"ask_coo\":{}}}"
        ),
        c.rsi_max,
        c.band_proximity_pct,
        c.adx_min,
        c.stoch_max,
        c.vol_ratio_min,
        c.min_quote_volume,
        c.min_passed,
        c.sl_atr_mult,
        c.reward_risk,
        c.cooldown_minutes,
        c.ask_coo
    )
}

/// The strategy. `Strategy` is the SDK trait generated from the WIT contract.
pub struct Template;

impl Strategy for Template {
    fn describe() -> Manifest {
        let need = |tf: &str| CandleNeed { timeframe: tf.to_string(), count: CANDLES };
        Manifest {
            name: NAME.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            kind: PluginKind::Strategy,
            description: "Example: buy 1h pullbacks in a 1d/4h uptrend".to_string(),
            candles: vec![need("15m"), need("1h"), need("4h"), need("1d")],
            needs_reference: false,
            needs_market_context: false,
            default_config: default_config_json(),
        }
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let config: Config = parse_config(&request.config)?;
        let mut results = Vec::with_capacity(request.symbols.len());
        let mut state_updates = Vec::new();
        for symbol in &request.symbols {
            let result = evaluate(&config, symbol, request.now_ms, &request.state)?;
            if result.direction == Direction::Buy {
                state_updates
                    .push(set_state(cooldown_key(&symbol.symbol), request.now_ms.to_string()));
            }
            results.push(result);
        }
        Ok(ScanResponse { results, alerts: Vec::new(), state_updates })
    }
}

export_strategy!(Template);

/// The state key holding the time (epoch ms) of the last buy for a symbol.
pub fn cooldown_key(symbol: &str) -> String {
    format!("last_buy:{symbol}")
}

/// Evaluates one symbol. Missing candles are an error of the whole scan (the host must send
/// what the manifest asks for); a short history yields a skip.
pub fn evaluate(
    config: &Config,
    data: &SymbolData,
    now_ms: i64,
    state: &[StateEntry],
) -> Result<ScanResult, ScanError> {
    let m15 = data.require_candles("15m", 1)?;
    let h1 = data.require_candles("1h", 1)?;
    let h4 = data.require_candles("4h", 1)?;
    let d1 = data.require_candles("1d", 1)?;
    let price = data.last_price;
    let mut result = ScanResult::new(&data.symbol, NAME, Direction::Skip, price);
    result.ask_coo = config.ask_coo;
    if h1.len() < 60 || h4.len() < 60 || d1.len() < 60 || m15.len() < 20 {
        result.reason = Some("not enough history".to_string());
        return Ok(result);
    }

    // Indicators: each one over the whole series the host sent (TA-Lib conventions).
    let d1_ema50 = last(&ind::ema(&d1.close, 50));
    let h4_ema20 = last(&ind::ema(&h4.close, 20));
    let h4_ema50 = last(&ind::ema(&h4.close, 50));
    let h4_adx = last(&ind::adx(&h4.high, &h4.low, &h4.close, 14));
    let rsi = last(&ind::rsi(&h1.close, 14));
    let bands = ind::bollinger(&h1.close, 20, 2.0);
    let macd = ind::macd(&h1.close, 12, 26, 9);
    let (hist, hist_prev) = (last(&macd.hist), nth_last(&macd.hist, 1));
    let atr = last(&ind::atr(&h1.high, &h1.low, &h1.close, 14));
    let vol_ratio = last(&ind::volume_ratio(&h1.volume, 20));
    let stoch_k = last(&ind::stoch(&m15.high, &m15.low, &m15.close, 14, 3, 3).k);
    let bb_lower = last(&bands.lower);
    let h1_close = *h1.close.last().unwrap_or(&price);

    let mut c = Checklist::new();
    let liquid = c.check(
        "liquidity",
        data.quote_volume_24h >= config.min_quote_volume,
        format!("24h volume {:.0} >= {:.0}", data.quote_volume_24h, config.min_quote_volume),
    );
    c.check_value(
        "daily_uptrend",
        d1_ema50,
        |e| d1.close.last().is_some_and(|&close| close > e),
        |e| format!("1d close above EMA50 {e:.6}"),
    );
    c.check_value(
        "h4_uptrend",
        h4_ema20.zip(h4_ema50).map(|(a, b)| a - b),
        |d| d > 0.0,
        |d| format!("4h EMA20 - EMA50 = {d:.6}"),
    );
    c.check_value(
        "h4_trend_strength",
        h4_adx,
        |a| a >= config.adx_min,
        |a| format!("4h ADX {a:.1} >= {:.1}", config.adx_min),
    );
    c.check_value(
        "h1_rsi_low",
        rsi,
        |r| r < config.rsi_max,
        |r| format!("1h RSI {r:.1} < {:.1}", config.rsi_max),
    );
    c.check_value(
        "h1_near_lower_band",
        bb_lower,
        |b| h1_close <= b * (1.0 + config.band_proximity_pct / 100.0),
        |b| {
            format!(
                "1h close {h1_close:.6} within {}% of lower band {b:.6}",
                config.band_proximity_pct
            )
        },
    );
    c.check_value(
        "h1_macd_turning",
        hist.zip(hist_prev).map(|(h, p)| h - p),
        |d| d > 0.0,
        |d| format!("1h MACD histogram change {d:.6}"),
    );
    c.check_value(
        "m15_stoch_oversold",
        stoch_k,
        |k| k < config.stoch_max,
        |k| format!("15m slow %K {k:.1} < {:.1}", config.stoch_max),
    );
    c.check_value(
        "h1_volume",
        vol_ratio,
        |v| v >= config.vol_ratio_min,
        |v| format!("1h volume ratio {v:.2} >= {:.2}", config.vol_ratio_min),
    );
    let last_buy =
        state_value(state, &cooldown_key(&data.symbol)).and_then(|v| v.parse::<i64>().ok());
    let cooled = c.check(
        "cooldown",
        last_buy.is_none_or(|t| now_ms - t >= config.cooldown_minutes * 60_000),
        match last_buy {
            Some(t) => format!("last buy {} min ago", (now_ms - t) / 60_000),
            None => "no recent buy".to_string(),
        },
    );

    result.rsi = rsi;
    result.macd_hist = hist;
    result.bb_lower = bb_lower;
    result.bb_upper = last(&bands.upper);
    result.bb_mid = last(&bands.middle);
    result.vol_ratio = vol_ratio;
    result.adx = h4_adx;
    result.stoch_k = stoch_k;
    if let Some(atr) = atr.filter(|_| price > 0.0) {
        result.sl_pct = config.sl_atr_mult * atr / price * 100.0;
        result.tp_pct = result.sl_pct * config.reward_risk;
    }

    let passed = c.passed();
    let total = c.total();
    result.buy_signals = Some(passed);
    result.sell_signals = Some(0);
    let signal = liquid && cooled && passed >= config.min_passed && result.sl_pct > 0.0;
    if signal {
        // Illustrative scoring: hit rate p = passed/total, ev = 100 * (p * RR - (1 - p)).
        let p = f64::from(passed) / f64::from(total);
        result.direction = Direction::Buy;
        result.ev = Some(100.0 * (p * config.reward_risk - (1.0 - p)));
        result.confidence = Some(passed);
        result.tier = Some(if passed == total { "A+".to_string() } else { "A".to_string() });
    } else {
        result.reason = Some(format!("{passed}/{total} checks passed, need {}", config.min_passed));
    }
    Ok(result.with_checklist(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spotbot_sdk::testing;
    use spotbot_sdk::testing::apply_state;

    const NOW: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    fn request(symbols: usize, config: &str) -> ScanRequest {
        testing::request(&Template::describe().candles, symbols, config, NOW)
    }

    /// Makes one symbol's data a textbook setup: strong up-trend on 1d/4h, a sharp 1h dip
    /// that just started to turn, oversold 15m, volume spike.
    fn setup(data: &mut SymbolData) {
        for c in &mut data.candles {
            let n = c.len();
            for i in 0..n {
                let base = 100.0 * (1.0 + 0.004 * i as f64);
                let wiggle = if i % 2 == 0 { 0.003 } else { -0.003 };
                c.open[i] = base;
                c.close[i] = base * (1.0 + wiggle + 0.001);
                c.high[i] = c.open[i].max(c.close[i]) * 1.002;
                c.low[i] = c.open[i].min(c.close[i]) * 0.998;
                c.volume[i] = 1_000.0;
            }
        }
        for tf in ["1h", "15m"] {
            let c = data.candles.iter_mut().find(|c| c.timeframe == tf).unwrap();
            let n = c.len();
            // Ten falling candles, then a small bounce that still closes low.
            for k in 0..12 {
                let i = n - 12 + k;
                let prev = c.close[i - 1];
                let close = if k < 11 { prev * 0.985 } else { prev * 0.997 };
                c.open[i] = prev;
                c.close[i] = close;
                c.high[i] = prev.max(close) * 1.001;
                c.low[i] = prev.min(close) * 0.999;
            }
            c.volume[n - 1] = 5_000.0;
        }
        data.last_price = data.candles[1].close.last().copied().unwrap();
    }

    #[test]
    fn manifest_is_valid_and_default_config_parses() {
        let m = Template::describe();
        assert_eq!(m.name, NAME);
        assert_eq!(m.candles.len(), 4);
        let c: Config = parse_config(&m.default_config).unwrap();
        assert_eq!(c.min_passed, Config::default().min_passed);
    }

    #[test]
    fn random_walks_give_one_result_per_symbol_in_order() {
        let r = Template::scan(request(5, "{}")).unwrap();
        assert_eq!(r.results.len(), 5);
        for (i, res) in r.results.iter().enumerate() {
            assert_eq!(res.symbol, format!("SYM{i}USDT"));
            assert_eq!(res.bot, NAME);
            assert_eq!(res.total, 10);
            assert_eq!(res.passed as usize, res.checklist.iter().filter(|c| c.pass).count());
            assert!(res.rsi.is_some() && res.adx.is_some() && res.sl_pct > 0.0);
            assert!((res.tp_pct - 2.0 * res.sl_pct).abs() < 1e-12);
        }
    }

    #[test]
    fn textbook_setup_buys_then_cools_down() {
        let mut req = request(1, "{}");
        setup(&mut req.symbols[0]);
        let r = Template::scan(req.clone()).unwrap();
        let res = &r.results[0];
        assert_eq!(res.direction, Direction::Buy, "{:#?}", res.checklist);
        assert!(res.ev.unwrap() > 25.0 && res.confidence.unwrap() >= 7);
        assert_eq!(r.state_updates, vec![set_state("last_buy:SYM0USDT", NOW.to_string())]);

        // Ten minutes later with the persisted state: the cooldown line fails, no buy.
        apply_state(&mut req.state, &r.state_updates);
        req.now_ms = NOW + 10 * 60_000;
        let again = Template::scan(req.clone()).unwrap();
        assert_eq!(again.results[0].direction, Direction::Skip);
        assert!(!again.results[0].checklist.iter().find(|c| c.name == "cooldown").unwrap().pass);
        assert!(again.state_updates.is_empty());

        // After the cooldown it may buy again.
        req.now_ms = NOW + 241 * 60_000;
        assert_eq!(Template::scan(req).unwrap().results[0].direction, Direction::Buy);
    }

    #[test]
    fn illiquid_symbol_never_buys() {
        let mut req = request(1, "{}");
        setup(&mut req.symbols[0]);
        req.symbols[0].quote_volume_24h = 10.0;
        let res = &Template::scan(req).unwrap().results[0];
        assert_eq!(res.direction, Direction::Skip);
        assert!(res.reason.as_deref().unwrap().contains("checks passed"));
    }

    #[test]
    fn config_is_validated() {
        let e = Template::scan(request(1, r#"{"min_passed": "many"}"#)).unwrap_err();
        assert!(matches!(e, ScanError::BadConfig(_)), "{e:?}");
        let e = Template::scan(request(1, r#"{"unknown_key": 1}"#)).unwrap_err();
        assert!(matches!(e, ScanError::BadConfig(_)), "{e:?}");
        let strict = Template::scan(request(3, r#"{"min_passed": 11}"#)).unwrap();
        assert!(strict.results.iter().all(|r| r.direction == Direction::Skip));
    }

    #[test]
    fn missing_timeframe_is_an_error_and_short_history_a_skip() {
        let mut req = request(1, "{}");
        req.symbols[0].candles.retain(|c| c.timeframe != "4h");
        let e = Template::scan(req).unwrap_err();
        assert!(matches!(&e, ScanError::MissingData(m) if m.contains("4h")), "{e:?}");

        let mut req = request(1, "{}");
        for c in &mut req.symbols[0].candles {
            *c = testing::candles(1, &c.timeframe, 30, 100.0, 0.0, NOW);
        }
        let res = &Template::scan(req).unwrap().results[0];
        assert_eq!(res.direction, Direction::Skip);
        assert_eq!(res.reason.as_deref(), Some("not enough history"));
    }
}
