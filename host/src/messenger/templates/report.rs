//! The end-of-day PnL summary.

use super::escape;
use super::format::plain_lines;
use crate::messenger::Outgoing;

/// The end-of-day PnL summary (`POST /api/status/report`, 21:00 in `[market] timezone`).
#[derive(Debug, Clone, PartialEq)]
pub struct DailyReport {
    /// YYYY-MM-DD in `timezone`.
    pub date: String,
    pub timezone: String,
    pub currency: String,
    /// Trades closed that day, in the order they closed.
    pub closed: Vec<ReportTrade>,
    pub wins: usize,
    pub losses: usize,
    pub breakeven: usize,
    pub realized_pnl: String,
    pub open: Vec<ReportPosition>,
    /// None when the prices could not be read.
    pub unrealized_pnl: Option<String>,
    /// None when the exchange could not be read.
    pub equity: Option<String>,
    pub drawdown_pct: Option<String>,
    /// New entries are paused by the drawdown limit.
    pub paused: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReportTrade {
    pub symbol: String,
    pub direction: String,
    pub pnl: String,
    /// `take_profit`, `stop_loss` or `market`.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReportPosition {
    pub symbol: String,
    pub direction: String,
    pub size: String,
    pub entry_px: String,
    /// None when the price could not be read.
    pub price: Option<String>,
    pub unrealized_pnl: Option<String>,
}

/// One message (split by the client when long): the day's closed trades, the open positions,
/// equity and drawdown.
pub fn daily_report(r: &DailyReport) -> Outgoing {
    let currency = escape(&r.currency);
    let mut lines = vec![
        format!("📊 <b>Daily PnL {}</b> ({})", escape(&r.date), escape(&r.timezone)),
        format!(
            "Closed: {} ({} won, {} lost, {} even) · PnL <b>{} {currency}</b>",
            r.closed.len(),
            r.wins,
            r.losses,
            r.breakeven,
            escape(&r.realized_pnl)
        ),
    ];
    for t in &r.closed {
        lines.push(format!(
            "• {} {}: {} {currency} ({})",
            escape(&t.symbol),
            escape(&t.direction),
            escape(&t.pnl),
            escape(&t.reason)
        ));
    }
    let unavailable = || "unavailable".to_string();
    if r.open.is_empty() {
        lines.push("Open positions: none".to_string());
    } else {
        lines.push(format!(
            "Open positions: {} · unrealized {}",
            r.open.len(),
            r.unrealized_pnl
                .as_deref()
                .map_or_else(unavailable, |p| format!("{} {currency}", escape(p)))
        ));
    }
    for p in &r.open {
        lines.push(format!(
            "• {} {} {} at {} → {}: {}",
            escape(&p.symbol),
            escape(&p.direction),
            escape(&p.size),
            escape(&p.entry_px),
            p.price.as_deref().map_or_else(unavailable, escape),
            p.unrealized_pnl
                .as_deref()
                .map_or_else(unavailable, |u| format!("{} {currency}", escape(u)))
        ));
    }
    lines.push(match (&r.equity, &r.drawdown_pct) {
        (Some(equity), Some(drawdown)) => {
            format!("Equity {} {currency} · drawdown {}%", escape(equity), escape(drawdown))
        }
        _ => "Equity: unavailable (the exchange could not be read)".to_string(),
    });
    if r.paused {
        lines.push(
            "⏸ New entries are paused by the drawdown limit (resume: \
             <code>POST /api/protection/resume</code>)."
                .to_string(),
        );
    }
    plain_lines(&lines)
}
