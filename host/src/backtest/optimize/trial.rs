//! One trial: the plugin loaded under the trial's config (its searched keys written into the
//! strategy's section), replayed over one span of the prepared history in a simulator of its
//! own, and what came out of it.

use std::sync::Arc;

use rust_decimal::Decimal;
use rust_decimal::prelude::FromPrimitive;

use super::super::market::Served;
use super::super::progress::Progress;
use super::super::replay::{BracketOverride, Prepared, Span, replay_span};
use super::super::session::Session;
use super::objective::{Metrics, step_returns};
use super::space::{Point, Space, Target};
use crate::config::Config;

/// What every trial of a run shares, read-only.
pub struct Bench<'a> {
    pub config: &'a Config,
    pub plugin: &'a std::path::Path,
    pub name: &'a str,
    pub symbols: &'a [String],
    pub prepared: &'a Prepared,
    pub space: &'a Space,
    pub steps_per_year: f64,
}

/// The outcome of one replay of a point.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub metrics: Metrics,
    /// The equity at each step.
    pub equity: Vec<f64>,
    /// Epoch ms of each step.
    pub times: Vec<i64>,
    /// Gross profit and loss of the closed trades, and how many won.
    pub gross_profit: f64,
    pub gross_loss: f64,
    pub wins: usize,
    /// Pnl of each closed trade, in the order they closed.
    pub pnls: Vec<f64>,
}

impl Outcome {
    /// Returns of the equity from one step to the next.
    pub fn returns(&self) -> Vec<f64> {
        step_returns(&self.equity)
    }
}

/// Replays `point` over `span`.
pub async fn replay(bench: &Bench<'_>, point: &Point, span: Span) -> anyhow::Result<Outcome> {
    let (config, bracket) = trial_config(bench.config, bench.name, bench.space, point)?;
    let session = Session::start(&config, bench.plugin, span.from_ms, Served::AsLive).await?;
    let mut hidden = Progress::hidden();
    let report =
        replay_span(&session, bench.prepared, bench.symbols, span, &bracket, &mut hidden).await?;
    Ok(Outcome {
        metrics: Metrics::of_report(&report, bench.steps_per_year),
        equity: report.equity.iter().map(|p| p.equity).collect(),
        times: report.equity.iter().map(|p| p.t).collect(),
        gross_profit: report.stats.gross_profit,
        gross_loss: report.stats.gross_loss,
        wins: report.stats.wins,
        pnls: report.trades.iter().map(|t| t.pnl).collect(),
    })
}

/// The run's config with the point's plugin and host keys in the strategy's section, and the
/// point's stop and target distances.
fn trial_config(
    base: &Config,
    name: &str,
    space: &Space,
    point: &Point,
) -> anyhow::Result<(Arc<Config>, BracketOverride)> {
    let mut config = base.clone();
    let mut bracket = BracketOverride::default();
    let section = config.strategy.sections.entry(name.to_string()).or_default();
    for p in &space.params {
        let Some(&value) = point.get(&p.key) else { continue };
        match p.target {
            Target::Plugin | Target::Host => {
                let toml_value = if p.integer {
                    toml::Value::Integer(value as i64)
                } else {
                    toml::Value::Float(value)
                };
                section.insert(p.key.clone(), toml_value);
            }
            Target::Bracket => {
                let pct = Decimal::from_f64(value)
                    .ok_or_else(|| anyhow::anyhow!("{} = {value} is not a percent", p.key))?
                    .round_dp(6);
                match p.key.as_str() {
                    "sl_pct" => bracket.sl_pct = Some(pct),
                    _ => bracket.tp_pct = Some(pct),
                }
            }
        }
    }
    Ok((Arc::new(config), bracket))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_lands_in_the_section_and_the_bracket() {
        let text = "[fast]\nmin = 2\nmax = 9\n[band]\nmin = 0.5\nmax = 2.0\n\
                    [size_pct]\nmin = 1.0\nmax = 3.0\n[tp_pct]\nmin = 1.0\nmax = 9.0\n";
        let space = Space::parse(text, r#"{"fast": 3, "band": 1.0}"#).unwrap();
        let point: Point = [("fast", 4.0), ("band", 1.25), ("size_pct", 2.0), ("tp_pct", 7.5)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let (config, bracket) = trial_config(&Config::default(), "sma", &space, &point).unwrap();
        let section = &config.strategy.sections["sma"];
        assert_eq!(section["fast"], toml::Value::Integer(4));
        assert_eq!(section["band"], toml::Value::Float(1.25));
        assert_eq!(section["size_pct"], toml::Value::Float(2.0));
        assert!(!section.contains_key("tp_pct"));
        assert_eq!(bracket.tp_pct, Some(Decimal::new(75, 1)));
        assert_eq!(bracket.sl_pct, None);
    }
}
