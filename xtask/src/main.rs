//! Project commands, so that a fresh machine with only the Rust toolchain needs two commands:
//! `cargo xtask demo` and `cargo xtask test`.

mod contract;
mod demo;
mod http;
mod plugins;

use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

const USAGE: &str = "usage: cargo xtask <demo|test|contract|plugins>
  demo      build everything, start the license server and serve the demo (paper exchange,
            synthetic market, free license) on 127.0.0.1:8000
  test      everything CI checks: fmt, clippy, plugin build, all tests, the API contract
  contract  check the running service against its OpenAPI document with schemathesis
            (installs it into target/xtask-venv with python3)
  plugins   build every plugin into the plugins folder";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("demo") => demo::run(),
        Some("test") => test(),
        Some("contract") => contract::run(),
        Some("plugins") => plugins::build_all(),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `cargo <args>` in the workspace root and fails when it fails.
pub fn cargo(args: &[&str]) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    println!("$ cargo {}", args.join(" "));
    let status = Command::new(cargo)
        .args(args)
        .current_dir(workspace_root())
        .status()
        .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("cargo {} failed ({status})", args.join(" "));
    }
    Ok(())
}

pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn test() -> anyhow::Result<()> {
    cargo(&["fmt", "--all", "--check"])?;
    cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"])?;
    plugins::build_all()?;
    cargo(&["test", "--workspace"])?;
    contract::check()
}
