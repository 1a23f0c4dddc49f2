//! `cargo xtask demo`: everything the demo needs on one machine with no keys. Builds the
//! plugins and binaries, starts the reference license server and the service in paper mode
//! (in-process exchange simulator with a synthetic market), and gives the service a free
//! license, so every route works as it would for an operator. `--exchange b` runs the demo on
//! exchange B's wire (the simulator speaks both). Ctrl-C, SIGINT or SIGTERM stops the
//! service, then the license server ([`crate::children`]).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{Context, bail};

use crate::children::{Guard, Stop};
use crate::{cargo, http, plugins, workspace_root};

const API_ADDR: &str = "127.0.0.1:8000";
const LICENSE_ADDR: &str = "127.0.0.1:8090";

/// The `[exchange] active` value of `--exchange a|b` (exchange A without the flag).
fn active_exchange(args: &[String]) -> anyhow::Result<&'static str> {
    match args {
        [] => Ok("exchange_a"),
        [flag, which] if flag == "--exchange" => match which.as_str() {
            "a" | "exchange_a" => Ok("exchange_a"),
            "b" | "exchange_b" => Ok("exchange_b"),
            other => bail!("--exchange takes a or b, not {other:?}"),
        },
        _ => bail!("usage: cargo xtask demo [--exchange a|b]"),
    }
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let exchange = active_exchange(args)?;
    // Before minutes of building: a port another process holds would only fail at the end.
    ports_free(&[(API_ADDR, "the service's API"), (LICENSE_ADDR, "the demo's license server")])?;
    plugins::build_all()?;
    // One package per build: `cargo run --release -p spotbot` (the README's backtest and
    // serve commands) then finds this very binary. Built together, the license server's
    // features joined the service's dependencies and each command rebuilt the other's.
    cargo(&["build", "--release", "--package", "spotbot"])?;
    cargo(&["build", "--release", "--package", "spotbot-license-server"])?;
    let root = workspace_root();
    let release = plugins::target_dir()?.join("release");
    let data = root.join("data").join("demo");
    std::fs::create_dir_all(&data)?;

    let stop = Stop::install()?;
    let (license_server, public_key) = start_license_server(&release, &data)?;
    let _license_server = Guard(license_server);
    let config = data.join("config.toml");
    write_demo_config(&root.join("examples").join("config.toml"), &config, &public_key, exchange)?;

    let host = Command::new(release.join("spotbot"))
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .args(["--addr", API_ADDR])
        .arg("--data-dir")
        // A store per exchange: trades opened on one are not reconciled against the other.
        .arg(data.join(if exchange == "exchange_a" {
            "host".to_string()
        } else {
            format!("host-{exchange}")
        }))
        .current_dir(&root)
        .spawn()
        .context("cannot start spotbot")?;
    // Dropped first: the service stops before the license server it talks to.
    let mut host = Guard(host);
    let up = http::wait_until_up(API_ADDR, "/api/health", 120, || {
        !stop.requested() && matches!(host.0.try_wait(), Ok(None))
    });
    if stop.requested() {
        println!("stopping the demo");
        return Ok(());
    }
    up?;
    ensure_license()?;
    println!();
    println!(
        "spotbot demo is running ({exchange} on the paper simulator, synthetic market, no keys \
         needed)"
    );
    println!("  dashboard: http://{API_ADDR}/api/dashboard");
    println!("  API:       http://{API_ADDR}/api   (OpenAPI: http://{API_ADDR}/api/openapi.json)");
    println!("  plugins/: {}", loaded_plugins()?);
    if let Some(simulator) = paper_simulator()? {
        println!(
            "  exchange simulator (the paper market; docs/exchange-simulator.md): {simulator}\n\
             \x20   move a price: curl -s -XPOST -H 'content-type: application/json' \
             {simulator}/sim/price -d '{{\"symbol\":\"ETHUSDT\",\"price\":\"3100\"}}'"
        );
    }
    println!(
        "    curl -s -XPOST -H 'content-type: application/json' http://{API_ADDR}/api/mr-combined/scan-and-signal"
    );
    println!("    curl -s http://{API_ADDR}/api/market/scan");
    println!("    curl -s http://{API_ADDR}/api/pump-momentum/signals   (scanned every 5 minutes)");
    println!("  Ctrl-C (or SIGTERM) stops it; data lives in {}", data.display());
    let exited = stop.wait(&mut host.0)?;
    // Ctrl-C in a terminal signals the service too, which may end before the flag is seen.
    if stop.requested() {
        println!("stopping the demo: the service, then the license server");
        return Ok(());
    }
    match exited {
        Some(status) if !status.success() => bail!("spotbot exited with {status}"),
        _ => Ok(()),
    }
}

/// The plugins the service loaded, as `GET /api/strategies` lists them (`name (status)` for
/// one that is not serving).
fn loaded_plugins() -> anyhow::Result<String> {
    let (code, body) = http::request(API_ADDR, "GET", "/api/strategies", None)?;
    if code != 200 {
        bail!("GET /api/strategies answered {code}: {body}");
    }
    let list: serde_json::Value = serde_json::from_str(&body)?;
    let names: Vec<String> = list["plugins"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let name = p["name"].as_str().or(p["file"].as_str()).unwrap_or("?");
            match p["status"].as_str() {
                Some("loaded") | None => name.to_string(),
                Some(status) => format!("{name} ({status})"),
            }
        })
        .collect();
    Ok(if names.is_empty() { "none loaded".into() } else { names.join(", ") })
}

/// The in-process simulator's address, from `GET /api/status` (it listens on a free port).
fn paper_simulator() -> anyhow::Result<Option<String>> {
    let (code, body) = http::request(API_ADDR, "GET", "/api/status", None)?;
    if code != 200 {
        return Ok(None);
    }
    let status: serde_json::Value = serde_json::from_str(&body)?;
    Ok(status["config"]["paper_simulator"].as_str().map(str::to_string))
}

/// Each of the demo's fixed addresses can be bound, or an error naming the one in use, what
/// the demo needs it for, and how to find the process that holds it.
fn ports_free(addresses: &[(&str, &str)]) -> anyhow::Result<()> {
    for (addr, what) in addresses {
        if let Err(err) = std::net::TcpListener::bind(addr) {
            let port = addr.rsplit(':').next().unwrap_or(addr);
            bail!(
                "{addr} ({what}) is in use ({err}): another process listens there, often an \
                 earlier demo or `spotbot serve`. Stop it first (`ss -ltnp 'sport = :{port}'` \
                 names it); the demo's addresses are fixed so that the README's commands reach it"
            );
        }
    }
    Ok(())
}

/// Starts `spotbot-license-server` and reads the public key it prints first.
fn start_license_server(release: &Path, data: &Path) -> anyhow::Result<(Child, String)> {
    let mut child = Command::new(release.join("spotbot-license-server"))
        .args(["--addr", LICENSE_ADDR])
        .arg("--data-dir")
        .arg(data.join("license-server"))
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start spotbot-license-server")?;
    let stdout = child.stdout.take().context("license server stdout")?;
    let mut lines = BufReader::new(stdout);
    let mut first = String::new();
    lines.read_line(&mut first)?;
    // Keep draining what the server prints later, so it never writes into a closed pipe.
    std::thread::spawn(move || {
        for line in lines.lines().map_while(Result::ok) {
            println!("license server: {line}");
        }
    });
    let key = first.trim().strip_prefix("public key: ").map(str::to_string);
    match key {
        Some(key) => Ok((child, key)),
        None => {
            let _ = child.kill();
            bail!("license server did not print its public key (got {first:?})")
        }
    }
}

/// The example config with the demo's license server filled in, `[exchange] active` set to
/// `exchange`, and the built-in pump scan switched on, so Pump Momentum scans the paper market every 5 minutes by itself. The news
/// sources stay the public defaults with a 2 s deadline each: online the demo shows real
/// headlines; offline `GET /api/news` answers `ok: false` within seconds (at once while that
/// failure is kept for a minute).
fn write_demo_config(
    example: &Path,
    dest: &Path,
    public_key: &str,
    exchange: &str,
) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(example)?
        .replace("active = \"exchange_a\"", &format!("active = \"{exchange}\""))
        .replace("pump_scan = false", "pump_scan = true")
        .replace("timeout_secs = 5", "timeout_secs = 2");
    let license_at =
        text.find("[license]").context("examples/config.toml has a [license] section")?;
    let demo = format!(
        "{}[license]\nserver_url = \"http://{LICENSE_ADDR}\"\npublic_key = \"{public_key}\"\n",
        &text[..license_at]
    );
    std::fs::write(dest, demo)?;
    Ok(())
}

/// Registers a free license through the service unless its cached one is active.
fn ensure_license() -> anyhow::Result<()> {
    let (_, status) = http::request(API_ADDR, "GET", "/api/license/status", None)?;
    if status.contains("\"status\":\"active\"") {
        return Ok(());
    }
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
    let body = format!("{{\"email\":\"demo-{stamp}@spotbot.local\",\"name\":\"Demo operator\"}}");
    let (code, answer) = http::request(API_ADDR, "POST", "/api/license/register", Some(&body))?;
    if code != 200 || !answer.contains("\"ok\":true") {
        bail!("demo license registration failed ({code}): {answer}");
    }
    println!("registered a free demo license");
    Ok(())
}
