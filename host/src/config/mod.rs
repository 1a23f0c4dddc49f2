//! Configuration: one TOML file plus secrets from the environment, validated at start.
//!
//! Loading either yields a complete, valid [`Config`] or one [`ConfigError`] line that names
//! the key and its position in the file; nothing half-starts. Secrets never live in the file.

mod locate;
mod needs;
mod secrets;
mod sections;
mod strategy;
mod validate;

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use needs::Need;
pub use secrets::{Secret, Secrets};
pub use sections::{
    AdoptHoldings, ApiConfig, ApprovalMode, AuthMode, ExchangeConfig, ExchangeMode, ExchangeName,
    GapExit, LicenseConfig, LogFormat, MarketConfig, McpConfig, MessengerConfig, NewsConfig,
    PluginsConfig, ProtectionConfig, RiskConfig, SchedulerConfig, ServerConfig, SignalsConfig,
    StopPlacement,
};
pub use strategy::{DEFAULT_STRATEGY, StrategyKeys, StrategySections, Tier, is_strategy_name};

/// The whole validated configuration of one host process.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub exchange: ExchangeConfig,
    pub risk: RiskConfig,
    pub signals: SignalsConfig,
    pub protection: ProtectionConfig,
    pub market: MarketConfig,
    pub news: NewsConfig,
    pub plugins: PluginsConfig,
    pub strategy: StrategySections,
    pub messenger: MessengerConfig,
    pub scheduler: SchedulerConfig,
    pub license: LicenseConfig,
    pub api: ApiConfig,
    pub mcp: McpConfig,
    /// Secrets and build facts from the environment; never read from the file.
    #[serde(skip)]
    pub secrets: Secrets,
}

/// Why a configuration was refused: one line naming the file, the position and the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.line())]
pub struct ConfigError {
    pub file: PathBuf,
    /// 1-based line and column of the offending key or value, when it is in the file.
    pub position: Option<(usize, usize)>,
    /// Dotted key path such as `risk.max_trading_usdt`; empty when the file as a whole is bad.
    pub key: String,
    pub message: String,
}

impl ConfigError {
    fn line(&self) -> String {
        let mut line = format!("config error in {}", self.file.display());
        if let Some((row, col)) = self.position {
            line.push_str(&format!(":{row}:{col}"));
        }
        if !self.key.is_empty() {
            line.push_str(&format!(": `{}`", self.key));
        }
        line.push_str(&format!(": {}", self.message));
        line
    }
}

impl Config {
    /// Reads and validates the file at `path`, then takes secrets from the process environment.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let source = std::fs::read_to_string(path).map_err(|err| ConfigError {
            file: path.to_path_buf(),
            position: None,
            key: String::new(),
            message: format!("cannot read the file: {err}"),
        })?;
        let mut config = Self::parse(&source, path)?;
        config.secrets = Secrets::from_env();
        Ok(config)
    }

    /// Parses and validates TOML text; `file` only labels errors. Secrets stay empty.
    pub fn parse(source: &str, file: &Path) -> Result<Self, ConfigError> {
        let config: Config =
            toml::from_str(source).map_err(|err| locate::deserialize_error(source, file, &err))?;
        validate::check(&config).map_err(|invalid| ConfigError {
            file: file.to_path_buf(),
            position: locate::position_of(source, &invalid.key),
            key: invalid.key,
            message: invalid.message,
        })?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests;
