//! `spotbot backtest`: one replay, its summary on the terminal, the HTML (and JSON) report.

use std::path::PathBuf;

use spotbot::backtest::{self, Progress};

use super::{ReplayArgs, write};

/// Replay a strategy plugin over history: its buy results become bracket orders in the
/// exchange simulator's matching engine, without approval (docs/backtest.md).
#[derive(Debug, clap::Args)]
pub struct BacktestArgs {
    #[command(flatten)]
    replay: ReplayArgs,
    /// The HTML report (default: <data_dir>/backtests/backtest-<plugin>.html, so a run
    /// leaves nothing in the current folder).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also write the whole report as JSON (every trade and equity sample).
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Runs a backtest, prints the summary and writes the HTML (and JSON) report.
pub fn run(args: BacktestArgs) -> anyhow::Result<()> {
    let (config, spec) = args.replay.load()?;
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        backtest::run(&config, &spec, &mut Progress::stderr()).await
    })?;
    print!("{}", report.summary());
    let out = args.out.unwrap_or_else(|| {
        PathBuf::from(&config.server.data_dir)
            .join("backtests")
            .join(format!("backtest-{}.html", report.replayed.plugin))
    });
    write(&out, &backtest::html::page(&report))?;
    println!("report: {}", out.display());
    if let Some(json) = args.json {
        write(&json, &serde_json::to_string_pretty(&report)?)?;
        println!("json: {}", json.display());
    }
    Ok(())
}
