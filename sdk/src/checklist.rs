//! Checklist helpers: a result's checklist is a list of named pass/fail lines with a detail,
//! plus the `passed`/`total` score the spec asks for.

use crate::Check;

/// Builds a checklist line by line.
///
/// ```
/// use spotbot_sdk::Checklist;
/// let rsi = 27.5;
/// let mut c = Checklist::new();
/// c.check("rsi_oversold", rsi < 30.0, format!("RSI {rsi:.1} < 30"));
/// c.check("trend_up", false, "EMA20 below EMA50");
/// assert_eq!((c.passed(), c.total()), (1, 2));
/// assert!(!c.all_passed());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checklist {
    checks: Vec<Check>,
}

impl Checklist {
    /// An empty checklist.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one line and returns whether it passed, so it can gate later logic.
    pub fn check(&mut self, name: &str, pass: bool, detail: impl Into<String>) -> bool {
        self.checks.push(Check { name: name.to_string(), pass, detail: detail.into() });
        pass
    }

    /// Adds a line for an indicator value that may be missing (not enough candles): a missing
    /// value fails the line with the detail "n/a".
    pub fn check_value(
        &mut self,
        name: &str,
        value: Option<f64>,
        pass: impl FnOnce(f64) -> bool,
        detail: impl FnOnce(f64) -> String,
    ) -> bool {
        match value {
            Some(v) if v.is_finite() => self.check(name, pass(v), detail(v)),
            _ => self.check(name, false, "n/a"),
        }
    }

    /// Number of passing lines.
    pub fn passed(&self) -> u32 {
        self.checks.iter().filter(|c| c.pass).count() as u32
    }

    /// Number of lines.
    pub fn total(&self) -> u32 {
        self.checks.len() as u32
    }

    /// Whether every line passed (true for an empty checklist).
    pub fn all_passed(&self) -> bool {
        self.checks.iter().all(|c| c.pass)
    }

    /// Whether the line `name` exists and passed.
    pub fn passed_named(&self, name: &str) -> bool {
        self.checks.iter().any(|c| c.name == name && c.pass)
    }

    /// The lines, in insertion order.
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// Consumes the builder and returns the lines.
    pub fn into_checks(self) -> Vec<Check> {
        self.checks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_missing_values() {
        let mut c = Checklist::new();
        assert!(c.all_passed());
        assert!(c.check("a", true, "ok"));
        assert!(!c.check_value("b", None, |v| v > 1.0, |v| format!("{v}")));
        assert!(c.check_value("c", Some(2.0), |v| v > 1.0, |v| format!("{v} > 1")));
        assert!(!c.check_value("d", Some(f64::NAN), |_| true, |_| String::new()));
        assert_eq!((c.passed(), c.total()), (2, 4));
        assert!(c.passed_named("c") && !c.passed_named("b") && !c.passed_named("zz"));
        assert_eq!(c.checks()[1].detail, "n/a");
        assert_eq!(c.checks()[2].detail, "2 > 1");
        assert_eq!(c.into_checks().len(), 4);
    }
}
