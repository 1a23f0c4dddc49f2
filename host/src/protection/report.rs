//! The daily PnL report (spec: "send a PnL summary at 21:00 daily", `POST /api/status/report`):
//! the trades closed today in `[market] timezone`, their pnl, wins and losses, the open
//! positions with their unrealized pnl, equity and drawdown.
//!
//! The report is built even when the exchange or the messenger fails: what could not be read
//! is null, and the answer carries the whole report, so an agent can deliver it another way
//! when the messenger did not take it.

use chrono::DateTime;
use rust_decimal::Decimal;
use serde::Serialize;
use utoipa::ToSchema;

use super::drawdown::DrawdownStatus;
use super::equity::Equity;
use super::{Protection, ProtectionError};
use crate::activity::AgentName;
use crate::execution::stats::{Aggregate, chronological};
use crate::execution::trade::{CloseReason, ClosedTradeView};
use crate::execution::{ClosedTrade, Day, Trade};
use crate::messenger::templates;
use crate::money::json_amount;

/// An open position in the report.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OpenPosition {
    pub symbol: String,
    pub direction: crate::execution::Direction,
    pub bot: String,
    /// Coin quantity.
    pub size: f64,
    pub entry_px: f64,
    /// Last price; null when the prices could not be read.
    #[schema(required = true)]
    pub price: Option<f64>,
    /// Pnl if closed at `price`, net of the entry fee, before the exit fee; null without a
    /// price.
    #[schema(required = true)]
    pub unrealized_pnl: Option<f64>,
    /// `protected`, `pending` or `unprotected`.
    pub protection: String,
}

/// The daily PnL report. Amounts are in `currency`, net of fees.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DailyReport {
    /// The day reported, YYYY-MM-DD in `timezone`.
    pub date: String,
    /// `[market] timezone`.
    pub timezone: String,
    pub currency: String,
    /// Statistics of the trades closed today (`total_pnl` is the realized pnl).
    pub closed: Aggregate,
    /// The trades closed today, in the order they closed.
    pub trades: Vec<ClosedTradeView>,
    pub open_positions: Vec<OpenPosition>,
    /// Sum over the open positions; null when the prices could not be read.
    #[schema(required = true)]
    pub unrealized_pnl: Option<f64>,
    /// Entries today (the daily counter).
    pub trades_today: i64,
    /// Losing closes in a row today.
    pub consecutive_losses: i64,
    /// Equity, high-water mark, drawdown and the pause, measured for this report.
    pub drawdown: DrawdownStatus,
    /// ISO 8601.
    pub generated_at: String,
}

/// What building and sending the report came to.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReportOutcome {
    /// The messenger accepted the report.
    pub ok: bool,
    /// Same as `ok`: the boss got it (false also when the messenger is not configured).
    pub sent: bool,
    /// Messages it took (a long report is split); 0 when not sent.
    pub messages: usize,
    /// Why it was not sent: the messenger is not configured, refused it or was unreachable.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub error: Option<String>,
    pub report: DailyReport,
}

/// An amount for the boss: 2 decimals, with its sign.
fn signed(d: Decimal) -> String {
    let d = d.round_dp(2);
    if d > Decimal::ZERO { format!("+{d}") } else { d.to_string() }
}

fn closed_on(row: &ClosedTrade, day: Day, tz: chrono_tz::Tz) -> bool {
    DateTime::parse_from_rfc3339(&row.closed_at)
        .is_ok_and(|t| Day::of(t.to_utc(), tz).key == day.key)
}

fn position(trade: &Trade, price: Option<Decimal>, unrealized: Option<Decimal>) -> OpenPosition {
    let view = trade.view();
    OpenPosition {
        symbol: view.symbol,
        direction: view.direction,
        bot: view.bot,
        size: view.size,
        entry_px: view.entry_px,
        price: price.map(json_amount),
        unrealized_pnl: unrealized.map(json_amount),
        protection: view.protection,
    }
}

impl Protection {
    /// Builds today's report, sends it to the boss and logs it on the `finance` card (the
    /// scheduler's 21:00 job). Only a store failure is an error; a messenger failure is in
    /// the outcome.
    pub async fn daily_report(&self) -> Result<ReportOutcome, ProtectionError> {
        self.daily_report_as(AgentName::Finance).await
    }

    /// [`Protection::daily_report`], logged on `agent`'s card.
    pub async fn daily_report_as(
        &self,
        agent: AgentName,
    ) -> Result<ReportOutcome, ProtectionError> {
        let (report, note) = self.build_report().await?;
        let outcome = match self.inner.messenger.send(&templates::daily_report(&note)).await {
            Ok(sent) => ReportOutcome {
                ok: true,
                sent: true,
                messages: sent.message_ids.len(),
                error: None,
                report,
            },
            Err(err) => ReportOutcome {
                ok: false,
                sent: false,
                messages: 0,
                error: Some(err.to_string()),
                report,
            },
        };
        let (action, status) = match &outcome.error {
            None => (format!("daily report {} sent", outcome.report.date), "ok"),
            Some(err) => (format!("daily report {} not sent: {err}", outcome.report.date), "error"),
        };
        self.log(agent.as_str(), &action, status);
        Ok(outcome)
    }

    /// The report and its message, both from the same decimals.
    async fn build_report(&self) -> Result<(DailyReport, templates::DailyReport), ProtectionError> {
        let inner = &self.inner;
        let execution = &inner.execution;
        let today = execution.today();
        let measured = self.measure().await;
        let drawdown = self.apply_measurement(measured.as_ref());
        let rows: Vec<ClosedTrade> = chronological(execution.book())?
            .into_iter()
            .filter(|row| closed_on(row, today, inner.tz))
            .collect();
        let pnls: Vec<Decimal> = rows.iter().map(|r| r.pnl).collect();
        let closed = Aggregate::of(&pnls);
        // (trade, last price, unrealized pnl) per open position.
        let open: Vec<(Trade, Option<Decimal>, Option<Decimal>)> = match &measured {
            Ok(Equity { positions, .. }) => positions
                .iter()
                .map(|v| (v.trade.clone(), Some(v.price), Some(v.unrealized())))
                .collect(),
            Err(_) => {
                execution.book().open_trades()?.into_iter().map(|t| (t, None, None)).collect()
            }
        };
        let unrealized = measured.as_ref().ok().map(Equity::unrealized);
        let counters = execution.counters()?;
        let currency = self.currency().to_string();
        let note = templates::DailyReport {
            date: today.iso(),
            timezone: inner.config.market.timezone.clone(),
            currency: currency.clone(),
            closed: rows
                .iter()
                .map(|r| templates::ReportTrade {
                    symbol: r.trade.symbol.clone(),
                    direction: r.trade.direction.as_str().to_string(),
                    pnl: signed(r.pnl),
                    reason: reason_words(r.reason).to_string(),
                })
                .collect(),
            wins: closed.wins,
            losses: closed.losses,
            breakeven: closed.breakeven,
            realized_pnl: signed(pnls.iter().sum()),
            open: open
                .iter()
                .map(|(t, price, unrealized)| templates::ReportPosition {
                    symbol: t.symbol.clone(),
                    direction: t.direction.as_str().to_string(),
                    size: t.size.normalize().to_string(),
                    entry_px: t.entry_px.normalize().to_string(),
                    price: price.map(|p| p.normalize().to_string()),
                    unrealized_pnl: unrealized.map(signed),
                })
                .collect(),
            unrealized_pnl: unrealized.map(signed),
            equity: measured.as_ref().ok().map(|e| e.total().round_dp(2).to_string()),
            drawdown_pct: drawdown.drawdown_pct.map(|p| format!("{p:.2}")),
            paused: drawdown.paused,
        };
        let report = DailyReport {
            date: today.iso(),
            timezone: inner.config.market.timezone.clone(),
            currency,
            closed,
            trades: rows.iter().map(ClosedTrade::view).collect(),
            open_positions: open.iter().map(|(t, p, u)| position(t, *p, *u)).collect(),
            unrealized_pnl: unrealized.map(json_amount),
            trades_today: counters.trades_today,
            consecutive_losses: counters.consecutive_losses,
            drawdown,
            generated_at: self.now_iso(),
        };
        Ok((report, note))
    }
}

/// How a trade ended, in the boss's words.
fn reason_words(reason: CloseReason) -> &'static str {
    match reason {
        CloseReason::TakeProfit => "take-profit",
        CloseReason::StopLoss => "stop-loss",
        CloseReason::Market => "closed at market",
    }
}
