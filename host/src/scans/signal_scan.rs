//! Scan-and-signal for any strategy plugin (`POST /api/mr-combined/scan-and-signal` runs MR
//! Combined, the earlier `POST /api/scan-and-signal?bot=` the one named): run the plugin and
//! turn each buy or sell result into a pending signal through the signal flow (which asks the
//! boss). The scan half alone ([`Scans::scan_strategy`]) serves the earlier read-only checks
//! `GET /scan` and `GET /custom_check`.
//!
//! A plugin never trades on its own: its results become signals like any other, scored by the
//! service's formula (a plugin's own ev/confidence can only lower the scores, never raise them),
//! and confirmed by the boss. The one exception is the spec's `ask_coo = false`, honoured only
//! while the operator sets `[signals] allow_auto_confirm` (default off).

use serde::Serialize;
use utoipa::ToSchema;

use super::{ScanError, Scans};
use crate::money::Number;
use crate::plugins::model::{self, Direction as PluginDirection, ScanResult};
use crate::signals::{CheckItem, ConfirmAnswer, CreateAnswer, CreateStatus, SignalInput, Tier};

/// The MR Combined plugin's name.
pub const MR_COMBINED: &str = "mr_combined";

/// A result that became a signal.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Signaled {
    pub symbol: String,
    /// buy or sell.
    pub direction: String,
    /// `pending` (the boss was asked), `messenger_failed` (created, the request did not go
    /// out) or `auto_confirmed`.
    pub status: CreateStatus,
    pub ev: Option<f64>,
    pub confidence: Option<u32>,
    pub tier: Option<String>,
    /// The confirm the service ran itself (`auto_confirmed` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirm: Option<ConfirmAnswer>,
}

/// A scanned symbol that gave no signal.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Skipped {
    pub symbol: String,
    /// The plugin's reason for a skip result (its failing gate), or the signal flow's skip
    /// outcome (`duplicate_skipped`, `trade_exists_skipped`, `no_position_sell_skipped`), or
    /// `invalid_result: ...` when the result cannot be a signal.
    pub reason: String,
}

/// The answer of a scan-and-signal.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct ScanAndSignal {
    pub ok: bool,
    pub signaled: Vec<Signaled>,
    pub skipped: Vec<Skipped>,
    /// Why nothing was scanned: `daily_limit_reached` (daily trade or consecutive-loss
    /// limit), `drawdown_paused`, or `strategy_disabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The reason in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ScanAndSignal {
    fn not_scanned(reason: &str, detail: String) -> Self {
        ScanAndSignal {
            ok: true,
            reason: Some(reason.to_string()),
            detail: Some(detail),
            ..Default::default()
        }
    }
}

/// A strategy's result with the scores the signal flow gates it with ([`result_scores`]).
#[derive(Debug, Clone)]
pub struct Scored {
    pub result: ScanResult,
    /// Expected value in percent of the amount risked (the ev gate's number).
    pub ev: f64,
    /// 0-10 (the confidence gate's number).
    pub confidence: u32,
}

/// The numbers the confirm gates will judge a buy or sell result by, shown next to a scan
/// preview: a plugin's own `ev` and `confidence` may be computed another way, and the service
/// keeps the lower of its formula's and the plugin's ([`result_scores`]).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GateScores {
    pub symbol: String,
    /// Expected value the ev gate reads (must be > 25).
    pub ev: f64,
    /// Confidence the confidence gate reads (must be >= 8).
    pub confidence: u32,
    /// Whether both gates pass: only then would a signal ask the boss.
    pub passes: bool,
    /// Why not, naming the numbers; absent when both pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub refused: Option<String>,
}

impl GateScores {
    /// The gate scores of a buy or sell result; `None` for a skip (nothing to gate).
    pub fn of(result: &ScanResult) -> Option<Self> {
        if result.direction == PluginDirection::Skip {
            return None;
        }
        let (ev, confidence) = result_scores(result, &signal_input(result));
        let refused = crate::signals::scoring::gate_failure(ev, confidence);
        Some(GateScores {
            symbol: result.symbol.clone(),
            ev,
            confidence,
            passes: refused.is_none(),
            refused,
        })
    }
}

/// One scan of a strategy that created nothing.
#[derive(Debug, Clone)]
pub struct StrategyScan {
    /// Symbols the plugin was asked about.
    pub scanned: usize,
    /// Its results in the plugin's order, each scored.
    pub results: Vec<Scored>,
}

/// Today's entries against a strategy's daily limit.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub struct DayBudget {
    /// Entries today (in `[market] timezone`).
    pub trades_today: i64,
    /// Entries still allowed today: the strategy's `max_trades_per_day` minus `trades_today`,
    /// and 0 while new entries are blocked (daily trade or consecutive-loss limit, drawdown
    /// pause), so a caller never reads room that a confirm would refuse.
    pub remaining: i64,
}

/// A scan-and-signal: its answer and how many symbols it scanned (0 when nothing was).
#[derive(Debug, Clone)]
pub struct SignalRun {
    pub answer: ScanAndSignal,
    pub scanned: usize,
}

impl Scans {
    /// Scans `symbols` (default: the strategy's universe, override or the watchlist) with the
    /// strategy plugin `bot` and scores each result as its signal would be scored. Creates no
    /// signal and places nothing; the plugin's state updates persist as in any scan.
    pub async fn scan_strategy(
        &self,
        bot: &str,
        symbols: Option<Vec<String>>,
    ) -> Result<StrategyScan, ScanError> {
        let p = &self.parts;
        let symbols = match symbols {
            Some(symbols) => symbols,
            None => self.symbols_for(&p.plugins.strategy_keys(bot)).await?,
        };
        let scanned = symbols.len();
        let outcome = p.plugins.scan(bot, Some(symbols)).await?;
        let results = outcome
            .results
            .into_iter()
            .map(|result| {
                let (ev, confidence) = result_scores(&result, &signal_input(&result));
                Scored { result, ev, confidence }
            })
            .collect();
        Ok(StrategyScan { scanned, results })
    }

    /// Today's entries and the room left under strategy `bot`'s daily limit.
    pub fn day_budget(&self, bot: &str) -> Result<DayBudget, ScanError> {
        let execution = &self.parts.execution;
        let trades_today = execution.counters()?.trades_today;
        let remaining = if execution.entry_block(bot)?.is_some() {
            0
        } else {
            let max = i64::from(execution.strategy_keys(bot).max_trades_per_day);
            (max - trades_today).max(0)
        };
        Ok(DayBudget { trades_today, remaining })
    }

    /// Scans `symbols` with strategy `bot` ([`Scans::scan_strategy`]) and creates a signal
    /// per buy or sell result. Nothing is scanned while new entries are blocked (daily limits,
    /// drawdown pause) or the strategy is switched off.
    pub async fn scan_and_signal(
        &self,
        bot: &str,
        symbols: Option<Vec<String>>,
        agent: &str,
    ) -> Result<SignalRun, ScanError> {
        let p = &self.parts;
        let not_scanned = |reason: &str, detail: String| SignalRun {
            answer: ScanAndSignal::not_scanned(reason, detail),
            scanned: 0,
        };
        if let Some(block) = p.execution.entry_block(bot)? {
            p.dashboard.record(agent, &format!("{bot} scan skipped: {block}"), "waiting");
            return Ok(not_scanned(block.code(), block.to_string()));
        }
        if !p.plugins.strategy_keys(bot).enabled {
            return Ok(not_scanned(
                "strategy_disabled",
                format!("[strategy.{bot}] enabled = false"),
            ));
        }
        let scan = self.scan_strategy(bot, symbols).await?;
        let mut answer = ScanAndSignal { ok: true, ..Default::default() };
        for scored in scan.results {
            self.signal_from(scored, &mut answer).await?;
        }
        p.dashboard.record(
            agent,
            &format!(
                "{bot} scan: {} signaled, {} skipped",
                answer.signaled.len(),
                answer.skipped.len()
            ),
            "ok",
        );
        Ok(SignalRun { answer, scanned: scan.scanned })
    }

    async fn signal_from(
        &self,
        scored: Scored,
        answer: &mut ScanAndSignal,
    ) -> Result<(), ScanError> {
        let p = &self.parts;
        let Scored { result, ev, confidence } = scored;
        let symbol = result.symbol.clone();
        let skip = |reason: String| Skipped { symbol: symbol.clone(), reason };
        if result.direction == PluginDirection::Skip {
            let reason = result.reason.clone().unwrap_or_else(|| "skip".into());
            answer.skipped.push(skip(reason));
            return Ok(());
        }
        let input = signal_input(&result);
        let scores = (ev, confidence);
        let auto = !result.ask_coo && p.config.signals.allow_auto_confirm;
        if !result.ask_coo && !auto {
            p.dashboard.record(
                "coo",
                &format!(
                    "{symbol}: the plugin set ask_coo = false; asking the boss anyway \
                     ([signals] allow_auto_confirm is off)"
                ),
                "ok",
            );
        }
        let origin = crate::signals::Origin::plugin(&input.bot);
        let created = if auto {
            p.signals.create_and_confirm(input, Some(scores), origin).await
        } else {
            p.signals.create(input, Some(scores), origin).await.map(|c| (c, None))
        };
        let (created, confirm): (CreateAnswer, Option<ConfirmAnswer>) = match created {
            Ok(done) => done,
            Err(crate::signals::SignalError::Invalid { field, reason }) => {
                answer.skipped.push(skip(format!("invalid_result: `{field}` {reason}")));
                return Ok(());
            }
            Err(crate::signals::SignalError::BelowGates(reason)) => {
                answer.skipped.push(skip(format!("below_gates: {reason}")));
                return Ok(());
            }
            Err(err) => return Err(err.into()),
        };
        if created.ok {
            answer.signaled.push(Signaled {
                symbol: symbol.clone(),
                direction: direction_name(result.direction).to_string(),
                status: created.status,
                ev: created.ev,
                confidence: created.confidence,
                tier: result.tier.clone(),
                confirm,
            });
        } else {
            answer.skipped.push(skip(created.status.as_str().to_string()));
        }
        Ok(())
    }
}

fn direction_name(d: PluginDirection) -> &'static str {
    match d {
        PluginDirection::Buy => "buy",
        PluginDirection::Sell => "sell",
        PluginDirection::Skip => "skip",
    }
}

/// The ev and confidence a buy or sell result is gated with: the service's formula over its
/// signal body, lowered to the plugin's own scores where those are lower. Backtests gate with
/// the same rule.
pub(crate) fn result_scores(result: &ScanResult, input: &SignalInput) -> (f64, u32) {
    lower_scores(crate::signals::score(input), result.ev, result.confidence)
}

/// The service's scores, lowered to the plugin's own where it gave lower ones.
fn lower_scores(computed: (f64, u32), ev: Option<f64>, confidence: Option<u32>) -> (f64, u32) {
    (
        ev.filter(|e| e.is_finite()).map_or(computed.0, |e| e.min(computed.0)),
        confidence.map_or(computed.1, |c| c.min(computed.1)),
    )
}

/// Longest checklist detail a signal keeps (the signal body's own limit).
const MAX_DETAIL: usize = 500;

/// The signal body of a buy or sell result: every field the spec's PendingSignal shares with
/// the scan result. The one place a plugin's float stop and target distances become decimals
/// ([`Number`]); its indicators stay floats.
pub(crate) fn signal_input(r: &ScanResult) -> SignalInput {
    let positive = |v: f64| (v.is_finite() && v > 0.0).then_some(v);
    SignalInput {
        symbol: r.symbol.clone(),
        direction: match r.direction {
            PluginDirection::Sell => crate::execution::Direction::Sell,
            _ => crate::execution::Direction::Buy,
        },
        bot: r.bot.clone(),
        price: positive(r.price),
        sl_pct: positive(r.sl_pct).map(Number::from),
        tp_pct: positive(r.tp_pct).map(Number::from),
        checklist: Some(r.checklist.iter().map(check_item).collect()),
        passed: Some(r.passed),
        total: Some(r.total),
        rsi: r.rsi,
        macd_hist: r.macd_hist,
        bb_lower: r.bb_lower,
        bb_upper: r.bb_upper,
        bb_mid: r.bb_mid,
        vol_ratio: r.vol_ratio,
        buy_signals: r.buy_signals,
        sell_signals: r.sell_signals,
        adx: r.adx,
        stoch_k: r.stoch_k,
        tp1_pct: r.tp1_pct,
        tp2_pct: r.tp2_pct,
        range_support: r.range_support,
        range_resistance: r.range_resistance,
        range_midline: r.range_midline,
        tier: r.tier.as_deref().and_then(Tier::parse),
    }
}

fn check_item(c: &model::Check) -> CheckItem {
    let detail: String = c.detail.chars().take(MAX_DETAIL).collect();
    CheckItem { name: c.name.clone(), pass: c.pass, detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_can_lower_its_scores_but_never_raise_them() {
        assert_eq!(lower_scores((80.0, 9), Some(95.0), Some(10)), (80.0, 9));
        assert_eq!(lower_scores((80.0, 9), Some(30.0), Some(7)), (30.0, 7));
        assert_eq!(lower_scores((80.0, 9), None, None), (80.0, 9));
        assert_eq!(lower_scores((80.0, 9), Some(f64::NAN), None), (80.0, 9));
    }
}
