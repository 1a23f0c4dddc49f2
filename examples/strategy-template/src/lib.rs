//! `template`: buy pullbacks in an uptrend. A small, complete strategy plugin (an example of
//! the SDK, not a trading edge); `cargo xtask new-strategy <name>` copies it, every name
//! replaced, as the start of a new one.
//!
//! The daily and 4h trends must point up, the 1h chart must be stretched down (RSI low, price
//! near the lower Bollinger band) and turning (MACD histogram rising), the 15m stochastic
//! oversold, volume present and ADX showing a real trend. Each condition is one checklist
//! line; the result is a buy when enough lines pass, otherwise a skip with the reason.
//! Stop-loss is a multiple of the 1h ATR, take-profit a reward/risk multiple of it. The plugin
//! remembers when it last signalled each symbol (plugin state) and stays quiet for a cooldown.
//!
//! A scan only returns results: how a `buy` becomes a trade is in the README ("From a result
//! to a trade").

use serde::{Deserialize, Serialize};
use spotbot_sdk::indicators::{self as ind, last, nth_last};
use spotbot_sdk::{
    CandleNeed, Checklist, Direction, Manifest, PluginKind, ScanError, ScanRequest, ScanResponse,
    ScanResult, StateEntry, Strategy, SymbolData, config, export_strategy, scoring, set_state,
    state_value,
};

/// The plugin name: `bot` of every result, `[strategy.template]` in the config.
pub const NAME: &str = "template";

/// Candles per timeframe the strategy computes over.
pub const CANDLES: u32 = 200;

/// The configuration, `[strategy.template]`. Every key is optional; the manifest publishes the
/// defaults (`default_config_json`), which makes them the keys the service accepts, and
/// `config::parse` refuses any other key.
///
/// The service sizes, limits and trails this strategy's trades by `mr_combined`'s keys until it
/// declares its own: embed the SDK's group (and add `trade: TradeKeys::default()` to
/// `Default`) to publish `size_pct`, `max_trades_per_day`, `trailing_*` and `risk_normal`:
///
/// ```ignore
/// #[serde(flatten)]
/// pub trade: spotbot_sdk::config::TradeKeys,
/// ```
///
/// (`spotbot_sdk::config::ScanKeys` likewise for `enabled` and the symbols a scan reads.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
    /// Checklist lines that must pass for a buy. 8 of the 10 is what the service's confidence
    /// gate (>= 8 tenths of the checklist) lets through: fewer could never trade.
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
            min_passed: 8,
            sl_atr_mult: 1.5,
            reward_risk: 2.0,
            cooldown_minutes: 240,
            ask_coo: true,
        }
    }
}

/// The default config as JSON, published in the manifest: every field of [`Config`] with its
/// default (a fraction stays a fraction, e.g. `40.0`, so the service accepts `rsi_max = 35.5`).
pub fn default_config_json() -> String {
    serde_json::to_string(&Config::default()).expect("the config serializes")
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
        let config: Config = config::parse(&request.config)?;
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

/// The lines without which the rest means nothing: a buy needs them whatever the score.
pub const MUST_HAVE: [&str; 2] = ["liquidity", "cooldown"];

/// Evaluates one symbol. A timeframe the host did not send is an error of the whole scan (it
/// must send what the manifest asks for); a short, stale or broken series is a skip.
///
/// Every indicator reads **closed** candles only (`closed_candles`): the host's newest candle
/// is usually still forming, and a rule over it changes its mind within the candle (a volume
/// ratio over a candle a minute old reads about 0.01).
pub fn evaluate(
    config: &Config,
    data: &SymbolData,
    now_ms: i64,
    state: &[StateEntry],
) -> Result<ScanResult, ScanError> {
    let mut result = ScanResult::new(&data.symbol, NAME, Direction::Skip, data.last_price);
    result.ask_coo = config.ask_coo;
    let closed = |timeframe, min| data.closed_candles(timeframe, now_ms, min);
    let (m15, h1, h4, d1) =
        match (closed("15m", 20)?, closed("1h", 60)?, closed("4h", 60)?, closed("1d", 60)?) {
            (Ok(m15), Ok(h1), Ok(h4), Ok(d1)) => (m15, h1, h4, d1),
            (m15, h1, h4, d1) => {
                let why = [m15.err(), h1.err(), h4.err(), d1.err()].into_iter().flatten().next();
                return Ok(result.with_reason(format!("data: {}", why.unwrap_or_default())));
            }
        };
    let price = data.live_price().unwrap_or(h1.close[h1.len() - 1]);
    result.price = price;

    // Indicators: each one over the closed series (TA-Lib conventions).
    let d1_ema50 = last(&ind::ema(d1.close, 50));
    let h4_ema20 = last(&ind::ema(h4.close, 20));
    let h4_ema50 = last(&ind::ema(h4.close, 50));
    let h4_adx = last(&ind::adx(h4.high, h4.low, h4.close, 14));
    let rsi = last(&ind::rsi(h1.close, 14));
    let bands = ind::bollinger(h1.close, 20, 2.0);
    let macd = ind::macd(h1.close, 12, 26, 9);
    let (hist, hist_prev) = (last(&macd.hist), nth_last(&macd.hist, 1));
    let atr = last(&ind::atr(h1.high, h1.low, h1.close, 14));
    let vol_ratio = last(&ind::volume_ratio(h1.volume, 20));
    let stoch_k = last(&ind::stoch(m15.high, m15.low, m15.close, 14, 3, 3).k);
    let bb_lower = last(&bands.lower);
    let h1_close = h1.close[h1.len() - 1];
    let d1_close = d1.close[d1.len() - 1];

    let mut c = Checklist::new();
    c.check(
        "liquidity",
        data.quote_volume_24h >= config.min_quote_volume,
        format!("24h volume {:.0} >= {:.0}", data.quote_volume_24h, config.min_quote_volume),
    );
    c.check_value(
        "daily_uptrend",
        d1_ema50,
        |e| d1_close > e,
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
    c.check(
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
    // The service's own ev and confidence (`with_signal`), so a preview shows the numbers
    // its confirm gates will judge; a result they would refuse is a skip saying so, never a
    // question to the boss that can only end in a refusal.
    let sl_pct = config.sl_atr_mult * atr.unwrap_or(f64::NAN) / price * 100.0;
    let tp_pct = sl_pct * config.reward_risk;
    let (ev, confidence) = scoring::service_scores(&c, sl_pct, tp_pct);
    let bracket = sl_pct.is_finite() && sl_pct > 0.0;
    result.buy_signals = Some(c.passed());
    result.sell_signals = Some(0);
    if !c.qualifies(&MUST_HAVE, config.min_passed) {
        let reason = c.shortfall("buy", &MUST_HAVE, config.min_passed);
        return Ok(result.with_reason(reason).with_checklist(c));
    }
    if !bracket {
        return Ok(result.with_reason("no bracket: 1h ATR unavailable").with_checklist(c));
    }
    if !scoring::passes_gates(ev, confidence) {
        let reason = format!(
            "below the service's gates: ev {ev} (need > {}), confidence {confidence} (need >= {})",
            scoring::MIN_EV,
            scoring::MIN_CONFIDENCE
        );
        return Ok(result.with_reason(reason).with_checklist(c));
    }
    // The signal flow's tiers are `normal`, `A+` and `A++` (they size the entry).
    result.tier = Some(if c.passed() == c.total() { "A+" } else { "normal" }.to_string());
    Ok(result.with_signal(Direction::Buy, sl_pct, tp_pct, c))
}

#[cfg(test)]
mod tests {
    //! Two kinds of tests. The contract tests check what the service relies on whatever the
    //! logic decides (a valid manifest and config, one result per requested symbol, a reason
    //! for every skip, determinism, the cooldown memory), so they keep passing while you change
    //! `evaluate()`; most of them come from the SDK (`contract_tests!`, `testing::contract`),
    //! with the pinned default config: edit that pin when you change a key or a default. The
    //! `example_*` tests pin today's logic on hand-made data: adapt them (or replace them with
    //! your own) when you change it.

    use super::*;
    use spotbot_sdk::StateUpdate;
    use spotbot_sdk::scoring;
    use spotbot_sdk::testing;
    use spotbot_sdk::testing::{apply_state, contract};

    const NOW: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
    const MINUTE: i64 = 60_000;

    fn request(symbols: usize, config: &str) -> ScanRequest {
        testing::request(&Template::describe().candles, symbols, config, NOW)
    }

    /// A varied batch ending at `now_ms` (the same market whatever `now_ms`): random walks,
    /// plus a textbook setup, an illiquid symbol and one with a short history.
    fn batch(now_ms: i64) -> ScanRequest {
        let mut req = testing::request(&Template::describe().candles, 24, "{}", now_ms);
        textbook_setup(&mut req.symbols[0]);
        textbook_setup(&mut req.symbols[1]);
        req.symbols[1].quote_volume_24h = 10.0;
        let short = &mut req.symbols[2];
        for c in &mut short.candles {
            *c = testing::candles(3, &c.timeframe, 5, 100.0, 0.0, now_ms);
        }
        req
    }

    fn scan(req: &ScanRequest) -> ScanResponse {
        Template::scan(req.clone()).unwrap()
    }

    /// Today's textbook case on any timeframes: a steady up-trend everywhere, and on the
    /// timeframes below 4h a sharp dip that just started to turn, with a volume spike.
    fn textbook_setup(data: &mut SymbolData) {
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
            let short = testing::timeframe_ms(&c.timeframe).is_some_and(|ms| ms < 4 * 3_600_000);
            if short && n > 12 {
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
        }
        data.last_price = data.candles[0].close.last().copied().unwrap_or(data.last_price);
    }

    // ---- Contract tests: they hold whatever evaluate() decides. ----

    spotbot_sdk::contract_tests! {
        plugin: Template,
        config: Config,
        name: NAME,
        kind: PluginKind::Strategy,
        candles: [("15m", CANDLES), ("1h", CANDLES), ("4h", CANDLES), ("1d", CANDLES)],
        needs_reference: false,
        needs_market_context: false,
        default_config: serde_json::json!({
            "rsi_max": 40.0, "band_proximity_pct": 1.0, "adx_min": 20.0, "stoch_max": 30.0,
            "vol_ratio_min": 1.0, "min_quote_volume": 1_000_000.0, "min_passed": 8,
            "sl_atr_mult": 1.5, "reward_risk": 2.0, "cooldown_minutes": 240, "ask_coo": true,
        }),
    }

    #[test]
    fn the_batch_is_answered_like_the_contract_says() {
        let req = batch(NOW);
        contract::answers::<Template>(&req, |_| {});
        let subset = ScanRequest { symbols: req.symbols[3..5].to_vec(), ..req };
        assert_eq!(scan(&subset).results.len(), 2);
    }

    #[test]
    fn too_little_history_is_a_skip_and_a_missing_timeframe_an_error() {
        let mut req = request(1, "{}");
        for c in &mut req.symbols[0].candles {
            *c = testing::candles(1, &c.timeframe, 3, 100.0, 0.0, NOW);
        }
        assert_eq!(scan(&req).results[0].direction, Direction::Skip);
        contract::missing_timeframe_fails::<Template>();
    }

    #[test]
    fn state_records_the_buys_and_the_cooldown_survives_a_round_trip() {
        let first = scan(&batch(NOW));
        let buys: Vec<&str> = first
            .results
            .iter()
            .filter(|r| r.direction == Direction::Buy)
            .map(|r| r.symbol.as_str())
            .collect();
        let expected: Vec<StateUpdate> =
            buys.iter().map(|s| set_state(cooldown_key(s), NOW.to_string())).collect();
        assert_eq!(first.state_updates, expected, "one record per buy, at the scan's time");

        // The same market a minute later, with the persisted state: no buy repeats, and the
        // other symbols answer as before.
        let mut state = Vec::new();
        apply_state(&mut state, &first.state_updates);
        let mut later = batch(NOW + MINUTE);
        later.state = state.clone();
        let second = scan(&later);
        for (a, b) in first.results.iter().zip(&second.results) {
            if a.direction == Direction::Buy {
                assert_ne!(b.direction, Direction::Buy, "{} bought again", a.symbol);
            } else {
                assert_eq!(a.direction, b.direction, "{}", a.symbol);
            }
        }
        assert!(second.state_updates.is_empty(), "{:?}", second.state_updates);

        // Once the cooldown is over, the same market gives the same answers again.
        let cooldown = Config::default().cooldown_minutes * MINUTE;
        let mut after = batch(NOW + cooldown);
        after.state = state;
        let third = scan(&after);
        let directions =
            |r: &ScanResponse| r.results.iter().map(|x| x.direction).collect::<Vec<_>>();
        assert_eq!(directions(&third), directions(&first));
    }

    #[test]
    fn the_still_forming_candle_is_never_read() {
        let mut req = request(1, "{}");
        textbook_setup(&mut req.symbols[0]);
        let settled = scan(&req).results[0].clone();
        // Each series gets a candle that opened a minute ago, with next to no volume yet.
        req.now_ms += MINUTE;
        for c in &mut req.symbols[0].candles {
            let step = testing::timeframe_ms(&c.timeframe).unwrap();
            let close = *c.close.last().unwrap();
            c.open_time.push(c.open_time.last().unwrap() + step);
            for column in [&mut c.open, &mut c.high, &mut c.low, &mut c.close] {
                column.push(close);
            }
            c.volume.push(0.01);
        }
        let forming = scan(&req).results[0].clone();
        assert_eq!(forming.vol_ratio, settled.vol_ratio);
        assert_eq!(forming.direction, settled.direction, "{:#?}", forming.checklist);
    }

    // ---- Examples of today's logic: adapt or replace them when you change evaluate(). ----

    #[test]
    fn example_textbook_pullback_buys_then_cools_down() {
        let mut req = request(1, "{}");
        textbook_setup(&mut req.symbols[0]);
        let r = scan(&req);
        let res = &r.results[0];
        assert_eq!(res.direction, Direction::Buy, "{:#?}", res.checklist);
        // The numbers the service's confirm gates will judge, not a formula of its own.
        let (ev, confidence) =
            scoring::scores_of(res.passed as usize, res.total as usize, res.sl_pct, res.tp_pct);
        assert_eq!((res.ev, res.confidence), (Some(ev), Some(confidence)));
        assert!(scoring::passes_gates(ev, confidence), "{ev} {confidence}");
        assert!((res.tp_pct - Config::default().reward_risk * res.sl_pct).abs() < 1e-12);

        // Ten minutes later with the persisted state: the cooldown line fails.
        apply_state(&mut req.state, &r.state_updates);
        req.now_ms = NOW + 10 * MINUTE;
        let again = &scan(&req).results[0];
        assert_eq!(again.direction, Direction::Skip);
        assert!(!again.checklist.iter().find(|c| c.name == "cooldown").unwrap().pass);
        let reason = again.reason.as_deref().unwrap_or_default();
        let named = reason.contains("including liquidity and cooldown")
            && reason.contains("cooldown (last buy 10 min ago)");
        assert!(named, "{reason}");

        // The same setup without liquidity, or with a stricter config, is a skip.
        let mut illiquid = request(1, "{}");
        textbook_setup(&mut illiquid.symbols[0]);
        illiquid.symbols[0].quote_volume_24h = 10.0;
        assert_eq!(scan(&illiquid).results[0].direction, Direction::Skip);
        let mut strict = request(1, r#"{"min_passed": 11}"#);
        textbook_setup(&mut strict.symbols[0]);
        assert_eq!(scan(&strict).results[0].direction, Direction::Skip);
    }
}
