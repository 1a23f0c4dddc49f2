//! The report as one self-contained HTML page: the figures, the equity curve as inline SVG
//! (with its drawdown shaded and the trades' closes marked) and the trade list. No script,
//! no stylesheet or font from elsewhere: the file opens offline and can be mailed. The
//! optimisation page (`optimize::html`) draws its curve, escapes and styles with the same parts.

use std::fmt::Write as _;

use super::history::iso;
use super::report::{Report, TradeRow};
use crate::execution::trade::CloseReason;

/// HTML-escapes `text`; the optimisation page escapes its report's texts with it too.
pub(super) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The rules both report pages share (this one and the optimisation page), so they look alike.
pub(super) const STYLE: &str = "body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;\
     margin:24px auto;max-width:1100px;padding:0 16px;color:#1f2328}\
     h1{font-size:20px;margin:0 0 4px} .sub{color:#57606a;margin:0 0 16px}\
     table{border-collapse:collapse;width:100%;margin:12px 0}\
     th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #d0d7de;vertical-align:top}";

/// The rule of the time labels under a [`curve`] (its `axis` class).
pub(super) const AXIS_STYLE: &str =
    ".axis{display:flex;justify-content:space-between;color:#57606a;font-size:12px}";

/// Most points drawn: longer curves keep each bucket's lowest and highest sample.
const MAX_POINTS: usize = 2400;
/// Trades listed in the table (the JSON report has them all).
const MAX_ROWS: usize = 2000;

const WIDTH: f64 = 1000.0;
const HEIGHT: f64 = 320.0;
const PAD: f64 = 8.0;

/// One sample of a curve: epoch milliseconds and the value then.
pub(super) type Sample = (i64, f64);

/// The curve reduced to at most [`MAX_POINTS`], keeping extremes (a drawdown stays visible).
fn reduce(curve: &[Sample]) -> Vec<Sample> {
    if curve.len() <= MAX_POINTS {
        return curve.to_vec();
    }
    let bucket = curve.len().div_ceil(MAX_POINTS / 2);
    let mut out = Vec::with_capacity(MAX_POINTS + 1);
    for chunk in curve.chunks(bucket) {
        let lo = chunk.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let hi = chunk.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            if lo.0 <= hi.0 {
                out.extend([*lo, *hi]);
            } else {
                out.extend([*hi, *lo]);
            }
        }
    }
    if let Some(last) = curve.last() {
        out.push(*last);
    }
    out.dedup_by_key(|p| p.0);
    out
}

/// The time span a [`curve`] covers, for what a page marks over it.
pub(super) struct Frame {
    t0: f64,
    t1: f64,
}

impl Frame {
    /// The horizontal position of time `t` (epoch ms), `None` outside the curve's span.
    pub(super) fn x(&self, t: f64) -> Option<f64> {
        (t >= self.t0 && t <= self.t1).then(|| self.at(t))
    }

    /// The horizontal position of `t` without the check (the curve's own samples are inside).
    fn at(&self, t: f64) -> f64 {
        PAD + (t - self.t0) / (self.t1 - self.t0) * (WIDTH - 2.0 * PAD)
    }

    /// The drawing's top and bottom edges, for a mark across it.
    pub(super) fn edges(&self) -> (f64, f64) {
        (PAD, HEIGHT - PAD)
    }
}

/// `samples` as inline SVG: the curve, the drawdown from its running peak shaded, a dashed
/// line at `base` and what `marks` draws over it; then the first and last time under it.
pub(super) fn curve(samples: &[Sample], base: f64, marks: impl Fn(&Frame) -> String) -> String {
    let curve = reduce(samples);
    let (Some(first), Some(last)) = (curve.first(), curve.last()) else {
        return "<p>No equity samples.</p>".into();
    };
    let frame = Frame { t0: first.0 as f64, t1: (last.0 as f64).max(first.0 as f64 + 1.0) };
    let lo = curve.iter().map(|p| p.1).fold(f64::MAX, f64::min);
    let hi = curve.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    let span = if hi - lo > 1e-9 { hi - lo } else { 1.0 };
    let (lo, hi) = (lo - span * 0.05, hi + span * 0.05);
    let x = |t: i64| frame.at(t as f64);
    let y = |e: f64| PAD + (hi - e) / (hi - lo) * (HEIGHT - 2.0 * PAD);
    let mut line = String::new();
    let mut peak_line = String::new();
    let mut peak = f64::MIN;
    for p in &curve {
        peak = peak.max(p.1);
        let _ = write!(line, "{:.1},{:.1} ", x(p.0), y(p.1));
        let _ = write!(peak_line, "{:.1},{:.1} ", x(p.0), y(peak));
    }
    // The drawdown area: between the running peak and the curve.
    let mut area = peak_line.clone();
    for p in curve.iter().rev() {
        let _ = write!(area, "{:.1},{:.1} ", x(p.0), y(p.1));
    }
    let base = y(base);
    format!(
        "<svg viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"100%\" role=\"img\" \
         aria-label=\"equity curve\" xmlns=\"http://www.w3.org/2000/svg\">\
         <rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"#fbfbfc\"/>\
         <polygon points=\"{area}\" fill=\"#cf222e\" fill-opacity=\"0.12\"/>\
         <line x1=\"{PAD}\" x2=\"{x2}\" y1=\"{base:.1}\" y2=\"{base:.1}\" stroke=\"#8c959f\" \
         stroke-dasharray=\"4 4\"/>\
         <polyline points=\"{line}\" fill=\"none\" stroke=\"#0969da\" stroke-width=\"1.5\"/>\
         {marks}\
         <text x=\"{PAD}\" y=\"18\" font-size=\"12\" fill=\"#57606a\">{hi_label}</text>\
         <text x=\"{PAD}\" y=\"{ly}\" font-size=\"12\" fill=\"#57606a\">{lo_label}</text>\
         </svg>\
         <div class=\"axis\"><span>{from}</span><span>{to}</span></div>",
        x2 = WIDTH - PAD,
        marks = marks(&frame),
        hi_label = esc(&format!("{hi:.2}")),
        lo_label = esc(&format!("{lo:.2}")),
        ly = HEIGHT - 14.0,
        from = esc(&iso(first.0)),
        to = esc(&iso(last.0)),
    )
}

/// The equity curve with the trades' closes marked at its bottom edge (green won, red lost).
fn svg(report: &Report) -> String {
    let samples: Vec<Sample> = report.equity.iter().map(|p| (p.t, p.equity)).collect();
    curve(&samples, report.start_equity, |frame| trade_marks(report, frame))
}

fn trade_marks(report: &Report, frame: &Frame) -> String {
    let mut marks = String::new();
    for t in report.trades.iter().take(MAX_ROWS) {
        let Some(at) = chrono::DateTime::parse_from_rfc3339(&t.closed_at).ok() else {
            continue;
        };
        let Some(x) = frame.x(at.timestamp_millis() as f64) else {
            continue;
        };
        let color = if t.pnl > 0.0 { "#1a7f37" } else { "#cf222e" };
        let _ = write!(
            marks,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"{color}\" \
             stroke-opacity=\"0.5\"/>",
            HEIGHT - PAD,
            HEIGHT - PAD - 10.0
        );
    }
    marks
}

/// The tier and the opening result's checklist, folded: the lines that let the trade in.
fn why_taken(t: &TradeRow) -> String {
    let passed = t.checklist.iter().filter(|c| c.pass).count();
    let mut lines = String::new();
    for check in &t.checklist {
        let mark = if check.pass { "✓" } else { "✗" };
        let _ = write!(lines, "<li>{mark} {}: {}</li>", esc(&check.name), esc(&check.detail));
    }
    format!(
        "<details><summary>tier {} · {passed}/{} checks</summary><ul>{lines}</ul></details>",
        esc(t.tier.as_deref().unwrap_or("-")),
        t.checklist.len()
    )
}

fn reason(r: CloseReason) -> &'static str {
    match r {
        CloseReason::TakeProfit => "take profit",
        CloseReason::StopLoss => "stop loss",
        CloseReason::Market => "market",
    }
}

/// The whole page.
pub fn page(report: &Report) -> String {
    let s = &report.stats;
    let q = esc(&report.quote_asset);
    let opt =
        |v: Option<f64>, suffix: &str| v.map_or("–".to_string(), |v| format!("{v}{suffix}"));
    let mut figures = Vec::new();
    let mut row =
        |k: &str, v: String| figures.push(format!("<tr><th>{}</th><td>{}</td></tr>", esc(k), v));
    row(
        "Equity",
        format!(
            "{:.2} → {:.2} {q} ({:+.2} %); coins left over by step rounding: {:.2} {q}",
            report.start_equity, report.end_equity, report.return_pct, report.dust
        ),
    );
    row(
        "Trades",
        format!("{} ({} wins, {} losses, {} breakeven)", s.count, s.wins, s.losses, s.breakeven),
    );
    row("Win rate", opt(s.win_rate, " %"));
    row("Total pnl", format!("{:.4} {q}", s.total_pnl));
    row("Average pnl", opt(s.avg_pnl.map(|v| (v * 1e4).round() / 1e4), &format!(" {q}")));
    row("Best / worst", format!("{} / {}", opt(s.best, ""), opt(s.worst, "")));
    row("Profit factor", opt(s.profit_factor, ""));
    row(
        "Max drawdown",
        format!(
            "{:.2} {q} ({:.2} % of the peak); closed-trade pnl: {:.2} {q}",
            report.max_drawdown, report.max_drawdown_pct, s.max_drawdown
        ),
    );
    row(
        "Exposure",
        format!(
            "{:.2} % of the time in a position; {:.2} % of equity invested on average",
            report.exposure_pct, report.avg_invested_pct
        ),
    );
    row("Fees", format!("{:.4} {q}", report.fees));
    let c = &report.signals;
    let mut signals = format!(
        "{} buy ({} opened), {} sell ({} closed a position)",
        c.buy, c.opened, c.sell, c.exits
    );
    for (reason, (n, detail)) in &c.not_opened {
        let _ = write!(
            signals,
            "<br>not opened, {}: {n} <small>({})</small>",
            esc(reason),
            esc(detail)
        );
    }
    row("Signals", signals);
    if !c.alerts.is_empty() {
        let shown: Vec<String> = c.alerts.iter().map(|(s, n)| format!("{} {n}", esc(s))).collect();
        row("Scanner alerts", format!("{} (reported, never traded)", shown.join(", ")));
    }
    let why = &report.why_no_trade;
    row("Why no trade", esc(&why.run.describe()));
    if !why.run.skips.is_empty() {
        // Each kind of skip with its count and one full reason, most frequent first.
        let mut kinds: Vec<(&String, &usize)> = why.run.skips.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let mut table = String::new();
        for (kind, n) in kinds {
            let example = why.run.skip_examples.get(kind).map_or(String::new(), |e| esc(e));
            let _ = write!(table, "{n} × {}<br><small>e.g. {example}</small><br>", esc(kind));
        }
        row("Skips by kind", table);
    }
    if why.by_symbol.len() > 1 {
        for (symbol, counts) in &why.by_symbol {
            row(&format!("… {symbol}"), esc(&counts.describe()));
        }
    }
    if !report.gapped_stops.is_empty() {
        let mut gaps = String::new();
        for g in &report.gapped_stops {
            let _ = write!(
                gaps,
                "{} at {}: stop {} price {} → {}<br>",
                esc(&g.symbol),
                esc(&g.at),
                g.stop_px,
                g.price,
                esc(&g.action)
            );
        }
        row("Stops gapped past their limit", gaps);
    }
    if report.stops_trailed > 0 {
        row("Stops raised by trailing", report.stops_trailed.to_string());
    }
    if !report.monte_carlo.is_empty() {
        let lines: Vec<String> =
            report.monte_carlo.iter().map(|mc| esc(&super::robustness::describe(mc))).collect();
        row("Monte Carlo", lines.join("<br>"));
    }
    if report.closed_at_end > 0 {
        row(
            "Closed at the end",
            format!("{} position(s) closed at market at the last step", report.closed_at_end),
        );
    }
    for (error, n) in &report.scan_errors {
        row("Scan errors", format!("{n} × {}", esc(error)));
    }
    for note in &report.notes {
        row("Note", esc(note));
    }
    let mut trades = String::new();
    for (i, t) in report.trades.iter().take(MAX_ROWS).enumerate() {
        let class = if t.pnl > 0.0 {
            "win"
        } else if t.pnl < 0.0 {
            "loss"
        } else {
            ""
        };
        let _ = write!(
            trades,
            "<tr class=\"{class}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4}</td><td>{}</td><td class=\"why\">{}</td></tr>",
            i + 1,
            esc(&t.symbol),
            esc(&t.opened_at),
            esc(&t.closed_at),
            t.size,
            t.entry_px,
            t.exit_px,
            t.sl_px,
            t.tp_px,
            t.pnl,
            reason(t.reason),
            why_taken(t),
        );
    }
    if report.trades.len() > MAX_ROWS {
        let _ = write!(
            trades,
            "<tr><td colspan=\"12\">… {} more in the JSON report</td></tr>",
            report.trades.len() - MAX_ROWS
        );
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Backtest {title}</title><style>{STYLE}\
         .figures th{{width:180px;color:#57606a;font-weight:500}}\
         .trades td{{font-variant-numeric:tabular-nums;white-space:nowrap}}\
         .trades td.why{{white-space:normal;min-width:220px}} .why li{{font-size:12px}}\
         tr.win td:nth-child(10){{color:#1a7f37}} tr.loss td:nth-child(10){{color:#cf222e}}\
         {AXIS_STYLE}</style></head><body>\
         <h1>Backtest: {title}</h1>\
         <p class=\"sub\">{symbols} · {tf} steps · {from} → {to} · {steps} steps · {source}</p>\
         {svg}\
         <table class=\"figures\">{figures}</table>\
         <h2>Trades</h2>\
         <table class=\"trades\"><tr><th>#</th><th>Symbol</th><th>Opened</th><th>Closed</th>\
         <th>Size</th><th>Entry</th><th>Exit</th><th>Stop</th><th>Target</th><th>Pnl {q}</th>\
         <th>Exit by</th><th>Why taken</th></tr>{trades}</table>\
         <p class=\"sub\">spotbot backtest · plugin sha256 {sha}</p>\
         </body></html>\n",
        title = esc(&format!("{} {}", report.replayed.plugin, report.replayed.version)),
        symbols = esc(&report.replayed.symbols.join(", ")),
        tf = esc(&report.replayed.timeframe),
        from = esc(&report.replayed.from),
        to = esc(&report.replayed.to),
        steps = report.steps,
        source = esc(&report.source),
        svg = svg(report),
        figures = figures.join(""),
        sha = esc(&report.replayed.sha256),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_long_curves_keep_their_extremes() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        let curve: Vec<Sample> =
            (0..10_000).map(|i| (i, if i == 5_000 { 1.0 } else { 100.0 })).collect();
        let reduced = reduce(&curve);
        assert!(reduced.len() <= MAX_POINTS + 1, "{}", reduced.len());
        assert!(reduced.iter().any(|p| p.1 == 1.0), "the dip survives");
        assert_eq!(reduced.last().map(|p| p.0), Some(9_999));
    }
}
