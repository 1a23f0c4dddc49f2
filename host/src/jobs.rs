//! The built-in jobs of the scheduler (`crate::scheduler` decides when): what each calls, when,
//! and on whose dashboard card it shows.
//!
//! A job calls exactly the area method its route calls (`GET /api/pending-entries/check` →
//! `Execution::check_pending`, ...). Those methods guard themselves (a lock per symbol, a
//! mutex per run), so a run started by an agent and one started here never overlap; the
//! scheduler adds that a job is never started again while its previous run is still going.

use crate::activity::AgentName;
use crate::execution::{ExecutionError, Telling, run_bounded};
use crate::plugins::PluginError;
use crate::protection::ProtectionError;
use crate::scans::{PUMP_MOMENTUM, ScanError};
use crate::scheduler::{Job, Outcome};
use crate::state::AppState;

/// Every built-in job, in the order `GET /api/scheduler` lists them: the protection loop
/// first, then housekeeping, then the trading loop.
pub const JOBS: &[Job<AppState>] = &[
    Job {
        name: "trailing_stop",
        cron: "* * * * *",
        human: "every minute",
        agent: AgentName::Finance,
        switch: |c| c.trailing_stop,
        run: |s| Box::pin(trailing_stop(s)),
    },
    Job {
        name: "drawdown_check",
        cron: "* * * * *",
        human: "every minute",
        agent: AgentName::Finance,
        switch: |c| c.drawdown_check,
        run: |s| Box::pin(drawdown_check(s)),
    },
    Job {
        name: "pending_entries_check",
        cron: "* * * * *",
        human: "every minute",
        agent: AgentName::Finance,
        switch: |c| c.pending_entries_check,
        run: |s| Box::pin(pending_entries_check(s)),
    },
    Job {
        name: "reconciliation",
        cron: "* * * * *",
        human: "every minute",
        agent: AgentName::BotOps,
        switch: |c| c.reconciliation,
        run: |s| Box::pin(reconciliation(s)),
    },
    Job {
        name: "daily_pnl",
        cron: "0 21 * * *",
        human: "daily at 21:00",
        agent: AgentName::Finance,
        switch: |c| c.daily_pnl,
        run: |s| Box::pin(daily_pnl(s)),
    },
    Job {
        name: "health_check",
        cron: "0 * * * *",
        human: "every hour, on the hour",
        agent: AgentName::Tech,
        switch: |c| c.health_check,
        run: |s| Box::pin(health_check(s)),
    },
    Job {
        name: "signal_cleanup",
        cron: "*/5 * * * *",
        human: "every 5 minutes",
        agent: AgentName::BotOps,
        switch: |c| c.signal_cleanup,
        run: |s| Box::pin(signal_cleanup(s)),
    },
    Job {
        name: "pump_scan",
        cron: "*/5 * * * *",
        human: "every 5 minutes",
        agent: AgentName::Scout,
        switch: |c| c.pump_scan,
        run: |s| Box::pin(pump_scan(s)),
    },
    Job {
        name: "pump_outcomes",
        cron: "30 * * * *",
        human: "every hour at :30",
        agent: AgentName::Scout,
        switch: |c| c.pump_outcomes,
        run: |s| Box::pin(pump_outcomes(s)),
    },
];

fn execution_failed(err: ExecutionError) -> Outcome {
    match err {
        ExecutionError::NoExchange(_) => Outcome::Skipped(err.to_string()),
        err => Outcome::failed(err.to_string()),
    }
}

async fn pending_entries_check(state: AppState) -> Outcome {
    let execution = state.execution.clone();
    match run_bounded(async move { execution.check_pending().await }).await {
        Ok(report) => {
            let summary = format!(
                "pending entries: {} checked, {} filled, {} expired, {} partially filled",
                report.checked,
                report.filled.len(),
                report.expired.len(),
                report.partially_filled.len()
            );
            if !report.errors.is_empty() {
                return Outcome::failed(format!("{summary}; {}", report.errors.join("; ")));
            }
            let settled =
                report.filled.len() + report.expired.len() + report.partially_filled.len();
            if settled > 0 { Outcome::notable(summary) } else { Outcome::quiet(summary) }
        }
        Err(err) => execution_failed(err),
    }
}

/// The minute's reconciliation: the journal, open trades and the account's holdings; the boss
/// hears only what was not told before.
async fn reconciliation(state: AppState) -> Outcome {
    if let Some(skipped) = no_exchange(&state) {
        return skipped;
    }
    let execution = state.execution.clone();
    match run_bounded(async move { execution.reconcile_telling(Telling::New).await }).await {
        Ok(report) if report.actions.is_empty() => Outcome::quiet("nothing to reconcile"),
        Ok(report) => Outcome::notable(format!(
            "reconciliation: {} findings ({} adopted, {} closed)",
            report.actions.len(),
            report.recovered.len(),
            report.closed.len()
        )),
        Err(err) => execution_failed(err),
    }
}

async fn signal_cleanup(state: AppState) -> Outcome {
    // The spec's default max_age_minutes: a pending signal older than 5 minutes expires.
    let answer = state.signals.cleanup(5);
    let summary =
        format!("signals: {} expired, {} deleted", answer.count_expired, answer.count_deleted);
    if answer.count_expired + answer.count_deleted > 0 {
        Outcome::notable(summary)
    } else {
        Outcome::quiet(summary)
    }
}

async fn pump_scan(state: AppState) -> Outcome {
    if state.plugins.get(PUMP_MOMENTUM).is_none() {
        return Outcome::Skipped(format!("no {PUMP_MOMENTUM} plugin loaded"));
    }
    // The service's own scan: its reads are paced within the read share, never refused.
    let scan = state.scans.pump_scan(AgentName::Scout.as_str());
    match crate::exchange::budget::in_background(scan).await {
        Ok(answer) => {
            let summary = format!(
                "pump scan: {} symbols, {} alerts, {} not notified",
                answer.scanned,
                answer.count,
                answer.notify_errors.len()
            );
            if !answer.notify_errors.is_empty() {
                Outcome::failed(format!("{summary}; {}", answer.notify_errors.join("; ")))
            } else if answer.count == 0 {
                Outcome::quiet(summary)
            } else {
                Outcome::notable(summary)
            }
        }
        Err(ScanError::Plugin(err @ PluginError::Disabled(_))) => Outcome::Skipped(err.to_string()),
        Err(err) => Outcome::failed(err.to_string()),
    }
}

async fn pump_outcomes(state: AppState) -> Outcome {
    if let Some(skipped) = no_exchange(&state) {
        return skipped;
    }
    match crate::exchange::budget::in_background(state.scans.pump_outcomes()).await {
        Ok(report) => {
            let summary =
                format!("pump outcomes: {} updated, {} complete", report.updated, report.completed);
            if !report.errors.is_empty() {
                Outcome::failed(format!("{summary}; {}", report.errors.join("; ")))
            } else if report.updated == 0 {
                Outcome::quiet(summary)
            } else {
                Outcome::notable(summary)
            }
        }
        Err(err) => Outcome::failed(err.to_string()),
    }
}

fn no_exchange(state: &AppState) -> Option<Outcome> {
    state.exchange.is_none().then(|| {
        Outcome::Skipped(format!(
            "no exchange client for the active exchange {}",
            state.execution.exchange_name()
        ))
    })
}

async fn trailing_stop(state: AppState) -> Outcome {
    if let Some(skipped) = no_exchange(&state) {
        return skipped;
    }
    let protection = state.protection.clone();
    match run_bounded(async move { protection.trailing_run().await }).await {
        Ok(report) => {
            let summary = format!(
                "trailing: {} stops moved, {} gaps",
                report.updated.len(),
                report.gaps.len()
            );
            if !report.errors.is_empty() {
                return Outcome::failed(format!("{summary}; {}", report.errors.join("; ")));
            }
            if report.updated.is_empty() && report.gaps.is_empty() {
                Outcome::quiet(summary)
            } else {
                Outcome::notable(summary)
            }
        }
        Err(err @ ProtectionError::NoExchange(_)) => Outcome::Skipped(err.to_string()),
        Err(err) => Outcome::failed(err.to_string()),
    }
}

async fn drawdown_check(state: AppState) -> Outcome {
    if let Some(skipped) = no_exchange(&state) {
        return skipped;
    }
    let status = state.protection.drawdown_check().await;
    if let Some(error) = status.error {
        return Outcome::failed(error);
    }
    let pct = status.drawdown_pct.unwrap_or(0.0);
    let mut summary = format!(
        "drawdown {pct:.2}% of max {}%, equity {:.2} {}",
        status.max_drawdown_pct,
        status.equity.unwrap_or(0.0),
        status.currency
    );
    if status.paused {
        summary.push_str("; new entries paused");
    }
    // A breach is logged and alerted by the protection area itself.
    Outcome::quiet(summary)
}

async fn daily_pnl(state: AppState) -> Outcome {
    match state.protection.daily_report().await {
        // Protection logs the report (sent or not) on the finance card itself.
        Ok(outcome) if outcome.sent => Outcome::quiet(format!(
            "daily report {} sent ({} message(s))",
            outcome.report.date, outcome.messages
        )),
        Ok(outcome) => Outcome::Failed {
            error: format!(
                "daily report {} not sent: {}",
                outcome.report.date,
                outcome.error.unwrap_or_default()
            ),
            logged: true,
        },
        Err(err) => Outcome::failed(err.to_string()),
    }
}

async fn health_check(state: AppState) -> Outcome {
    // Runs without an exchange client too: that is one of the anomalies it reports.
    let report = state.protection.health_check().await;
    if report.ok {
        return Outcome::quiet("health check: ok");
    }
    let anomalies: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.verdict == crate::protection::Verdict::Anomaly)
        .map(|f| format!("{}: {}", f.check.as_str(), f.detail))
        .collect();
    let alert = if report.alerted { "the boss was alerted" } else { "the alert was not sent" };
    // An anomaly shows as the job's error; protection already logged and alerted it.
    Outcome::Failed {
        error: format!("health check: {} ({alert})", anomalies.join("; ")),
        logged: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SchedulerConfig;
    use crate::scheduler::Schedule;

    #[test]
    fn every_job_has_a_valid_schedule_and_its_name_is_its_own_switch() {
        for job in JOBS {
            let schedule = Schedule::new(job.cron, job.human, chrono_tz::Tz::UTC);
            assert!(schedule.next_after(chrono::Utc::now()).is_some(), "{job:?}");
        }
        for job in JOBS {
            let toml: String = JOBS
                .iter()
                .map(|other| format!("{} = {}\n", other.name, other.name != job.name))
                .collect();
            let config: SchedulerConfig = toml::from_str(&toml).expect("every name is a key");
            let on: Vec<&str> =
                JOBS.iter().filter(|j| (j.switch)(&config)).map(|j| j.name).collect();
            assert_eq!(on.len(), JOBS.len() - 1, "{} switches only itself: {on:?}", job.name);
            assert!(!on.contains(&job.name));
        }
    }
}
