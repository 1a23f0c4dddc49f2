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

    /// Whether the lines make a signal under the usual rule: every line named in `must_have`
    /// exists and passed (the setup itself, without which the rest means nothing), and at
    /// least `min_passed` lines passed. `qualifies(&[], total)` asks for every line.
    ///
    /// [`Checklist::shortfall`] words the same rule for a skip's reason, so the two can not
    /// disagree.
    pub fn qualifies(&self, must_have: &[&str], min_passed: u32) -> bool {
        must_have.iter().all(|name| self.passed_named(name)) && self.passed() >= min_passed
    }

    /// The failing lines as `name (detail)`, comma-separated: a skip's reason should name what
    /// failed with its value, so an operator sees why without reading the checklist.
    pub fn failures(&self) -> String {
        let failed: Vec<String> = self
            .checks
            .iter()
            .filter(|c| !c.pass)
            .map(|c| format!("{} ({})", c.name, c.detail))
            .collect();
        failed.join(", ")
    }

    /// Why the lines are no `side` signal under [`Checklist::qualifies`]'s rule, as a skip's
    /// reason: the score, the rule and [`Checklist::failures`]. The rule reads `need all` when
    /// `min_passed` is the whole list, else `need <min_passed>` plus `including <a> and <b>`
    /// for the must-haves.
    ///
    /// ```
    /// use spotbot_sdk::Checklist;
    /// let mut c = Checklist::new();
    /// c.check("at_band", true, "close 94.4 <= 94.5");
    /// c.check("rsi_oversold", false, "RSI 41.0 <= 30.0");
    /// c.check("volume", true, "1.6x");
    /// assert!(!c.qualifies(&["at_band"], 3));
    /// assert_eq!(
    ///     c.shortfall("buy", &["at_band"], 2),
    ///     "no buy: 2/3 checks passed, need 2 including at_band; failed: rsi_oversold (RSI 41.0 <= 30.0)"
    /// );
    /// assert!(c.shortfall("sell", &[], 3).starts_with("no sell: 2/3 checks passed, need all;"));
    /// ```
    pub fn shortfall(&self, side: &str, must_have: &[&str], min_passed: u32) -> String {
        let rule = if min_passed >= self.total() {
            "need all".to_string()
        } else if must_have.is_empty() {
            format!("need {min_passed}")
        } else {
            format!("need {min_passed} including {}", must_have.join(" and "))
        };
        format!(
            "no {side}: {}/{} checks passed, {rule}; failed: {}",
            self.passed(),
            self.total(),
            self.failures()
        )
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

    #[test]
    fn qualifies_and_shortfall_word_one_rule() {
        let mut c = Checklist::new();
        c.check("setup", true, "close 1 <= 2");
        c.check("target", false, "rr 1.50 >= 2");
        c.check("rsi", true, "RSI 25.0 <= 30.0");
        c.check("volume", false, "n/a");
        assert!(c.qualifies(&["setup"], 2));
        assert!(!c.qualifies(&["setup", "target"], 2), "a failed must-have");
        assert!(!c.qualifies(&["nope"], 0), "a missing must-have");
        assert!(!c.qualifies(&[], 3));
        assert_eq!(c.failures(), "target (rr 1.50 >= 2), volume (n/a)");
        assert_eq!(
            c.shortfall("buy", &["setup", "target"], 3),
            "no buy: 2/4 checks passed, need 3 including setup and target; \
             failed: target (rr 1.50 >= 2), volume (n/a)"
        );
        assert!(c.shortfall("sell", &[], 4).starts_with("no sell: 2/4 checks passed, need all;"));
        assert!(c.shortfall("sell", &[], 3).starts_with("no sell: 2/4 checks passed, need 3;"));
        let mut all = Checklist::new();
        all.check("a", true, "");
        assert!(all.qualifies(&[], all.total()) && all.failures().is_empty());
    }
}
