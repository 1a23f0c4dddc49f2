//! What a token may do. The four scopes are ordered: each one includes every scope before it,
//! so one scope per agent describes it (scout `propose`, coo `execute`, the boss `admin`).

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A token's scope, from least to most.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Every read: the GET routes that change nothing.
    Read,
    /// Signals, scans, notifications to the boss, agent status.
    Propose,
    /// Money: confirm, trade, close, close-all, manual entries and their cancel, trailing,
    /// trade recovery.
    Execute,
    /// The operator's own: reset-daily, resuming entries, the license, tokens, plugin state,
    /// and approving a signal as the boss.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 4] = [Scope::Read, Scope::Propose, Scope::Execute, Scope::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Propose => "propose",
            Scope::Execute => "execute",
            Scope::Admin => "admin",
        }
    }

    /// Whether a token of this scope may use a route that needs `needed`.
    pub fn allows(self, needed: Scope) -> bool {
        self >= needed
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Scope::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| format!("unknown scope `{text}`; scopes: read, propose, execute, admin"))
    }
}

#[cfg(test)]
mod tests {
    use super::Scope;

    #[test]
    fn each_scope_includes_the_ones_before_it_and_no_later_one() {
        for (i, has) in Scope::ALL.into_iter().enumerate() {
            for (j, needed) in Scope::ALL.into_iter().enumerate() {
                assert_eq!(has.allows(needed), j <= i, "{has} allows {needed}");
            }
        }
        assert_eq!("execute".parse::<Scope>(), Ok(Scope::Execute));
        assert!("write".parse::<Scope>().unwrap_err().contains("read, propose, execute, admin"));
    }
}
