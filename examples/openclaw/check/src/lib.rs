//! `cargo xtask openclaw`: loads `examples/openclaw/` into the real OpenClaw CLI (npm
//! `openclaw`, pinned) in a scratch home, so the assets are checked against the platform as
//! it is, not only against our notes about it (`tests/tests/e2e/openclaw_assets.rs` checks
//! them against those notes and against the service's routes):
//!
//! 1. `openclaw config patch --file openclaw.json` merges the fragment into a fresh config, as
//!    docs/agents.md says, and `openclaw config validate` finds it clean;
//! 2. `openclaw skills info trader-api --agent <id>` finds the skill ready and visible to coo,
//!    finance, scout and tech (curl on PATH, TRADER_BASE_URL from the config), hidden from ops;
//! 3. `openclaw doctor --fix --non-interactive` imports `cron/jobs.json` into its job database
//!    (renaming it `jobs.json.migrated`) and quarantines no job.
//!
//! OpenClaw needs a newer Node than Debian's, so Node comes from npm too (the `node` package,
//! pinned); both install under `target/xtask-openclaw` on first use (about 650 MB) with the
//! system `npm`, itself installed with apt-get when missing. Nothing here starts a Gateway, so
//! no job runs and no channel connects; the commands open no network connection.
//!
//! It lives beside the assets it loads, as a library that xtask calls (`cargo xtask openclaw`,
//! `cargo xtask test`, and the test's provisioning thread for [`install`]): it compiles with
//! xtask from crates xtask builds anyway, so a clean clone's CI gets no extra build for it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use anyhow::{Context, bail};

use xtask_support::{apt, plugins, workspace_root};

/// The OpenClaw release the assets are checked with.
const OPENCLAW_VERSION: &str = "2026.9.6";
/// That release requires Node >=24.16.0 <25 or >=26.1.0; Debian bookworm ships 18, trixie 20.
const NODE_VERSION: &str = "24.16.0";
/// The agents of `openclaw.json` that run; `ops` is retired.
const ROLES: [&str; 4] = ["coo", "finance", "scout", "tech"];

/// Installs the pinned Node and OpenClaw when missing (`cargo xtask test` does it while
/// cargo compiles).
pub fn install() -> anyhow::Result<()> {
    Cli::ensure(&tools_dir()?).map(|_| ())
}

fn tools_dir() -> anyhow::Result<PathBuf> {
    Ok(plugins::target_dir()?.join("xtask-openclaw"))
}

pub fn check() -> anyhow::Result<()> {
    let started = Instant::now();
    let tools = tools_dir()?;
    let cli = Cli::ensure(&tools)?;
    let home = tools.join("home");
    lay_out(&home)?;

    let fragment = workspace_root().join("examples/openclaw/openclaw.json");
    let fragment = fragment.to_str().context("the work tree path is not UTF-8")?;
    cli.run(&home, &["config", "patch", "--file", fragment])?;
    let validate = cli.run(&home, &["config", "validate"])?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&validate.stdout),
        String::from_utf8_lossy(&validate.stderr)
    );
    // A warning means OpenClaw would rewrite the config (a retired or legacy key).
    if !said.contains("Config valid") || said.contains("warning") {
        bail!("openclaw config validate is not clean:\n{said}");
    }
    for role in ROLES {
        let skill = cli.skill(&home, role)?;
        if skill["eligible"] != true || skill["modelVisible"] != true {
            bail!("the trader-api skill is not ready for {role}: {skill:#}");
        }
    }
    if cli.skill(&home, "ops")?["modelVisible"] != false {
        bail!("the retired ops agent must not see the trader-api skill");
    }

    cli.run(&home, &["doctor", "--fix", "--non-interactive"])?;
    let cron = home.join(".openclaw").join("cron");
    if !cron.join("jobs.json.migrated").is_file() {
        bail!("openclaw doctor did not import cron/jobs.json (no jobs.json.migrated)");
    }
    if cron.join("jobs-quarantine.json").exists() {
        bail!("openclaw doctor quarantined cron jobs: see {}", cron.display());
    }
    println!(
        "OpenClaw {OPENCLAW_VERSION} accepts examples/openclaw/ ({:.0} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The pinned Node and OpenClaw under one folder.
struct Cli {
    node_bin: PathBuf,
    openclaw: PathBuf,
}

impl Cli {
    /// Installs what is missing or of another version.
    fn ensure(tools: &Path) -> anyhow::Result<Self> {
        let node_dir = tools.join("node");
        let cli_dir = tools.join("cli");
        let cli = Cli {
            node_bin: node_dir.join("node_modules").join(".bin"),
            openclaw: cli_dir.join("node_modules").join(".bin").join("openclaw"),
        };
        if !version_of(&cli.node_bin.join("node"), &[], NODE_VERSION) {
            npm_install(&node_dir, &format!("node@{NODE_VERSION}"), None)?;
        }
        if !version_of(&cli.openclaw, &[("PATH", cli.path()?)], OPENCLAW_VERSION) {
            // OpenClaw's install scripts check the Node version: the pinned Node comes first.
            npm_install(&cli_dir, &format!("openclaw@{OPENCLAW_VERSION}"), Some(cli.path()?))?;
        }
        Ok(cli)
    }

    /// PATH with the pinned Node first.
    fn path(&self) -> anyhow::Result<String> {
        let system = std::env::var("PATH").unwrap_or_default();
        let node = self.node_bin.to_str().context("the target folder is not UTF-8")?;
        Ok(format!("{node}:{system}"))
    }

    /// Runs `openclaw <args>` with `home` as its home and fails when it fails.
    fn run(&self, home: &Path, args: &[&str]) -> anyhow::Result<Output> {
        println!("$ openclaw {}", args.join(" "));
        let output = Command::new(&self.openclaw)
            .args(args)
            .env("HOME", home)
            .env("PATH", self.path()?)
            // No scheduler, and nothing from the caller's own OpenClaw set-up or secrets.
            .env("OPENCLAW_SKIP_CRON", "1")
            .env("NO_COLOR", "1")
            .env_remove("OPENCLAW_STATE_DIR")
            .env_remove("OPENCLAW_CONFIG_PATH")
            .env_remove("OPENCLAW_PROFILE")
            .env_remove("TELEGRAM_BOT_TOKEN")
            .env_remove("TRADER_BASE_URL")
            .current_dir(home)
            .output()
            .context("cannot run openclaw")?;
        if !output.status.success() {
            bail!(
                "openclaw {} failed ({}):\n{}{}",
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(output)
    }

    /// `openclaw skills info trader-api --agent <agent> --json`.
    fn skill(&self, home: &Path, agent: &str) -> anyhow::Result<serde_json::Value> {
        let args = ["skills", "info", "trader-api", "--agent", agent, "--json"];
        let output = self.run(home, &args)?;
        serde_json::from_slice(&output.stdout)
            .with_context(|| format!("openclaw skills info --agent {agent}: not JSON"))
    }
}

/// Whether `binary --version` runs and prints `version`.
fn version_of(binary: &Path, env: &[(&str, String)], version: &str) -> bool {
    let mut command = Command::new(binary);
    command.arg("--version");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().is_ok_and(|out| {
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains(version)
    })
}

/// `npm install <spec>` into its own folder, with `path` as PATH when given.
fn npm_install(dir: &Path, spec: &str, path: Option<String>) -> anyhow::Result<()> {
    if Command::new("npm").arg("--version").output().is_err() {
        apt::install("npm", "the OpenClaw check", "install Node.js's npm (`apt-get install npm`)")?;
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("package.json"), "{\"private\": true}\n")?;
    println!("$ npm install {spec}   (into {})", dir.display());
    let mut command = Command::new("npm");
    command.args(["install", "--no-audit", "--no-fund", "--loglevel=error", spec]).current_dir(dir);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let status = command.status().context("cannot run npm")?;
    if !status.success() {
        bail!("npm install {spec} failed ({status})");
    }
    Ok(())
}

/// A fresh `~/.openclaw` as docs/agents.md lays it out (the config is patched in later): the
/// shared skill, the cron store and one workspace per agent.
fn lay_out(home: &Path) -> anyhow::Result<()> {
    if home.exists() {
        std::fs::remove_dir_all(home)?;
    }
    let assets = workspace_root().join("examples").join("openclaw");
    let state = home.join(".openclaw");
    copy(&assets.join("cron/jobs.json"), &state.join("cron/jobs.json"))?;
    let skill = "skills/trader-api/SKILL.md";
    copy(&assets.join(skill), &state.join(skill))?;
    for agent in ROLES.iter().chain(&["ops"]) {
        copy(
            &assets.join("workspaces").join(agent).join("AGENTS.md"),
            &state.join(format!("workspace-{agent}")).join("AGENTS.md"),
        )?;
    }
    Ok(())
}

fn copy(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to.parent().context("a file path")?)?;
    std::fs::copy(from, to).with_context(|| format!("cannot copy {}", from.display()))?;
    Ok(())
}
