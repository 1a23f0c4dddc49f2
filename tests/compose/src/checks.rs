//! What an operator checks on a running stack, one function each. Every check fails with what
//! it saw.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::engine::{Engine, output};
use super::stack::Stack;

/// The service user of the image (Dockerfile: `useradd --uid 10001`).
const SERVICE_UID: &str = "10001";
/// The grace period of `docker-compose.yml` (`stop_grace_period`).
const GRACE: Duration = Duration::from_secs(30);
/// How long a dropped plugin may take to be listed as loaded.
const HOT_LOAD: Duration = Duration::from_secs(60);

/// The service runs as the service user, not root, and owns its data folder.
pub fn runs_as_service_user(stack: &Stack) -> anyhow::Result<()> {
    let status = stack.exec("spotbot", &["cat", "/proc/1/status"])?;
    let uid = status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .context("/proc/1/status has no Uid line")?;
    if uid.split_whitespace().any(|id| id != SERVICE_UID) {
        bail!("the service runs with uids {uid:?}, not only {SERVICE_UID}");
    }
    let owner = stack.exec("spotbot", &["stat", "-c", "%u", "/var/lib/spotbot/data"])?;
    if owner.trim() != SERVICE_UID {
        bail!("the data folder belongs to uid {}, not {SERVICE_UID}", owner.trim());
    }
    Ok(())
}

/// The secrets reached the service's process from the env file, and show neither in `docker
/// inspect` nor in the logs.
pub fn secrets_stay_secret(stack: &Stack, engine: &Engine, secrets: &[&str]) -> anyhow::Result<()> {
    // Only the process's own user may read its environment.
    let environment = output(&mut stack.compose(&[
        "exec",
        "-T",
        "--user",
        SERVICE_UID,
        "spotbot",
        "cat",
        "/proc/1/environ",
    ])?)?;
    for secret in secrets {
        if !environment.split('\0').any(|pair| pair.ends_with(&format!("={secret}"))) {
            bail!("a secret of spotbot.env did not reach the service's environment");
        }
    }
    for service in ["spotbot", "license-server"] {
        let id = stack.container(service)?;
        let inspect = output(&mut engine.docker(&["inspect", &id]))?;
        let logs = stack.logs(service)?;
        for secret in secrets {
            if inspect.contains(secret) {
                bail!("`docker inspect` of {service} shows a secret of spotbot.env");
            }
            if logs.contains(secret) {
                bail!("the logs of {service} show a secret of spotbot.env");
            }
        }
    }
    Ok(())
}

/// No port is published on the host; a container on the internal network reaches the API by
/// service name, one on another network reaches none of the service's addresses.
pub fn api_stays_internal(stack: &Stack, engine: &Engine, image: &str) -> anyhow::Result<()> {
    let ports = stack.inspect("spotbot", "{{json .NetworkSettings.Ports}}")?;
    if ports.contains("HostPort") {
        bail!("the service publishes ports on the host: {ports}");
    }
    let internal = format!("{}-internal", stack.project);
    let curl = |network: &str, url: &str| {
        engine
            .docker(&[
                "run",
                "--rm",
                "--network",
                network,
                "--entrypoint",
                "curl",
                image,
                "-fsS",
                "--max-time",
                "5",
                "-o",
                "/dev/null",
                url,
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    };
    if !curl(&internal, "http://spotbot:8000/api/health") {
        bail!("a container on {internal} cannot reach http://spotbot:8000/api/health");
    }
    let addresses =
        stack.inspect("spotbot", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}")?;
    for address in addresses.split_whitespace() {
        if curl("bridge", &format!("http://{address}:8000/api/health")) {
            bail!("a container outside the stack reaches the API at {address}:8000");
        }
    }
    Ok(())
}

/// Opens a trade on the paper exchange: the record the volume must keep.
pub fn open_trade(stack: &Stack) -> anyhow::Result<serde_json::Value> {
    let path = "/api/trade?symbol=SOLUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30\
                &confidence=9";
    let (status, body) = stack.api("POST", path, None)?;
    if status != 200 || body["ok"] != true {
        bail!("POST {path} answered {status}: {body}");
    }
    Ok(body["trade"].clone())
}

/// The open trades include `trade` (same symbol, entry and size).
pub fn trade_is_open(stack: &Stack, trade: &serde_json::Value) -> anyhow::Result<()> {
    let (status, body) = stack.api("GET", "/api/trades", None)?;
    let same = |t: &&serde_json::Value| {
        ["symbol", "entry_px", "size"].iter().all(|key| t[key] == trade[key])
    };
    let trades = body["trades"].as_array().context("GET /api/trades has no trades list")?;
    if status != 200 || !trades.iter().any(|t| same(&t)) {
        bail!("the trade opened before is not open: {body}");
    }
    Ok(())
}

/// A plugin copied into the plugins volume is listed as loaded without a restart.
pub fn dropped_plugin_loads(stack: &Stack, plugin: &std::path::Path) -> anyhow::Result<()> {
    let name = plugin.file_name().and_then(|n| n.to_str()).context("plugin file name")?;
    let target = format!("spotbot:/var/lib/spotbot/plugins/{name}");
    output(&mut stack.compose(&["cp", xtask_support::path_str(plugin)?, &target])?)?;
    let started = Instant::now();
    loop {
        let (_, body) = stack.api("GET", "/api/strategies", None)?;
        let listed = body["plugins"].as_array().into_iter().flatten().find(|p| p["file"] == name);
        if listed.is_some_and(|p| p["status"] == "loaded") {
            return Ok(());
        }
        if started.elapsed() > HOT_LOAD {
            bail!(
                "{name} dropped into the plugins volume is not loaded after {HOT_LOAD:?}: {body}"
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `docker compose stop` ends the service within the grace period, on its own (exit 0 after
/// SIGTERM, not killed): how long it took.
pub fn stops_gracefully(stack: &Stack) -> anyhow::Result<Duration> {
    let took = stack.stop("spotbot")?;
    let code = stack.inspect("spotbot", "{{.State.ExitCode}}")?;
    if code != "0" {
        bail!("the service exited with {code} on docker compose stop (killed, or failed)");
    }
    if took >= GRACE {
        bail!("docker compose stop took {took:?}, the whole grace period");
    }
    Ok(took)
}

/// An MCP client on the internal network reaches `/mcp` by service name (the stack's config
/// allows the Host `spotbot`, as docs/operations.md says to) with an agent's token:
/// `initialize` answers with the server's capabilities; without the token it is refused.
pub fn mcp_answers_by_service_name(
    stack: &Stack,
    engine: &Engine,
    image: &str,
    token: &str,
) -> anyhow::Result<()> {
    let internal = format!("{}-internal", stack.project);
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"compose-test","version":"1"}}}"#;
    let answer = output(&mut engine.docker(&[
        "run",
        "--rm",
        "--network",
        &internal,
        "--entrypoint",
        "curl",
        image,
        "-fsS",
        "--max-time",
        "10",
        "-H",
        "content-type: application/json",
        "-H",
        "accept: application/json, text/event-stream",
        "-H",
        &format!("authorization: Bearer {token}"),
        "--data",
        initialize,
        "http://spotbot:8000/mcp",
    ]))?;
    if !answer.contains("\"tools\"") {
        bail!("POST http://spotbot:8000/mcp initialize answered without tools: {answer}");
    }
    Ok(())
}
