//! Deterministic synthetic market data for strategy tests and benchmarks, and fixtures from a
//! running host.
//!
//! The same seed always gives bit-identical candles on every platform (a xorshift generator
//! and plain f64 arithmetic, no `exp`/`ln`), so a native test, a Wasm run and a benchmark can
//! share inputs.
//!
//! [`contract`] holds the contract tests every plugin crate runs ([`crate::contract_tests!`]).
//!
//! [`read_request`] / [`load_request`] load the JSON of `GET /api/strategies/{name}/request`
//! (the exact request the host would send the plugin now) as a [`ScanRequest`]:
//!
//! ```no_run
//! # struct MyStrategy;
//! # impl spotbot_sdk::Strategy for MyStrategy {
//! #     fn describe() -> spotbot_sdk::Manifest { unimplemented!() }
//! #     fn scan(_: spotbot_sdk::ScanRequest)
//! #         -> Result<spotbot_sdk::ScanResponse, spotbot_sdk::ScanError> { unimplemented!() }
//! # }
//! use spotbot_sdk::Strategy as _;
//! // curl 'http://127.0.0.1:8000/api/strategies/my_strategy/request?symbols=SOLUSDT' \
//! //     > tests/fixtures/sol.json
//! let request = spotbot_sdk::testing::read_request("tests/fixtures/sol.json").unwrap();
//! let response = MyStrategy::scan(request).unwrap();
//! ```

pub mod contract;
mod fixture;

pub use fixture::{load_request, read_request};

use crate::{CandleNeed, Candles, ScanRequest, ScanResult, SymbolData};

/// A small xorshift64* generator.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next value, uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The next value, uniform in [-1, 1).
    pub fn next_signed(&mut self) -> f64 {
        self.next_f64() * 2.0 - 1.0
    }
}

pub use crate::candles::timeframe_ms;

/// No candles of `timeframe`, with room for `capacity` in every column.
fn empty(timeframe: &str, capacity: usize) -> Candles {
    Candles {
        timeframe: timeframe.to_string(),
        open_time: Vec::with_capacity(capacity),
        open: Vec::with_capacity(capacity),
        high: Vec::with_capacity(capacity),
        low: Vec::with_capacity(capacity),
        close: Vec::with_capacity(capacity),
        volume: Vec::with_capacity(capacity),
    }
}

/// `count` candles of `timeframe` ending just before `end_ms`, a random walk from `start_price`
/// with a slight drift (`drift` per candle, e.g. 0.001) and ~1 % moves.
pub fn candles(
    seed: u64,
    timeframe: &str,
    count: usize,
    start_price: f64,
    drift: f64,
    end_ms: i64,
) -> Candles {
    let step = timeframe_ms(timeframe).unwrap_or(3_600_000);
    let mut rng = Rng::new(seed);
    let mut c = empty(timeframe, count);
    let mut price = start_price;
    for i in 0..count {
        let open = price;
        let close = open * (1.0 + drift + 0.01 * rng.next_signed());
        let high = open.max(close) * (1.0 + 0.004 * rng.next_f64());
        let low = open.min(close) * (1.0 - 0.004 * rng.next_f64());
        c.open_time.push(end_ms - (count - i) as i64 * step);
        c.open.push(open);
        c.high.push(high);
        c.low.push(low);
        c.close.push(close);
        c.volume.push(1_000.0 * (0.5 + rng.next_f64()));
        price = close;
    }
    c
}

/// Aggregates candles of a finer timeframe into `timeframe` (e.g. 1h into 4h or 1d): open of
/// the first candle of each bucket, highest high, lowest low, close of the last, summed volume.
///
/// Buckets sit on the exchange's grid: multiples of the timeframe since the epoch (UTC), except
/// `1w`, whose buckets start on Monday 00:00 UTC. A leading bucket that the input enters late
/// is dropped (its open, high and low would be wrong); the trailing bucket is kept even when
/// incomplete, like an exchange's still-forming candle. The result is empty (with `timeframe`
/// set) when either timeframe is unknown, `timeframe` is not a whole multiple of the input's,
/// or the input's columns differ in length.
pub fn aggregate(c: &Candles, timeframe: &str) -> Candles {
    let mut out = empty(timeframe, 0);
    let (Some(src), Some(dst)) = (timeframe_ms(&c.timeframe), timeframe_ms(timeframe)) else {
        return out;
    };
    if src <= 0 || dst < src || dst % src != 0 || !c.is_consistent() {
        return out;
    }
    // 1970-01-01 was a Thursday; weekly candles start on Monday, four days later.
    let offset = if timeframe == "1w" { 4 * 86_400_000 } else { 0 };
    let bucket_of = |t: i64| (t - offset).div_euclid(dst) * dst + offset;
    for i in 0..c.len() {
        let bucket = bucket_of(c.open_time[i]);
        if out.open_time.last() == Some(&bucket) {
            let k = out.len() - 1;
            out.high[k] = out.high[k].max(c.high[i]);
            out.low[k] = out.low[k].min(c.low[i]);
            out.close[k] = c.close[i];
            out.volume[k] += c.volume[i];
        } else if out.is_empty() && c.open_time[i] != bucket {
            // The input starts inside this bucket: skip until the next one begins.
            continue;
        } else {
            out.open_time.push(bucket);
            out.open.push(c.open[i]);
            out.high.push(c.high[i]);
            out.low.push(c.low[i]);
            out.close.push(c.close[i]);
            out.volume.push(c.volume[i]);
        }
    }
    out
}

/// Market data of one symbol with the candles of every `needs` entry (seeds derived from
/// `seed`), last price = last close, 24 h quote volume 5 M.
pub fn symbol(
    symbol: &str,
    seed: u64,
    needs: &[CandleNeed],
    drift: f64,
    now_ms: i64,
) -> SymbolData {
    let candles: Vec<Candles> = needs
        .iter()
        .enumerate()
        .map(|(i, n)| {
            candles(seed * 31 + i as u64, &n.timeframe, n.count as usize, 100.0, drift, now_ms)
        })
        .collect();
    around(symbol, candles, 100.0)
}

/// A request over `symbols` synthetic symbols named `SYM0USDT`, `SYM1USDT`, ... with the
/// candles `needs` asks for.
pub fn request(needs: &[CandleNeed], symbols: usize, config: &str, now_ms: i64) -> ScanRequest {
    ScanRequest {
        now_ms,
        config: config.to_string(),
        symbols: (0..symbols)
            .map(|i| {
                let drift = 0.0005 * ((i % 5) as f64 - 2.0);
                symbol(&format!("SYM{i}USDT"), i as u64 + 1, needs, drift, now_ms)
            })
            .collect(),
        reference: None,
        state: Vec::new(),
    }
}

/// A scripted candle path from a list of closes, for scenario tests: each candle opens at the
/// previous close, wicks reach a pseudo-random fraction of `wick` beyond the body (so highs and
/// lows overlap like a real market's and ADX/ATR take realistic values), and volume follows a
/// mild repeating pattern around `volume`. Pure arithmetic from a seeded [`Rng`]: the same
/// closes and `end_ms` give bit-identical candles on every platform, natively and in Wasm.
///
/// ```
/// use spotbot_sdk::testing::FromCloses;
/// let path = FromCloses { timeframe: "1h", first_open: Some(100.0), wick: 0.003, seed: 7, volume: 1_000.0 };
/// let c = path.candles(&[101.0, 100.5, 102.0], 1_767_225_600_000);
/// assert_eq!((c.len(), c.open[1], c.close[2]), (3, 101.0, 102.0));
/// assert_eq!(c.open_time[2], 1_767_225_600_000 - 3_600_000, "all closed at end_ms");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FromCloses<'a> {
    /// The candles' timeframe (an unknown one spaces them by an hour).
    pub timeframe: &'a str,
    /// Open of the first candle; `None`: the first close (a candle without body).
    pub first_open: Option<f64>,
    /// Largest wick beyond the body, relative to the price (e.g. 0.003).
    pub wick: f64,
    /// Seed of the wicks' [`Rng`].
    pub seed: u64,
    /// Ordinary volume: candle `i` trades `volume × (0.9 + 0.05 × (i mod 5))`.
    pub volume: f64,
}

impl FromCloses<'_> {
    /// One candle per close, the last one opening one timeframe before `end_ms` (so every
    /// candle is closed at `end_ms`).
    pub fn candles(&self, closes: &[f64], end_ms: i64) -> Candles {
        let n = closes.len();
        let step = timeframe_ms(self.timeframe).unwrap_or(3_600_000);
        let mut c = empty(self.timeframe, n);
        let mut rng = Rng::new(self.seed);
        let mut open = self.first_open.or(closes.first().copied()).unwrap_or(0.0);
        for (i, &close) in closes.iter().enumerate() {
            c.open_time.push(end_ms - (n - i) as i64 * step);
            c.open.push(open);
            c.high.push(open.max(close) * (1.0 + self.wick * rng.next_f64()));
            c.low.push(open.min(close) * (1.0 - self.wick * rng.next_f64()));
            c.close.push(close);
            c.volume.push(self.volume * (0.9 + 0.05 * (i % 5) as f64));
            open = close;
        }
        c
    }
}

/// The market data of one symbol around given candles: last price = the last close of the
/// first series (0 without candles), 24 h quote volume 5 M, no market context.
pub fn symbol_data(symbol: &str, candles: Vec<Candles>) -> SymbolData {
    around(symbol, candles, 0.0)
}

/// [`symbol_data`] with `no_price` as the last price when there is no close.
fn around(symbol: &str, candles: Vec<Candles>, no_price: f64) -> SymbolData {
    let last_price = candles.first().and_then(|c| c.close.last().copied()).unwrap_or(no_price);
    SymbolData {
        symbol: symbol.to_string(),
        last_price,
        quote_volume_24h: 5_000_000.0,
        candles,
        market_context: None,
    }
}

/// A request at `now_ms` with `config` (JSON text) over `symbols`: no reference, no state.
pub fn scan_request(now_ms: i64, config: &str, symbols: Vec<SymbolData>) -> ScanRequest {
    ScanRequest { now_ms, config: config.to_string(), symbols, reference: None, state: Vec::new() }
}

/// The host's checks of one scan result (`host/src/plugins/validate.rs`, `response`), minus
/// those that need the manifest and request (bot name, scanned symbols, duplicates): price,
/// `sl_pct` and `tp_pct` finite and ≥ 0, every optional number finite, confidence 0..=10, and
/// `passed` ≤ `total` = the checklist's length. A result the host would refuse fails the whole
/// scan, so a native test should assert this on every result; `Err` names the field like the
/// host does.
pub fn validate_result(r: &ScanResult) -> Result<(), String> {
    let symbol = &r.symbol;
    for (field, value) in [("price", r.price), ("sl_pct", r.sl_pct), ("tp_pct", r.tp_pct)] {
        if !value.is_finite() || value < 0.0 {
            return Err(format!(
                "result for {symbol}: {field} is {value}; it must be a finite number >= 0"
            ));
        }
    }
    let optional = [
        ("ev", r.ev),
        ("tp1_pct", r.tp1_pct),
        ("tp2_pct", r.tp2_pct),
        ("range_support", r.range_support),
        ("range_resistance", r.range_resistance),
        ("range_midline", r.range_midline),
        ("rsi", r.rsi),
        ("macd_hist", r.macd_hist),
        ("bb_lower", r.bb_lower),
        ("bb_upper", r.bb_upper),
        ("bb_mid", r.bb_mid),
        ("vol_ratio", r.vol_ratio),
        ("adx", r.adx),
        ("stoch_k", r.stoch_k),
    ];
    for (field, value) in optional {
        if let Some(value) = value.filter(|v| !v.is_finite()) {
            return Err(format!(
                "result for {symbol}: {field} is {value}; it must be a finite number"
            ));
        }
    }
    if let Some(confidence) = r.confidence.filter(|c| *c > 10) {
        return Err(format!("result for {symbol}: confidence is {confidence}; it must be 0..=10"));
    }
    if r.passed > r.total || r.total as usize != r.checklist.len() {
        return Err(format!(
            "result for {symbol}: passed {} / total {} do not match a checklist of {}",
            r.passed,
            r.total,
            r.checklist.len()
        ));
    }
    Ok(())
}

/// Scans one symbol with strategy `S` at `now_ms` under `config` and returns its one result,
/// after the host's checks of it ([`validate_result`]); panics when the scan fails or answers
/// anything else. The first line of most scenario tests.
pub fn scan_one<S: crate::Strategy>(now_ms: i64, config: &str, data: SymbolData) -> ScanResult {
    let symbol = data.symbol.clone();
    let response = S::scan(scan_request(now_ms, config, vec![data]))
        .unwrap_or_else(|e| panic!("scan of {symbol} failed: {e:?}"));
    let [result]: [ScanResult; 1] = response
        .results
        .try_into()
        .unwrap_or_else(|r: Vec<ScanResult>| panic!("{} results for one symbol: {r:#?}", r.len()));
    assert_eq!(result.symbol, symbol, "the result is for another symbol");
    validate_result(&result).unwrap_or_else(|why| panic!("{why}: {result:#?}"));
    result
}

/// Applies state updates to a state list the way the host does (in order, then sorted by key),
/// so native tests can carry a plugin's memory from one scan to the next.
pub fn apply_state(state: &mut Vec<crate::StateEntry>, updates: &[crate::StateUpdate]) {
    use crate::StateUpdate;
    for u in updates {
        match u {
            StateUpdate::Set(e) => {
                state.retain(|x| x.key != e.key);
                state.push(e.clone());
            }
            StateUpdate::Remove(k) => state.retain(|x| &x.key != k),
            StateUpdate::Clear => state.clear(),
        }
    }
    state.sort_by(|a, b| a.key.cmp(&b.key));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_consistent() {
        let a = candles(7, "1h", 50, 100.0, 0.0, 1_700_000_000_000);
        let b = candles(7, "1h", 50, 100.0, 0.0, 1_700_000_000_000);
        assert_eq!(a, b);
        assert!(a.is_consistent() && a.len() == 50);
        assert_eq!(a.open_time[1] - a.open_time[0], 3_600_000);
        assert!(a.high.iter().zip(&a.low).all(|(h, l)| h >= l));
        assert_ne!(a, candles(8, "1h", 50, 100.0, 0.0, 1_700_000_000_000));
        assert_eq!(timeframe_ms("15m"), Some(900_000));
        assert_eq!(timeframe_ms("x"), None);
        assert_eq!(timeframe_ms(""), None);
    }

    #[test]
    fn from_closes_scripts_a_path() {
        let end = 1_767_225_600_000;
        let path =
            FromCloses { timeframe: "4h", first_open: None, wick: 0.01, seed: 3, volume: 10.0 };
        let c = path.candles(&[50.0, 55.0, 52.0, 52.0, 60.0, 61.0], end);
        assert!(c.is_consistent() && c.len() == 6);
        assert_eq!(c.open[..2], [50.0, 50.0], "no first_open: the first candle has no body");
        assert_eq!(c.open_time[5], end - 4 * 3_600_000);
        assert!((0..6).all(|i| c.high[i] >= c.open[i].max(c.close[i])));
        assert!((0..6).all(|i| c.low[i] <= c.open[i].min(c.close[i])));
        assert!((0..6).all(|i| c.high[i] <= c.open[i].max(c.close[i]) * 1.01));
        assert_eq!(c.volume, [9.0, 9.5, 10.0, 10.5, 11.0, 9.0]);
        assert_eq!(c, path.candles(&[50.0, 55.0, 52.0, 52.0, 60.0, 61.0], end));
        assert_eq!(c.closed(end, 6).map(|b| b.len()), Ok(6));
    }

    #[test]
    fn symbol_request_and_the_hosts_result_checks() {
        let c = candles(1, "1h", 3, 100.0, 0.0, 0);
        let data = symbol_data("X", vec![c.clone()]);
        assert_eq!(data.last_price, c.close[2]);
        assert_eq!(symbol_data("Y", vec![]).last_price, 0.0);
        let req = scan_request(5, "{}", vec![data]);
        assert_eq!((req.now_ms, req.symbols.len(), req.config.as_str()), (5, 1, "{}"));

        let mut r = ScanResult::new("X", "mine", crate::Direction::Skip, 1.0);
        assert_eq!(validate_result(&r), Ok(()));
        r.rsi = Some(f64::NAN);
        assert_eq!(
            validate_result(&r).unwrap_err(),
            "result for X: rsi is NaN; it must be a finite number"
        );
        r.rsi = None;
        r.sl_pct = -1.0;
        assert!(validate_result(&r).unwrap_err().contains("sl_pct is -1"));
        r.sl_pct = 1.0;
        r.confidence = Some(11);
        assert!(validate_result(&r).unwrap_err().contains("confidence is 11"));
        r.confidence = Some(10);
        r.passed = 1;
        assert!(validate_result(&r).unwrap_err().contains("passed 1 / total 0"));
    }

    #[test]
    fn aggregate_buckets_on_the_grid() {
        // 1h candles from 02:00 to 13:00 UTC on 2026-01-01 (a Thursday); 4h grid 00, 04, 08, 12.
        let day = 1_767_225_600_000;
        let h = 3_600_000;
        let mut c = candles(3, "1h", 12, 100.0, 0.0, day + 14 * h);
        assert_eq!(c.open_time[0], day + 2 * h);
        c.volume = (1..=12).map(f64::from).collect();
        let a = aggregate(&c, "4h");
        assert_eq!(a.timeframe, "4h");
        // 00:00 bucket entered late (dropped); 04:00 and 08:00 full; 12:00 partial (kept).
        assert_eq!(a.open_time, vec![day + 4 * h, day + 8 * h, day + 12 * h]);
        assert_eq!(a.open[0], c.open[2]);
        assert_eq!(a.close[0], c.close[5]);
        assert_eq!(a.high[0], c.high[2..6].iter().copied().fold(f64::MIN, f64::max));
        assert_eq!(a.low[1], c.low[6..10].iter().copied().fold(f64::MAX, f64::min));
        assert_eq!(a.volume, vec![3.0 + 4.0 + 5.0 + 6.0, 7.0 + 8.0 + 9.0 + 10.0, 11.0 + 12.0]);
        assert_eq!(a.close[2], c.close[11]);
        assert!(a.is_consistent());
        // Same timeframe: a copy. Finer, unknown or non-multiple target: empty.
        assert_eq!(aggregate(&c, "1h"), c);
        assert!(aggregate(&c, "15m").is_empty());
        assert!(aggregate(&c, "7x").is_empty());
        assert!(aggregate(&candles(1, "3h", 10, 1.0, 0.0, day), "4h").is_empty());
        // Weeks start on Monday 2026-01-05.
        let d = candles(4, "1d", 14, 100.0, 0.0, day + 14 * 24 * h);
        let w = aggregate(&d, "1w");
        assert_eq!(w.open_time, vec![day + 4 * 24 * h, day + 11 * 24 * h]);
        assert_eq!(w.open[0], d.open[4]);
        assert_eq!(w.close[1], d.close[13]);
    }
}
