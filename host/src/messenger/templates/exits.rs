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
    fn names_the_leg_that_filled_and_the_pnl() {
        let stop = exit_filled(&exit(false)).html;
        assert!(stop.contains("Stop-loss hit: ETHUSDT"), "{stop}");
        assert!(stop.contains("PnL -2.37 USDT"), "{stop}");
        let target = exit_filled(&exit(true)).html;
        assert!(target.contains("Take-profit hit: ETHUSDT"), "{target}");
    }
}
