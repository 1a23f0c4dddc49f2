//! The optimisation report as one self-contained HTML page, out of sample first: what was
//! searched, the stitched out-of-sample figures beside the in-sample mean, the stitched curve
//! with the windows' boundaries, a row per window with its overfitting statistics, how much of
//! the trials' scores each key explains, the trials drawn per window and the Monte Carlo
//! spread. Like the backtest page, whose curve, escaping and style it uses: no script, nothing
//! loaded from elsewhere, so the file opens offline and can be mailed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::super::history::parse_time;
use super::super::html::{AXIS_STYLE, Frame, STYLE, Sample, curve, esc};
use super::super::robustness::MonteCarlo;
use super::objective::Metrics;
use super::report::{OptimizeReport, TrialRow, WindowReport};
use super::space::{Param, Point};

/// Distinct error texts listed (the JSON report has every trial's).
const MAX_ERRORS: usize = 20;

/// A trials scatter's size and the margin around its dots.
const PLOT_W: f64 = 480.0;
const PLOT_H: f64 = 240.0;
const INSET: f64 = 10.0;

const READING: &str = "How to read them: the deflated Sharpe ratio (DSR) is the probability \
    that the chosen point's true Sharpe ratio is above SR0, the in-sample Sharpe ratio (per \
    step) that the best of as many trials of no skill would show; below 0.95 the winner is not \
    distinguishable from the best of that many lucky trials. The probability of backtest \
    overfitting (PBO) is the share of the trials' halves in which the best trial on one half \
    ranks at or below the median on the other (loss: the share in which it loses); near 0.5 or \
    above, the in-sample winner is no better than the median out of sample.";

const IMPORTANCE: &str = "Each bar is the share of the variance of the feasible trials' \
    scores that the key explains: the correlation ratio η² = between-group \
    variance / total variance, the trials grouped by the key's value (by decile of its range \
    for a key without a step). 1: the score depends on that key alone; 0: it does not depend \
    on it at all. Keys are measured one at a time, so the bars need not add up to 1.";

const TRIALS: &str = "Per window, left: each trial's score by trial number, the chosen trial \
    ringed, the infeasible trials as grey ticks on the bottom edge; right: the trials by the \
    first two searched keys, coloured by score from red (the window's lowest) to blue (its \
    highest), the infeasible trials hollow. A dot's tooltip names its trial.";

/// The whole page.
pub fn page(report: &OptimizeReport) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Optimise {title}</title><style>{STYLE}\
         .figures th{{color:#57606a;font-weight:500}}\
         .figures td,.windows td{{font-variant-numeric:tabular-nums}}\
         .windows small{{color:#57606a}} .windows td.span{{white-space:nowrap}}\
         .importance th{{width:180px;font-weight:500}}\
         .importance td.bar{{width:70%}}\
         .importance td.bar div{{background:#0969da;height:12px;border-radius:2px}}\
         .trials{{display:grid;grid-template-columns:1fr 1fr;gap:16px}}\
         h3{{font-size:14px;margin:16px 0 4px}}{AXIS_STYLE}</style></head><body>\
         <h1>Optimise: {title}</h1>{header}\
         <h2>Out of sample</h2>{figures}{equity}\
         <h2>Windows</h2>{windows}\
         <h2>Parameter importance</h2>{importance}\
         <h2>Trials</h2>{trials}\
         <h2>Monte Carlo</h2>{monte_carlo}\
         <p class=\"sub\">spotbot optimize · {count} trials in {elapsed:.1} s · plugin sha256 \
         {sha}</p></body></html>\n",
        title = esc(&format!("{} {}", report.replayed.plugin, report.replayed.version)),
        header = header(report),
        figures = figures(report),
        equity = equity(report),
        windows = windows(report),
        importance = importance_bars(report),
        trials = trials(report),
        monte_carlo = monte_carlo(report),
        count = report.trials,
        elapsed = report.elapsed_s,
        sha = esc(&report.replayed.sha256),
    )
}

/// The name the command line gives `value` (`tpe`, `profit-factor`, `rolling`).
fn flag(value: &impl clap::ValueEnum) -> String {
    value.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string())
}

/// What was searched, how and over what: the lines under the title.
fn header(r: &OptimizeReport) -> String {
    let cap = r
        .constraints
        .max_drawdown_pct
        .map_or_else(String::new, |d| format!(" or a drawdown deeper than {d} %"));
    format!(
        "<p class=\"sub\">{symbols} · {tf} steps · {from} → {to} · {source}<br>\
         {method} search of {objective} · seed {seed} · {trials} trials × {windows} windows · \
         {walk} walk, {in_sample} % in sample · infeasible: fewer than {min} trades{cap}</p>",
        symbols = esc(&r.replayed.symbols.join(", ")),
        tf = esc(&r.replayed.timeframe),
        from = esc(&r.replayed.from),
        to = esc(&r.replayed.to),
        source = esc(&r.source),
        method = flag(&r.method),
        objective = flag(&r.objective),
        seed = r.seed,
        trials = r.trials_per_window,
        windows = r.windows.len(),
        walk = flag(&r.walk),
        in_sample = r.in_sample_pct,
        min = r.constraints.min_trades,
    )
}

/// The stitched out-of-sample figures beside the chosen points' in-sample mean.
fn figures(r: &OptimizeReport) -> String {
    let q = esc(&r.quote_asset);
    let row = |name: &str, figure: &dyn Fn(&Metrics) -> String| {
        format!(
            "<tr><th>{name}</th><td>{}</td><td>{}</td></tr>",
            figure(&r.out_of_sample),
            figure(&r.in_sample)
        )
    };
    let opt =
        |v: Option<f64>, suffix: &str| v.map_or("–".to_string(), |v| format!("{v:.2}{suffix}"));
    let rows = [
        row("Return", &|m| format!("{:+.2} %", m.return_pct)),
        row("Pnl", &|m| format!("{:.4} {q}", m.pnl)),
        row("Sharpe", &|m| format!("{:.2}", m.sharpe)),
        row("Sortino", &|m| format!("{:.2}", m.sortino)),
        row("Calmar", &|m| format!("{:.2}", m.calmar)),
        row("Max drawdown", &|m| format!("{:.2} %", m.max_drawdown_pct)),
        row("Trades", &|m| m.trades.to_string()),
        row("Win rate", &|m| opt(m.win_rate, " %")),
        row("Profit factor", &|m| opt(m.profit_factor, "")),
    ];
    format!(
        "<table class=\"figures\"><tr><th></th><th>Out of sample (the windows' parts \
         stitched)</th><th>In sample (mean of the windows, trades summed)</th></tr>{}</table>",
        rows.concat()
    )
}

/// The stitched out-of-sample curve, a dashed line where each window's part begins.
fn equity(r: &OptimizeReport) -> String {
    let samples: Vec<Sample> = r.out_of_sample_equity.iter().map(|p| (p.t, p.equity)).collect();
    curve(&samples, r.start_equity, |frame| boundaries(&r.windows, frame))
}

/// A dashed line and the window's number where each window's out-of-sample part begins:
/// where the parameters change.
fn boundaries(windows: &[WindowReport], frame: &Frame) -> String {
    let (top, bottom) = frame.edges();
    let mut marks = String::new();
    for (i, w) in windows.iter().enumerate() {
        let Some(x) = parse_time(&w.out_of_sample_from).and_then(|t| frame.x(t as f64)) else {
            continue;
        };
        let _ = write!(
            marks,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" \
             stroke=\"#8250df\" stroke-dasharray=\"2 3\"/>\
             <text x=\"{lx:.1}\" y=\"{ly:.1}\" font-size=\"11\" fill=\"#8250df\">w{n}</text>",
            lx = x + 3.0,
            ly = top + 30.0,
            n = i + 1,
        );
    }
    marks
}

/// A point as its `key=value` pairs (not escaped).
fn point_text(point: &Point) -> String {
    point.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// A table row per window, how to read its statistics, and the failed trials.
fn windows(r: &OptimizeReport) -> String {
    if r.windows.is_empty() {
        return "<p>No windows.</p>".into();
    }
    let rows: String = r.windows.iter().enumerate().map(|(i, w)| window_row(i + 1, w)).collect();
    format!(
        "<table class=\"windows\"><tr><th>#</th><th>In sample</th><th>Out of sample</th>\
         <th>Chosen point</th><th>In sample: return · Sharpe · trades</th>\
         <th>Out of sample: return · Sharpe · trades</th><th>DSR</th><th>PBO</th></tr>{rows}\
         </table><p class=\"sub\">{READING}</p>{failures}",
        failures = failures(r)
    )
}

/// Window `n`'s spans, chosen point, both parts' figures and overfitting statistics.
fn window_row(n: usize, w: &WindowReport) -> String {
    let chosen = w.best.as_ref().map_or("no feasible trial".to_string(), |p| esc(&point_text(p)));
    let result = |m: Option<&Metrics>| {
        m.map_or("–".to_string(), |m| {
            format!("{:+.2} % · {:.2} · {}", m.return_pct, m.sharpe, m.trades)
        })
    };
    let dsr = w.deflated_sharpe.as_ref().map_or("–".to_string(), |d| {
        format!(
            "{:.2}<br><small>SR0 {:.4} of {} trials</small>",
            d.dsr, d.expected_max_sharpe, d.trials
        )
    });
    let pbo = w.overfitting.map_or("–".to_string(), |o| {
        format!(
            "{:.2}<br><small>loss {:.2}, {} halves</small>",
            o.pbo, o.probability_of_loss, o.combinations
        )
    });
    format!(
        "<tr><td>{n}</td><td class=\"span\">{}<br>→ {}</td>\
         <td class=\"span\">{}<br>→ {}</td><td>{chosen}</td><td>{}</td>\
         <td>{}</td><td>{dsr}</td><td>{pbo}</td></tr>",
        esc(&w.in_sample_from),
        esc(&w.in_sample_to),
        esc(&w.out_of_sample_from),
        esc(&w.out_of_sample_to),
        result(w.in_sample.as_ref()),
        result(w.out_of_sample.as_ref()),
    )
}

/// The trials that failed, by error text, most frequent first: a value the plugin refuses
/// says why here.
fn failures(r: &OptimizeReport) -> String {
    let mut by_error: BTreeMap<&str, usize> = BTreeMap::new();
    for error in r.windows.iter().flat_map(|w| &w.trials).filter_map(|t| t.error.as_deref()) {
        *by_error.entry(error).or_default() += 1;
    }
    if by_error.is_empty() {
        return String::new();
    }
    let mut errors: Vec<(&str, usize)> = by_error.into_iter().collect();
    errors.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut items: String =
        errors.iter().take(MAX_ERRORS).map(|(e, n)| format!("<li>{n} × {}</li>", esc(e))).collect();
    if errors.len() > MAX_ERRORS {
        let _ = write!(items, "<li>… {} more in the JSON report</li>", errors.len() - MAX_ERRORS);
    }
    format!("<h3>Failed trials (infeasible)</h3><ul>{items}</ul>")
}

/// For each key of `params`, the share of the variance of the `scored` trials' scores that the
/// key explains: the correlation ratio η² (Pearson) = Σ_g n_g·(mean_g − mean)² / Σ_i
/// (score_i − mean)², the trials grouped by the key's value ([`group`]). 0 when fewer than two
/// trials have a finite score or the scores do not vary.
fn importance(params: &[Param], scored: &[(&Point, f64)]) -> Vec<f64> {
    params
        .iter()
        .map(|param| {
            let grouped: Vec<(i64, f64)> = scored
                .iter()
                .filter_map(|(point, score)| Some((group(param, *point.get(&param.key)?), *score)))
                .collect();
            correlation_ratio(&grouped)
        })
        .collect()
}

/// The group of `value` of `param`: its level on the key's step, or without a step the decile
/// of its range (a continuous key has as many values as trials, each its own group, which
/// would explain everything).
fn group(param: &Param, value: f64) -> i64 {
    let width = param.max - param.min;
    match param.step {
        Some(step) if step > 0.0 => ((value - param.min) / step).round() as i64,
        _ if width > 0.0 => ((value - param.min) / width * 10.0).floor().clamp(0.0, 9.0) as i64,
        _ => 0,
    }
}

/// η² of the finite scores of `grouped` (group, score): the between-group over the total sum
/// of squares, in 0..=1.
fn correlation_ratio(grouped: &[(i64, f64)]) -> f64 {
    let finite: Vec<(i64, f64)> = grouped.iter().copied().filter(|g| g.1.is_finite()).collect();
    // Scaled to the largest magnitude first: a score of f64::MAX (a profit factor without a
    // losing trade) must not overflow the squares. η² does not change with the scale.
    let scale = finite.iter().map(|g| g.1.abs()).fold(0.0, f64::max);
    if finite.len() < 2 || scale <= 0.0 {
        return 0.0;
    }
    let n = finite.len() as f64;
    let mean = finite.iter().map(|g| g.1 / scale).sum::<f64>() / n;
    let total: f64 = finite.iter().map(|g| (g.1 / scale - mean).powi(2)).sum();
    let mut groups: BTreeMap<i64, (f64, f64)> = BTreeMap::new();
    for (g, score) in &finite {
        let (sum, count) = groups.entry(*g).or_insert((0.0, 0.0));
        *sum += score / scale;
        *count += 1.0;
    }
    let between: f64 = groups.values().map(|(sum, n)| n * (sum / n - mean).powi(2)).sum();
    // Scores equal but for rounding do not vary.
    if total > n * f64::EPSILON { (between / total).clamp(0.0, 1.0) } else { 0.0 }
}

/// Each searched key's importance as a bar, pooled over every window's feasible trials.
fn importance_bars(r: &OptimizeReport) -> String {
    let scored: Vec<(&Point, f64)> = r
        .windows
        .iter()
        .flat_map(|w| &w.trials)
        .filter_map(|t| Some((&t.params, t.score?)))
        .collect();
    let shares = importance(&r.space.params, &scored);
    let rows: String = r
        .space
        .params
        .iter()
        .zip(shares)
        .map(|(param, share)| {
            format!(
                "<tr><th>{}</th><td class=\"bar\"><div style=\"width:{:.1}%\"></div></td>\
                 <td>{share:.3}</td></tr>",
                esc(&param.key),
                share * 100.0
            )
        })
        .collect();
    format!(
        "<p class=\"sub\">Pooled over every window's feasible trials ({}). {IMPORTANCE}</p>\
         <table class=\"importance\">{rows}</table>",
        scored.len()
    )
}

/// Per window, the trials' scores by trial number and the first two keys' values by score.
fn trials(r: &OptimizeReport) -> String {
    if r.windows.iter().all(|w| w.trials.is_empty()) {
        return "<p>No trials.</p>".into();
    }
    let keys = (r.space.params.first(), r.space.params.get(1));
    let mut out = format!("<p class=\"sub\">{TRIALS}</p>");
    for (i, w) in r.windows.iter().enumerate() {
        let pair = match keys {
            (Some(a), Some(b)) => key_scatter(w, a, b),
            _ => String::new(),
        };
        let _ = write!(
            out,
            "<h3>Window {}</h3><div class=\"trials\"><div>{}</div><div>{pair}</div></div>",
            i + 1,
            score_scatter(w)
        );
    }
    out
}

/// The window's trials, each with whether it is the chosen one, that one last (on top).
fn in_drawing_order(w: &WindowReport) -> Vec<(bool, &TrialRow)> {
    let mut trials: Vec<(bool, &TrialRow)> =
        w.trials.iter().enumerate().map(|(i, t)| (w.best_trial == Some(i), t)).collect();
    trials.sort_by_key(|(chosen, _)| *chosen);
    trials
}

/// The finite score of a feasible trial.
fn score(t: &TrialRow) -> Option<f64> {
    t.score.filter(|s| s.is_finite())
}

/// The lowest and highest feasible score of the window's trials.
fn score_range(w: &WindowReport) -> Option<(f64, f64)> {
    w.trials.iter().filter_map(score).fold(None, |range, s| {
        Some(range.map_or((s, s), |(lo, hi): (f64, f64)| (lo.min(s), hi.max(s))))
    })
}

/// A trial's tooltip: its number, point and score, or why it is infeasible (escaped).
fn tooltip(t: &TrialRow) -> String {
    let outcome = match (score(t), &t.error) {
        (Some(s), _) => format!("score {s:.4}"),
        (None, Some(error)) => format!("failed: {error}"),
        (None, None) => "infeasible (constraints)".to_string(),
    };
    esc(&format!("trial {} · {} · {outcome}", t.number, point_text(&t.params)))
}

/// Where `v` lies between `lo` and `hi`, in 0..=1 (the middle when the range is empty).
fn frac(v: f64, (lo, hi): (f64, f64)) -> f64 {
    let f = (v - lo) / (hi - lo);
    if f.is_finite() { f.clamp(0.0, 1.0) } else { 0.5 }
}

/// The position in a scatter of the fractions `fx`, `fy` of its ranges (y upwards).
fn place(fx: f64, fy: f64) -> (f64, f64) {
    (INSET + fx * (PLOT_W - 2.0 * INSET), PLOT_H - INSET - fy * (PLOT_H - 2.0 * INSET))
}

/// A figure for an axis label: two decimals, or the exponent form when that would be long
/// (a profit factor without a losing trade scores f64::MAX).
fn label(v: f64) -> String {
    if v.abs() < 1e9 { format!("{v:.2}") } else { format!("{v:.2e}") }
}

/// A dot at `(x, y)`, ringed when it is the chosen trial.
fn dot(out: &mut String, (x, y): (f64, f64), fill: &str, chosen: bool, tip: &str) {
    let (r, stroke) = if chosen { (6.0, "#1f2328") } else { (3.5, "none") };
    let _ = write!(
        out,
        "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\" fill=\"{fill}\" stroke=\"{stroke}\" \
         stroke-width=\"2\"><title>{tip}</title></circle>"
    );
}

/// A scatter's SVG: its dots, the y range's labels inside on the left, the x range's under it.
fn scatter(name: &str, dots: &str, x: [String; 2], y: [String; 2]) -> String {
    format!(
        "<svg viewBox=\"0 0 {PLOT_W} {PLOT_H}\" width=\"100%\" role=\"img\" \
         aria-label=\"{name}\" xmlns=\"http://www.w3.org/2000/svg\">\
         <rect x=\"0\" y=\"0\" width=\"{PLOT_W}\" height=\"{PLOT_H}\" fill=\"#fbfbfc\"/>{dots}\
         <text x=\"{INSET}\" y=\"{top}\" font-size=\"11\" fill=\"#57606a\">{y1}</text>\
         <text x=\"{INSET}\" y=\"{bottom}\" font-size=\"11\" fill=\"#57606a\">{y0}</text></svg>\
         <div class=\"axis\"><span>{x0}</span><span>{x1}</span></div>",
        top = INSET + 10.0,
        bottom = PLOT_H - INSET - 4.0,
        y0 = y[0],
        y1 = y[1],
        x0 = x[0],
        x1 = x[1],
    )
}

/// The window's trials in order: score by trial number, the chosen one ringed, the
/// infeasible ones as ticks on the bottom edge.
fn score_scatter(w: &WindowReport) -> String {
    let range = score_range(w).unwrap_or((0.0, 1.0));
    let last = w.trials.iter().map(|t| t.number).max().unwrap_or(0);
    let numbers = (0.0, last as f64);
    let mut dots = String::new();
    for (chosen, t) in in_drawing_order(w) {
        let fx = frac(t.number as f64, numbers);
        match score(t) {
            Some(s) => {
                let fill = if chosen { "#bf8700" } else { "#0969da" };
                dot(&mut dots, place(fx, frac(s, range)), fill, chosen, &tooltip(t));
            }
            None => {
                let _ = write!(
                    dots,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"2\" height=\"7\" fill=\"#8c959f\">\
                     <title>{}</title></rect>",
                    place(fx, 0.0).0 - 1.0,
                    PLOT_H - 7.0,
                    tooltip(t)
                );
            }
        }
    }
    scatter(
        "trial scores",
        &dots,
        ["trial 0".into(), format!("trial {last}")],
        [format!("score {}", label(range.0)), format!("score {}", label(range.1))],
    )
}

/// The colour of fraction `f` of the window's score range: red (lowest) to blue (highest).
fn shade(f: f64) -> String {
    let mix = |low: f64, high: f64| (low + (high - low) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(207.0, 9.0), mix(34.0, 105.0), mix(46.0, 218.0))
}

/// The window's trials by the values of keys `a` (x) and `b` (y), coloured by score, the
/// chosen one ringed, the infeasible ones hollow.
fn key_scatter(w: &WindowReport, a: &Param, b: &Param) -> String {
    let range = score_range(w).unwrap_or((0.0, 1.0));
    let mut dots = String::new();
    for (chosen, t) in in_drawing_order(w) {
        let (Some(va), Some(vb)) = (t.params.get(&a.key), t.params.get(&b.key)) else {
            continue;
        };
        let at = place(frac(*va, (a.min, a.max)), frac(*vb, (b.min, b.max)));
        match score(t) {
            Some(s) => dot(&mut dots, at, &shade(frac(s, range)), chosen, &tooltip(t)),
            None => {
                let _ = write!(
                    dots,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"none\" \
                     stroke=\"#8c959f\"><title>{}</title></circle>",
                    at.0,
                    at.1,
                    tooltip(t)
                );
            }
        }
    }
    let (ka, kb) = (esc(&a.key), esc(&b.key));
    scatter(
        "trials by key",
        &dots,
        [format!("{ka} {}", a.min), format!("{ka} {}", a.max)],
        [format!("{kb} {}", b.min), format!("{kb} {}", b.max)],
    )
}

/// The stitched out-of-sample trades reordered and resampled: the spread of the drawdown and
/// the final equity another order or another draw of the same trades gives.
fn monte_carlo(r: &OptimizeReport) -> String {
    if r.monte_carlo.is_empty() {
        return "<p>No closed trade out of sample: nothing to resample.</p>".into();
    }
    let rows: String = r.monte_carlo.iter().map(monte_carlo_row).collect();
    format!(
        "<table class=\"figures\"><tr><th>Resampling</th><th>Paths × trades</th>\
         <th>Max drawdown p5 / p50 / p95</th><th>Final equity p5 / p50 / p95</th>\
         <th>In their order: drawdown, final equity</th></tr>{rows}</table>"
    )
}

/// One resampling's percentiles beside the trades in their own order.
fn monte_carlo_row(mc: &MonteCarlo) -> String {
    let (d, e) = (&mc.max_drawdown_pct, &mc.final_equity);
    format!(
        "<tr><td>{:?}</td><td>{} × {}</td><td>{:.2} % / {:.2} % / {:.2} %</td>\
         <td>{:.2} / {:.2} / {:.2}</td><td>{:.2} %, {:.2}</td></tr>",
        mc.params.method,
        mc.params.paths,
        mc.trades,
        d.p5,
        d.p50,
        d.p95,
        e.p5,
        e.p50,
        e.p95,
        mc.original.max_drawdown_pct,
        mc.original.final_equity
    )
}

#[cfg(test)]
mod tests {
    use super::super::space::Target;
    use super::*;

    fn key(name: &str, step: Option<f64>) -> Param {
        Param {
            key: name.into(),
            min: 0.0,
            max: 10.0,
            step,
            integer: false,
            target: Target::Plugin,
        }
    }

    fn point(a: f64, b: f64) -> Point {
        Point::from([("a".to_string(), a), ("b".to_string(), b)])
    }

    #[test]
    fn a_key_the_score_depends_on_explains_it_all_and_an_irrelevant_one_nothing() {
        let params = [key("a", Some(1.0)), key("b", Some(1.0))];
        let points: Vec<Point> =
            (0..=10).flat_map(|a| (0..=10).map(move |b| point(a as f64, b as f64))).collect();
        let scored: Vec<(&Point, f64)> =
            points.iter().map(|p| (p, (p["a"] - 4.0).powi(2))).collect();
        let shares = importance(&params, &scored);
        assert!((shares[0] - 1.0).abs() < 1e-12, "{shares:?}");
        assert!(shares[1].abs() < 1e-12, "{shares:?}");
    }

    #[test]
    fn a_key_without_a_step_is_grouped_by_deciles_of_its_range() {
        let params = [key("a", None), key("b", None)];
        // a in the middle of each decile decides the score; b sweeps its range in every decile
        // of a.
        let points: Vec<Point> = (0..10)
            .flat_map(|a| (0..20).map(move |b| point(a as f64 + 0.5, b as f64 * 0.5 + 0.1)))
            .collect();
        let scored: Vec<(&Point, f64)> = points.iter().map(|p| (p, p["a"].floor())).collect();
        let shares = importance(&params, &scored);
        assert!((shares[0] - 1.0).abs() < 1e-12 && shares[1].abs() < 1e-12, "{shares:?}");
        assert_eq!(group(&params[0], 10.0), 9, "the top of the range is in the last decile");
    }

    #[test]
    fn no_trials_one_trial_equal_or_unbounded_scores_give_no_nan() {
        let params = [key("a", Some(1.0))];
        let (one, two) = (point(1.0, 0.0), point(2.0, 0.0));
        for scored in [
            vec![],
            vec![(&one, 3.0)],
            vec![(&one, 3.0), (&two, 3.0)],
            vec![(&one, f64::NAN), (&two, f64::INFINITY)],
        ] {
            assert_eq!(importance(&params, &scored), [0.0], "{scored:?}");
        }
        let unbounded = importance(&params, &[(&one, f64::MAX), (&two, 1.0)]);
        assert!((unbounded[0] - 1.0).abs() < 1e-12, "{unbounded:?}");
        assert!(importance(&[], &[(&one, 1.0)]).is_empty());
    }

    /// A report of no window, of `plugin`, searching keys `a` and `b`.
    fn report(plugin: &str) -> OptimizeReport {
        OptimizeReport {
            replayed: crate::backtest::report::Replayed {
                plugin: plugin.into(),
                version: "1.0.0".into(),
                symbols: vec!["SOLUSDT".into()],
                timeframe: "1h".into(),
                ..Default::default()
            },
            source: String::new(),
            quote_asset: "USDT".into(),
            start_equity: 10_000.0,
            method: super::super::Method::Grid,
            objective: super::super::Objective::ProfitFactor,
            constraints: super::super::Constraints { min_trades: 1, max_drawdown_pct: None },
            seed: 1,
            trials_per_window: 2,
            walk: super::super::Walk::Rolling,
            in_sample_pct: 75.0,
            space: super::super::space::Space {
                params: vec![key("a", Some(1.0)), key("b", Some(1.0))],
            },
            out_of_sample: Metrics::default(),
            in_sample: Metrics::default(),
            out_of_sample_equity: vec![],
            monte_carlo: vec![],
            windows: vec![],
            trials: 0,
            elapsed_s: 0.0,
            trials_per_second: 0.0,
        }
    }

    fn trial(number: usize, score: Option<f64>, error: Option<&str>) -> TrialRow {
        TrialRow {
            number,
            params: point(number as f64, 1.0),
            score,
            metrics: None,
            error: error.map(str::to_string),
        }
    }

    #[test]
    fn an_empty_report_renders() {
        let page = page(&report("empty"));
        assert!(page.contains("</html>") && page.contains("No windows."), "{page}");
        assert!(page.contains("No equity samples.") && !page.contains("NaN"), "{page}");
    }

    #[test]
    fn the_reports_texts_are_escaped_and_nothing_is_loaded() {
        let mut report = report("<script>x</script>");
        report.windows.push(WindowReport {
            in_sample_from: "2025-01-01T00:00:00Z".into(),
            in_sample_to: "2025-01-02T00:00:00Z".into(),
            out_of_sample_from: "2025-01-02T01:00:00Z".into(),
            out_of_sample_to: "2025-01-03T00:00:00Z".into(),
            best: Some(point(2.0, 1.0)),
            best_trial: Some(2),
            in_sample: Some(Metrics::default()),
            out_of_sample: None,
            deflated_sharpe: None,
            overfitting: None,
            trials: vec![
                trial(0, None, Some("<img src=\"http://x\">")),
                trial(1, Some(f64::MAX), None),
                trial(2, Some(1.0), None),
            ],
        });
        let page = page(&report);
        assert!(!page.contains("<script") && !page.contains("<img"), "{page}");
        assert!(page.contains("&lt;img src=&quot;http://x&quot;&gt;"), "{page}");
        assert!(!page.contains("src=\"http") && !page.contains("href=\"http"), "{page}");
        assert!(page.contains("<td>a=2 b=1</td>") && !page.contains("NaN"), "{page}");
        assert!(page.contains("score 1.80e308"), "an unbounded score keeps a short label");
    }
}
