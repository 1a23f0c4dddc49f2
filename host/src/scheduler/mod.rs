//! The built-in scheduler: runs the spec's scheduled jobs (trailing, drawdown, pending
//! entries, the 21:00 report, health, signal cleanup, pump scan) so the service protects its
//! positions without an agent calling it every minute.
//!
//! It owns only *when*: the job table (`crate::jobs`, each job calling the same area method
//! as its route) is handed to it with the context every run gets, so this module names no
//! area above it. Every due decision reads the [`Clock`](crate::clock::Clock):
//! the background loop merely wakes every `[scheduler] poll_seconds` of real time and asks
//! [`Scheduler::start_due`]; tests move a test clock and call [`Scheduler::tick`].

mod job;
mod schedule;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use chrono_tz::Tz;
use serde::Serialize;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use utoipa::ToSchema;

use crate::background::Background;

use crate::activity::Dashboard;
use crate::clock::SharedClock;
use crate::config::SchedulerConfig;
use crate::metrics::Metrics;
pub use job::{Job, Outcome, Run};
pub use schedule::Schedule;

/// How long stopping the scheduler's loop lets running jobs finish before it cancels them (a money
/// step inside a job runs in its own task and finishes regardless, see `run_bounded`).
const STOP_GRACE: Duration = Duration::from_secs(10);

/// The scheduler's face: the job table with each job's status. Every run of a job gets a
/// clone of the context `C` (the service's `AppState`). Cheap to clone.
pub struct Scheduler<C> {
    inner: Arc<Inner<C>>,
}

impl<C> Clone for Scheduler<C> {
    fn clone(&self) -> Self {
        Self { inner: self.inner.clone() }
    }
}

/// Where a run's end is told besides the job's status: the dashboard's activity log (notable
/// runs and new failures) and the metrics.
pub struct Reporting {
    pub dashboard: Arc<Dashboard>,
    pub metrics: Metrics,
}

struct Inner<C> {
    clock: SharedClock,
    reporting: Reporting,
    enabled: bool,
    tz: Tz,
    slots: Vec<Slot<C>>,
    /// Whether a background loop wakes the scheduler (see [`spawn`]).
    polling: AtomicBool,
}

struct Slot<C> {
    job: Job<C>,
    schedule: Schedule,
    enabled: bool,
    status: Mutex<Status>,
}

#[derive(Debug, Default)]
struct Status {
    running: bool,
    next_run: Option<DateTime<Utc>>,
    last_run: Option<DateTime<Utc>>,
    last_finished: Option<DateTime<Utc>>,
    last_status: Option<RunStatus>,
    last_result: Option<String>,
    last_error: Option<String>,
    runs: u64,
}

/// How the last run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Ok,
    /// Nothing to run against (no exchange client, no plugin loaded).
    Skipped,
    Error,
}

/// The `status` label of `spotbot_scheduler_job_runs_total`.
impl crate::metrics::MetricLabel for RunStatus {
    fn metric_label(&self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Skipped => "skipped",
            RunStatus::Error => "error",
        }
    }
}

impl<C: Clone + Send + 'static> Scheduler<C> {
    /// The table of `jobs` for `config`, each enabled job's first run the first time of its
    /// schedule strictly after now. `tz` is `[market] timezone`.
    pub fn new(
        config: &SchedulerConfig,
        tz: Tz,
        clock: SharedClock,
        jobs: &[Job<C>],
        reporting: Reporting,
    ) -> Self {
        let now = clock.now();
        let slots = jobs
            .iter()
            .map(|job| {
                let schedule = Schedule::new(job.cron, job.human, tz);
                let enabled = config.enabled && (job.switch)(config);
                let next_run = if enabled { schedule.next_after(now) } else { None };
                Slot {
                    job: *job,
                    schedule,
                    enabled,
                    status: Mutex::new(Status { next_run, ..Status::default() }),
                }
            })
            .collect();
        let polling = AtomicBool::new(false);
        let inner = Inner { clock, reporting, enabled: config.enabled, tz, slots, polling };
        Self { inner: Arc::new(inner) }
    }

    /// Starts every enabled job whose next run is at or before the clock's now and that is not
    /// still running, each in its own task, and moves its next run to the first time of its
    /// schedule after now. A job that is due while its previous run still goes on is not
    /// started (that time is skipped, with a warning). Runs missed while the clock jumped
    /// (or the service was stopped) are not made up: a job runs once, then keeps its rhythm.
    pub fn start_due(&self, context: &C) -> Vec<(&'static str, JoinHandle<()>)> {
        let now = self.inner.clock.now();
        let mut started = Vec::new();
        for (index, slot) in self.inner.slots.iter().enumerate() {
            if !slot.enabled {
                continue;
            }
            let mut status = slot.status();
            if status.next_run.is_none_or(|next| next > now) {
                continue;
            }
            status.next_run = slot.schedule.next_after(now);
            if status.running {
                tracing::warn!(
                    job = slot.job.name,
                    "the previous run is still going; this run is skipped"
                );
                continue;
            }
            status.running = true;
            status.last_run = Some(now);
            drop(status);
            let run = (slot.job.run)(context.clone());
            let guard = RunGuard { scheduler: self.clone(), index, done: false };
            let task = tokio::spawn(async move {
                let outcome = run.await;
                guard.finish(outcome);
            });
            started.push((slot.job.name, task));
        }
        started
    }

    /// Starts the due jobs and waits until they have finished; returns their names. The test
    /// suite's way to run the scheduler after moving its clock.
    pub async fn tick(&self, context: &C) -> Vec<&'static str> {
        let started = self.start_due(context);
        let mut names = Vec::with_capacity(started.len());
        for (name, task) in started {
            let _ = task.await;
            names.push(name);
        }
        names
    }

    /// Every job with its schedule, its last run and its next run.
    pub fn view(&self) -> SchedulerView {
        let jobs = self.inner.slots.iter().map(Slot::view).collect();
        SchedulerView {
            enabled: self.inner.enabled,
            polling: self.inner.polling.load(Ordering::Relaxed),
            timezone: self.inner.tz.name().to_string(),
            now: iso(self.inner.clock.now()),
            jobs,
        }
    }

    fn record(&self, index: usize, outcome: Outcome) {
        let dashboard = &self.inner.reporting.dashboard;
        let slot = &self.inner.slots[index];
        let name = slot.job.name;
        let agent = slot.job.agent.as_str();
        let mut status = slot.status();
        status.running = false;
        status.runs += 1;
        status.last_finished = Some(self.inner.clock.now());
        if !matches!(outcome, Outcome::Failed { .. }) {
            status.last_error = None;
        }
        let run = match outcome {
            Outcome::Done { summary, notable } => {
                tracing::debug!(job = name, %summary, "scheduled job ran");
                if notable {
                    dashboard.record(agent, &format!("scheduler {name}: {summary}"), "ok");
                }
                status.last_result = Some(summary);
                RunStatus::Ok
            }
            Outcome::Skipped(why) => {
                tracing::debug!(job = name, %why, "scheduled job skipped");
                status.last_result = Some(format!("skipped: {why}"));
                RunStatus::Skipped
            }
            Outcome::Failed { error, logged } => {
                // A failure is logged loudly (and put on the dashboard) when it starts or its
                // reason changes, not again every minute while it lasts.
                let new = status.last_error.as_deref() != Some(error.as_str());
                if new {
                    tracing::warn!(job = name, %error, "scheduled job failed; it runs again at its next time");
                } else {
                    tracing::debug!(job = name, %error, "scheduled job failed again");
                }
                if !logged && new {
                    dashboard.record(agent, &format!("scheduler {name} failed: {error}"), "error");
                }
                status.last_result = Some("failed".into());
                status.last_error = Some(error);
                RunStatus::Error
            }
        };
        status.last_status = Some(run);
        self.inner.reporting.metrics.job_run(name, run);
    }
}

impl<C> Slot<C> {
    fn status(&self) -> MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn view(&self) -> JobView {
        let status = self.status();
        JobView {
            name: self.job.name.to_string(),
            runner: self.job.agent.as_str().to_string(),
            enabled: self.enabled,
            schedule: ScheduleView {
                cron: self.schedule.expression().to_string(),
                timezone: self.schedule.timezone().name().to_string(),
                human: self.schedule.human().to_string(),
            },
            running: status.running,
            runs: status.runs,
            last_run: status.last_run.map(iso),
            last_finished: status.last_finished.map(iso),
            last_status: status.last_status,
            last_result: status.last_result.clone(),
            last_error: status.last_error.clone(),
            next_run: status.next_run.map(iso),
        }
    }
}

/// Records the end of a run, also when the run panicked or was cancelled by a stop (the guard
/// is dropped without [`RunGuard::finish`]), so a job is never left "running" for ever.
struct RunGuard<C: Clone + Send + 'static> {
    scheduler: Scheduler<C>,
    index: usize,
    done: bool,
}

impl<C: Clone + Send + 'static> RunGuard<C> {
    fn finish(mut self, outcome: Outcome) {
        self.done = true;
        self.scheduler.record(self.index, outcome);
    }
}

impl<C: Clone + Send + 'static> Drop for RunGuard<C> {
    fn drop(&mut self) {
        if !self.done {
            let why =
                if std::thread::panicking() { "the run panicked" } else { "the run was stopped" };
            self.scheduler.record(self.index, Outcome::failed(why));
        }
    }
}

fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `GET /api/scheduler`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SchedulerView {
    /// `[scheduler] enabled`: false runs no job.
    pub enabled: bool,
    /// Whether the background loop wakes the scheduler (false when disabled or
    /// `poll_seconds = 0`; then nothing runs by itself).
    pub polling: bool,
    /// `[market] timezone`, in which every schedule is read.
    pub timezone: String,
    /// The service clock's now (ISO 8601, UTC), against which `next_run` was computed.
    pub now: String,
    pub jobs: Vec<JobView>,
}

/// One job.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct JobView {
    /// The job's name and its switch in `[scheduler]`.
    #[schema(example = "trailing_stop")]
    pub name: String,
    /// The agent card whose activity log shows its notable runs and failures.
    #[schema(example = "finance")]
    pub runner: String,
    /// `[scheduler] enabled` and the job's own switch.
    pub enabled: bool,
    pub schedule: ScheduleView,
    /// A run is going on now (the job is not started again until it ends).
    pub running: bool,
    /// Finished runs since the service started.
    pub runs: u64,
    /// When the last run started (ISO 8601, UTC); null before the first.
    #[schema(required = true)]
    pub last_run: Option<String>,
    /// When the last run ended.
    #[schema(required = true)]
    pub last_finished: Option<String>,
    #[schema(required = true)]
    pub last_status: Option<RunStatus>,
    /// What the last run did, in one sentence (`skipped: <why>` for a skipped run, `failed`
    /// for a failed one).
    #[schema(required = true)]
    pub last_result: Option<String>,
    /// Why the last run failed; absent unless it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub last_error: Option<String>,
    /// When the job runs next (ISO 8601, UTC); null for a disabled job.
    #[schema(required = true)]
    pub next_run: Option<String>,
}

/// When a job runs.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ScheduleView {
    /// 5-field cron expression (minute hour day-of-month month day-of-week).
    #[schema(example = "*/5 * * * *")]
    pub cron: String,
    /// The IANA time zone the expression is read in (`[market] timezone`).
    #[schema(example = "UTC")]
    pub timezone: String,
    #[schema(example = "every 5 minutes")]
    pub human: String,
}

/// Starts the background loop of `scheduler` when `[scheduler] enabled` and
/// `poll_seconds > 0`; every run gets a clone of `context`. Stopping it lets running jobs
/// finish (up to 10 s, then cancels them) and waits until it has let go of the other areas.
pub fn spawn<C: Clone + Send + Sync + 'static>(
    config: &SchedulerConfig,
    scheduler: &Scheduler<C>,
    context: &C,
) -> Option<Background> {
    if !config.enabled || config.poll_seconds == 0 {
        return None;
    }
    let scheduler = scheduler.clone();
    scheduler.inner.polling.store(true, Ordering::Relaxed);
    let context = context.clone();
    let every = Duration::from_secs(config.poll_seconds);
    Some(Background::spawn(move |stopped| run_loop(scheduler, context, every, stopped)))
}

async fn run_loop<C: Clone + Send + Sync + 'static>(
    scheduler: Scheduler<C>,
    context: C,
    every: Duration,
    mut stopped: oneshot::Receiver<()>,
) {
    let mut interval = tokio::time::interval(every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut running: Vec<JoinHandle<()>> = Vec::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            _ = interval.tick() => {
                running.retain(|task| !task.is_finished());
                running.extend(scheduler.start_due(&context).into_iter().map(|(_, task)| task));
            }
        }
    }
    scheduler.inner.polling.store(false, Ordering::Relaxed);
    let finished = tokio::time::timeout(STOP_GRACE, async {
        for task in &mut running {
            let _ = task.await;
        }
    })
    .await;
    if finished.is_err() {
        for task in &running {
            task.abort();
        }
        for task in running {
            let _ = task.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricLabel;

    #[test]
    fn a_run_is_counted_by_how_it_ended() {
        let labels =
            [RunStatus::Ok, RunStatus::Skipped, RunStatus::Error].map(|s| s.metric_label());
        assert_eq!(labels, ["ok", "skipped", "error"]);
    }
}
