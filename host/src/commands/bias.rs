//! `spotbot check-bias`: the plugin's decisions replayed as live, from only what was known at
//! each step, and with more warm-up; a verdict per check (docs/backtest.md, "Bias checks").

use std::path::PathBuf;

use spotbot::backtest::Progress;
use spotbot::backtest::bias::{self, BiasSpec};

use super::{ReplayArgs, write};

/// Check a strategy plugin for look-ahead and recursive dependence: its decisions replayed
/// three ways over history must agree (docs/backtest.md, "Bias checks"). Exits 1 when a check
/// fails.
#[derive(Debug, clap::Args)]
pub struct BiasArgs {
    #[command(flatten)]
    replay: ReplayArgs,
    /// At most this many steps from --from are replayed.
    #[arg(long, default_value_t = 500)]
    steps: usize,
    /// Also write the report as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Replay the paper exchange's synthetic market (no request to the configured exchange,
    /// no key), as the service's background checks do; --candles still wins.
    #[arg(long)]
    synthetic: bool,
}

/// Runs the checks, prints the verdicts and fails when one failed.
pub fn run(args: BiasArgs) -> anyhow::Result<()> {
    if args.steps == 0 {
        anyhow::bail!("--steps must be at least 1");
    }
    let (mut config, backtest) = args.replay.load()?;
    if args.synthetic {
        config.exchange.mode = spotbot::config::ExchangeMode::Paper;
    }
    let spec = BiasSpec { backtest, max_steps: args.steps };
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        bias::run(&config, &spec, &mut Progress::stderr().of("check-bias")).await
    })?;
    print!("{}", report.summary());
    if let Some(json) = args.json {
        write(&json, &serde_json::to_string_pretty(&report)?)?;
        println!("json: {}", json.display());
    }
    if !report.passed() {
        anyhow::bail!("{} failed a bias check", report.replayed.plugin);
    }
    Ok(())
}
