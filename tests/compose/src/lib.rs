//! `cargo xtask compose-test`: runs the operator's `docker-compose.yml` for real and checks
//! it as an operator would (docs/operations.md):
//!
//! - the stack comes up from the image: the license server, then the service in paper mode
//!   (no keys) licensed by it with a key that comes only from `spotbot.env`, and Docker's
//!   healthcheck turns healthy;
//! - the service runs as its own user, which owns the data folder; the secrets reach its
//!   process but show in neither `docker inspect` nor the logs;
//! - no port is published: a container on the internal network reaches the API (and `/mcp`)
//!   by service name, a container elsewhere reaches none of its addresses;
//! - a plugin copied into the plugins volume hot-loads;
//! - a trade opened before `docker compose down && up` is open after it (the data volume);
//! - `docker compose stop` ends the service gracefully within the grace period.
//!
//! The stack talks only to itself: paper exchange, the stack's license server, no news source
//! and no messenger. Docker comes from Debian (`docker.io`), Compose v2 from PyPI, the base
//! image from debootstrap: no image registry is needed. Where no Docker daemon can start,
//! the test is skipped with one line that says why. Prints the image size and the time from
//! `up` to healthy (docs/benchmarks.md).
//!
//! It lives beside the end-to-end tests, as a library that xtask calls (`cargo xtask
//! compose-test`, `cargo xtask test`, and the test's provisioning thread for [`install`]): it
//! compiles with xtask from crates xtask builds anyway, so a clean clone's CI gets no extra
//! build for it.

mod checks;
mod engine;
mod images;
mod stack;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use engine::{Engine, Unavailable, output};
use stack::Stack;

use xtask_support::{cargo, plugins, venv, workspace_root};

const PROJECT: &str = "spotbot-compose-test";
/// How long the service may take to turn healthy (the healthcheck runs every 10 s).
const HEALTHY_WITHIN: Duration = Duration::from_secs(180);
/// Values that only the env file holds; paper mode does not use the exchange keys, which
/// makes them safe to look for.
const FAKE_KEY: &str = "compose-test-api-key-6c1f";
const FAKE_SECRET: &str = "compose-test-api-secret-93d0";

/// Installs Docker and debootstrap when missing (`cargo xtask test` does it while cargo
/// compiles). A failure is not reported here: the test itself skips or fails with it.
pub fn install() {
    let _ = engine::install();
    let _ = images::install_debootstrap();
}

/// `cargo xtask compose-test [--release]`: builds the plugins and the binaries (release ones
/// give the image an operator gets; debug ones are what `cargo xtask test` has built), then
/// checks.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let release = match args {
        [] => false,
        [flag] if flag == "--release" => true,
        _ => bail!("usage: cargo xtask compose-test [--release]"),
    };
    plugins::build_all()?;
    let mut build = vec!["build", "--package", "spotbot", "--package", "spotbot-license-server"];
    if release {
        build.push("--release");
    }
    cargo(&build)?;
    check(release)
}

/// The compose test on built plugins and binaries (`cargo xtask test` has built them: `cargo
/// test --workspace` builds the binaries of the packages with integration tests).
pub fn check(release: bool) -> anyhow::Result<()> {
    let started = Instant::now();
    let target = plugins::target_dir()?;
    let work = target.join("compose-test");
    std::fs::create_dir_all(&work)?;
    let compose = venv::ensure()?.join("docker-compose");
    let engine = match Engine::start(compose, &work.join("dockerd.log"))? {
        Ok(engine) => engine,
        Err(Unavailable(why)) => {
            println!("compose-test: SKIPPED, no Docker daemon can run here: {why}");
            return Ok(());
        }
    };
    let profile = if release { "release" } else { "debug" };
    let image = images::build(&engine, &work, &target.join(profile), "spotbot:compose-test")?;
    let mut stack = Stack::new(&engine, work.join("project"), PROJECT, "compose-test");
    let healthy_after = exercise(&mut stack, &engine, &image.tag)?;
    println!(
        "compose-test: passed in {:.0?}; image {} ({profile} binaries) {:.0} MB; up to \
         healthy {:.1?}",
        started.elapsed(),
        image.tag,
        image.bytes as f64 / 1e6,
        healthy_after
    );
    Ok(())
}

/// The operator's steps and checks; returns the time from `up` to healthy.
fn exercise(stack: &mut Stack, engine: &Engine, image: &str) -> anyhow::Result<Duration> {
    if stack.dir.exists() {
        std::fs::remove_dir_all(&stack.dir)?;
    }
    std::fs::create_dir_all(&stack.dir)?;
    // Secrets first, as the guide says (empty in paper mode); the license key comes below.
    write_env(&stack.dir, "")?;
    write_config(&stack.dir, "")?;
    println!("compose-test: license server");
    stack.up(&["license-server"])?;
    stack.wait_healthy("license-server", HEALTHY_WITHIN)?;
    let key =
        stack.exec("license-server", &["curl", "-fsS", "http://127.0.0.1:8090/v1/public-key"])?;
    let key: serde_json::Value = serde_json::from_str(&key)?;
    let public_key = key["public_key"].as_str().context("GET /v1/public-key")?;
    let registered = stack.exec(
        "license-server",
        &[
            "curl",
            "-fsS",
            "-H",
            "content-type: application/json",
            "--data",
            r#"{"email":"operator@example.com","name":"Compose Test"}"#,
            "http://127.0.0.1:8090/v1/register",
        ],
    )?;
    let registered: serde_json::Value = serde_json::from_str(&registered)?;
    let license_key = registered["license_key"].as_str().context("POST /v1/register")?;
    write_env(&stack.dir, license_key)?;
    write_config(&stack.dir, public_key)?;
    output(&mut stack.compose(&[
        "run",
        "--rm",
        "--no-deps",
        "spotbot",
        "spotbot",
        "check-config",
        "/etc/spotbot/config.toml",
    ])?)
    .context("spotbot check-config refused the stack's config")?;
    // The documented step (docs/operations.md): one token per agent, and the operator's own;
    // the service listens beyond loopback and refuses to start without one.
    let mut tokens = Vec::new();
    for (agent, scope) in AGENT_TOKENS {
        tokens.push(create_token(stack, agent, scope)?);
    }
    let reader = tokens.last().cloned().context("the ops token")?;
    stack.token = Some(create_token(stack, "boss", "admin")?);

    println!("compose-test: service");
    let up = Instant::now();
    stack.up(&[])?;
    stack.wait_healthy("spotbot", HEALTHY_WITHIN)?;
    let healthy_after = up.elapsed();
    let (_, license) = stack.api("GET", "/api/license/status", None)?;
    if license["status"] != "active" {
        bail!("the key of spotbot.env did not license the service: {license}");
    }
    checks::runs_as_service_user(stack)?;
    checks::secrets_stay_secret(stack, engine, &[FAKE_KEY, FAKE_SECRET, license_key])?;
    checks::api_stays_internal(stack, engine, image)?;
    checks::mcp_answers_by_service_name(stack, engine, image, &reader)?;
    let withheld = workspace_root().join("plugins").join(images::WITHHELD_PLUGIN);
    checks::dropped_plugin_loads(stack, &withheld)?;
    let trade = checks::open_trade(stack)?;

    println!("compose-test: down and up");
    stack.down()?;
    stack.up(&[])?;
    stack.wait_healthy("spotbot", HEALTHY_WITHIN)?;
    checks::trade_is_open(stack, &trade)?;
    let stopped_in = checks::stops_gracefully(stack)?;
    println!("compose-test: stopped gracefully in {stopped_in:.1?}");
    Ok(healthy_after)
}

/// The agents' tokens the guide has the operator create, with their scopes; the last one
/// only reads.
const AGENT_TOKENS: [(&str, &str); 4] =
    [("scout", "propose"), ("coo", "execute"), ("finance", "execute"), ("ops", "read")];

/// `spotbot token create` in a one-off container on the stack's data volume (the service
/// need not run): the token it prints.
fn create_token(stack: &Stack, agent: &str, scope: &str) -> anyhow::Result<String> {
    let printed = output(&mut stack.compose(&[
        "run",
        "--rm",
        "--no-deps",
        "spotbot",
        "spotbot",
        "token",
        "create",
        "--agent",
        agent,
        "--scope",
        scope,
        "--data-dir",
        "/var/lib/spotbot/data",
    ])?)
    .with_context(|| format!("spotbot token create --agent {agent} failed"))?;
    let token = printed.lines().map(str::trim).find(|l| l.starts_with("spotbot_"));
    token.map(str::to_string).with_context(|| format!("no token printed: {printed}"))
}

/// `spotbot.env`: what an operator writes from `examples/spotbot.env.example`, readable by
/// its owner only.
fn write_env(dir: &Path, license_key: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("spotbot.env");
    std::fs::write(
        &path,
        format!(
            "EXCHANGE_API_KEY={FAKE_KEY}\nEXCHANGE_API_SECRET={FAKE_SECRET}\n\
             TRADER_LICENSE_KEY={license_key}\n"
        ),
    )?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok(())
}

/// `config.toml`: the defaults (paper mode) with the stack's license server, the API open to
/// the service name as Host, and no news source, so nothing leaves this machine.
fn write_config(dir: &Path, public_key: &str) -> anyhow::Result<()> {
    let license = if public_key.is_empty() {
        String::new()
    } else {
        format!(
            "[license]\nserver_url = \"http://license-server:8090\"\npublic_key = \
             \"{public_key}\"\n"
        )
    };
    let api = "[api]\nallowed_hosts = [\"127.0.0.1\", \"localhost\", \"spotbot\"]\n";
    std::fs::write(dir.join("config.toml"), format!("{license}{api}[news]\nsources = []\n"))?;
    Ok(())
}
