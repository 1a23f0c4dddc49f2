//! Messages about a position the exchange closed on its own: a protection leg (take-profit or
//! stop-loss) filled there, and the service noticed at its next protection run.

use super::{escape, plain_lines};
use crate::messenger::Outgoing;

/// A protection leg that filled at the exchange, as the service settled it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExitFilled {
    pub symbol: String,
    /// True for the take-profit leg, false for the stop-loss.
    pub take_profit: bool,
    pub size: String,
    pub entry_px: String,
    pub exit_px: String,
    /// Net of the fees of both sides, in the quote asset, two decimals.
    pub pnl: String,
    pub currency: String,
    pub bot: String,
}

pub fn exit_filled(e: &ExitFilled) -> Outgoing {
    let (icon, what) =
        if e.take_profit { ("🎯", "Take-profit hit") } else { ("🛑", "Stop-loss hit") };
    plain_lines(&[
        format!("{icon} <b>{what}: {}</b>", escape(&e.symbol)),
        format!(
            "Sold {} at {} (entry {}); PnL {} {} net of fees.",
            escape(&e.size),
            escape(&e.exit_px),
            escape(&e.entry_px),
            escape(&e.pnl),
            escape(&e.currency)
        ),
        format!("Strategy: {}. The trade is closed and in the history.", escape(&e.bot)),
    ])
}

/// An exit that took more than one order: the first filled only part (an IOC that met a
/// thin book, a gap), the rest was offered again.
#[derive(Debug, Clone, PartialEq)]
pub struct ExitShort {
    pub symbol: String,
    /// What the exit asked for, in the base asset.
    pub wanted: String,
    /// What the first order filled.
    pub first: String,
    /// How many more orders were sent.
    pub retries: u32,
    /// Sold in total, and at what average price.
    pub sold: String,
    pub avg_px: String,
    /// Left at the exchange (zero when everything sold, or only dust remains).
    pub unsold: String,
    pub base_asset: String,
    /// Why the retries stopped early, if an order failed.
    pub failure: Option<String>,
}

pub fn exit_short(e: &ExitShort) -> Outgoing {
    let mut lines = vec![
        format!("⚠️ <b>Exit filled in parts: {}</b>", escape(&e.symbol)),
        format!(
            "The first order filled {} of {} {}; {} more sold the rest: {} in total at {} on \
             average.",
            escape(&e.first),
            escape(&e.wanted),
            escape(&e.base_asset),
            e.retries,
            escape(&e.sold),
            escape(&e.avg_px)
        ),
    ];
    if e.unsold.parse::<f64>().is_ok_and(|u| u > 0.0) {
        lines.push(format!(
            "{} {} are still held at the exchange and no longer part of the trade: sell them by \
             hand.",
            escape(&e.unsold),
            escape(&e.base_asset)
        ));
    }
    if let Some(failure) = &e.failure {
        lines.push(format!("The last attempt failed: {}", escape(failure)));
    }
    plain_lines(&lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(take_profit: bool) -> ExitFilled {
        ExitFilled {
            symbol: "ETHUSDT".into(),
            take_profit,
            size: "0.0331".into(),
            entry_px: "3000".into(),
            exit_px: "2934".into(),
            pnl: "-2.37".into(),
            currency: "USDT".into(),
            bot: "mr_combined".into(),
        }
    }

    #[test]
    fn an_exit_in_parts_says_what_sold_and_what_is_left() {
        let mut short = ExitShort {
            symbol: "ETHUSDT".into(),
            wanted: "2".into(),
            first: "1.2".into(),
            retries: 1,
            sold: "2".into(),
            avg_px: "2931".into(),
            unsold: "0".into(),
            base_asset: "ETH".into(),
            failure: None,
        };
        let done = exit_short(&short).html;
        assert!(done.contains("filled 1.2 of 2 ETH; 1 more sold the rest: 2 in total"), "{done}");
        assert!(!done.contains("still held"), "{done}");
        short.unsold = "0.5".into();
        short.failure = Some("rate limited".into());
        let left = exit_short(&short).html;
        assert!(left.contains("0.5 ETH are still held"), "{left}");
        assert!(left.contains("The last attempt failed: rate limited"), "{left}");
    }

    #[test]
    fn names_the_leg_that_filled_and_the_pnl() {
        let stop = exit_filled(&exit(false)).html;
        assert!(stop.contains("Stop-loss hit: ETHUSDT"), "{stop}");
        assert!(stop.contains("PnL -2.37 USDT"), "{stop}");
        let target = exit_filled(&exit(true)).html;
        assert!(target.contains("Take-profit hit: ETHUSDT"), "{target}");
    }
}
