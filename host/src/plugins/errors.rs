//! Why a plugin file is refused (`LoadError`) and why a call failed (`PluginError`), with
//! the API's error codes.

use super::Limits;
use super::model::{ScanError, describe_error};
use crate::metrics::MetricLabel;

/// Why a file was refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LoadError {
    #[error("the file has {size} bytes, the cap is {cap} (plugins.max_wasm_kib)")]
    TooLarge { size: u64, cap: u64 },
    #[error("not a valid WebAssembly component: {0}")]
    BadBytes(String),
    #[error("not a spotbot strategy plugin: {0}")]
    NotAPlugin(String),
    #[error(
        "built for spotbot:strategy@{found}, but this host speaks spotbot:strategy@{supported}; \
         rebuild the plugin with a matching spotbot-sdk"
    )]
    WitVersion { found: String, supported: String },
    #[error("incompatible with this host: {0}")]
    Incompatible(String),
    #[error("describe() failed: {0}")]
    DescribeFailed(String),
    #[error("invalid manifest: {0}")]
    InvalidManifest(String),
    #[error("the config file's section does not fit the plugin: {0}")]
    ConfigSection(String),
    #[error("the canary scan on synthetic data failed, so the previous version keeps serving: {0}")]
    Canary(String),
    #[error("plugin name {name:?} is already served by {served_by}")]
    DuplicateName { name: String, served_by: String },
    #[error("cannot read the file: {0}")]
    Io(String),
}

/// Why a scan failed. Only that scan fails; the host and other plugins are unaffected.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PluginError {
    #[error("no plugin named {0:?} is loaded")]
    NotFound(String),
    #[error("plugin {0:?} is switched off (enabled = false in [strategy.{0}])")]
    Disabled(String),
    #[error("the config override does not fit the plugin: {0}")]
    InvalidConfig(String),
    #[error("no persisted state is stored for plugin {0:?}")]
    NoState(String),
    #[error("the plugin did not finish within its deadline of {0} ms (plugins.scan_timeout_ms)")]
    Deadline(u64),
    #[error(
        "the plugin exceeded its memory cap of {cap_mib} MiB (it asked for {asked_mib} MiB; \
         plugins.memory_mib)"
    )]
    Memory { cap_mib: u64, asked_mib: u64 },
    #[error("the plugin overflowed its stack of {0} KiB (plugins.max_stack_kib)")]
    StackOverflow(usize),
    #[error("the plugin trapped: {0}")]
    Trapped(String),
    #[error(
        "the plugin's result has ~{size} bytes, over the cap of {cap} (plugins.max_result_kib)"
    )]
    ResultTooLarge { size: usize, cap: usize },
    #[error(
        "the plugin's state would grow to {size} bytes, over the cap of {cap} (plugins.max_state_kib)"
    )]
    StateTooLarge { size: usize, cap: usize },
    #[error("the plugin reported an error: {}", describe_error(.0))]
    Plugin(ScanError),
    #[error("the plugin returned an invalid response: {0}")]
    InvalidResponse(String),
    #[error("{0} is not listed on the active exchange; scan symbols it lists, such as BTCUSDT")]
    UnknownSymbol(String),
    #[error("market data unavailable: {0}")]
    MarketData(String),
    #[error("{0}")]
    Internal(String),
}

impl PluginError {
    /// The machine code of the API error body.
    pub fn code(&self) -> &'static str {
        match self {
            PluginError::NotFound(_) => "plugin_not_found",
            PluginError::Disabled(_) => "plugin_disabled",
            PluginError::InvalidConfig(_) => "invalid_config",
            PluginError::NoState(_) => "state_not_found",
            PluginError::Deadline(_) => "plugin_deadline_exceeded",
            PluginError::Memory { .. } => "plugin_memory_exceeded",
            PluginError::StackOverflow(_) => "plugin_stack_overflow",
            PluginError::Trapped(_) => "plugin_trapped",
            PluginError::ResultTooLarge { .. } => "plugin_result_too_large",
            PluginError::StateTooLarge { .. } => "plugin_state_too_large",
            PluginError::Plugin(_) => "plugin_error",
            PluginError::InvalidResponse(_) => "plugin_invalid_response",
            PluginError::UnknownSymbol(_) => "unknown_symbol",
            PluginError::MarketData(_) => "market_data_unavailable",
            PluginError::Internal(_) => "internal_error",
        }
    }
}

/// Why one call into a plugin failed.
#[derive(Debug)]
pub(crate) enum CallFailure {
    Deadline,
    Memory { refused_bytes: usize },
    StackOverflow,
    Trap { trap: String, stderr: String },
    Host(String),
}

pub(super) fn call_error(failure: CallFailure, limits: &Limits) -> PluginError {
    match failure {
        CallFailure::Deadline => PluginError::Deadline(limits.scan_timeout.as_millis() as u64),
        CallFailure::Memory { refused_bytes } => PluginError::Memory {
            cap_mib: limits.memory_bytes / (1024 * 1024),
            asked_mib: (refused_bytes as u64).div_ceil(1024 * 1024),
        },
        CallFailure::StackOverflow => PluginError::StackOverflow(limits.max_stack_bytes / 1024),
        CallFailure::Trap { trap, stderr } if stderr.is_empty() => PluginError::Trapped(trap),
        CallFailure::Trap { trap, stderr } => {
            PluginError::Trapped(format!("{trap}; stderr: {stderr}"))
        }
        CallFailure::Host(e) => PluginError::Internal(format!("plugin call failed: {e}")),
    }
}

/// The sentence for a failed `describe()` at load time.
pub(crate) fn describe_failure(failure: &CallFailure, limits: &Limits) -> String {
    match failure {
        CallFailure::Deadline => format!(
            "did not return within {} ms (plugins.load_timeout_ms)",
            limits.load_timeout.as_millis()
        ),
        other => call_error(clone_failure(other), limits).to_string(),
    }
}

fn clone_failure(f: &CallFailure) -> CallFailure {
    match f {
        CallFailure::Deadline => CallFailure::Deadline,
        CallFailure::Memory { refused_bytes } => {
            CallFailure::Memory { refused_bytes: *refused_bytes }
        }
        CallFailure::StackOverflow => CallFailure::StackOverflow,
        CallFailure::Trap { trap, stderr } => {
            CallFailure::Trap { trap: trap.clone(), stderr: stderr.clone() }
        }
        CallFailure::Host(e) => CallFailure::Host(e.clone()),
    }
}

/// The `error` label of `spotbot_plugin_scan_errors_total`: the API's error code, so a plugin
/// that keeps trapping shows apart from one whose market data was missing.
impl MetricLabel for PluginError {
    fn metric_label(&self) -> &'static str {
        self.code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugins_own_error_reads_as_words() {
        let cases = [
            (ScanError::BadConfig("rsi_max: expected f64".into()), "bad config: rsi_max"),
            (ScanError::MissingData("SOLUSDT 1h: no candles".into()), "missing data: SOLUSDT"),
            (ScanError::Failed("oops".into()), "failed: oops"),
        ];
        for (error, words) in cases {
            let text = PluginError::Plugin(error).to_string();
            assert!(text.starts_with(&format!("the plugin reported an error: {words}")), "{text}");
        }
    }

    #[test]
    fn a_failed_call_is_counted_under_its_error_code() {
        assert_eq!(PluginError::Trapped("unreachable".into()).metric_label(), "plugin_trapped");
    }
}
