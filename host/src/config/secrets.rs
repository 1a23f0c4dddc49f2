//! Values the spec gives by environment: credentials and the build commit.

use std::fmt;

/// A value that must never be logged or returned: its `Debug` and `Display` print a mask.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The raw value, for the one place that sends it (a signature, a URL to the messenger).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Everything read from the environment at start. The default is an empty environment.
#[derive(Debug, Clone)]
pub struct Secrets {
    pub exchange_api_key: Option<Secret>,
    pub exchange_api_secret: Option<Secret>,
    pub exchange_private_key: Option<Secret>,
    pub messenger_bot_token: Option<Secret>,
    pub messenger_chat_id: Option<String>,
    pub license_key: Option<Secret>,
    pub license_url: Option<String>,
    /// Short source revision reported by `/api/health`; `dev` for local builds.
    pub git_commit: String,
}

impl Default for Secrets {
    fn default() -> Self {
        Self::from_lookup(|_| None)
    }
}

impl Secrets {
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Builds the set from any lookup, so tests do not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let get = |name: &str| lookup(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let secret = |name: &str| get(name).map(Secret::new);
        Self {
            exchange_api_key: secret("EXCHANGE_API_KEY"),
            exchange_api_secret: secret("EXCHANGE_API_SECRET"),
            exchange_private_key: secret("EXCHANGE_PRIVATE_KEY"),
            messenger_bot_token: secret("MESSENGER_BOT_TOKEN"),
            messenger_chat_id: get("MESSENGER_CHAT_ID"),
            license_key: secret("TRADER_LICENSE_KEY"),
            license_url: get("TRADER_LICENSE_URL"),
            git_commit: get("GIT_COMMIT").unwrap_or_else(|| "dev".to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_in_debug_output() {
        let secrets = Secrets::from_lookup(|name| match name {
            "EXCHANGE_API_SECRET" => Some("very-secret".into()),
            "TRADER_LICENSE_KEY" => Some("SPOT-AAAA".into()),
            _ => None,
        });
        let printed = format!("{secrets:?}");
        assert!(!printed.contains("very-secret"));
        assert!(!printed.contains("SPOT-AAAA"));
        assert_eq!(secrets.git_commit, "dev");
        assert_eq!(secrets.exchange_api_secret.as_ref().map(Secret::expose), Some("very-secret"));
    }
}
