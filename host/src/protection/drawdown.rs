//! The drawdown watch (spec: "alert immediately when drawdown exceeds 15%"): equity against
//! its high-water mark, and the pause of new entries that a breach starts.
//!
//! The mark lives in table `protection` under `drawdown`; the pause is execution's own state
//! (`execution::limits`), which this watch sets and clears. Every measurement is applied to
//! both in one write transaction, so two checks at once (the minute job and an agent's
//! `GET /api/protection`) cannot both start the pause: the boss gets one alert per breach. The
//! pause holds (across restarts) until someone resumes; a fall that continues while paused
//! alerts nobody again. Resuming sets the mark to the equity of that moment, so the account
//! must fall by the limit again, from where it stands, before entries pause again.

use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::equity::Equity;
use super::{Protection, ProtectionError};
use crate::activity::AgentName;
use crate::execution::EntryPause;
use crate::execution::limits;
use crate::messenger::templates;
use crate::metrics::EquityReading;
use crate::money::json_amount;
use crate::store::{StoreError, Writer, tables};

/// Key of the drawdown state in table `protection`.
const KEY: &str = "drawdown";
/// The first word of every pause reason: the API's error code (409 `drawdown_paused`) and
/// what a refused confirm's `reason` starts with.
const PAUSE_CODE: &str = "drawdown_paused";

/// What this watch stores: the mark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Mark {
    /// Highest equity measured since the last resume; none before the first measurement.
    high_water_mark: Option<Decimal>,
}

/// The account's equity over a range (`GET /api/equity`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EquitySeries {
    /// The currency of every amount.
    pub currency: String,
    /// The range, epoch ms.
    pub from: i64,
    pub to: i64,
    /// Oldest first; one a minute for the last two weeks, one an hour before, fewer when the
    /// range holds more than the points asked for.
    pub points: Vec<super::equity_series::EquityPoint>,
}

/// The mark and execution's pause, as one measurement sees them.
#[derive(Debug, Clone, Default, PartialEq)]
struct State {
    high_water_mark: Option<Decimal>,
    pause: Option<EntryPause>,
}

/// The drawdown as the API and the report show it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DrawdownStatus {
    /// False when equity could not be measured now (`error` says why); the pause state is the
    /// stored one either way.
    pub ok: bool,
    /// The currency every amount is in (`[market] quote_asset` on exchange A, USDC on
    /// exchange B).
    pub currency: String,
    /// Quote balance + open positions at market; null when it could not be measured.
    #[schema(required = true)]
    pub equity: Option<f64>,
    /// Free + locked quote asset; null when it could not be measured.
    #[schema(required = true)]
    pub quote_balance: Option<f64>,
    /// The open positions at their last prices (a sell position counts negative: the buy-back
    /// it owes); null when it could not be measured.
    #[schema(required = true)]
    pub positions_value: Option<f64>,
    /// Highest equity since the first measurement or the last resume; null before any.
    #[schema(required = true)]
    pub high_water_mark: Option<f64>,
    /// (high_water_mark − equity) / high_water_mark × 100, 0 at or above the mark; null
    /// when equity could not be measured.
    #[schema(required = true)]
    pub drawdown_pct: Option<f64>,
    /// `[protection] max_drawdown_pct`: above it entries pause.
    pub max_drawdown_pct: f64,
    /// New entries are refused (`drawdown_paused`) until resumed.
    pub paused: bool,
    /// ISO 8601 time the pause started; null when not paused.
    #[schema(required = true)]
    pub paused_since: Option<String>,
    /// The pause reason entries are refused with; null when not paused.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// This measurement started the pause (and sent the one alert of this breach).
    pub newly_paused: bool,
    /// ISO 8601.
    pub checked_at: String,
    /// Why equity could not be measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub error: Option<String>,
}

/// The answer of a resume.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Resumed {
    pub ok: bool,
    /// Entries were paused before this call.
    pub was_paused: bool,
    /// The state afterwards: not paused, the mark at the current equity.
    pub protection: DrawdownStatus,
}

/// The answer of `POST /api/protection/pause`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Paused {
    pub ok: bool,
    /// This call paused entries (false: they were paused already, since `since`).
    pub newly_paused: bool,
    /// ISO 8601 time the pause started.
    pub since: String,
    /// What entries are refused with (`entries_paused: ...`).
    pub reason: String,
}

/// The fall below the mark in percent; 0 at or above it (or without a positive mark).
fn drawdown_pct(high_water_mark: Decimal, equity: Decimal) -> Decimal {
    if high_water_mark <= Decimal::ZERO || equity >= high_water_mark {
        return Decimal::ZERO;
    }
    (high_water_mark - equity) / high_water_mark * Decimal::ONE_HUNDRED
}

/// One measurement applied to the state: the mark follows equity up; a fall above `max_pct`
/// starts a pause unless one holds already. True when this measurement started it.
fn apply(state: &mut State, equity: Decimal, max_pct: Decimal, now: &str, currency: &str) -> bool {
    let mark = state.high_water_mark.map_or(equity, |mark| mark.max(equity));
    state.high_water_mark = Some(mark);
    let pct = drawdown_pct(mark, equity);
    if pct <= max_pct || state.pause.is_some() {
        return false;
    }
    let reason = format!(
        "{PAUSE_CODE}: equity {} {currency} is {}% below its high-water mark {} {currency}, \
         above [protection] max_drawdown_pct {}%; new entries are paused until POST \
         /api/protection/resume",
        equity.round_dp(2),
        pct.round_dp(2),
        mark.round_dp(2),
        max_pct.normalize()
    );
    state.pause = Some(EntryPause { since: now.to_string(), reason });
    true
}

fn read(w: &Writer) -> Result<State, StoreError> {
    let mark: Mark = w.get(tables::PROTECTION, KEY)?.unwrap_or_default();
    Ok(State { high_water_mark: mark.high_water_mark, pause: limits::pause_of(w)? })
}

/// Stores the mark, and sets or lifts execution's pause.
fn write(w: &Writer, state: &State) -> Result<(), StoreError> {
    w.put(tables::PROTECTION, KEY, &Mark { high_water_mark: state.high_water_mark })?;
    match &state.pause {
        Some(pause) => limits::pause_in(w, pause),
        None => limits::resume_in(w).map(|_| ()),
    }
}

impl Protection {
    /// Measures equity now and applies it: the mark rises with equity; a fall above
    /// `[protection] max_drawdown_pct` pauses new entries and alerts the boss, once per
    /// breach. The scheduler runs it every minute; `GET /api/protection` runs it on demand.
    /// A failed measurement changes nothing and is reported in `error`.
    pub async fn drawdown_check(&self) -> DrawdownStatus {
        let measured = self.measure().await;
        self.apply_measurement(measured.as_ref())
    }

    /// [`Protection::drawdown_check`] on a measurement already taken (the report shares one).
    pub(super) fn apply_measurement(
        &self,
        measured: Result<&Equity, &ProtectionError>,
    ) -> DrawdownStatus {
        let equity = match measured {
            Ok(equity) => equity,
            Err(err) => return self.stored_status(err.to_string()),
        };
        let now = self.now_iso();
        let max_pct = self.inner.config.protection.max_drawdown_pct;
        let currency = self.currency().to_string();
        let now_ms = self.inner.clock.now_ms();
        let applied = self.inner.store.write(|w| {
            super::equity_series::record(w, now_ms, equity.total())?;
            let mut state = read(w)?;
            let before = state.clone();
            let started = apply(&mut state, equity.total(), max_pct, &now, &currency);
            if state != before {
                write(w, &state)?;
            }
            Ok((state, started))
        });
        match applied {
            Ok((state, started)) => {
                let status = self.status(&state, Some(equity), started, None);
                let unrealised_pnl = json_amount(equity.unrealized());
                let reading = status.equity.map(|total| EquityReading {
                    equity: total,
                    high_water_mark: status.high_water_mark,
                    drawdown_pct: status.drawdown_pct,
                    unrealised_pnl,
                });
                if let Some(reading) = reading {
                    self.inner.metrics.equity(reading, self.inner.clock.now());
                }
                if started {
                    self.on_breach(&status);
                }
                status
            }
            Err(err) => self.stored_status(err.to_string()),
        }
    }

    /// The equity series of the last `days` days, at most `points` points (see
    /// [`super::equity_series`]).
    pub fn equity_series(&self, days: u64, points: usize) -> Result<EquitySeries, ProtectionError> {
        let to = self.inner.clock.now_ms();
        let from = to
            .saturating_sub(i64::try_from(days).unwrap_or(i64::MAX / 2).saturating_mul(86_400_000));
        let points = self.inner.store.read(|r| super::equity_series::read(r, from, to, points))?;
        Ok(EquitySeries { currency: self.currency().to_string(), from, to, points })
    }

    /// Pauses new entries for the boss until someone resumes them (`by` names who).
    pub fn pause_entries(&self, agent: AgentName, by: &str) -> Result<Paused, ProtectionError> {
        let (pause, newly) = self.inner.execution.pause_entries(by)?;
        let what = if newly { "entries paused" } else { "entries were paused already" };
        self.log(agent.as_str(), &format!("{what} by {by}"), "ok");
        Ok(Paused { ok: true, newly_paused: newly, since: pause.since, reason: pause.reason })
    }

    /// Clears the pauses (the drawdown's and the boss's) and sets the high-water mark to the
    /// equity of now. Fails, changing
    /// nothing, when equity cannot be measured: a mark must be a real measurement.
    pub async fn resume_entries(&self, agent: AgentName) -> Result<Resumed, ProtectionError> {
        let equity = self.measure().await?;
        let total = equity.total();
        let (state, was_paused) = self.inner.store.write(|w| {
            let mut state = read(w)?;
            let by_boss = limits::operator_resume_in(w)?;
            let was_paused = state.pause.take().is_some() || by_boss;
            state.high_water_mark = Some(total);
            write(w, &state)?;
            Ok((state, was_paused))
        })?;
        let what = if was_paused { "entries resumed" } else { "not paused" };
        self.log(
            agent.as_str(),
            &format!(
                "drawdown: {what}; high-water mark set to equity {} {}",
                total.round_dp(2),
                self.currency()
            ),
            "ok",
        );
        Ok(Resumed {
            ok: true,
            was_paused,
            protection: self.status(&state, Some(&equity), false, None),
        })
    }

    /// The stored pause without a measurement of now.
    fn stored_status(&self, error: String) -> DrawdownStatus {
        let mark = self.inner.store.read(|r| r.get::<Mark>(tables::PROTECTION, KEY));
        let stored = mark.and_then(|mark| {
            Ok(State {
                high_water_mark: mark.unwrap_or_default().high_water_mark,
                pause: self.inner.execution.entry_pause()?,
            })
        });
        match stored {
            Ok(state) => self.status(&state, None, false, Some(error)),
            Err(store) => {
                self.status(&State::default(), None, false, Some(format!("{error}; {store}")))
            }
        }
    }

    fn status(
        &self,
        state: &State,
        equity: Option<&Equity>,
        newly_paused: bool,
        error: Option<String>,
    ) -> DrawdownStatus {
        let total = equity.map(Equity::total);
        let pct = total.zip(state.high_water_mark).map(|(e, mark)| drawdown_pct(mark, e));
        DrawdownStatus {
            ok: error.is_none(),
            currency: self.currency().to_string(),
            equity: total.map(json_amount),
            quote_balance: equity.map(|e| json_amount(e.quote_balance)),
            positions_value: equity.map(|e| json_amount(e.positions_value())),
            high_water_mark: state.high_water_mark.map(json_amount),
            drawdown_pct: pct.map(|p| p.round_dp(4).to_f64().unwrap_or(0.0)),
            max_drawdown_pct: json_amount(self.inner.config.protection.max_drawdown_pct),
            paused: state.pause.is_some(),
            paused_since: state.pause.as_ref().map(|p| p.since.clone()),
            reason: state.pause.as_ref().map(|p| p.reason.clone()),
            newly_paused,
            checked_at: self.now_iso(),
            error,
        }
    }

    /// The one alert of a breach, plus the log and the activity entry.
    fn on_breach(&self, status: &DrawdownStatus) {
        let text = |x: Option<f64>| x.map_or_else(|| "?".into(), |x| format!("{x:.2}"));
        let reason = status.reason.clone().unwrap_or_default();
        tracing::warn!(%reason, "drawdown limit breached; new entries paused");
        self.log("finance", &reason, "error");
        self.alert(
            templates::drawdown_alert(&templates::DrawdownAlert {
                equity: text(status.equity),
                high_water_mark: text(status.high_water_mark),
                drawdown_pct: text(status.drawdown_pct),
                max_drawdown_pct: format!("{}", status.max_drawdown_pct),
                currency: status.currency.clone(),
            }),
            "drawdown alert",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn the_mark_follows_equity_up_and_a_fall_above_the_limit_pauses_once() {
        let mut state = State::default();
        let max = d("15");
        assert!(!apply(&mut state, d("10000"), max, "t1", "USDT"));
        assert!(!apply(&mut state, d("10500"), max, "t2", "USDT"));
        assert_eq!(state.high_water_mark, Some(d("10500")));
        // Exactly 15 % below is not above the limit.
        assert!(!apply(&mut state, d("8925"), max, "t3", "USDT"));
        assert!(state.pause.is_none());
        assert!(apply(&mut state, d("8924"), max, "t4", "USDT"), "15.01 % pauses");
        let pause = state.pause.clone().unwrap();
        assert_eq!(pause.since, "t4");
        assert!(pause.reason.starts_with(PAUSE_CODE), "{}", pause.reason);
        assert!(pause.reason.contains("15.01% below its high-water mark 10500 USDT"), "{pause:?}");
        assert!(!apply(&mut state, d("8000"), max, "t5", "USDT"), "one alert per breach");
        assert_eq!(state.pause.unwrap().since, "t4");
    }

    #[test]
    fn no_positive_mark_means_no_drawdown() {
        assert_eq!(drawdown_pct(Decimal::ZERO, d("-5")), Decimal::ZERO);
        assert_eq!(drawdown_pct(d("100"), d("120")), Decimal::ZERO);
        assert_eq!(drawdown_pct(d("200"), d("150")), d("25"));
    }
}
