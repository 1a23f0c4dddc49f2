//! Proof that the boss said yes, and where a signal came from.
//!
//! In `[signals] approval = "boss"` mode a signal is confirmable only after the boss's own
//! YES reached the service: the button or typed reply on the service's own message (the reply
//! reader), or a confirm under an `admin` token (the dashboard, the operator's shell). The
//! approval is bound to the signal's terms ([`Terms`], `PendingSignal::terms`): its id, symbol, side, stop, target,
//! tier and expiry. A changed or re-posted signal has other terms and needs a new YES. An
//! agent's confirm of an unapproved signal is refused and places nothing.
//!
//! In `agent` mode the service trusts the agent that relays the YES (the spec's flow).

use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

/// Where a signal's checklist came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Origin {
    pub source: Source,
    /// The plugin (for `plugin`) or the agent (for `agent`) that made it.
    pub by: String,
}

/// The two sources of a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// A plugin's scan: the host ran the plugin and scored its checklist.
    Plugin,
    /// An agent's own `POST /api/signal`: the checklist is what the caller wrote.
    Agent,
}

impl Origin {
    pub fn plugin(name: &str) -> Self {
        Self { source: Source::Plugin, by: name.to_string() }
    }

    pub fn agent(name: &str) -> Self {
        Self { source: Source::Agent, by: name.to_string() }
    }

    /// One line for the boss: how far the checklist can be trusted.
    pub fn describe(&self) -> String {
        match self.source {
            Source::Plugin => format!("plugin {}'s scan, checklist scored by the service", self.by),
            Source::Agent => format!("posted by agent {}, checklist written by the agent", self.by),
        }
    }
}

/// Who may say YES.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approver {
    /// The boss: the reply reader, or a caller with the `admin` scope.
    Boss,
    /// An agent relaying the boss's YES: enough only in `agent` mode.
    Agent,
}

/// The boss's YES on one version of a signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// Who said it: `the boss in the messenger`, `boss (token 3f9a…)`, `open access`.
    pub by: String,
    pub terms: Terms,
    pub at_ms: i64,
}

/// SHA-256 of what the boss approves (`PendingSignal::terms` says which fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terms([u8; 32]);

impl Terms {
    /// The digest of `fields`, in order, joined by `|`.
    pub fn over(fields: &[&str]) -> Self {
        Self(Sha256::digest(fields.join("|").as_bytes()).into())
    }
}
