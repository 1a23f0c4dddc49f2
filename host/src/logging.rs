//! Log output for humans or machines, on stderr so stdout carries only what the command
//! prints for the operator; request tracing itself lives in the API layer.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// The default filter: `info`, with the MCP SDK's own per-message lines (session start and
/// end, three for every stateless call) at `warn`; the service logs one line per tool call.
const DEFAULT_FILTER: &str = "info,rmcp=warn";

/// Installs the global subscriber once; `RUST_LOG` overrides [`DEFAULT_FILTER`].
/// Colours only on a terminal (and not with `NO_COLOR` set): a log file or a container's log
/// driver would keep the escape codes as text.
pub fn init(format: LogFormat) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_writer(std::io::stderr);
    // `try_init` fails only when a subscriber is already set (tests); that one is kept.
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
