//! `POST /api/mr-combined/scan-and-signal`: run the MR Combined plugin and turn each buy or
//! sell result into a pending signal through the signal flow (which asks the boss).
//!
//! A plugin never trades on its own: its results become signals like any other, scored by the
//! service's formula (a plugin's own ev/confidence can only lower the scores, never raise them),
//! and confirmed by the boss. The one exception is the spec's `ask_coo = false`, honoured only
//! while the operator sets `[signals] allow_auto_confirm` (default off).

use serde::Serialize;
use utoipa::ToSchema;

use super::{ScanError, Scans};
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

impl Scans {
    /// Scans `symbols` (default: MR Combined's universe, override or the watchlist) and
    /// creates a signal per buy or sell result. Nothing is scanned while new entries are
    /// blocked (daily limits, drawdown pause) or the strategy is switched off.
    pub async fn scan_and_signal(
        &self,
        symbols: Option<Vec<String>>,
        agent: &str,
    ) -> Result<ScanAndSignal, ScanError> {
        let p = &self.parts;
        if let Some(block) = p.execution.entry_block(MR_COMBINED)? {
            let code = block.split(':').next().unwrap_or("daily_limit_reached").to_string();
            p.dashboard.record(agent, &format!("mr_combined scan skipped: {block}"), "waiting");
            return Ok(ScanAndSignal::not_scanned(&code, block));
        }
        let keys = p.plugins.strategy_keys(MR_COMBINED);
        if !keys.enabled {
            let detail = format!("[strategy.{MR_COMBINED}] enabled = false");
            return Ok(ScanAndSignal::not_scanned("strategy_disabled", detail));
        }
        let symbols = match symbols {
            Some(symbols) => symbols,
            None => self.symbols_for(&keys).await?,
        };
        let outcome = p.plugins.scan(MR_COMBINED, Some(symbols)).await?;
        let mut answer = ScanAndSignal { ok: true, ..Default::default() };
        for result in outcome.results {
            self.signal_from(result, &mut answer).await?;
        }
        p.dashboard.record(
            agent,
            &format!(
                "mr_combined scan: {} signaled, {} skipped",
                answer.signaled.len(),
                answer.skipped.len()
            ),
            "ok",
        );
        Ok(answer)
    }

    async fn signal_from(
        &self,
        result: ScanResult,
        answer: &mut ScanAndSignal,
    ) -> Result<(), ScanError> {
        let p = &self.parts;
        let symbol = result.symbol.clone();
        let skip = |reason: String| Skipped { symbol: symbol.clone(), reason };
        if result.direction == PluginDirection::Skip {
            let reason = result.reason.clone().unwrap_or_else(|| "skip".into());
            answer.skipped.push(skip(reason));
            return Ok(());
        }
        let input = signal_input(&result);
        let scores = result_scores(&result, &input);
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
        let created = if auto {
            p.signals.create_and_confirm(input, Some(scores)).await
        } else {
            p.signals.create(input, Some(scores)).await.map(|c| (c, None))
        };
        let (created, confirm): (CreateAnswer, Option<ConfirmAnswer>) = match created {
            Ok(done) => done,
            Err(crate::signals::SignalError::Invalid { field, reason }) => {
                answer.skipped.push(skip(format!("invalid_result: `{field}` {reason}")));
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
/// the scan result.
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
        sl_pct: positive(r.sl_pct),
        tp_pct: positive(r.tp_pct),
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
