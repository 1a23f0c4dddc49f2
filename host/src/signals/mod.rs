//! Signals: the PendingSignal state machine (pending → confirmed | skipped | expired), the
//! skip rules at creation, the ev/confidence gates at confirm, and cleanup.
//!
//! Owns: the in-memory signals (the spec keeps them in memory: a restart forgets them, and a
//! forgotten signal can no longer be confirmed — see docs/signals.md). Must never: place an
//! order itself (execution does), let a caller supply or bypass ev/confidence, or let one
//! signal start two executions (a confirm, or a trade placed with `POST /trade` for the
//! signal's symbol, claims the signal under the lock first).

mod answers;
pub mod approval;
pub mod model;
pub mod replies;
pub mod scoring;
mod trade_claim;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::activity::Dashboard;
use crate::clock::SharedClock;
pub use crate::config::Tier;
use crate::execution::client_id::fresh_cause;
use crate::execution::{
    CloseRow, Direction, EntryPlan, Execution, ExecutionError, TradeSource, run_bounded,
};
use crate::messenger::{Messenger, templates};
use crate::money::Number;
pub use answers::{CleanupAnswer, ConfirmAnswer, CreateAnswer, CreateStatus, TradeResult};
pub use approval::{Approver, Origin};
pub use model::{CheckItem, PendingSignal, SignalInput, SignalStatus, SignalView};
pub use scoring::score;
pub use trade_claim::TradeClaim;

/// A signal may be confirmed for this long after creation.
pub const EXPIRY_MS: i64 = 5 * 60 * 1000;
/// Skipped and expired signals are deleted by cleanup once older than this.
pub const DELETE_AFTER_MS: i64 = 30 * 60 * 1000;

#[derive(Debug, thiserror::Error)]
pub enum SignalError {
    #[error("`{field}` {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error("no signal for {0}")]
    NotFound(String),
    #[error("the signal for {symbol} is {status}, not pending")]
    NotPending { symbol: String, status: &'static str },
    #[error("the signal for {symbol} is {age_s} s old; signals expire after 5 minutes")]
    Expired { symbol: String, age_s: i64 },
    #[error("the signal for {0} is being executed right now")]
    Executing(String),
    /// The caller named a signal that is no longer the symbol's pending one.
    #[error(
        "signal {asked} is no longer the signal for {symbol} (it is {now} now): nothing was \
         changed; look at the new one first"
    )]
    Changed { symbol: String, asked: String, now: String },
    /// Its ev or confidence fails the confirm gates: the boss is not asked to approve a
    /// signal confirm would refuse.
    #[error(
        "the signal's scores fail the confirm gates: {0}. The service computes them from the \
         checklist and sl_pct/tp_pct: confidence = round(10 x passed/total), ev = 100 x (p x \
         tp_pct/sl_pct - (1 - p)) with p = 0.6 x passed/total (docs/signals.md); 9 of 10 \
         passed with tp_pct/sl_pct 2.5 gives ev 89 and confidence 9"
    )]
    BelowGates(String),
    /// `[signals] approval = "boss"` and the boss has not said YES to the signal as it is.
    #[error("{0}")]
    ApprovalRequired(String),
    /// `[signals] agent_signals = false`.
    #[error(
        "this service accepts only signals made by its strategy plugins ([signals] \
         agent_signals = false); run a scan (POST /api/mr-combined/scan-and-signal) instead"
    )]
    AgentSignalsOff,
    #[error(transparent)]
    Execution(#[from] ExecutionError),
}

struct Slot {
    signal: PendingSignal,
    /// A confirm has claimed it and is executing.
    executing: bool,
}

/// A signal that was executed and left memory; repeated confirms answer from here.
struct Consumed {
    answer: ConfirmAnswer,
    at_ms: i64,
}

#[derive(Default)]
struct State {
    slots: BTreeMap<String, Slot>,
    consumed: BTreeMap<String, Consumed>,
}

struct Inner {
    state: Mutex<State>,
    config: crate::config::SignalsConfig,
    execution: Execution,
    messenger: Messenger,
    dashboard: Arc<Dashboard>,
    clock: SharedClock,
}

/// The signals area's public face. Cheap to clone.
#[derive(Clone)]
pub struct Signals {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Signals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signals")
    }
}

impl Signals {
    pub fn new(
        config: crate::config::SignalsConfig,
        execution: Execution,
        messenger: Messenger,
        dashboard: Arc<Dashboard>,
        clock: SharedClock,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                config,
                execution,
                messenger,
                dashboard,
                clock,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update under this lock is a single insert or field change.
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now_ms(&self) -> i64 {
        self.inner.clock.now_ms()
    }

    /// Creates (or replaces a finished) signal and sends the approval request. `scores` are
    /// the strategy's own ev and confidence when it gave them; otherwise the formula of
    /// [`scoring`] computes them. `origin` says who wrote the checklist.
    pub async fn create(
        &self,
        input: SignalInput,
        scores: Option<(f64, u32)>,
        origin: Origin,
    ) -> Result<CreateAnswer, SignalError> {
        if origin.source == approval::Source::Agent && !self.inner.config.agent_signals {
            return Err(SignalError::AgentSignalsOff);
        }
        self.create_with(input, scores, origin, Ask::Boss).await
    }

    /// Creates the signal without asking the boss and confirms it at once (a scan result with
    /// `ask_coo = false` while `[signals] allow_auto_confirm` is on). The confirm runs every
    /// gate a boss-approved one runs; the boss receives the outcome instead of a question.
    /// Returns the creation answer and, when a signal was created, the confirm answer.
    pub async fn create_and_confirm(
        &self,
        input: SignalInput,
        scores: Option<(f64, u32)>,
        origin: Origin,
    ) -> Result<(CreateAnswer, Option<ConfirmAnswer>), SignalError> {
        let created = self.create_with(input.clone(), scores, origin, Ask::Nobody).await?;
        if !created.ok {
            return Ok((created, None));
        }
        // The operator's own switch stands in for the boss's YES (docs/signals.md).
        let by = "[signals] allow_auto_confirm";
        let confirmed = self.confirm(&created.symbol, Approver::Boss, by, None).await?;
        let note = templates::AutoConfirmed {
            symbol: created.symbol.clone(),
            direction: input.direction.as_str().into(),
            bot: input.bot.clone(),
            ev: confirmed.ev,
            confidence: confirmed.confidence,
            placed: confirmed.ok,
            reason: confirmed.reason.clone(),
        };
        if let Err(err) = self.inner.messenger.send(&templates::auto_confirmed(&note)).await {
            tracing::warn!(symbol = %created.symbol, %err, "auto-confirm note not sent");
        }
        Ok((created, Some(confirmed)))
    }

    async fn create_with(
        &self,
        input: SignalInput,
        scores: Option<(f64, u32)>,
        origin: Origin,
        ask: Ask,
    ) -> Result<CreateAnswer, SignalError> {
        model::validate(&input)
            .map_err(|(field, reason)| SignalError::Invalid { field, reason })?;
        let input = input.with_counts();
        let (ev, confidence) = scores.unwrap_or_else(|| scoring::score(&input));
        if let Some(reason) = scoring::gate_failure(ev, confidence) {
            return Err(SignalError::BelowGates(reason));
        }
        let symbol = input.symbol.clone();
        let skipped = |status| CreateAnswer {
            ok: false,
            symbol: symbol.clone(),
            status,
            ev: None,
            confidence: None,
            reason: None,
        };
        if self.pending_for(&symbol) {
            return Ok(skipped(CreateStatus::DuplicateSkipped));
        }
        // The boss is never asked to approve what confirm would refuse: a buy while new
        // entries are blocked (daily limits, the drawdown pause) is skipped, saying why.
        if input.direction == Direction::Buy
            && let Some(block) =
                self.inner.execution.entry_block(&input.bot).map_err(ExecutionError::from)?
        {
            let status = match block {
                crate::execution::EntryBlock::DrawdownPaused(_) => {
                    CreateStatus::DrawdownPausedSkipped
                }
                crate::execution::EntryBlock::OperatorPaused(_) => {
                    CreateStatus::EntriesPausedSkipped
                }
                _ => CreateStatus::DailyLimitSkipped,
            };
            return Ok(CreateAnswer { reason: Some(block.to_string()), ..skipped(status) });
        }
        self.inner.execution.symbol_rules(&symbol).await?;
        let position =
            self.inner.execution.book().open_trade(&symbol).map_err(ExecutionError::from)?;
        match (input.direction, position.is_some()) {
            (Direction::Buy, true) => return Ok(skipped(CreateStatus::TradeExistsSkipped)),
            (Direction::Sell, false) => return Ok(skipped(CreateStatus::NoPositionSellSkipped)),
            _ => {}
        }
        let now = self.now_ms();
        let signal = PendingSignal {
            id: fresh_cause(now),
            input,
            status: SignalStatus::Pending,
            tg_sent: false,
            ev,
            confidence,
            created_ms: now,
            origin,
            approval: None,
        };
        {
            let mut state = self.state();
            if state.slots.get(&symbol).is_some_and(|s| is_live_pending(&s.signal, now)) {
                return Ok(skipped(CreateStatus::DuplicateSkipped));
            }
            state.consumed.remove(&symbol);
            state.slots.insert(symbol.clone(), Slot { signal: signal.clone(), executing: false });
        }
        let asked = match ask {
            Ask::Boss => self.send_approval(&signal).await,
            Ask::Nobody => {
                return Ok(CreateAnswer {
                    ok: true,
                    symbol,
                    status: CreateStatus::AutoConfirmed,
                    ev: Some(ev),
                    confidence: Some(confidence),
                    reason: None,
                });
            }
        };
        let status = match asked {
            Ok(()) => {
                if let Some(slot) = self.state().slots.get_mut(&symbol)
                    && slot.signal.id == signal.id
                {
                    slot.signal.tg_sent = true;
                }
                CreateStatus::Pending
            }
            Err(err) => {
                tracing::warn!(%symbol, %err, "approval request not sent");
                self.inner.dashboard.record(
                    "coo",
                    &format!("approval request for {symbol} not sent: {err}"),
                    "error",
                );
                CreateStatus::MessengerFailed
            }
        };
        self.inner.dashboard.record(
            "scout",
            &format!(
                "signal {symbol} {} ({}) ev {ev} confidence {confidence}",
                signal.input.direction.as_str(),
                signal.input.bot
            ),
            "ok",
        );
        let (ev, confidence) = (Some(ev), Some(confidence));
        Ok(CreateAnswer { ok: true, symbol, status, ev, confidence, reason: None })
    }

    fn pending_for(&self, symbol: &str) -> bool {
        let now = self.now_ms();
        self.state().slots.get(symbol).is_some_and(|s| is_live_pending(&s.signal, now))
    }

    async fn send_approval(
        &self,
        signal: &PendingSignal,
    ) -> Result<(), crate::messenger::MessengerError> {
        let i = &signal.input;
        let level =
            |pct: Option<Number>, sign: f64| Some(i.price? * (1.0 + sign * pct?.to_f64() / 100.0));
        let request = templates::ApprovalRequest {
            symbol: i.symbol.clone(),
            direction: i.direction.as_str().into(),
            bot: i.bot.clone(),
            price: i.price,
            sl_pct: i.sl_pct.map(Number::to_f64),
            tp_pct: i.tp_pct.map(Number::to_f64),
            sl_px: level(i.sl_pct, -1.0),
            tp_px: level(i.tp_pct, 1.0),
            checklist: i
                .checklist
                .iter()
                .flatten()
                .map(|c| (c.name.clone(), c.pass, c.detail.clone()))
                .collect(),
            passed: i.passed,
            total: i.total,
            ev: signal.ev,
            confidence: signal.confidence,
            expires_in_minutes: (EXPIRY_MS / 60_000) as u32,
            signal_id: signal.id.clone(),
            origin: signal.origin.describe(),
        };
        self.inner.messenger.send(&templates::approval_request(&request)).await.map(|_| ())
    }

    /// Every signal in memory, any status.
    pub fn list(&self) -> Vec<SignalView> {
        let now = self.now_ms();
        self.state().slots.values().map(|s| s.signal.view(now)).collect()
    }

    /// How many signals in memory have `status` (the metrics' scrape-time gauge).
    pub fn count(&self, status: SignalStatus) -> usize {
        self.state().slots.values().filter(|s| s.signal.status == status).count()
    }

    /// Pending signals as text for forwarding to the boss.
    pub fn pending_text(&self) -> String {
        let now = self.now_ms();
        let state = self.state();
        let lines: Vec<String> = state
            .slots
            .values()
            .filter(|s| s.signal.status == SignalStatus::Pending)
            .map(|s| {
                let sig = &s.signal;
                let i = &sig.input;
                let price = i.price.map(|p| format!(" at {p}")).unwrap_or_default();
                format!(
                    "{} {} ({}){price}, ev {}, confidence {}/10, {} min old: reply 1-YES {} or 0-NO {}",
                    i.symbol,
                    i.direction.as_str().to_uppercase(),
                    i.bot,
                    sig.ev,
                    sig.confidence,
                    sig.age_seconds(now) / 60,
                    i.symbol,
                    i.symbol
                )
            })
            .collect();
        if lines.is_empty() { "No pending signals.\n".to_string() } else { lines.join("\n") + "\n" }
    }

    /// The id of the signal in memory for `symbol`, any status.
    pub fn current_id(&self, symbol: &str) -> Option<String> {
        self.state().slots.get(symbol).map(|s| s.signal.id.clone())
    }

    /// One pending, unexpired signal.
    pub fn get(&self, symbol: &str) -> Result<SignalView, SignalError> {
        let now = self.now_ms();
        let state = self.state();
        let slot = state.slots.get(symbol).ok_or_else(|| SignalError::NotFound(symbol.into()))?;
        check_confirmable(&slot.signal, now)?;
        Ok(slot.signal.view(now))
    }

    /// The boss said NO.
    pub fn reject(
        &self,
        symbol: &str,
        signal_id: Option<&str>,
    ) -> Result<SignalStatus, SignalError> {
        let mut state = self.state();
        let slot =
            state.slots.get_mut(symbol).ok_or_else(|| SignalError::NotFound(symbol.into()))?;
        if let Some(id) = signal_id
            && id != slot.signal.id
        {
            return Err(SignalError::Changed {
                symbol: symbol.into(),
                asked: id.into(),
                now: slot.signal.id.clone(),
            });
        }
        if slot.executing {
            return Err(SignalError::Executing(symbol.into()));
        }
        if slot.signal.status != SignalStatus::Pending {
            return Err(SignalError::NotPending {
                symbol: symbol.into(),
                status: slot.signal.status.as_str(),
            });
        }
        slot.signal.status = SignalStatus::Skipped;
        drop(state);
        self.inner.dashboard.record("coo", &format!("signal {symbol} rejected"), "ok");
        Ok(SignalStatus::Skipped)
    }

    /// Expires pending signals older than `max_age_minutes`, deletes skipped and expired ones
    /// older than 30 minutes.
    pub fn cleanup(&self, max_age_minutes: u32) -> CleanupAnswer {
        let now = self.now_ms();
        let max_age = i64::from(max_age_minutes) * 60_000;
        let mut answer = CleanupAnswer { ok: true, ..CleanupAnswer::default() };
        let mut state = self.state();
        for (symbol, slot) in state.slots.iter_mut() {
            let age = now - slot.signal.created_ms;
            if slot.signal.status == SignalStatus::Pending && !slot.executing && age > max_age {
                slot.signal.status = SignalStatus::Expired;
                answer.expired.push(symbol.clone());
            }
        }
        state.slots.retain(|symbol, slot| {
            let finished =
                matches!(slot.signal.status, SignalStatus::Skipped | SignalStatus::Expired);
            let delete = finished && now - slot.signal.created_ms > DELETE_AFTER_MS;
            if delete {
                answer.deleted.push(symbol.clone());
            }
            !delete
        });
        state.consumed.retain(|_, c| now - c.at_ms <= DELETE_AFTER_MS);
        answer.count_expired = answer.expired.len();
        answer.count_deleted = answer.deleted.len();
        answer
    }

    /// Confirms the signal of `symbol`: checks its status, age, the boss's approval and the
    /// gates, claims it, and executes it (a buy opens a bracketed trade, a sell closes the
    /// position). `approver` says whose YES this is (`by` names them); `signal_id`, when
    /// given, must be the current signal's (a YES pressed on an earlier signal's message
    /// never confirms a newer one). Waits up to 300 s for the execution; past that the answer
    /// is a timeout while it goes on.
    pub async fn confirm(
        &self,
        symbol: &str,
        approver: Approver,
        by: &str,
        signal_id: Option<&str>,
    ) -> Result<ConfirmAnswer, SignalError> {
        let signal = match self.claim(symbol, approver, by, signal_id)? {
            Claim::Execute(signal) => signal,
            Claim::Answer(answer) => return Ok(answer),
        };
        let this = self.clone();
        run_bounded(async move { Ok(this.execute(signal).await) }).await
    }

    fn claim(
        &self,
        symbol: &str,
        approver: Approver,
        by: &str,
        signal_id: Option<&str>,
    ) -> Result<Claim, SignalError> {
        let now = self.now_ms();
        let mut state = self.state();
        let Some(slot) = state.slots.get_mut(symbol) else {
            return match state.consumed.get(symbol) {
                Some(done) => Ok(Claim::Answer(ConfirmAnswer {
                    already_confirmed: true,
                    ..done.answer.clone()
                })),
                None => Err(SignalError::NotFound(symbol.into())),
            };
        };
        let signal = &slot.signal;
        if slot.executing {
            return Ok(Claim::Answer(ConfirmAnswer {
                ok: true,
                symbol: symbol.into(),
                status: SignalStatus::Confirmed,
                ev: signal.ev,
                confidence: signal.confidence,
                reason: Some(
                    "an earlier confirm, or a trade placed with POST /trade or POST /api/trade, \
                     is executing this signal"
                        .into(),
                ),
                trade: None,
                already_confirmed: true,
                approved_by: None,
            }));
        }
        check_confirmable(signal, now)?;
        if let Some(id) = signal_id
            && id != signal.id
        {
            return Err(SignalError::ApprovalRequired(format!(
                "this YES was given on signal {id}, but the signal for {symbol} is now {}: it \
                 needs its own YES",
                signal.id
            )));
        }
        match approver {
            Approver::Boss => {
                let terms = slot.signal.terms();
                slot.signal.approval =
                    Some(approval::Approval { by: by.to_string(), terms, at_ms: now });
            }
            Approver::Agent => self.check_approved(&slot.signal)?,
        }
        let signal = &slot.signal;
        let refused = |reason: String| {
            Ok(Claim::Answer(ConfirmAnswer {
                ok: false,
                symbol: symbol.into(),
                status: SignalStatus::Pending,
                ev: signal.ev,
                confidence: signal.confidence,
                reason: Some(reason),
                trade: None,
                already_confirmed: false,
                approved_by: None,
            }))
        };
        if let Some(reason) = scoring::gate_failure(signal.ev, signal.confidence) {
            return refused(reason);
        }
        if signal.input.direction == Direction::Buy
            && let Some(block) =
                self.inner.execution.entry_block(&signal.input.bot).map_err(ExecutionError::from)?
        {
            return refused(block.to_string());
        }
        slot.executing = true;
        Ok(Claim::Execute(slot.signal.clone()))
    }

    async fn execute(&self, signal: PendingSignal) -> ConfirmAnswer {
        let i = &signal.input;
        let symbol = i.symbol.clone();
        let execution = &self.inner.execution;
        let result = match i.direction {
            Direction::Buy => match i.bracket() {
                Some((sl_pct, tp_pct)) => {
                    let mut plan = EntryPlan::new(
                        &symbol,
                        &i.bot,
                        sl_pct,
                        tp_pct,
                        TradeSource::Signal,
                        &signal.id,
                        // The journal's record of the entry says where the signal came from.
                        format!(
                            "signal {} {symbol} confirmed ({})",
                            signal.id,
                            signal.origin.describe()
                        ),
                    );
                    plan.tier = i.tier;
                    execution.open_trade(&plan).await.map(|t| TradeResult {
                        ok: true,
                        opened: Some(t.view()),
                        closed: None,
                        error: None,
                    })
                }
                // Refused when the signal was created; never a stop or target at the entry.
                None => Err(ExecutionError::Invalid(
                    "a buy signal needs sl_pct and tp_pct for its bracket".into(),
                )),
            },
            Direction::Sell => execution
                .close(&symbol, &format!("sell signal {} {symbol} confirmed", signal.id))
                .await
                .map(|c| TradeResult {
                    ok: true,
                    opened: None,
                    closed: Some(CloseRow::closed(&c)),
                    error: None,
                }),
        };
        let placed_or_maybe = match &result {
            Ok(_) => true,
            Err(ExecutionError::OutcomeUnknown { .. }) => true,
            Err(_) => false,
        };
        let answer = ConfirmAnswer {
            ok: result.is_ok(),
            symbol: symbol.clone(),
            status: if placed_or_maybe { SignalStatus::Confirmed } else { SignalStatus::Pending },
            ev: signal.ev,
            confidence: signal.confidence,
            reason: result.as_ref().err().map(ToString::to_string),
            trade: Some(result.unwrap_or_else(|err| TradeResult {
                ok: false,
                opened: None,
                closed: None,
                error: Some(err.to_string()),
            })),
            already_confirmed: false,
            approved_by: signal.approval.as_ref().map(|a| a.by.clone()),
        };
        let mut state = self.state();
        if placed_or_maybe {
            // The signal is consumed: it leaves memory, and a repeated confirm answers from
            // the record without placing anything.
            state.slots.remove(&symbol);
            state
                .consumed
                .insert(symbol.clone(), Consumed { answer: answer.clone(), at_ms: self.now_ms() });
        } else if let Some(slot) = state.slots.get_mut(&symbol) {
            slot.executing = false;
        }
        drop(state);
        let status = if answer.ok { "ok" } else { "error" };
        // Who confirmed: the acting request's agent (the token's), when an API call did.
        let by = crate::audit::Acting::current().map(|a| format!(" by {}", a.agent));
        self.inner.dashboard.record(
            "coo",
            &format!(
                "signal {symbol} confirmed{}: {}",
                by.unwrap_or_default(),
                answer.reason.as_deref().unwrap_or("executed")
            ),
            status,
        );
        answer
    }
}

impl Signals {
    /// In `boss` mode, an agent may act on a signal only once the boss's YES covers it as it
    /// is now.
    fn check_approved(&self, signal: &PendingSignal) -> Result<(), SignalError> {
        if self.inner.config.approval == crate::config::ApprovalMode::Agent
            || signal.approved_by_boss().is_some()
        {
            return Ok(());
        }
        Err(SignalError::ApprovalRequired(format!(
            "the boss has not approved the signal for {} ({}): in [signals] approval = \"boss\" \
             mode only the boss's own YES (the button or reply on the service's message, or a \
             confirm with an admin token) makes it confirmable; nothing was placed",
            signal.input.symbol, signal.id
        )))
    }
}

/// Whether a new signal waits for the boss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Boss,
    /// Confirmed at once (`allow_auto_confirm`).
    Nobody,
}

enum Claim {
    Execute(PendingSignal),
    Answer(ConfirmAnswer),
}

fn is_live_pending(signal: &PendingSignal, now_ms: i64) -> bool {
    signal.status == SignalStatus::Pending && now_ms - signal.created_ms <= EXPIRY_MS
}

/// 409 when not pending, 410 when older than five minutes.
fn check_confirmable(signal: &PendingSignal, now_ms: i64) -> Result<(), SignalError> {
    if signal.status != SignalStatus::Pending {
        return Err(SignalError::NotPending {
            symbol: signal.input.symbol.clone(),
            status: signal.status.as_str(),
        });
    }
    let age = now_ms - signal.created_ms;
    if age > EXPIRY_MS {
        return Err(SignalError::Expired {
            symbol: signal.input.symbol.clone(),
            age_s: age / 1000,
        });
    }
    Ok(())
}
