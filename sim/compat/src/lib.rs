//! `cargo xtask compat`: the exchanges' own clients, unmodified, against the simulator. The
//! service's clients and the simulator are written from the same wire references, so a
//! misreading shared by both would pass every other test; an official client (exchange A's
//! connector, exchange B's SDK, ccxt) reading the simulator's answers as it reads the real
//! exchange's proves that the simulator speaks each exchange's wire. Each script of
//! `sim/compat/` runs against a fresh `spotbot-sim` of its own (they assume a new account),
//! started on free loopback ports with the credentials its header names, and fails the
//! command when it exits non-zero (its asserts).
//!
//! The clients live in their own virtual environment under `target/compat-venv` ([`VENV`],
//! pinned in `requirements.txt` beside the scripts).
//!
//! The runner lives with the scripts it runs, as a library that xtask calls (`cargo xtask
//! compat`, and `cargo xtask test` on the simulator its workspace tests built): it compiles with
//! xtask from crates xtask builds anyway, so a clean clone's CI gets no extra build for it.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use xtask_support::children::Guard;
use xtask_support::venv::{self, Env, imports};
use xtask_support::{cargo, http, plugins, workspace_root};

/// The official clients, apart from the tools of the other checks: their pins follow the
/// exchanges' client releases, not the checks'.
pub const VENV: Env = Env {
    folder: "compat-venv",
    requirements: "sim/compat/requirements.txt",
    pins: &["binance-connector==3.13.0", "hyperliquid-python-sdk==0.23.0", "ccxt==4.5.90"],
    check: |bin| imports(bin, "binance.spot, hyperliquid.exchange, ccxt", "the official clients"),
};

/// Exchange B's account key of the scripts (a test key: the simulator's wallet for it).
const B_KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";
/// A script takes seconds (ccxt, throttling its own requests, 7 s); one still running after
/// this hangs on a request.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);
/// How often a running script is looked at.
const POLL: Duration = Duration::from_millis(100);

/// A script of `sim/compat/` and the simulator's environment it expects (see its header).
struct Script {
    file: &'static str,
    env: &'static [(&'static str, &'static str)],
}

const SCRIPTS: &[Script] = &[
    Script {
        file: "official_python_connector.py",
        env: &[("EXCHANGE_API_KEY", "thirdparty"), ("EXCHANGE_API_SECRET", "tp-secret")],
    },
    Script { file: "exchange_b_python_sdk.py", env: &[("EXCHANGE_PRIVATE_KEY", B_KEY)] },
    Script { file: "exchange_b_ccxt.py", env: &[("EXCHANGE_PRIVATE_KEY", B_KEY)] },
];

/// `cargo xtask compat`: builds the simulator, then checks.
pub fn run() -> anyhow::Result<()> {
    // Its own package only: `cargo xtask test` checks the binary `cargo test --workspace`
    // built instead, since building it alone after that would compile its dependencies again
    // with other features.
    cargo(&["build", "--package", "spotbot-sim"])?;
    check()
}

/// Every script against the already built `target/debug/spotbot-sim`.
pub fn check() -> anyhow::Result<()> {
    let started = Instant::now();
    let python = venv::ensure_env(&VENV)?.join("python");
    let sim = plugins::target_dir()?.join("debug").join("spotbot-sim");
    for script in SCRIPTS {
        let took = Instant::now();
        run_script(&python, &sim, script)?;
        println!("compat: {} passed in {:.1} s", script.file, took.elapsed().as_secs_f64());
    }
    println!("compat check passed in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// Starts a fresh simulator for `script`, waits until it answers, runs the script against it
/// and stops it.
fn run_script(python: &Path, sim: &Path, script: &Script) -> anyhow::Result<()> {
    let (addr, streams_addr) = free_loopback_addrs()?;
    let mut command = Command::new(sim);
    command
        .args(["--addr", &addr, "--streams-addr", &streams_addr])
        .envs(script.env.iter().copied())
        .stdout(Stdio::null());
    let mut simulator =
        Guard(command.spawn().with_context(|| {
            format!("cannot start {} (cargo build -p spotbot-sim)", sim.display())
        })?);
    http::wait_until_up(&addr, "/sim/state", 120, || matches!(simulator.0.try_wait(), Ok(None)))
        .with_context(|| format!("the simulator for {} did not start", script.file))?;

    let path = workspace_root().join("sim").join("compat").join(script.file);
    let base_url = format!("http://{addr}");
    println!("$ {} {} {base_url}", python.display(), path.display());
    let child = Command::new(python)
        .arg(&path)
        .arg(&base_url)
        .current_dir(workspace_root())
        .spawn()
        .with_context(|| format!("cannot run {}", python.display()))?;
    match wait_at_most(Guard(child), SCRIPT_TIMEOUT)? {
        Some(status) if status.success() => Ok(()),
        Some(status) => bail!(
            "sim/compat/{} failed ({status}): an official client disagrees with the simulator \
             (its output above names the check)",
            script.file
        ),
        None => bail!("sim/compat/{} did not finish in {SCRIPT_TIMEOUT:?}", script.file),
    }
}

/// The child's exit status, or `None` when it still runs after `limit` (it is then stopped
/// as the guard drops).
fn wait_at_most(mut child: Guard, limit: Duration) -> anyhow::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.0.try_wait()? {
            return Ok(Some(status));
        }
        std::thread::sleep(POLL);
    }
    Ok(None)
}

/// Two loopback addresses whose ports nothing listens on: the system's picks for port 0, held
/// together so that they differ, then released for the simulator to take.
fn free_loopback_addrs() -> anyhow::Result<(String, String)> {
    let bind = || TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port");
    let (first, second) = (bind()?, bind()?);
    Ok((first.local_addr()?.to_string(), second.local_addr()?.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A script added to `sim/compat/` is run too, and each runs against the simulator its
    /// header starts by hand.
    #[test]
    fn every_script_runs_with_the_credentials_of_its_header() {
        let dir = workspace_root().join("sim").join("compat");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".py"))
            .collect();
        files.sort();
        let mut listed: Vec<&str> = SCRIPTS.iter().map(|script| script.file).collect();
        listed.sort();
        assert_eq!(files, listed);
        for script in SCRIPTS {
            let text = std::fs::read_to_string(dir.join(script.file)).unwrap();
            for (name, value) in script.env {
                assert!(text.contains(&format!("{name}={value}")), "{}: {name}", script.file);
            }
        }
    }
}
