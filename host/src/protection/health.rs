//! The health check (spec: hourly, "check exchange connectivity"; a system alert on an
//! anomaly): one finding per check, and on any anomaly one system alert to the boss and one
//! activity-log entry.
//!
//! - `exchange`: the server time round trip (a public call, so it tests the road to the
//!   exchange, not the keys; an order with bad keys is refused loudly anyway).
//! - `clock`: |exchange server time − our clock| at the middle of that round trip.
//! - `license`: active, not living on the offline grace.
//! - `trades`: no open trade is `unprotected` (no stop-loss on the exchange), and the store's
//!   open trades match the exchange's open protection (every protected trade's order list is
//!   open there, and every open list belongs to a trade).
//! - `messenger`: configured and answering `getMe` (nothing is sent to the boss).

use std::time::Instant;

use serde::Serialize;
use utoipa::ToSchema;

use super::Protection;
use crate::activity::AgentName;
use crate::execution::trade::{ProtectionState, Trade};
use crate::execution::{ListRead, protection_gone};
use crate::messenger::{MessengerError, templates};

/// Largest clock difference with the exchange that passes. Exchange A refuses a signed
/// request stamped more than 1000 ms ahead of its clock; the client corrects by the offset it
/// measured, but the service's own times (signal expiry, TTLs, the day's boundary) drift by
/// the same amount, so a host whose clock is this far off needs its time sync fixed.
pub const MAX_CLOCK_SKEW_MS: i64 = 1000;

/// What was checked. (The document calls it `HealthCheck`: `Check` is a checklist item's.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = HealthCheck)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    Exchange,
    Clock,
    License,
    Trades,
    Messenger,
}

impl Check {
    /// The check's name as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exchange => "exchange",
            Self::Clock => "clock",
            Self::License => "license",
            Self::Trades => "trades",
            Self::Messenger => "messenger",
        }
    }
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = HealthVerdict)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    Anomaly,
    /// Could not be checked because an earlier check failed (the clock without the exchange).
    Unknown,
}

/// One check's outcome.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = HealthFinding)]
pub struct Finding {
    pub check: Check,
    pub verdict: Verdict,
    /// One sentence: what was measured, or what is wrong.
    pub detail: String,
}

/// The answer of a health check.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HealthReport {
    /// No anomaly.
    pub ok: bool,
    /// Findings with verdict `anomaly`.
    pub anomalies: usize,
    /// One per check, in the order exchange, clock, license, trades, messenger.
    pub findings: Vec<Finding>,
    /// The system alert reached the boss (false without anomalies).
    pub alerted: bool,
    /// Why the alert did not reach the boss.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub alert_error: Option<String>,
    /// ISO 8601.
    pub checked_at: String,
}

fn finding(check: Check, verdict: Verdict, detail: impl Into<String>) -> Finding {
    Finding { check, verdict, detail: detail.into() }
}

impl Protection {
    /// Runs every check; on an anomaly sends one system alert and logs on the `tech` card
    /// (the scheduler's hourly job).
    pub async fn health_check(&self) -> HealthReport {
        self.health_check_as(AgentName::Tech).await
    }

    /// [`Protection::health_check`], logged on `agent`'s card.
    pub async fn health_check_as(&self, agent: AgentName) -> HealthReport {
        let (exchange, clock) = self.check_exchange().await;
        let messenger = self.check_messenger().await;
        let trades = self.check_trades().await;
        let findings = vec![exchange, clock, self.check_license(), trades, messenger];
        let anomalies: Vec<String> = findings
            .iter()
            .filter(|f| f.verdict == Verdict::Anomaly)
            .map(|f| format!("{}: {}", f.check.as_str(), f.detail))
            .collect();
        let mut report = HealthReport {
            ok: anomalies.is_empty(),
            anomalies: anomalies.len(),
            findings,
            alerted: false,
            alert_error: None,
            checked_at: self.now_iso(),
        };
        if anomalies.is_empty() {
            self.log(agent.as_str(), "health check: ok", "ok");
            return report;
        }
        let summary = format!("health check: {}", anomalies.join("; "));
        tracing::warn!(%summary, "health check found anomalies");
        self.log(agent.as_str(), &summary, "error");
        let alert = templates::system_alert(&templates::SystemAlert { anomalies });
        match self.inner.messenger.send(&alert).await {
            Ok(_) => report.alerted = true,
            Err(err) => report.alert_error = Some(err.to_string()),
        }
        report
    }

    /// The server time round trip, and the clock difference it shows.
    async fn check_exchange(&self) -> (Finding, Finding) {
        let unknown = |why: &str| finding(Check::Clock, Verdict::Unknown, why);
        let name = self.inner.execution.exchange_name();
        let Some(exchange) = &self.inner.exchange else {
            return (
                finding(
                    Check::Exchange,
                    Verdict::Anomaly,
                    format!(
                        "no exchange client for the active exchange {name}; trading is unavailable"
                    ),
                ),
                unknown("not measured without an exchange client"),
            );
        };
        let clock = &self.inner.clock;
        let (before, started) = (clock.now_ms(), Instant::now());
        let answer = exchange.server_time().await;
        let (after, round_trip) = (clock.now_ms(), started.elapsed().as_millis());
        let server_ms = match answer {
            Ok(server_ms) => server_ms,
            Err(err) => {
                return (
                    finding(
                        Check::Exchange,
                        Verdict::Anomaly,
                        format!("{name} unreachable: {err}"),
                    ),
                    unknown("not measured: the exchange did not answer"),
                );
            }
        };
        let reached = finding(
            Check::Exchange,
            Verdict::Ok,
            format!("{name} answered the server time in {round_trip} ms"),
        );
        let skew = server_ms - (before + after) / 2;
        let clock = if skew.abs() > MAX_CLOCK_SKEW_MS {
            finding(
                Check::Clock,
                Verdict::Anomaly,
                format!(
                    "this host's clock is {} ms {} the exchange's (more than {MAX_CLOCK_SKEW_MS} \
                     ms); fix the host's time synchronisation",
                    skew.abs(),
                    if skew > 0 { "behind" } else { "ahead of" }
                ),
            )
        } else {
            finding(Check::Clock, Verdict::Ok, format!("{skew} ms from the exchange's clock"))
        };
        (reached, clock)
    }

    fn check_license(&self) -> Finding {
        let status = self.inner.license.status();
        let message = status.message.clone().unwrap_or_default();
        match (status.is_active(), status.message.is_some()) {
            (true, false) => {
                finding(Check::License, Verdict::Ok, format!("active ({})", status.health_plan()))
            }
            (true, true) => {
                finding(Check::License, Verdict::Anomaly, format!("active, but {message}"))
            }
            (false, _) => finding(
                Check::License,
                Verdict::Anomaly,
                format!("no active license: trading routes answer 503. {message}"),
            ),
        }
    }

    async fn check_trades(&self) -> Finding {
        let trades = match self.inner.execution.book().open_trades() {
            Ok(trades) => trades,
            Err(err) => {
                return finding(
                    Check::Trades,
                    Verdict::Anomaly,
                    format!("the open trades cannot be read: {err}"),
                );
            }
        };
        let unprotected: Vec<String> = trades
            .iter()
            .filter_map(|t| match t.protection.state() {
                ProtectionState::Unprotected { reason } => Some(format!(
                    "{} ({} without a stop-loss: {reason})",
                    t.symbol,
                    t.size.normalize()
                )),
                _ => None,
            })
            .collect();
        let mut problems = Vec::new();
        if !unprotected.is_empty() {
            problems.push(format!(
                "unprotected: {}; GET /api/trades/recover places the protection, or close the \
                 position",
                unprotected.join(", ")
            ));
        }
        match self.protection_mismatches(&trades).await {
            Ok(mismatches) => problems.extend(mismatches),
            Err(err) => {
                problems.push(format!("the exchange's open protection cannot be read: {err}"))
            }
        }
        if problems.is_empty() {
            finding(
                Check::Trades,
                Verdict::Ok,
                format!(
                    "{} open trade(s), none unprotected, all matching the exchange's open \
                     protection",
                    trades.len()
                ),
            )
        } else {
            finding(Check::Trades, Verdict::Anomaly, problems.join("; "))
        }
    }

    /// Differences between the store's protected trades and the exchange's open protection.
    async fn protection_mismatches(
        &self,
        trades: &[Trade],
    ) -> Result<Vec<String>, crate::execution::ExecutionError> {
        if self.inner.exchange.is_none() {
            return Ok(Vec::new());
        }
        let open = self.inner.execution.open_protection(ListRead::Always).await?;
        let mut found: Vec<String> = trades
            .iter()
            .filter(|t| protection_gone(t, &open))
            .map(|t| {
                let what = t.protection.orders_named();
                format!(
                    "{}: protected by {what} in the store, but the exchange has no such open \
                     order (the protection run settles it)",
                    t.symbol
                )
            })
            .collect();
        for list in &open.lists {
            let tracked = trades.iter().any(|t| t.protection.list_id() == Some(list.order_list_id));
            if !tracked {
                found.push(format!(
                    "{}: order list {} is open on the exchange but belongs to no open trade \
                     (GET /api/trades/recover adopts it)",
                    list.symbol, list.order_list_id
                ));
            }
        }
        Ok(found)
    }

    async fn check_messenger(&self) -> Finding {
        match self.inner.messenger.check_reachable().await {
            Ok(()) => finding(Check::Messenger, Verdict::Ok, "the Bot API answered getMe"),
            Err(MessengerError::NotConfigured) => finding(
                Check::Messenger,
                Verdict::Anomaly,
                "not configured (MESSENGER_BOT_TOKEN and MESSENGER_CHAT_ID): alerts cannot reach \
                 the boss",
            ),
            Err(err) => finding(Check::Messenger, Verdict::Anomaly, err.to_string()),
        }
    }
}
