//! Messages that are not about one trade: the health check's anomalies and free text from
//! `GET /api/notify`.

use super::escape;
use super::format::plain_lines;
use crate::messenger::Outgoing;

/// Arbitrary text from `GET /api/notify`, shown as written.
pub fn plain(text: &str) -> Outgoing {
    Outgoing { html: escape(text), buttons: Vec::new() }
}

/// What the hourly health check found wrong, one sentence per anomaly.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemAlert {
    pub anomalies: Vec<String>,
}

pub fn system_alert(a: &SystemAlert) -> Outgoing {
    let mut lines = vec![format!(
        "⚠️ <b>System alert</b>: the health check found {} problem(s)",
        a.anomalies.len()
    )];
    lines.extend(a.anomalies.iter().map(|line| format!("• {}", escape(line))));
    plain_lines(&lines)
}
