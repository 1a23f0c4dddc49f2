//! The `spotbot` command line as an operator uses it: check-config, serve, SIGTERM.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_spotbot");

fn example_config() -> String {
    format!("{}/../examples/config.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn check_config_accepts_the_example_and_refuses_a_bad_file_with_one_line() {
    let ok = Command::new(BIN).args(["check-config", &example_config()]).output().unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[risk]\nmax_trading_usdt = -1.0\n").unwrap();
    let refused = Command::new(BIN).args(["check-config", bad.to_str().unwrap()]).output().unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("bad.toml:2:1: `risk.max_trading_usdt`"), "{stderr}");
}

#[test]
fn check_config_names_the_secrets_a_live_mode_still_needs_and_never_their_values() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("testnet.toml");
    let plugins = dir.path().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let toml = format!("[exchange]\nmode = \"testnet\"\n[plugins]\ndir = {:?}\n", plugins);
    std::fs::write(&config, toml).unwrap();
    let output = Command::new(BIN)
        .args(["check-config", config.to_str().unwrap()])
        .env_clear()
        .env("EXCHANGE_API_KEY", "key-value-4711")
        .env("MESSENGER_BOT_TOKEN", "token-value-4711")
        .output()
        .unwrap();
    assert!(!output.status.success(), "testnet without its secrets is not ready");
    let stderr = String::from_utf8_lossy(&output.stderr);
    for line in [
        "missing: EXCHANGE_API_SECRET not set",
        "missing: MESSENGER_CHAT_ID not set",
        "missing: TRADER_LICENSE_URL (or [license] server_url), [license] public_key not set",
        "note: TRADER_LICENSE_KEY not set",
        "mode `testnet` still needs",
    ] {
        assert!(stderr.contains(line), "{line:?} in {stderr}");
    }
    let all = format!("{stderr}{}", String::from_utf8_lossy(&output.stdout));
    assert!(!all.contains("4711"), "a secret's value is never printed: {all}");
}

#[test]
fn serve_with_a_bad_config_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[exchange]\nactive = \"exchange_z\"\n").unwrap();
    let data = dir.path().join("data");
    let output = Command::new(BIN)
        .args(["serve", "--config", bad.to_str().unwrap(), "--data-dir", data.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("exchange.active"));
    assert!(!data.exists(), "nothing half-starts: no data folder was created");
}

#[cfg(unix)]
#[test]
fn serve_answers_health_and_stops_gracefully_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--config", &example_config(), "--addr", "127.0.0.1:0"])
        .args(["--data-dir", dir.path().to_str().unwrap(), "--log-format", "json"])
        .env("GIT_COMMIT", "abc1234")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = support::announced_addr(&mut child);

    let mut stream = TcpStream::connect(&addr).unwrap();
    write!(stream, "GET /api/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("\"commit\":\"abc1234\""), "{response}");

    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "graceful shutdown exits 0, got {status}");
}

#[cfg(unix)]
#[test]
fn logs_written_to_a_file_carry_no_terminal_colour_codes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("spotbot.log");
    let mut child = Command::new(BIN)
        .args(["serve", "--config", &example_config(), "--addr", "127.0.0.1:0"])
        .args(["--data-dir", dir.path().to_str().unwrap(), "--log-format", "human"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    support::announced_addr(&mut child);
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    assert!(child.wait().unwrap().success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("INFO") && text.contains("serving the API"), "{text}");
    assert!(!text.contains('\u{1b}'), "escape codes in a log file: {text:?}");
}

/// A config whose plugins folder holds MR Combined (built by `cargo xtask plugins`) and whose
/// `[strategy.mr_combined]` section is `section`.
fn config_with_mr_combined(dir: &std::path::Path, section: &str) -> std::path::PathBuf {
    let built = format!("{}/../plugins/mr_combined.wasm", env!("CARGO_MANIFEST_DIR"));
    assert!(std::path::Path::new(&built).exists(), "{built} is missing: run `cargo xtask plugins`");
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(&built, plugins.join("mr_combined.wasm")).unwrap();
    let config = dir.join("config.toml");
    let toml = format!("[plugins]\ndir = {:?}\n[strategy.mr_combined]\n{section}", plugins);
    std::fs::write(&config, toml).unwrap();
    config
}

#[test]
fn check_config_loads_the_plugins_and_refuses_a_section_that_does_not_fit() {
    let check = |section: &str| {
        let dir = tempfile::tempdir().unwrap();
        let config = config_with_mr_combined(dir.path(), section);
        Command::new(BIN).args(["check-config", config.to_str().unwrap()]).output().unwrap()
    };
    let ok = check("size_pct = 2.0\n");
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(stdout.contains("plugin mr_combined (mr_combined.wasm): ok"), "{stdout}");

    let unknown = check("scan_limit = 80\n");
    assert!(!unknown.status.success());
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(stderr.contains("strategy.mr_combined.scan_limit is not a key"), "{stderr}");

    // The plugin itself judges values only it understands.
    let ratios = check("tp3_ratio = 0.5\n");
    assert!(!ratios.status.success());
    let stderr = String::from_utf8_lossy(&ratios.stderr);
    assert!(stderr.contains("[strategy.mr_combined]") && stderr.contains("ratio"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn pump_outcomes_asks_the_running_service_and_says_when_none_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--config", &example_config(), "--addr", "127.0.0.1:0"])
        .args(["--data-dir", dir.path().to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = support::announced_addr(&mut child);
    let url = format!("http://{addr}");
    let run = Command::new(BIN).args(["pump-outcomes", "--url", &url]).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(stdout.contains("\"ok\":true") && stdout.contains("\"updated\":0"), "{stdout}");
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let _ = child.wait();

    let down = Command::new(BIN).args(["pump-outcomes", "--url", &url]).output().unwrap();
    assert!(!down.status.success());
    let stderr = String::from_utf8_lossy(&down.stderr);
    assert!(stderr.contains("does not answer"), "{stderr}");
}

/// `GET path` on the service at `addr`: the whole answer.
fn get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[cfg(unix)]
#[test]
fn serve_compiles_plugins_in_a_child_process_and_reports_what_it_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_with_mr_combined(dir.path(), "");
    let plugins = dir.path().join("plugins");
    std::fs::write(plugins.join("broken.wasm"), b"\0asm\x0d\0\x01\0garbage").unwrap();
    let data = dir.path().join("data");
    // Starts the service, reads its plugins, stops it: the answer and the log.
    let run = || {
        let log = dir.path().join("spotbot.log");
        let mut child = Command::new(BIN)
            .args(["serve", "--config", config.to_str().unwrap(), "--addr", "127.0.0.1:0"])
            .args(["--data-dir", data.to_str().unwrap(), "--log-format", "json"])
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let addr = support::announced_addr(&mut child);
        let strategies = get(&addr, "/api/strategies");
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        assert!(child.wait().unwrap().success());
        (strategies, std::fs::read_to_string(&log).unwrap())
    };
    let artifacts = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(data.join("plugin-cache"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
            .collect()
    };

    let (strategies, log) = run();
    assert!(strategies.contains("\"name\":\"mr_combined\""), "{strategies}");
    assert!(strategies.contains("not a valid WebAssembly component"), "{strategies}");
    assert_eq!(log.matches("plugin compiled in a child process").count(), 1, "{log}");
    let cached = artifacts();
    assert_eq!(cached.len(), 1, "the child's artifact is cached like one compiled in the service");

    // A restart maps the cached artifact; one that no longer matches its sum is compiled again.
    let (strategies, log) = run();
    assert!(strategies.contains("\"name\":\"mr_combined\""), "{strategies}");
    assert!(!log.contains("plugin compiled in a child process"), "{log}");
    let mut damaged = std::fs::read(&cached[0]).unwrap();
    *damaged.last_mut().unwrap() ^= 1;
    std::fs::write(&cached[0], damaged).unwrap();
    let (strategies, log) = run();
    assert!(strategies.contains("\"name\":\"mr_combined\""), "{strategies}");
    assert_eq!(log.matches("plugin compiled in a child process").count(), 1, "{log}");
}
