//! The dashboard's state: one card per agent and the activity log of the last 100 events.
//!
//! Every action of the service writes here through [`Dashboard::record`]; the `agent` query
//! parameter of a route selects the card that reflects it. Kept in memory only, as the spec
//! says; it must never hold secrets. A low layer on purpose: execution, protection, signals
//! and scans write to it, and the dashboard page (`crate::dashboard`), which reads their
//! state, sits above them all, so no area depends on the page.

mod agents;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use serde::Serialize;
use tokio::sync::watch;
use utoipa::ToSchema;

use crate::clock::SharedClock;

pub use agents::{AgentName, AgentStatus};

/// The spec's activity log size.
pub const LOG_CAPACITY: usize = 100;

/// One agent's card.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AgentCard {
    pub status: AgentStatus,
    /// Free text: what the agent is doing.
    pub action: String,
    /// ISO 8601 time of the last update.
    pub updated: String,
}

/// One event of the activity log.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LogEntry {
    /// ISO 8601 time of the event.
    pub time: String,
    pub agent: String,
    pub action: String,
    pub status: String,
}

/// The whole dashboard state as `GET /api/state` returns it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DashboardSnapshot {
    pub agents: BTreeMap<String, AgentCard>,
    /// Most recent first, at most 100 entries.
    pub log: Vec<LogEntry>,
    /// ISO 8601 time the snapshot was taken.
    pub ts: String,
}

#[derive(Debug, Default)]
struct State {
    agents: BTreeMap<String, AgentCard>,
    log: VecDeque<LogEntry>,
}

#[derive(Debug)]
pub struct Dashboard {
    clock: SharedClock,
    state: Mutex<State>,
    /// Counts every change of the cards or the log, for followers of the page's live view.
    version: watch::Sender<u64>,
}

impl Dashboard {
    /// A dashboard with an idle card for each agent of the current route set.
    pub fn new(clock: SharedClock) -> Self {
        let now = clock.now().to_rfc3339();
        let agents = AgentName::CURRENT
            .iter()
            .map(|agent| {
                let card = AgentCard {
                    status: AgentStatus::Idle,
                    action: String::new(),
                    updated: now.clone(),
                };
                (agent.as_str().to_string(), card)
            })
            .collect();
        Self {
            clock,
            state: Mutex::new(State { agents, log: VecDeque::new() }),
            version: watch::channel(0).0,
        }
    }

    /// Changes when a card or the log changes (the value is a count, nothing to read).
    pub fn updates(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    fn changed(&self) {
        self.version.send_modify(|v| *v = v.wrapping_add(1));
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the state half-written (every update is a
        // single push or insert), so a poisoned lock is safe to keep using.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// An agent reports its own status: updates its card and logs the event.
    pub fn set_agent(&self, agent: AgentName, status: AgentStatus, action: &str) {
        let now = self.clock.now().to_rfc3339();
        let mut state = self.state();
        state.agents.insert(
            agent.as_str().to_string(),
            AgentCard { status, action: action.to_string(), updated: now.clone() },
        );
        push_log(
            &mut state.log,
            LogEntry {
                time: now,
                agent: agent.as_str().to_string(),
                action: action.to_string(),
                status: status.as_str().to_string(),
            },
        );
        drop(state);
        self.changed();
    }

    /// Logs an action of the service on behalf of `agent` (the route's `agent` parameter).
    /// `status` is the outcome in a word, such as `ok`, `error`, `skipped`.
    pub fn record(&self, agent: &str, action: &str, status: &str) {
        let now = self.clock.now().to_rfc3339();
        push_log(
            &mut self.state().log,
            LogEntry {
                time: now,
                agent: agent.to_string(),
                action: action.to_string(),
                status: status.to_string(),
            },
        );
        self.changed();
    }

    pub fn snapshot(&self) -> DashboardSnapshot {
        let state = self.state();
        DashboardSnapshot {
            agents: state.agents.clone(),
            log: state.log.iter().cloned().collect(),
            ts: self.clock.now().to_rfc3339(),
        }
    }
}

/// Newest first; the oldest entry falls off past [`LOG_CAPACITY`].
fn push_log(log: &mut VecDeque<LogEntry>, entry: LogEntry) {
    log.push_front(entry);
    log.truncate(LOG_CAPACITY);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::clock::SystemClock;

    #[test]
    fn the_log_keeps_the_newest_hundred_entries() {
        let dashboard = Dashboard::new(Arc::new(SystemClock));
        for i in 0..150 {
            dashboard.record("scout", &format!("scan {i}"), "ok");
        }
        let log = dashboard.snapshot().log;
        assert_eq!(log.len(), LOG_CAPACITY);
        assert_eq!(log[0].action, "scan 149");
        assert_eq!(log[99].action, "scan 50");
    }
}
