//! What a job is to the scheduler: its name, schedule, switch, dashboard card and run, and
//! what a run reports back. The built-in jobs themselves are `crate::jobs`.

use std::future::Future;
use std::pin::Pin;

use crate::activity::AgentName;
use crate::config::SchedulerConfig;

/// What one run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The job ran. `notable` runs (something changed, a message went out) also go to the
    /// dashboard's activity log; quiet ones only to the job's status, so the every-minute jobs
    /// do not push everything else out of the 100-entry log.
    Done { summary: String, notable: bool },
    /// Nothing to run against (no exchange client, no plugin loaded): not a failure.
    Skipped(String),
    /// The run failed; it is tried again at its next time. `logged`: the area already put it
    /// on the dashboard (the protection methods log their own outcome).
    Failed { error: String, logged: bool },
}

impl Outcome {
    pub fn quiet(summary: impl Into<String>) -> Self {
        Outcome::Done { summary: summary.into(), notable: false }
    }

    pub fn notable(summary: impl Into<String>) -> Self {
        Outcome::Done { summary: summary.into(), notable: true }
    }

    pub fn failed(error: impl Into<String>) -> Self {
        Outcome::Failed { error: error.into(), logged: false }
    }
}

/// A run of a job, as a future the scheduler spawns.
pub type Run = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// One job of the table, run with the context `C` the service gives every run (the areas'
/// faces). The scheduler only decides when; `run` is what happens.
pub struct Job<C> {
    /// The name in `[scheduler]` and in `GET /api/scheduler`.
    pub name: &'static str,
    /// 5-field cron expression, read in `[market] timezone`.
    pub cron: &'static str,
    pub human: &'static str,
    /// The agent card that shows notable runs and failures (the spec's runner).
    pub agent: AgentName,
    /// Its switch in `[scheduler]`.
    pub switch: fn(&SchedulerConfig) -> bool,
    pub run: fn(C) -> Run,
}

// By hand: a derive would ask `C: Clone`, and the table holds only plain data and function
// pointers.
impl<C> Clone for Job<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for Job<C> {}

impl<C> std::fmt::Debug for Job<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("name", &self.name).field("cron", &self.cron).finish()
    }
}
