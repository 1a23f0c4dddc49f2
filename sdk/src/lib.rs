//! The spotbot strategy SDK: everything a strategy author needs.
//!
//! - [`Strategy`]: the trait a strategy implements. It is the trait generated from the WIT
//!   contract (`wit/strategy.wit`, package `spotbot:strategy@1.0.0`), so the same `impl` is
//!   called natively by unit tests and by the host through the Wasm export.
//! - [`export_strategy!`]: one line that exports the implementation as a WebAssembly component
//!   when the crate is built for `wasm32-wasip2` (it expands to nothing on other targets).
//! - The contract's types ([`ScanRequest`], [`ScanResult`], [`Candles`], ...) plus small
//!   helpers on them: [`ScanResult::new`], [`SymbolData::candles`], [`parse_config`],
//!   [`state_value`].
//! - [`indicators`]: SMA, EMA, RSI, ATR, ADX/+DI/−DI, Bollinger bands and width, MACD,
//!   Stochastic (all following TA-Lib's conventions and checked against TA-Lib reference
//!   values), volume ratio, swing highs and lows.
//! - [`Checklist`]: builds the checklist of a result and counts `passed`/`total`;
//!   [`Checklist::qualifies`] / [`Checklist::shortfall`] apply and word the usual
//!   "must-haves plus a minimum score" rule.
//! - [`Candles::closed`]: the closed candles of a series ([`ClosedCandles`]), refusing a
//!   stale or broken series with a reason for the skip.
//! - [`scoring::service_scores`]: the service's ev and confidence (docs/signals.md), so a
//!   result can report what the confirm gates will see.
//! - [`ScanRequest::evaluate_each`]: one result per symbol from a per-symbol function;
//!   [`ScanResult::with_reason`] and [`ScanResult::with_signal`] (direction, bracket,
//!   checklist and the service's scores in one call); [`SymbolData::live_price`].
//! - [`config`]: the keys the host reads from a strategy's section, declared once
//!   ([`config::ScanKeys`], [`config::TradeKeys`], embedded with `#[serde(flatten)]`), and
//!   [`config::parse`], which refuses keys the default config lacks and names the bad key.
//! - [`sides`]: a one-timeframe strategy that weighs a buy checklist against a sell checklist
//!   implements [`sides::OneTimeframe`] (its config, its minimum of candles, its judgement of
//!   one symbol) and gets manifest, config parsing and the symbol loop; [`sides::Side`] names
//!   the side a checklist looks at, [`sides::HostKeys`] are its section's host keys,
//!   [`sides::Oscillators`] its RSI, ADX, ATR and volume ratio, and [`sides::testing`] the
//!   helpers and contract tests ([`one_timeframe_contract_tests!`]) of its native tests.
//! - [`log!`]: one line into the plugin's log (stderr; the host logs it under the plugin's
//!   name and a preview scan returns it).
//! - [`testing`]: deterministic synthetic candles for native tests and benchmarks, scripted
//!   paths from a list of closes ([`testing::FromCloses`]), requests and symbols around given
//!   candles, the host's checks of a result ([`testing::validate_result`],
//!   [`testing::scan_one`]), and
//!   [`testing::read_request`] to load a request saved from the host
//!   (`GET /api/strategies/{name}/request`) as a [`ScanRequest`].
//!
//! ```
//! use spotbot_sdk::*;
//!
//! struct Always;
//! impl Strategy for Always {
//!     fn describe() -> Manifest {
//!         Manifest {
//!             name: "always".into(),
//!             version: "0.1.0".into(),
//!             kind: PluginKind::Strategy,
//!             description: "says skip".into(),
//!             candles: vec![CandleNeed { timeframe: "1h".into(), count: 50 }],
//!             needs_reference: false,
//!             needs_market_context: false,
//!             default_config: "{}".into(),
//!         }
//!     }
//!     fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
//!         let results = request
//!             .symbols
//!             .iter()
//!             .map(|s| ScanResult::new(&s.symbol, "always", Direction::Skip, s.last_price))
//!             .collect();
//!         Ok(ScanResponse { results, alerts: vec![], state_updates: vec![] })
//!     }
//! }
//! export_strategy!(Always);
//! ```

// The bindings refer to the runtime through `::spotbot_sdk::...` so that the code the export
// macro generates in a strategy crate needs no direct `wit-bindgen` dependency.
extern crate self as spotbot_sdk;

pub mod candles;
pub mod checklist;
pub mod config;
pub mod indicators;
#[doc(hidden)]
pub mod json;
pub mod scoring;
pub mod sides;
pub mod testing;

#[doc(hidden)]
pub use wit_bindgen as __wit_bindgen;

/// The bindings generated from `wit/strategy.wit`. Strategy authors use the re-exports at the
/// crate root instead.
///
/// These types are the contract's one Rust spelling: the host uses them too (its API, its saved
/// requests), so their serde form is the API's JSON: snake_case enum values (`buy`,
/// `just_broken_up`, `pump_watch`), a scan error as `{"kind", "message"}`, a NaN number as
/// `null` (JSON has none) and back, and a request without `state` as an empty state. With the
/// `openapi` feature (the host's) each type also derives its OpenAPI schema. A new WIT field
/// needs nothing here; a new WIT type needs its line below.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "strategy",
        pub_export_macro: true,
        export_macro_name: "__export_strategy_world",
        default_bindings_module: "::spotbot_sdk::bindings",
        runtime_path: "::spotbot_sdk::__wit_bindgen::rt",
        additional_derives: [serde::Serialize, serde::Deserialize, PartialEq, Clone],
        additional_type_attributes: {
            "spotbot:strategy/plugin@1.0.0/plugin-kind": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/candle-need": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/manifest": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/candles": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/macro-phase": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/range-position": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/liquidity-profile": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/regime": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/bos-mode": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/trend-age": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/priority-decision": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/market-context": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PluginMarketContext))]],
            "spotbot:strategy/plugin@1.0.0/symbol-data": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/state-entry": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/scan-request": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/direction": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = StrategyDirection))]],
            "spotbot:strategy/plugin@1.0.0/check": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/scan-result": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/stage": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/confidence-level": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/metric": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/scanner-alert": [#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/state-update": [#[serde(rename_all = "snake_case")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/scan-response": [#[derive(Default)] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
            "spotbot:strategy/plugin@1.0.0/scan-error": [#[serde(rename_all = "snake_case", tag = "kind", content = "message")] #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]],
        },
        additional_member_attributes: {
            "spotbot:strategy/plugin@1.0.0/candles.open": [#[serde(with = "crate::json::f64s_or_nan")]],
            "spotbot:strategy/plugin@1.0.0/candles.high": [#[serde(with = "crate::json::f64s_or_nan")]],
            "spotbot:strategy/plugin@1.0.0/candles.low": [#[serde(with = "crate::json::f64s_or_nan")]],
            "spotbot:strategy/plugin@1.0.0/candles.close": [#[serde(with = "crate::json::f64s_or_nan")]],
            "spotbot:strategy/plugin@1.0.0/candles.volume": [#[serde(with = "crate::json::f64s_or_nan")]],
            "spotbot:strategy/plugin@1.0.0/symbol-data.last-price": [#[serde(with = "crate::json::f64_or_nan")]],
            "spotbot:strategy/plugin@1.0.0/symbol-data.quote-volume-24h": [#[serde(with = "crate::json::f64_or_nan")]],
            "spotbot:strategy/plugin@1.0.0/market-context.range-high": [#[serde(with = "crate::json::f64_or_nan")]],
            "spotbot:strategy/plugin@1.0.0/market-context.range-low": [#[serde(with = "crate::json::f64_or_nan")]],
            "spotbot:strategy/plugin@1.0.0/market-context.atr": [#[serde(with = "crate::json::f64_or_nan")]],
            "spotbot:strategy/plugin@1.0.0/scan-request.state": [#[serde(default)]],
        },
    });
}

pub use bindings::exports::spotbot::strategy::plugin::{
    BosMode, CandleNeed, Candles, Check, ConfidenceLevel, Direction, LiquidityProfile, MacroPhase,
    Manifest, MarketContext, Metric, PluginKind, PriorityDecision, RangePosition, Regime,
    ScanError, ScanRequest, ScanResponse, ScanResult, ScannerAlert, Stage, StateEntry, StateUpdate,
    SymbolData, TrendAge,
};
pub use candles::ClosedCandles;
pub use checklist::Checklist;

/// The trait a strategy implements: `describe()` and `scan(request)`, exactly as in the WIT
/// contract. Call it directly in native tests; [`export_strategy!`] exports it to the host.
pub use bindings::exports::spotbot::strategy::plugin::Guest as Strategy;

/// The WIT package this SDK speaks, `spotbot:strategy@1.0.0`.
pub const WIT_PACKAGE: &str = "spotbot:strategy@1.0.0";

/// Exports a type implementing [`Strategy`] as the plugin of this component.
///
/// Use it once per strategy crate, at the crate root. On `wasm32` targets it emits the
/// component exports; on every other target it expands to nothing, so the same crate also
/// builds natively for tests.
#[macro_export]
macro_rules! export_strategy {
    ($ty:ident) => {
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::__export_strategy_world!($ty with_types_in $crate::bindings);
    };
}

/// Writes one line to the plugin's log, formatted like `format!`.
///
/// In the host the line goes to the plugin's stderr, which the host captures per call (16 KiB),
/// logs under the plugin's name and returns with a preview scan
/// (`POST /api/strategies/{name}/scan`, field `logs`). Line breaks inside the message become
/// spaces, so one call is one line. Output beyond the per-call cap is dropped (the host marks
/// the scan's log as truncated); the macro never panics on a failed write, unlike
/// `eprintln!`. In native tests it prints like `eprintln!` (captured by the test harness).
///
/// ```
/// spotbot_sdk::log!("{}: rsi {:.1} below {}", "BTCUSDT", 27.25, 30);
/// ```
#[macro_export]
macro_rules! log {
    ($($arg:tt)*) => {
        $crate::__log_line(::core::format_args!($($arg)*))
    };
}

/// The body of [`log!`].
#[doc(hidden)]
pub fn __log_line(args: std::fmt::Arguments<'_>) {
    let mut line = std::fmt::format(args);
    if line.contains(['\n', '\r']) {
        line = line.replace(['\n', '\r'], " ");
    }
    #[cfg(target_arch = "wasm32")]
    {
        use std::io::Write as _;
        line.push('\n');
        // One write per line; a full buffer is the host's cap, not the plugin's error.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("{line}");
}

impl Manifest {
    /// A manifest with no candles, no reference symbol, no market context and `{}` as the
    /// default config; add candles with [`Manifest::with_candles`].
    pub fn new(name: &str, version: &str, kind: PluginKind, description: &str) -> Self {
        Manifest {
            name: name.to_string(),
            version: version.to_string(),
            kind,
            description: description.to_string(),
            candles: Vec::new(),
            needs_reference: false,
            needs_market_context: false,
            default_config: "{}".to_string(),
        }
    }

    /// Adds a candle need: `count` candles of `timeframe` per symbol.
    pub fn with_candles(mut self, timeframe: &str, count: u32) -> Self {
        self.candles.push(CandleNeed { timeframe: timeframe.to_string(), count });
        self
    }

    /// Publishes `config` (the strategy's `Config::default()`) as the default config. The
    /// host checks every `[strategy.<name>]` section against these keys and types and overlays
    /// the section on them, so the config struct's defaults stay the one source of the
    /// section's keys. A value that does not serialize (not a plain struct) publishes `{}`.
    pub fn with_default_config<T: serde::Serialize>(mut self, config: &T) -> Self {
        self.default_config = serde_json::to_string(config).unwrap_or_else(|_| "{}".to_string());
        self
    }
}

impl ScanRequest {
    /// One result per symbol, in the request's order, from `evaluate`; the first `Err` fails
    /// the whole scan (e.g. a timeframe the host did not send). No alerts, no state updates:
    /// the `scan` of a strategy that judges each symbol on its own, in one line:
    ///
    /// ```
    /// # use spotbot_sdk::*;
    /// # fn evaluate(s: &SymbolData) -> Result<ScanResult, ScanError> {
    /// #     Ok(ScanResult::new(&s.symbol, "mine", Direction::Skip, s.last_price))
    /// # }
    /// let request = testing::request(&[CandleNeed { timeframe: "1h".into(), count: 50 }], 3, "{}", 0);
    /// let response = request.evaluate_each(evaluate).unwrap();
    /// assert_eq!(response.results.len(), 3);
    /// ```
    pub fn evaluate_each(
        &self,
        evaluate: impl FnMut(&SymbolData) -> Result<ScanResult, ScanError>,
    ) -> Result<ScanResponse, ScanError> {
        let results = self.symbols.iter().map(evaluate).collect::<Result<Vec<_>, _>>()?;
        Ok(ScanResponse { results, alerts: Vec::new(), state_updates: Vec::new() })
    }
}

impl Direction {
    /// `"buy"`, `"sell"` or `"skip"`, as the host and its API spell it: for reasons and logs
    /// ("no buy: ...").
    pub fn as_str(&self) -> &'static str {
        match self {
            Direction::Buy => "buy",
            Direction::Sell => "sell",
            Direction::Skip => "skip",
        }
    }
}

impl ScanResult {
    /// A result with an empty checklist, `ask_coo = true`, zero stop/target and every optional
    /// field unset. Fill the rest with struct update syntax or field assignments.
    pub fn new(symbol: &str, bot: &str, direction: Direction, price: f64) -> Self {
        ScanResult {
            symbol: symbol.to_string(),
            bot: bot.to_string(),
            direction,
            price,
            checklist: Vec::new(),
            passed: 0,
            total: 0,
            ask_coo: true,
            sl_pct: 0.0,
            tp_pct: 0.0,
            ev: None,
            confidence: None,
            tier: None,
            reason: None,
            tp1_pct: None,
            tp2_pct: None,
            range_support: None,
            range_resistance: None,
            range_midline: None,
            rsi: None,
            macd_hist: None,
            bb_lower: None,
            bb_upper: None,
            bb_mid: None,
            vol_ratio: None,
            adx: None,
            stoch_k: None,
            buy_signals: None,
            sell_signals: None,
        }
    }

    /// Sets `checklist`, `passed` and `total` from a [`Checklist`].
    pub fn with_checklist(mut self, checklist: Checklist) -> Self {
        self.passed = checklist.passed();
        self.total = checklist.total();
        self.checklist = checklist.into_checks();
        self
    }

    /// Sets `reason`: every result should say why it is a signal or a skip.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Makes the result a signal: `direction`, the bracket, the checklist, and `ev` /
    /// `confidence` by the service's own formula ([`scoring::service_scores`]) so a preview
    /// shows exactly what the confirm gates will judge (the service keeps the lower of its own
    /// scores and a plugin's, so reporting these never costs a signal).
    pub fn with_signal(
        mut self,
        direction: Direction,
        sl_pct: f64,
        tp_pct: f64,
        checklist: Checklist,
    ) -> Self {
        let (ev, confidence) = scoring::service_scores(&checklist, sl_pct, tp_pct);
        self.direction = direction;
        self.sl_pct = sl_pct;
        self.tp_pct = tp_pct;
        self.ev = Some(ev);
        self.confidence = Some(confidence);
        self.with_checklist(checklist)
    }
}

impl SymbolData {
    /// The ticker's last price if it is a usable entry price (finite and > 0); a strategy
    /// falls back on its last close when the host has none.
    pub fn live_price(&self) -> Option<f64> {
        Some(self.last_price).filter(|p| p.is_finite() && *p > 0.0)
    }

    /// The candles of one timeframe, if the host sent them.
    pub fn candles(&self, timeframe: &str) -> Option<&Candles> {
        self.candles.iter().find(|c| c.timeframe == timeframe)
    }

    /// The candles of one timeframe with at least `min_len` candles, or a
    /// [`ScanError::MissingData`] naming the symbol and timeframe.
    pub fn require_candles(&self, timeframe: &str, min_len: usize) -> Result<&Candles, ScanError> {
        match self.candles(timeframe) {
            Some(c) if c.len() >= min_len => Ok(c),
            Some(c) => Err(ScanError::MissingData(format!(
                "{} {timeframe}: {} candles, need {min_len}",
                self.symbol,
                c.len()
            ))),
            None => Err(ScanError::MissingData(format!("{} {timeframe}: no candles", self.symbol))),
        }
    }
}

impl Candles {
    /// Number of candles.
    pub fn len(&self) -> usize {
        self.close.len()
    }

    /// Whether there are no candles.
    pub fn is_empty(&self) -> bool {
        self.close.is_empty()
    }

    /// Whether all columns have the same length.
    pub fn is_consistent(&self) -> bool {
        let n = self.close.len();
        [self.open_time.len(), self.open.len(), self.high.len(), self.low.len(), self.volume.len()]
            .iter()
            .all(|&l| l == n)
    }
}

/// Parses the request's config (a JSON object as text) into the strategy's config type.
/// Missing keys take the type's serde defaults; an error becomes [`ScanError::BadConfig`].
pub fn parse_config<T: serde::de::DeserializeOwned>(config: &str) -> Result<T, ScanError> {
    serde_json::from_str(config).map_err(|e| ScanError::BadConfig(e.to_string()))
}

/// The value of `key` in the plugin's persisted state.
pub fn state_value<'a>(state: &'a [StateEntry], key: &str) -> Option<&'a str> {
    state.iter().find(|e| e.key == key).map(|e| e.value.as_str())
}

/// A [`StateUpdate::Set`] of `key` to `value`.
pub fn set_state(key: impl Into<String>, value: impl Into<String>) -> StateUpdate {
    StateUpdate::Set(StateEntry { key: key.into(), value: value.into() })
}
