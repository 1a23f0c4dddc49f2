//! Gate 6: the final override against the host's market context (its 7-level
//! `priority_decision`, `docs/market-context.md`). The plugin's own gates found a range trade;
//! the context may still veto it:
//!
//! | decision | buy | sell |
//! |---|---|---|
//! | `trade_long` | allowed | blocked |
//! | `trade_short` | blocked | allowed |
//! | `standby` | allowed | allowed |
//! | `no_trade` (any reason) | blocked | blocked |
//! | `watch_regime_shift` | blocked | blocked |
//! | no context | blocked | blocked |
//!
//! A missing context blocks: without the host's view the plugin can not rule out a regime the
//! host would veto, and with real money the conservative answer is no trade.

use spotbot_sdk::{MarketContext, PriorityDecision};

use crate::line::{Line, Side};

/// The context's decision as the spec spells it.
pub fn decision_str(d: PriorityDecision) -> &'static str {
    match d {
        PriorityDecision::TradeLong => "trade_long",
        PriorityDecision::TradeShort => "trade_short",
        PriorityDecision::Standby => "standby",
        PriorityDecision::NoTrade => "no_trade",
        PriorityDecision::WatchRegimeShift => "watch_regime_shift",
    }
}

pub fn line(context: Option<&MarketContext>, side: Side) -> Line {
    const NAME: &str = "market_context";
    let Some(c) = context else {
        return Line::new(
            NAME,
            false,
            "missing: the host sent no market context (blocks, conservative)",
        );
    };
    let decision = decision_str(c.priority_decision);
    let (pass, why) = match (c.priority_decision, side) {
        (PriorityDecision::NoTrade, _) => {
            let reason =
                if c.no_trade_reason.is_empty() { "unspecified" } else { &c.no_trade_reason };
            (false, format!("no_trade ({reason}) blocks"))
        }
        (PriorityDecision::WatchRegimeShift, _) => (false, "watch_regime_shift blocks".to_string()),
        (PriorityDecision::TradeShort, Side::Buy) => {
            (false, "trade_short blocks a buy".to_string())
        }
        (PriorityDecision::TradeLong, Side::Sell) => {
            (false, "trade_long blocks a sell".to_string())
        }
        (_, side) => (true, format!("{decision} allows a {}", side.as_str())),
    };
    Line::new(NAME, pass, format!("{why} ({}/{} context)", c.htf_tf, c.mtf_tf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::market_context;

    #[test]
    fn decision_table() {
        use PriorityDecision::*;
        let cases = [
            (TradeLong, true, false),
            (TradeShort, false, true),
            (Standby, true, true),
            (NoTrade, false, false),
            (WatchRegimeShift, false, false),
        ];
        for (d, buy, sell) in cases {
            let c = market_context(d);
            assert_eq!(line(Some(&c), Side::Buy).pass, buy, "{d:?} buy");
            assert_eq!(line(Some(&c), Side::Sell).pass, sell, "{d:?} sell");
        }
        let mut c = market_context(NoTrade);
        c.no_trade_reason = "volatile_chop".into();
        assert_eq!(
            line(Some(&c), Side::Buy).detail,
            "no_trade (volatile_chop) blocks (1d/4h context)"
        );
        assert!(line(None, Side::Buy).detail.starts_with("missing"));
    }
}
