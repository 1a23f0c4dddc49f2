//! Scripted candle paths for tests; the host's integration tests reuse them.
//!
//! Each generator returns [`HOURS`] 1h candles, the last one opening at `end_ms − 1h` (so all
//! are closed at `end_ms`), enough to aggregate 120 daily candles. Tests aggregate them to the
//! coarser timeframes with `spotbot_sdk::testing::aggregate` — [`symbol_data`] does it for every
//! configured timeframe. The paths are pure arithmetic (no randomness): the same `end_ms` gives
//! the same candles on every platform. Use an `end_ms` on the 4h grid (a multiple of 4 hours
//! since the epoch) for the exact shapes described below.
//!
//! The range paths oscillate between [`SUPPORT`] and [`RESISTANCE`] (the lowest low and highest
//! high, exactly) in 20-day cycles: a double top, a slow leg down, a double bottom, a slow leg
//! up. Every 4h bar alternates up and down around that path, so the legs stay trendless (4h
//! ADX below 25) while the range is about 8 ATR wide.

use spotbot_sdk::indicators::{atr, last};
use spotbot_sdk::testing::{Rng, aggregate};
use spotbot_sdk::{
    BosMode, Candles, LiquidityProfile, MacroPhase, MarketContext, PriorityDecision, RangePosition,
    Regime, ScanRequest, SymbolData, TrendAge,
};

use crate::COUNTS;
use crate::regime::ATR_PERIOD;

/// 1h candles each generator returns: 122 days, so 120 closed daily candles exist whatever the
/// time of day of `end_ms`.
pub const HOURS: usize = 24 * 122;
/// The range paths' lowest low.
pub const SUPPORT: f64 = 95.0;
/// The range paths' highest high.
pub const RESISTANCE: f64 = 105.0;
/// Proximity of the last close to support in [`range_bounce_buy`], in ATR of the 4h candles
/// (the middle of the default zone 0.3–0.5).
pub const BOUNCE_PROXIMITY_ATR: f64 = 0.4;
/// Volume of the reversal candle in [`range_bounce_buy`] over the usual volume.
pub const BOUNCE_VOLUME_FACTOR: f64 = 1.6;

const HOUR_MS: i64 = 3_600_000;
const BLOCK_MS: i64 = 4 * HOUR_MS;
/// Blocks (4h) per range cycle: 20 days.
const CYCLE: i64 = 120;
/// Largest pseudo-random offset of a 4h close from the path.
const NOISE: f64 = 1.5;
/// Depth of the bounce between the two touches of a double top or bottom.
const BOUNCE: f64 = 1.5;
/// Wick beyond each 1h candle's body.
const WICK: f64 = 0.05;
/// Base volume of a 1h candle.
const VOLUME: f64 = 1_000.0;

/// Cycle positions (4h blocks) of the exact touches: a double top ...
const TOPS: [i64; 2] = [1, 9];
/// ... and a double bottom whose second touch is where [`range_bounce_buy`] ends.
const BOTTOMS: [i64; 2] = [52, 86];

/// The range path's 4h close at a cycle position (in 4h blocks): exactly [`RESISTANCE`] at
/// [`TOPS`] and exactly [`SUPPORT`] at [`BOTTOMS`]; elsewhere a line between waypoints plus a
/// fixed pseudo-random offset of up to ±`NOISE` per position, the same in every cycle (so all
/// cycles are identical and the daily swings equal). The shape: double top with a bounce,
/// a base under the top, a fast leg down, a long base above support (where the 4h ADX settles
/// below 25), the second bottom, a leg up.
fn range_close(position: i64) -> f64 {
    const R: f64 = RESISTANCE;
    const S: f64 = SUPPORT;
    const POINTS: [(f64, f64); 8] = [
        (1.0, R - NOISE),
        (5.0, R - NOISE - BOUNCE),
        (9.0, R - NOISE),
        (13.0, R - NOISE - 1.0),
        (25.0, R - NOISE - 1.0),
        (50.0, S + NOISE + 0.5),
        (84.0, S + NOISE + 0.5),
        (121.0, R - NOISE),
    ];
    let p = position.rem_euclid(CYCLE);
    if TOPS.contains(&p) {
        return R;
    }
    if BOTTOMS.contains(&p) {
        return S;
    }
    let x = if p < 1 { (p + CYCLE) as f64 } else { p as f64 };
    let mut level = POINTS[POINTS.len() - 1].1;
    for w in POINTS.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if x <= x1 {
            level = y0 + (y1 - y0) * (x - x0) / (x1 - x0);
            break;
        }
    }
    level + NOISE * Rng::new(p as u64).next_signed()
}

/// Builds [`HOURS`] 1h candles ending at `end_ms` from the close of each 4h block, given as a
/// function of the block's index relative to the last block (0, −1, ...). Within a block the
/// hourly closes walk linearly from the previous block's close to this one; each candle gets a
/// small wick; prices are clamped into `clamp` when given.
fn from_blocks(
    end_ms: i64,
    block_close: impl Fn(i64) -> f64,
    clamp: Option<(f64, f64)>,
) -> Candles {
    let last_block = (end_ms - 1).div_euclid(BLOCK_MS);
    let mut c = Candles {
        timeframe: "1h".to_string(),
        open_time: Vec::with_capacity(HOURS),
        open: Vec::with_capacity(HOURS),
        high: Vec::with_capacity(HOURS),
        low: Vec::with_capacity(HOURS),
        close: Vec::with_capacity(HOURS),
        volume: Vec::with_capacity(HOURS),
    };
    for i in 0..HOURS {
        let t = end_ms - (HOURS - i) as i64 * HOUR_MS;
        let block = t.div_euclid(BLOCK_MS);
        let r = block - last_block;
        let j = (t - block * BLOCK_MS) / HOUR_MS;
        let (from, to) = (block_close(r - 1), block_close(r));
        let open = from + (to - from) * j as f64 / 4.0;
        let close = from + (to - from) * (j + 1) as f64 / 4.0;
        let (mut high, mut low) = (open.max(close) + WICK, open.min(close) - WICK);
        if let Some((lo, hi)) = clamp {
            high = high.min(hi);
            low = low.max(lo);
        }
        c.open_time.push(t);
        c.open.push(open);
        c.high.push(high);
        c.low.push(low);
        c.close.push(close);
        // A mild deterministic pattern around the base volume (mean 1.0 × VOLUME).
        c.volume.push(VOLUME * (0.9 + 0.05 * (i % 5) as f64));
    }
    c
}

/// Overwrites the candle `back` places before the end (1 = the last) with the given prices,
/// widening high and low to contain open and close.
fn set_candle(c: &mut Candles, back: usize, open: f64, high: f64, low: f64, close: f64) {
    let i = c.len() - back;
    c.open[i] = open;
    c.high[i] = high.max(open).max(close);
    c.low[i] = low.min(open).min(close);
    c.close[i] = close;
}

/// ATR(14) of the closed 4h candles the plugin would see at `end_ms` (the default count).
fn atr_4h(one_hour: &Candles, end_ms: i64) -> f64 {
    let h4 = aggregate(one_hour, "4h");
    let closed = h4.open_time.iter().take_while(|&&t| t + BLOCK_MS <= end_ms).count();
    let from = closed.saturating_sub(COUNTS[1] as usize);
    let s = from..closed;
    last(&atr(&h4.high[s.clone()], &h4.low[s.clone()], &h4.close[s], ATR_PERIOD)).unwrap_or(1.0)
}

/// A clean sideways range ([`SUPPORT`]–[`RESISTANCE`], two touches of each edge within the
/// last 120 4h bars) whose price came down to support: the last three 1h candles test it (lows
/// 0.06–0.10 above it) and the last one reverses up, closing [`BOUNCE_PROXIMITY_ATR`] ATR (4h)
/// above support on [`BOUNCE_VOLUME_FACTOR`] × the usual volume. With the default config and
/// a `standby` or `trade_long` context this is a buy.
pub fn range_bounce_buy(end_ms: i64) -> Candles {
    let mut c = from_blocks(end_ms, |r| range_close(BOTTOMS[1] + r), Some((SUPPORT, RESISTANCE)));
    let before = c.close[c.len() - 5];
    let s = SUPPORT;
    set_candle(&mut c, 4, before, before + WICK, s + 0.25, s + 0.30);
    set_candle(&mut c, 3, s + 0.30, s + 0.32, s + 0.10, s + 0.15);
    set_candle(&mut c, 2, s + 0.15, s + 0.17, s + 0.06, s + 0.12);
    // The reversal: its close is placed once the 4h ATR of the finished path is known (moving
    // the close changes that ATR by far less than the 0.1 ATR of slack in the entry zone).
    set_candle(&mut c, 1, s + 0.12, s + 0.5, s + 0.08, s + 0.45);
    let close = s + BOUNCE_PROXIMITY_ATR * atr_4h(&c, end_ms);
    set_candle(&mut c, 1, s + 0.12, close + 0.02, s + 0.08, close);
    let n = c.len();
    c.volume[n - 1] = BOUNCE_VOLUME_FACTOR * VOLUME;
    c
}

/// [`range_bounce_buy`] mirrored around the midline (every price `p` becomes
/// `SUPPORT + RESISTANCE − p`): price came up to resistance and the last closed 1h candle
/// rejects it downwards, [`BOUNCE_PROXIMITY_ATR`] ATR below resistance on higher volume. With
/// the default config and a `standby` or `trade_short` context this is a sell.
pub fn range_rejection_sell(end_ms: i64) -> Candles {
    let mut c = range_bounce_buy(end_ms);
    let axis = SUPPORT + RESISTANCE;
    let (high, low) = (c.high.clone(), c.low.clone());
    for i in 0..c.len() {
        c.open[i] = axis - c.open[i];
        c.close[i] = axis - c.close[i];
        c.high[i] = axis - low[i];
        c.low[i] = axis - high[i];
    }
    c
}

/// A steady uptrend: 82 days of the range, then 40 days rising 0.3 per 4h bar with the same
/// ±1.5 noise (4h ADX about 70, the daily close above its 50-day range). Never a signal: the
/// regime gate fails.
pub fn strong_trend(end_ms: i64) -> Candles {
    const TREND_BLOCKS: i64 = 40 * 6;
    const TREND_STEP: f64 = 0.3;
    let start = range_close(BOTTOMS[1] - TREND_BLOCKS);
    let path = |r: i64| {
        let since = r + TREND_BLOCKS;
        if since <= 0 {
            range_close(BOTTOMS[1] + r)
        } else {
            start + TREND_STEP * since as f64 + NOISE * Rng::new(since as u64).next_signed()
        }
    };
    from_blocks(end_ms, path, None)
}

/// The range, but the last two days thrash: 1h candles alternate ±3 (about ten times the usual
/// 1h range) with no net progress, in the lower half of the range. The 4h regime stays
/// trendless; the 1h volatile-chop check fails.
pub fn volatile_chop(end_ms: i64) -> Candles {
    const CHOP_HOURS: usize = 48;
    // End in the base above support, where the 4h ADX is low.
    const CHOP_END: i64 = 78;
    let mut c = from_blocks(end_ms, |r| range_close(CHOP_END + r), Some((SUPPORT, RESISTANCE)));
    let n = c.len();
    let level = c.close[n - CHOP_HOURS - 1];
    for k in 0..CHOP_HOURS {
        let i = n - CHOP_HOURS + k;
        let (open, close) = if k % 2 == 0 { (level, level + 3.0) } else { (level + 3.0, level) };
        c.open[i] = open;
        c.close[i] = close;
        c.high[i] = open.max(close) + WICK;
        c.low[i] = open.min(close) - WICK;
    }
    c
}

/// The request data of one symbol built from 1h candles: for each configured timeframe the
/// aggregate of `one_hour` (see `spotbot_sdk::testing::aggregate`), cut to the last `count`
/// candles (`counts[i]` for `timeframes[i]`; a missing count keeps all). Last price = last 1h
/// close; 24 h quote volume = Σ close × volume of the last 24 1h candles.
pub fn symbol_data(
    symbol: &str,
    one_hour: &Candles,
    timeframes: &[String],
    counts: &[u32],
    context: Option<MarketContext>,
) -> SymbolData {
    let candles = timeframes
        .iter()
        .enumerate()
        .map(|(i, tf)| {
            let mut c = aggregate(one_hour, tf);
            let keep = counts.get(i).map_or(c.len(), |&n| n as usize);
            let from = c.len().saturating_sub(keep);
            for col in [&mut c.open, &mut c.high, &mut c.low, &mut c.close, &mut c.volume] {
                col.drain(..from);
            }
            c.open_time.drain(..from);
            c
        })
        .collect();
    let n = one_hour.len();
    let day = n.saturating_sub(24)..n;
    let quote_volume_24h =
        one_hour.close[day.clone()].iter().zip(&one_hour.volume[day]).map(|(c, v)| c * v).sum();
    SymbolData {
        symbol: symbol.to_string(),
        last_price: one_hour.close.last().copied().unwrap_or(0.0),
        quote_volume_24h,
        candles,
        market_context: context,
    }
}

/// [`symbol_data`] with the default timeframes and the manifest's counts.
pub fn default_symbol_data(
    symbol: &str,
    one_hour: &Candles,
    context: Option<MarketContext>,
) -> SymbolData {
    let timeframes = crate::Config::default().timeframes;
    symbol_data(symbol, one_hour, &timeframes, &COUNTS, context)
}

/// A market context with the given decision and neutral, range-like fields (1d/4h, macro
/// range, position low, sideway regime, no chop). `no_trade_reason` is empty.
pub fn market_context(decision: PriorityDecision) -> MarketContext {
    MarketContext {
        htf_tf: "1d".into(),
        mtf_tf: "4h".into(),
        macro_phase: MacroPhase::Range,
        range_position: RangePosition::Low,
        liquidity_profile: LiquidityProfile::Clean,
        range_high: RESISTANCE,
        range_low: SUPPORT,
        regime: Regime::Sideway,
        trend_direction: "none".into(),
        bos_mode: BosMode::None,
        trend_age: TrendAge::None,
        compression_bias: "none".into(),
        volatile_chop: false,
        atr: 1.0,
        priority_decision: decision,
        no_trade_reason: String::new(),
        timestamp: 0,
    }
}

/// A scan request at `now_ms` with `config` (JSON text) over `symbols`, no reference, no state.
pub fn request(now_ms: i64, config: &str, symbols: Vec<SymbolData>) -> ScanRequest {
    spotbot_sdk::testing::scan_request(now_ms, config, symbols)
}
