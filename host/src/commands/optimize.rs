//! `spotbot optimize`: a walk-forward search of a plugin's parameters, its summary on the
//! terminal (out of sample first), the HTML report and the JSON one.

use std::path::PathBuf;

use spotbot::backtest::Progress;
use spotbot::backtest::optimize::{self, Constraints, Method, Objective, OptimizeSpec, Plan, Walk};

use super::{ReplayArgs, write};

/// Search a strategy plugin's parameters, walk-forward: each window chooses them in sample
/// and is measured out of sample (docs/backtest.md, "Optimise").
#[derive(Debug, clap::Args)]
pub struct OptimizeArgs {
    #[command(flatten)]
    replay: ReplayArgs,
    /// The search space: a TOML file of [key] tables with min, max and step.
    #[arg(long)]
    space: PathBuf,
    /// Trials per window.
    #[arg(long, default_value_t = 100)]
    trials: usize,
    #[arg(long, value_enum, default_value_t = Method::Tpe)]
    method: Method,
    #[arg(long, value_enum, default_value_t = Objective::Sharpe)]
    objective: Objective,
    /// The same seed gives the same trials and the same report.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Walk-forward windows (1: one in-sample part, then one out-of-sample part).
    #[arg(long, default_value_t = 4)]
    windows: usize,
    #[arg(long, value_enum, default_value_t = Walk::Rolling)]
    walk: Walk,
    /// Share of each window in sample, percent.
    #[arg(long, default_value_t = 75.0)]
    in_sample: f64,
    /// A trial with fewer closed trades is infeasible.
    #[arg(long, default_value_t = 5)]
    min_trades: usize,
    /// A trial whose equity fell deeper than this percent is infeasible.
    #[arg(long)]
    max_drawdown: Option<f64>,
    /// Trials replayed at once (default: one per core).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Trials asked of the sampler before their results are told back. Fixed, so that a seed
    /// gives the same report on any number of cores.
    #[arg(long, default_value_t = 8)]
    batch: usize,
    /// The HTML report (default: <data_dir>/backtests/optimize-<plugin>.html, beside the JSON).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The JSON report (default: <data_dir>/backtests/optimize-<plugin>.json).
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Runs the search, prints the summary and writes the HTML and JSON reports.
pub fn run(args: OptimizeArgs) -> anyhow::Result<()> {
    if args.trials == 0 || args.batch == 0 {
        anyhow::bail!("--trials and --batch must be at least 1");
    }
    let space = std::fs::read_to_string(&args.space)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", args.space.display()))?;
    let (config, backtest) = args.replay.load()?;
    let spec = OptimizeSpec {
        backtest,
        space,
        plan: Plan {
            method: args.method,
            objective: args.objective,
            constraints: Constraints {
                min_trades: args.min_trades,
                max_drawdown_pct: args.max_drawdown,
            },
            trials: args.trials,
            seed: args.seed,
            batch: args.batch,
        },
        walk: args.walk,
        windows: args.windows,
        in_sample_pct: args.in_sample,
        workers: args.workers,
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let report = optimize::run(&config, &spec, &mut Progress::stderr().of("optimize"))?;
    print!("{}", report.summary());
    let path =
        |extension| optimize::default_report_path(&config, &report.replayed.plugin, extension);
    let out = args.out.unwrap_or_else(|| path("html"));
    write(&out, &optimize::html::page(&report))?;
    println!("report: {}", out.display());
    let json = args.json.unwrap_or_else(|| path("json"));
    write(&json, &serde_json::to_string_pretty(&report)?)?;
    println!("json: {}", json.display());
    Ok(())
}
