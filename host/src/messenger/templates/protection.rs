//! Protection at work: stops moved or not, a gapped stop, the drawdown pause.

use super::escape;
use super::format::plain_lines;
use crate::messenger::Outgoing;

/// A stop could not be moved; the old levels protect the position again.
#[derive(Debug, Clone, PartialEq)]
pub struct StopMoveFailed {
    pub symbol: String,
    pub wanted_sl: String,
    pub kept_sl: String,
    pub reason: String,
}

pub fn stop_move_failed(f: &StopMoveFailed) -> Outgoing {
    plain_lines(&[
        format!("⚠️ <b>Stop not moved: {}</b>", escape(&f.symbol)),
        format!(
            "The new OCO with the stop at {} was refused: {}",
            escape(&f.wanted_sl),
            escape(&f.reason)
        ),
        format!("The position is protected again at the old stop {}.", escape(&f.kept_sl)),
    ])
}

/// Stops raised by a trailing run, one line each.
#[derive(Debug, Clone, PartialEq)]
pub struct StopRaised {
    pub symbol: String,
    pub old_sl: String,
    pub new_sl: String,
    pub profit_pct: String,
}

pub fn stops_raised(rows: &[StopRaised]) -> Outgoing {
    let mut lines = vec![format!("📈 <b>Trailing stop</b>: {} stop(s) moved", rows.len())];
    lines.extend(rows.iter().map(|r| {
        format!(
            "• {}: {} → {} (profit {}%)",
            escape(&r.symbol),
            escape(&r.old_sl),
            escape(&r.new_sl),
            escape(&r.profit_pct)
        )
    }));
    plain_lines(&lines)
}

/// A stop that triggered without filling: the market gapped beyond its limit.
#[derive(Debug, Clone, PartialEq)]
pub struct StopGapped {
    pub symbol: String,
    pub stop_px: String,
    pub price: String,
    /// What the service did: closed at market, or only this alert.
    pub action: String,
}

pub fn stop_gapped(g: &StopGapped) -> Outgoing {
    plain_lines(&[
        format!("🚨 <b>Stop gapped: {}</b>", escape(&g.symbol)),
        format!(
            "The stop at {} triggered but did not fill: the price {} is beyond its limit, the \
             position is still open.",
            escape(&g.stop_px),
            escape(&g.price)
        ),
        escape(&g.action),
    ])
}

/// The account equity fell further below its high-water mark than `[protection]
/// max_drawdown_pct`. Amounts are formatted by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawdownAlert {
    pub equity: String,
    pub high_water_mark: String,
    pub drawdown_pct: String,
    pub max_drawdown_pct: String,
    pub currency: String,
}

/// Loud on purpose: automated entries stay stopped until someone decides to resume them.
pub fn drawdown_alert(a: &DrawdownAlert) -> Outgoing {
    let currency = escape(&a.currency);
    plain_lines(&[
        format!("🚨 <b>DRAWDOWN {}%: new entries paused</b>", escape(&a.drawdown_pct)),
        format!(
            "Equity {} {currency} is {}% below its high-water mark {} {currency} (limit {}%).",
            escape(&a.equity),
            escape(&a.drawdown_pct),
            escape(&a.high_water_mark),
            escape(&a.max_drawdown_pct)
        ),
        "Open positions keep their stop-loss and take-profit. No new trade is entered until \
         entries are resumed (ask coo: <code>POST /api/protection/resume</code>)."
            .to_string(),
    ])
}

/// The exchange's streams stayed down: protection went back to polling. `down_for` is a
/// duration formatted by the caller (`2 min`), `links` names what is missing in words.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamDown {
    pub links: String,
    pub down_for: String,
}

/// Not an emergency (every position keeps its protection), but the boss should know why
/// fills and stops are noticed later than usual until the streams are back.
pub fn stream_down(s: &StreamDown) -> Outgoing {
    plain_lines(&[
        format!("⚠️ <b>Exchange stream down for {}</b>", escape(&s.down_for)),
        format!(
            "No live {} from the exchange. Protection has switched to checking by polling: \
             fills are noticed at the minute's run and watched stops every second until the \
             stream reconnects.",
            escape(&s.links)
        ),
    ])
}

/// The streams are back after an outage the boss was told about.
pub fn stream_back(down_for: &str) -> Outgoing {
    plain_lines(&[format!(
        "✅ <b>Exchange stream back</b> after {}: fills and prices are live again, and \
         what happened meanwhile has been caught up.",
        escape(down_for)
    )])
}
