//! Agent names and card statuses the dashboard accepts.

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The agents that call the API. `tech` and `ops` belong to the earlier route set and are
/// still accepted; `boss` is the operator's own token (the dashboard, the operator's shell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AgentName {
    Coo,
    Finance,
    Scout,
    BotOps,
    Tech,
    Ops,
    Boss,
}

impl AgentName {
    /// Agents of the current route set: their cards exist from the start.
    pub const CURRENT: [AgentName; 4] = [Self::Coo, Self::Finance, Self::Scout, Self::BotOps];
    pub const ALL: [AgentName; 7] =
        [Self::Coo, Self::Finance, Self::Scout, Self::BotOps, Self::Tech, Self::Ops, Self::Boss];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Coo => "coo",
            Self::Finance => "finance",
            Self::Scout => "scout",
            Self::BotOps => "bot-ops",
            Self::Tech => "tech",
            Self::Ops => "ops",
            Self::Boss => "boss",
        }
    }
}

impl FromStr for AgentName {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|agent| agent.as_str() == name).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|a| a.as_str()).collect();
            format!("unknown agent `{name}`; known agents: {}", known.join(", "))
        })
    }
}

/// What an agent card shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentStatus {
    Idle,
    Running,
    /// Awaiting the boss's YES/NO.
    Waiting,
    /// Needs attention.
    Error,
}

impl AgentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Running => "running",
            Self::Waiting => "waiting",
            Self::Error => "error",
        }
    }
}
