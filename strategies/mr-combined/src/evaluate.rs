//! One symbol through the gates, in the spec's order. The first failing required gate ends the
//! evaluation: the result is a `skip` whose reason is the gate's name and the failing line's
//! detail, and whose checklist holds every line evaluated so far.

use spotbot_sdk::indicators::{self as ind, last};
use spotbot_sdk::{Checklist, Direction, ScanError, ScanResult, SymbolData};

use crate::config::Settings;
use crate::data::{self, Bars};
use crate::entry::{self, RSI_PERIOD};
use crate::line::{Line, Side};
use crate::range::{RANGE_BARS, Range};
use crate::regime::{
    self, ADX_PERIOD, ATR_PERIOD, Chop, MACRO_BREAK_BARS, MACRO_RANGE_BARS, Macro,
};
use crate::targets::Targets;
use crate::{NAME, context, tier, windows};

/// Closed candles each role needs before any rule runs (the manifest asks for more; the host
/// sends fewer when the exchange has less history):
/// - macro: the dealing range plus the break bars, plus a few bars for the swings;
/// - regime: the range window plus ADX's lookback (2 × period), so the median ADX covers the
///   whole window;
/// - entry: ATR's median and the volume mean need a real sample.
pub const MIN_CLOSED: [usize; 3] =
    [MACRO_RANGE_BARS + MACRO_BREAK_BARS + 7, RANGE_BARS + 2 * ADX_PERIOD + 2, 100];

/// Why the gates stopped: a per-symbol skip with its reason, or an error of the whole scan.
enum Stop {
    Skip(String),
    Error(ScanError),
}

impl From<ScanError> for Stop {
    fn from(e: ScanError) -> Self {
        Stop::Error(e)
    }
}

/// The result being built and its checklist.
struct Run {
    result: ScanResult,
    checklist: Checklist,
}

impl Run {
    /// Adds the lines of one gate (all of them, so the checklist shows every number the gate
    /// looked at); stops with `"<gate>: <detail of the first failing line>"` if one fails.
    fn gate(&mut self, gate: &str, lines: Vec<Line>) -> Result<(), Stop> {
        let failed = lines.iter().find(|l| !l.pass).map(|l| format!("{gate}: {}", l.detail));
        for l in lines {
            self.checklist.check(l.name, l.pass, l.detail);
        }
        failed.map_or(Ok(()), |reason| Err(Stop::Skip(reason)))
    }
}

/// Evaluates one symbol. `Err` only for data the host must always send (a timeframe missing
/// altogether); everything else about a symbol ends in a result, a `skip` with a reason when a
/// gate fails.
pub fn evaluate(
    settings: &Settings,
    data: &SymbolData,
    now_ms: i64,
) -> Result<ScanResult, ScanError> {
    // The host refuses a result whose price is not a finite number >= 0; a bad last price is
    // reported as 0 with a `data` skip below.
    let price = Some(data.last_price).filter(|p| p.is_finite() && *p >= 0.0).unwrap_or(0.0);
    let mut run = Run {
        result: ScanResult::new(&data.symbol, NAME, Direction::Skip, price),
        checklist: Checklist::new(),
    };
    match run.gates(settings, data, now_ms) {
        Ok(()) => {}
        Err(Stop::Skip(reason)) => {
            run.result.direction = Direction::Skip;
            run.result.tier = None;
            run.result.reason = Some(reason);
        }
        Err(Stop::Error(e)) => return Err(e),
    }
    Ok(sanitize(run.result.with_checklist(run.checklist)))
}

/// Extreme inputs (prices near f64::MAX, volumes of 1e300) can overflow an indicator to
/// infinity; the host refuses a response with a non-finite number, which would fail the whole
/// scan. Such a value is dropped (optional fields) or zeroed (stop/target), and a signal with
/// any such value is not given.
fn sanitize(mut r: ScanResult) -> ScanResult {
    let mut clean = r.sl_pct.is_finite() && r.tp_pct.is_finite();
    r.sl_pct = if r.sl_pct.is_finite() { r.sl_pct.max(0.0) } else { 0.0 };
    r.tp_pct = if r.tp_pct.is_finite() { r.tp_pct.max(0.0) } else { 0.0 };
    for field in [
        &mut r.tp1_pct,
        &mut r.tp2_pct,
        &mut r.range_support,
        &mut r.range_resistance,
        &mut r.range_midline,
        &mut r.rsi,
        &mut r.vol_ratio,
        &mut r.adx,
    ] {
        if field.is_some_and(|v| !v.is_finite()) {
            *field = None;
            clean = false;
        }
    }
    if !clean && r.direction != Direction::Skip {
        r.direction = Direction::Skip;
        r.tier = None;
        r.reason = Some("data: a computed value is not finite".to_string());
    }
    r
}

impl Run {
    fn gates(&mut self, settings: &Settings, data: &SymbolData, now_ms: i64) -> Result<(), Stop> {
        let config = settings.config();
        let price = data.last_price;

        // Gate 1: news blackout, from the request's clock only.
        let blackout = match windows::blocking(settings.windows(), now_ms) {
            Some(w) => Line::new(
                "news_blackout",
                false,
                format!("{} covers now ({})", w.label(), windows::time_of_day(now_ms)),
            ),
            None => Line::new(
                "news_blackout",
                true,
                format!("no window covers now ({})", windows::time_of_day(now_ms)),
            ),
        };
        self.gate("news_blackout", vec![blackout])?;

        // Data: closed, finite candles of every role (a missing timeframe is a scan error).
        let tfs = [settings.macro_tf(), settings.regime_tf(), settings.entry_tf()];
        let mut roles = Vec::with_capacity(3);
        for (tf, min) in tfs.iter().zip(MIN_CLOSED) {
            roles.push(
                data::closed_bars(data, tf, now_ms, min)?
                    .map_err(|why| Stop::Skip(format!("data: {why}")))?,
            );
        }
        let [macro_bars, regime_bars, entry_bars]: [Bars; 3] = roles
            .try_into()
            .map_err(|_| ScanError::Failed("internal: three roles expected".into()))?;
        if !(price.is_finite() && price > 0.0) {
            return Err(Stop::Skip(format!("data: last price {price} is not a positive number")));
        }

        // Indicators, each over the whole closed series (Wilder indicators depend on history).
        let (rh, rl, rc) = (&regime_bars.high, &regime_bars.low, &regime_bars.close);
        let atr =
            last(&ind::atr(rh, rl, rc, ATR_PERIOD)).filter(|a| *a > 0.0).ok_or_else(|| {
                Stop::Skip(format!(
                    "data: {} ATR({ATR_PERIOD}) is zero or undefined",
                    settings.regime_tf()
                ))
            })?;
        let adx_series = ind::adx(rh, rl, rc, ADX_PERIOD);
        let adx = last(&adx_series);
        let entry_atr = ind::atr(&entry_bars.high, &entry_bars.low, &entry_bars.close, ATR_PERIOD);
        let vol_ratio = entry::turn_volume_ratio(&entry_bars.volume);
        let rsi = last(&ind::rsi(&entry_bars.close, RSI_PERIOD));
        let range = Range::measure(&regime_bars, atr, &adx_series);
        let side = range.side(price);
        let r = &mut self.result;
        r.adx = adx;
        r.vol_ratio = vol_ratio;
        r.rsi = rsi;
        r.range_support = Some(range.support);
        r.range_resistance = Some(range.resistance);
        r.range_midline = Some(range.midline());

        // Gate 2: multi-timeframe regime (macro, trend, chop).
        let macro_line = match Macro::read(&macro_bars) {
            Some(m) => m.line(settings.macro_tf(), side),
            None => {
                Line::new("regime_macro", false, format!("{} macro range n/a", settings.macro_tf()))
            }
        };
        let chop_line = match Chop::read(&entry_bars, &entry_atr) {
            Some(c) => c.line(settings.entry_tf()),
            None => Line::new("regime_chop", false, format!("{} ATR n/a", settings.entry_tf())),
        };
        self.gate(
            "regime",
            vec![macro_line, regime::trend_line(settings.regime_tf(), adx), chop_line],
        )?;

        // Gate 3: the range (width, trendless span, touches).
        self.gate(
            "range",
            range.lines(settings.regime_tf(), config.range_min_atr_multiplier, side),
        )?;

        // Gate 4: entry (reversal, proximity, volume).
        let (zone_min, zone_max) = (config.zone_proximity_atr_min, config.zone_proximity_atr_max);
        self.gate(
            "entry",
            vec![
                entry::reversal_line(&entry_bars, &range, side, config.sl_atr_multiplier),
                entry::proximity_line(price, &range, side, zone_min, zone_max),
                entry::volume_line(settings.entry_tf(), vol_ratio, config.vol_increase_min),
            ],
        )?;

        // Gate 5: reward/risk of the targets (filled in for the reader even when it fails).
        let targets = Targets::compute(price, &range, side, config);
        let r = &mut self.result;
        r.sl_pct = targets.sl_pct.max(0.0);
        r.tp_pct = targets.tp_pct.max(0.0);
        r.tp1_pct = Some(targets.tp1_pct);
        r.tp2_pct = Some(targets.tp2_pct);
        self.gate("min_rr", vec![targets.line(config.min_rr)])?;

        // Gate 6: the market context may veto.
        self.gate("market_context", vec![context::line(data.market_context.as_ref(), side)])?;

        // A signal: grade it with the quality lines (never blocking).
        let quality =
            tier::lines(side, range.touches(side), vol_ratio, config.vol_increase_min, rsi);
        let label = tier::tier(&quality);
        for l in quality {
            self.checklist.check(l.name, l.pass, l.detail);
        }
        let r = &mut self.result;
        r.direction = match side {
            Side::Buy => Direction::Buy,
            Side::Sell => Direction::Sell,
        };
        r.tier = Some(label.to_string());
        r.reason = Some(format!(
            "{} at {} {:.6} of the {} range {:.6}-{:.6}: rr {:.2}, tier {label}",
            side.as_str(),
            side.edge(),
            range.near_edge(side),
            settings.regime_tf(),
            range.support,
            range.resistance,
            targets.rr,
        ));
        Ok(())
    }
}
