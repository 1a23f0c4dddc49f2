//! One checklist line as the rule modules produce it, and the side of a trade.

/// A checklist line: the rule modules return these, `evaluate` adds them to the checklist in
/// gate order.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: &'static str,
    pub pass: bool,
    /// The numbers behind the verdict, for humans (and, on a failing gate, the skip reason).
    pub detail: String,
}

impl Line {
    pub fn new(name: &'static str, pass: bool, detail: impl Into<String>) -> Self {
        Line { name, pass, detail: detail.into() }
    }
}

/// The side of a mean-reversion trade: buy at support, sell at resistance (on spot a sell
/// exits or sells coin; the host refuses a sell without a position).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Buy,
    Sell,
}

impl Side {
    /// The range edge the trade leans on.
    pub fn edge(self) -> &'static str {
        match self {
            Side::Buy => "support",
            Side::Sell => "resistance",
        }
    }

    /// "buy" / "sell".
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Buy => "buy",
            Side::Sell => "sell",
        }
    }

    /// +1 for a buy, −1 for a sell: a move "in the trade's favour" is `sign × (b − a)`.
    pub fn sign(self) -> f64 {
        match self {
            Side::Buy => 1.0,
            Side::Sell => -1.0,
        }
    }
}
