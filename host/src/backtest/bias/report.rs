//! What `check-bias` reports: one verdict per check, with the first place the replays part.

use serde::Serialize;

use super::decision::Disagreement;
use crate::backtest::report::Replayed;

#[derive(Debug, Clone, Serialize)]
pub struct BiasReport {
    /// The plugin and the steps replayed.
    #[serde(flatten)]
    pub replayed: Replayed,
    pub steps: usize,
    /// Decisions as live against decisions from the history known at each step.
    pub look_ahead: Check,
    /// Decisions as live against decisions with `more_warmup_times` longer windows.
    pub recursive: Check,
    pub more_warmup_times: u32,
    pub elapsed_s: f64,
}

/// One comparison of two replays.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Check {
    pub passed: bool,
    pub steps_compared: usize,
    /// Steps where at least one symbol's decision differs.
    pub differing_steps: usize,
    /// The first step, symbol and item that differ.
    pub first: Option<Difference>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// The step (RFC 3339).
    pub at: String,
    pub symbol: String,
    #[serde(flatten)]
    pub disagreement: Disagreement,
}

impl BiasReport {
    /// Whether both checks passed.
    pub fn passed(&self) -> bool {
        self.look_ahead.passed && self.recursive.passed
    }

    /// The terminal's summary: one verdict line per check.
    pub fn summary(&self) -> String {
        let line = |name: &str, c: &Check, meaning: &str| match &c.first {
            None => format!("{name}: passed ({} steps compared)\n", c.steps_compared),
            Some(d) => format!(
                "{name}: FAILED at {} {}: {} is {} as live, {} {meaning} ({} of {} steps differ)\n",
                d.at,
                d.symbol,
                d.disagreement.item,
                d.disagreement.reference,
                d.disagreement.other,
                c.differing_steps,
                c.steps_compared
            ),
        };
        let mut out = format!("check-bias {}\n", self.replayed.describe(self.steps));
        out += &line("look-ahead", &self.look_ahead, "from only what was known then");
        let more = format!("with {}x the warm-up", self.more_warmup_times);
        out += &line("recursive dependence", &self.recursive, &more);
        out
    }
}
