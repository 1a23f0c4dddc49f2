//! Loads a scan request saved from the host (`GET /api/strategies/{name}/request`) as the
//! SDK's [`ScanRequest`], so a strategy is unit-tested natively on the host's real input.
//!
//! The host's JSON spells enum values in snake_case (`"trade_long"`, `"just_broken_up"`) and
//! the state as `[{"key", "value"}]`; the SDK's generated types would expect Rust-cased names
//! and another shape. So the file is read through private mirror types with the host's
//! spelling and converted field by field (exhaustive matches: a case added to the WIT breaks
//! this build instead of being dropped).
//!
//! Numbers are read exactly: the request's floats are the shortest text that round-trips, and
//! Rust's `str::parse::<f64>` turns such text back into the very same bits, which serde_json's
//! default (fast) float parser does not promise. So every bare number of the file is first
//! turned into a string, and the mirror types parse it. A `null` where the host had a number
//! (JSON has no NaN) becomes NaN.

use serde::{Deserialize, Deserializer};

use crate as sdk;

/// Parses the JSON text of a host scan request.
pub fn load_request(json: &str) -> Result<sdk::ScanRequest, String> {
    let quoted = quote_numbers(json);
    let request: Request =
        serde_json::from_str(&quoted).map_err(|e| format!("not a spotbot scan request: {e}"))?;
    Ok(request.into())
}

/// Reads and parses a file saved from `GET /api/strategies/{name}/request`.
pub fn read_request(path: impl AsRef<std::path::Path>) -> Result<sdk::ScanRequest, String> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    load_request(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Wraps every number outside a string in quotes (`1.5` → `"1.5"`), leaving strings (the
/// config text among them) untouched.
fn quote_numbers(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 4);
    let mut chars = json.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '-' || c.is_ascii_digit() {
            out.push('"');
            out.push(c);
            while let Some(&n) = chars.peek() {
                if !(n.is_ascii_digit() || matches!(n, '.' | 'e' | 'E' | '+' | '-')) {
                    break;
                }
                out.push(n);
                chars.next();
            }
            out.push('"');
        } else {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

fn number<T: std::str::FromStr>(text: Option<&str>, nan: Option<T>) -> Result<T, String> {
    match text {
        Some(t) => t.parse().map_err(|_| format!("{t:?} is not a number of this field's type")),
        None => nan.ok_or_else(|| "null where a whole number belongs".to_string()),
    }
}

fn f64_<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    number(text.as_deref(), Some(f64::NAN)).map_err(serde::de::Error::custom)
}

fn f64s<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    let texts = Vec::<Option<String>>::deserialize(d)?;
    texts
        .iter()
        .map(|t| number(t.as_deref(), Some(f64::NAN)))
        .collect::<Result<_, _>>()
        .map_err(serde::de::Error::custom)
}

fn i64_<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    number(text.as_deref(), None).map_err(serde::de::Error::custom)
}

fn i64s<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<i64>, D::Error> {
    let texts = Vec::<Option<String>>::deserialize(d)?;
    texts
        .iter()
        .map(|t| number(t.as_deref(), None))
        .collect::<Result<_, _>>()
        .map_err(serde::de::Error::custom)
}

#[derive(Deserialize)]
struct Request {
    #[serde(deserialize_with = "i64_")]
    now_ms: i64,
    config: String,
    symbols: Vec<Symbol>,
    #[serde(default)]
    reference: Option<Symbol>,
    #[serde(default)]
    state: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    key: String,
    value: String,
}

#[derive(Deserialize)]
struct Symbol {
    symbol: String,
    #[serde(deserialize_with = "f64_")]
    last_price: f64,
    #[serde(deserialize_with = "f64_")]
    quote_volume_24h: f64,
    candles: Vec<Candles>,
    #[serde(default)]
    market_context: Option<Context>,
}

#[derive(Deserialize)]
struct Candles {
    timeframe: String,
    #[serde(deserialize_with = "i64s")]
    open_time: Vec<i64>,
    #[serde(deserialize_with = "f64s")]
    open: Vec<f64>,
    #[serde(deserialize_with = "f64s")]
    high: Vec<f64>,
    #[serde(deserialize_with = "f64s")]
    low: Vec<f64>,
    #[serde(deserialize_with = "f64s")]
    close: Vec<f64>,
    #[serde(deserialize_with = "f64s")]
    volume: Vec<f64>,
}

#[derive(Deserialize)]
struct Context {
    htf_tf: String,
    mtf_tf: String,
    macro_phase: MacroPhase,
    range_position: RangePosition,
    liquidity_profile: LiquidityProfile,
    #[serde(deserialize_with = "f64_")]
    range_high: f64,
    #[serde(deserialize_with = "f64_")]
    range_low: f64,
    regime: Regime,
    trend_direction: String,
    bos_mode: BosMode,
    trend_age: TrendAge,
    compression_bias: String,
    volatile_chop: bool,
    #[serde(deserialize_with = "f64_")]
    atr: f64,
    priority_decision: PriorityDecision,
    no_trade_reason: String,
    #[serde(deserialize_with = "i64_")]
    timestamp: i64,
}

/// Mirror enums in the host's snake_case, converted case by case.
macro_rules! mirror {
    ($($ty:ident { $($case:ident),+ $(,)? })+) => {$(
        #[derive(Deserialize)]
        #[serde(rename_all = "snake_case")]
        enum $ty { $($case),+ }

        impl From<$ty> for sdk::$ty {
            fn from(v: $ty) -> Self {
                match v { $($ty::$case => sdk::$ty::$case),+ }
            }
        }
    )+};
}

mirror! {
    MacroPhase { Bull, Bear, Range }
    RangePosition { Low, Mid, High, JustBrokenUp, JustBrokenDown, Unknown }
    LiquidityProfile { Clean, EqualHighs, EqualLows, Void }
    Regime { Trend, Compression, Sideway, VolatileChop, Transition, Unknown }
    BosMode { Confirmed, Quick, None }
    TrendAge { Fresh, Extended, None }
    PriorityDecision { TradeLong, TradeShort, Standby, NoTrade, WatchRegimeShift }
}

impl From<Request> for sdk::ScanRequest {
    fn from(r: Request) -> Self {
        let Request { now_ms, config, symbols, reference, state } = r;
        sdk::ScanRequest {
            now_ms,
            config,
            symbols: symbols.into_iter().map(Into::into).collect(),
            reference: reference.map(Into::into),
            state: state
                .into_iter()
                .map(|Entry { key, value }| sdk::StateEntry { key, value })
                .collect(),
        }
    }
}

impl From<Symbol> for sdk::SymbolData {
    fn from(s: Symbol) -> Self {
        let Symbol { symbol, last_price, quote_volume_24h, candles, market_context } = s;
        sdk::SymbolData {
            symbol,
            last_price,
            quote_volume_24h,
            candles: candles.into_iter().map(Into::into).collect(),
            market_context: market_context.map(Into::into),
        }
    }
}

impl From<Candles> for sdk::Candles {
    fn from(c: Candles) -> Self {
        let Candles { timeframe, open_time, open, high, low, close, volume } = c;
        sdk::Candles { timeframe, open_time, open, high, low, close, volume }
    }
}

impl From<Context> for sdk::MarketContext {
    fn from(c: Context) -> Self {
        let Context {
            htf_tf,
            mtf_tf,
            macro_phase,
            range_position,
            liquidity_profile,
            range_high,
            range_low,
            regime,
            trend_direction,
            bos_mode,
            trend_age,
            compression_bias,
            volatile_chop,
            atr,
            priority_decision,
            no_trade_reason,
            timestamp,
        } = c;
        sdk::MarketContext {
            htf_tf,
            mtf_tf,
            macro_phase: macro_phase.into(),
            range_position: range_position.into(),
            liquidity_profile: liquidity_profile.into(),
            range_high,
            range_low,
            regime: regime.into(),
            trend_direction,
            bos_mode: bos_mode.into(),
            trend_age: trend_age.into(),
            compression_bias,
            volatile_chop,
            atr,
            priority_decision: priority_decision.into(),
            no_trade_reason,
            timestamp,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request in the host's spelling, as `GET /api/strategies/{name}/request` writes it.
    const HOST_JSON: &str = r#"{
      "now_ms": 1767225600000,
      "config": "{\"rsi_max\":40.0,\"name\":\"a \\\"quoted\\\" 7\",\"windows\":[1,-2.5e3]}",
      "symbols": [{
        "symbol": "SOLUSDT",
        "last_price": 150.12345678901234,
        "quote_volume_24h": 5000000.0,
        "candles": [{
          "timeframe": "1h",
          "open_time": [1767218400000, 1767222000000],
          "open": [0.30000000000000004, 1e-8],
          "high": [151.99999999999997, 2.5E+2],
          "low": [-0.0, null],
          "close": [149.5, 150.12345678901234],
          "volume": [1000, 17.25]
        }],
        "market_context": {
          "htf_tf": "1d", "mtf_tf": "4h", "macro_phase": "range",
          "range_position": "just_broken_up", "liquidity_profile": "equal_highs",
          "range_high": 160.5, "range_low": 140.25, "regime": "volatile_chop",
          "trend_direction": "none", "bos_mode": "quick", "trend_age": "fresh",
          "compression_bias": "none", "volatile_chop": true, "atr": 3.75,
          "priority_decision": "watch_regime_shift", "no_trade_reason": "", "timestamp": 1767225600
        }
      }],
      "reference": null,
      "state": [{"key": "last_buy:SOLUSDT", "value": "1767200000000"}]
    }"#;

    #[test]
    fn the_hosts_json_loads_exactly() {
        let r = load_request(HOST_JSON).unwrap();
        assert_eq!(r.now_ms, 1_767_225_600_000);
        let config: serde_json::Value = serde_json::from_str(&r.config).unwrap();
        assert_eq!(config["name"], "a \"quoted\" 7", "strings stay untouched");
        assert_eq!(config["windows"][1], -2500.0);
        let s = &r.symbols[0];
        let exact = |t: &str| t.parse::<f64>().unwrap().to_bits();
        assert_eq!(s.last_price.to_bits(), exact("150.12345678901234"));
        let c = &s.candles[0];
        assert_eq!(c.open_time, [1_767_218_400_000, 1_767_222_000_000]);
        assert_eq!(c.open[0].to_bits(), exact("0.30000000000000004"));
        assert_eq!((c.open[1], c.high[1], c.volume[0]), (1e-8, 250.0, 1000.0));
        assert_eq!(c.high[0].to_bits(), exact("151.99999999999997"));
        assert!(c.low[0] == 0.0 && c.low[0].is_sign_negative() && c.low[1].is_nan());
        let m = s.market_context.as_ref().unwrap();
        assert_eq!(m.macro_phase, sdk::MacroPhase::Range);
        assert_eq!(m.range_position, sdk::RangePosition::JustBrokenUp);
        assert_eq!(m.liquidity_profile, sdk::LiquidityProfile::EqualHighs);
        assert_eq!(m.regime, sdk::Regime::VolatileChop);
        assert_eq!((m.bos_mode, m.trend_age), (sdk::BosMode::Quick, sdk::TrendAge::Fresh));
        assert_eq!(m.priority_decision, sdk::PriorityDecision::WatchRegimeShift);
        assert_eq!((m.timestamp, m.volatile_chop), (1_767_225_600, true));
        assert!(r.reference.is_none());
        assert_eq!(r.state[0].key, "last_buy:SOLUSDT");
        assert_eq!(crate::state_value(&r.state, "last_buy:SOLUSDT"), Some("1767200000000"));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let err = load_request(r#"{"now_ms": 1, "config": "{}"}"#).unwrap_err();
        assert!(err.contains("symbols"), "{err}");
        let err = load_request(r#"{"now_ms": 1.5, "config": "{}", "symbols": []}"#).unwrap_err();
        assert!(err.contains("1.5"), "{err}");
        let bad_case = HOST_JSON.replace("\"quick\"", "\"Quick\"");
        assert!(load_request(&bad_case).unwrap_err().contains("Quick"));
        assert!(read_request("/no/such/fixture.json").unwrap_err().contains("cannot read"));
        assert!(load_request("[1, 2").is_err());
    }
}
