//! What a plugin wrote to stderr during one call (the SDK's `log!` macro writes one line
//! there). The runtime captures it into a buffer of `Limits::stderr_bytes` per call; here it
//! becomes lines that the host logs under the plugin's name and a preview scan returns.
//!
//! The text comes from the plugin, so it is cleaned before it reaches the service log: control
//! characters (other than tab) become `\u{fffd}`, so a plugin cannot forge log lines or
//! terminal escapes. Once the buffer is full further writes fail inside the guest (the SDK's
//! `log!` ignores that); `truncated` says the plugin may have written more.

use serde::Serialize;
use utoipa::ToSchema;

/// The cleaned stderr lines of one call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct PluginLog {
    /// Non-empty lines in the order written.
    pub lines: Vec<String>,
    /// Whether the per-call buffer filled up (later output was dropped).
    pub truncated: bool,
}

impl PluginLog {
    /// The lines of `bytes`, captured in a buffer of `cap` bytes.
    pub fn from_capture(bytes: &[u8], cap: usize) -> Self {
        let text = String::from_utf8_lossy(bytes);
        let lines = text.split('\n').map(clean).filter(|line| !line.trim().is_empty()).collect();
        PluginLog { lines, truncated: cap > 0 && bytes.len() >= cap }
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Writes every line to the service log under the plugin's name; `call` says which call
    /// wrote it (`scan`, `preview`, `canary`).
    pub fn emit(&self, plugin: &str, call: &str) {
        for line in &self.lines {
            tracing::info!(plugin, call, "{line}");
        }
        if self.truncated {
            tracing::warn!(
                plugin,
                call,
                "plugin stderr reached its per-call cap; the rest was dropped"
            );
        }
    }
}

fn clean(line: &str) -> String {
    line.trim_end_matches('\r')
        .chars()
        .map(|c| if c.is_control() && c != '\t' { '\u{fffd}' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_cleaned_and_the_cap_is_reported() {
        let log = PluginLog::from_capture(b"first\r\n\nsecond \x1b[31mred\n  \nlast", 64);
        assert_eq!(log.lines, ["first", "second \u{fffd}[31mred", "last"]);
        assert!(!log.truncated);
        let full = PluginLog::from_capture(b"abcd", 4);
        assert!(full.truncated);
        assert_eq!(PluginLog::from_capture(b"", 4), PluginLog::default());
        let invalid = PluginLog::from_capture(b"caf\xc3 ok", 64);
        assert_eq!(invalid.lines, ["caf\u{fffd} ok"]);
    }
}
