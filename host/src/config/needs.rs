//! Which secrets the configured mode still lacks in the environment, so that `spotbot
//! check-config` says so before the start instead of the service failing at the first order,
//! approval request or licensed call. Names only: a value is never read out.

use super::{Config, ExchangeMode, ExchangeName};

/// One missing piece of the environment (or of `[license]`) and what does not work without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// The variables or keys to set, e.g. `EXCHANGE_API_KEY, EXCHANGE_API_SECRET`.
    pub what: String,
    pub why: &'static str,
    /// Required by the mode (testnet and mainnet trade real accounts); otherwise a note.
    pub required: bool,
}

impl Config {
    /// What testnet or mainnet requires and paper mode only notes: exchange keys, the
    /// messenger (approvals reach the boss through it), the license server and its key.
    pub fn missing_secrets(&self) -> Vec<Need> {
        let live = self.exchange.mode != ExchangeMode::Paper;
        let s = &self.secrets;
        let mut needs = Vec::new();
        let mut need = |names: Vec<&str>, why, required| {
            if !names.is_empty() {
                needs.push(Need { what: names.join(", "), why, required });
            }
        };
        let exchange: Vec<&str> = match self.exchange.active {
            ExchangeName::ExchangeA => [
                ("EXCHANGE_API_KEY", s.exchange_api_key.is_some()),
                ("EXCHANGE_API_SECRET", s.exchange_api_secret.is_some()),
            ]
            .into_iter()
            .filter_map(|(name, set)| (!set).then_some(name))
            .collect(),
            ExchangeName::ExchangeB => {
                if s.exchange_private_key.is_some() {
                    vec![]
                } else {
                    vec!["EXCHANGE_PRIVATE_KEY"]
                }
            }
        };
        if live {
            need(exchange, "the exchange account: no order, balance or fill without them", true);
        }
        let messenger = [
            ("MESSENGER_BOT_TOKEN", s.messenger_bot_token.is_some()),
            ("MESSENGER_CHAT_ID", s.messenger_chat_id.is_some()),
        ];
        need(
            messenger.into_iter().filter_map(|(name, set)| (!set).then_some(name)).collect(),
            "the boss's messenger: no approval request, alert or report reaches the boss",
            live,
        );
        let has_url = s.license_url.is_some() || self.license.server_url.is_some();
        let mut license = Vec::new();
        if !has_url {
            license.push("TRADER_LICENSE_URL (or [license] server_url)");
        }
        if self.license.public_key.is_none() {
            license.push("[license] public_key");
        }
        need(license, "the license server: trading routes answer 503 license_required", live);
        if s.license_key.is_none() {
            need(
                vec!["TRADER_LICENSE_KEY"],
                "a license key: register or activate one through the API once running",
                false,
            );
        }
        needs
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Secrets;

    fn config(toml: &str, env: &[(&str, &str)]) -> Config {
        let mut config = Config::parse(toml, Path::new("test.toml")).unwrap();
        config.secrets = Secrets::from_lookup(|name| {
            env.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
        });
        config
    }

    /// A `[license] public_key` value that parses.
    fn public_key() -> String {
        let signer = ed25519_dalek::SigningKey::from_bytes(&[3u8; 32]);
        spotbot_license_protocol::public_key_hex(&signer.verifying_key())
    }

    fn required(config: &Config) -> Vec<String> {
        config.missing_secrets().into_iter().filter(|n| n.required).map(|n| n.what).collect()
    }

    #[test]
    fn testnet_without_secrets_names_exchange_keys_messenger_and_license_server() {
        let testnet = config("[exchange]\nmode = \"testnet\"\n", &[]);
        assert_eq!(
            required(&testnet),
            [
                "EXCHANGE_API_KEY, EXCHANGE_API_SECRET",
                "MESSENGER_BOT_TOKEN, MESSENGER_CHAT_ID",
                "TRADER_LICENSE_URL (or [license] server_url), [license] public_key",
            ]
        );
        let notes: Vec<Need> =
            testnet.missing_secrets().into_iter().filter(|n| !n.required).collect();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].what, "TRADER_LICENSE_KEY");
    }

    #[test]
    fn mainnet_on_exchange_b_names_its_private_key_and_only_what_is_missing() {
        let key = public_key();
        let toml = format!(
            "[exchange]\nactive = \"exchange_b\"\nmode = \"mainnet\"\n[license]\npublic_key = \"{key}\"\n"
        );
        let mainnet = config(
            &toml,
            &[("MESSENGER_BOT_TOKEN", "t"), ("TRADER_LICENSE_URL", "http://license:8090")],
        );
        assert_eq!(required(&mainnet), ["EXCHANGE_PRIVATE_KEY", "MESSENGER_CHAT_ID"]);
    }

    #[test]
    fn paper_mode_requires_nothing_and_a_complete_live_environment_nothing_either() {
        assert!(required(&config("", &[])).is_empty(), "paper mode runs without keys");
        let key = public_key();
        let toml = format!("[exchange]\nmode = \"testnet\"\n[license]\npublic_key = \"{key}\"\n");
        let env = [
            ("EXCHANGE_API_KEY", "k"),
            ("EXCHANGE_API_SECRET", "s"),
            ("MESSENGER_BOT_TOKEN", "t"),
            ("MESSENGER_CHAT_ID", "1"),
            ("TRADER_LICENSE_URL", "http://license:8090"),
            ("TRADER_LICENSE_KEY", "SPOT-1"),
        ];
        assert!(config(&toml, &env).missing_secrets().is_empty());
    }
}
