//! The earlier route set's flow, where a finance step trades with `POST /trade` and confirm is
//! called afterwards only to consume the signal: a trade placed outside confirm claims the live
//! pending signal of its symbol, so that one signal never starts two executions.

use rust_decimal::Decimal;

use super::{
    Approver, ConfirmAnswer, Consumed, Direction, ExecutionError, SignalError, SignalStatus,
    Signals, TradeResult, is_live_pending,
};
use crate::config::ApprovalMode;

impl Signals {
    /// Lets a trade placed outside confirm (`POST /trade`, `POST /api/trade`) take the live
    /// pending signal of `symbol` when it has the trade's direction: the earlier route set's
    /// flow, where a finance step trades with `POST /trade` and confirm is called afterwards
    /// only to consume the signal. While the claim is held a confirm places nothing (it
    /// answers that the signal is being executed); [`TradeClaim::settle`] consumes the signal
    /// once the trade is placed, so every later confirm answers `confirmed` from the record
    /// and places nothing either. `None` when there is no such signal (or a confirm holds it).
    ///
    /// In `[signals] approval = "boss"` mode an agent's trade (`approver` [`Approver::Agent`])
    /// needs such a signal, approved by the boss, with the trade's own stop and target
    /// distances: otherwise [`SignalError::ApprovalRequired`] and nothing is placed.
    pub fn claim_for_trade(
        &self,
        symbol: &str,
        direction: Direction,
        by: &str,
        approver: Approver,
        bracket: (Decimal, Decimal),
    ) -> Result<Option<TradeClaim>, SignalError> {
        let now = self.now_ms();
        let mut state = self.state();
        let boss_mode = self.inner.config.approval == ApprovalMode::Boss;
        let needs_yes = boss_mode && approver == Approver::Agent;
        let Some(slot) = state.slots.get_mut(symbol).filter(|slot| {
            !slot.executing
                && is_live_pending(&slot.signal, now)
                && slot.signal.input.direction == direction
        }) else {
            return if needs_yes {
                Err(SignalError::ApprovalRequired(format!(
                    "in [signals] approval = \"boss\" mode a trade needs a pending {} signal for \
                     {symbol} that the boss approved; there is none, so nothing was placed",
                    direction.as_str()
                )))
            } else {
                Ok(None)
            };
        };
        if needs_yes {
            self.check_approved(&slot.signal)?;
            // The boss approved the signal's stop and target, not the caller's.
            if direction == Direction::Buy && slot.signal.input.bracket() != Some(bracket) {
                let (sl, tp) = slot.signal.input.bracket().unwrap_or_default();
                return Err(SignalError::ApprovalRequired(format!(
                    "the boss approved {symbol} with sl {sl} % and tp {tp} %, not sl {} % and tp \
                     {} %; nothing was placed",
                    bracket.0, bracket.1
                )));
            }
        }
        slot.executing = true;
        Ok(Some(TradeClaim {
            signals: self.clone(),
            symbol: symbol.to_string(),
            id: slot.signal.id.clone(),
            by: by.to_string(),
            settled: false,
        }))
    }
}

/// A pending signal held by a trade placed outside confirm ([`Signals::claim_for_trade`]).
/// Dropped without [`TradeClaim::settle`] consuming it (the trade placed nothing, or its task
/// ended early) it gives the signal back, still pending.
pub struct TradeClaim {
    signals: Signals,
    symbol: String,
    id: String,
    /// The route that placed the trade, e.g. `POST /trade`.
    by: String,
    settled: bool,
}

impl TradeClaim {
    /// Records the trade's outcome. Placed, or possibly placed (outcome unknown: the same rule
    /// as a confirm's own execution), the signal is consumed: it leaves memory and confirm
    /// answers from the record, placing nothing. Refused before anything was sent, the signal
    /// stays pending.
    pub fn settle(mut self, outcome: Result<TradeResult, &ExecutionError>) {
        if !matches!(outcome, Ok(_) | Err(ExecutionError::OutcomeUnknown { .. })) {
            return;
        }
        self.settled = true;
        let inner = &self.signals.inner;
        let now = self.signals.now_ms();
        let mut state = self.signals.state();
        let Some(signal) =
            state.slots.get(&self.symbol).filter(|s| s.signal.id == self.id).map(|s| &s.signal)
        else {
            return;
        };
        let answer = ConfirmAnswer {
            ok: outcome.is_ok(),
            symbol: self.symbol.clone(),
            status: SignalStatus::Confirmed,
            ev: signal.ev,
            confidence: signal.confidence,
            reason: Some(format!(
                "the signal was consumed by the trade placed with {}; confirm places nothing",
                self.by
            )),
            trade: Some(outcome.unwrap_or_else(|err| TradeResult {
                ok: false,
                opened: None,
                closed: None,
                error: Some(err.to_string()),
            })),
            already_confirmed: false,
            approved_by: signal.approved_by_boss().map(|a| a.by.clone()),
        };
        state.slots.remove(&self.symbol);
        state.consumed.insert(self.symbol.clone(), Consumed { answer, at_ms: now });
        drop(state);
        inner.dashboard.record(
            "coo",
            &format!("signal {} consumed by {}", self.symbol, self.by),
            "ok",
        );
    }
}

impl Drop for TradeClaim {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let mut state = self.signals.state();
        if let Some(slot) = state.slots.get_mut(&self.symbol)
            && slot.signal.id == self.id
        {
            slot.executing = false;
        }
    }
}
