//! `spotbot check-bias` as an operator runs it, and the service running it on every strategy
//! it loads: the verdict in `GET /api/strategies`, the failing plugin still serving. (The
//! checks' semantics are tested in `tests/tests/e2e/bias.rs`.)

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_spotbot");

/// A test guest (`cargo xtask plugins` builds them).
fn guest(file: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/test-guests").join(file);
    assert!(path.exists(), "{} is missing: run `cargo xtask plugins`", path.display());
    path
}

fn check_bias(data: &Path, plugin: &Path) -> std::process::Output {
    Command::new(BIN)
        .args(["check-bias", "--synthetic", "--plugin"])
        .arg(plugin)
        .args(["--symbols", "BTCUSDT,ETHUSDT", "--from", "2026-01-01", "--to", "2026-01-31"])
        .args(["--steps", "200", "--data-dir"])
        .arg(data)
        .output()
        .unwrap()
}

#[test]
fn check_bias_exits_1_naming_the_first_difference_and_0_when_both_checks_pass() {
    let dir = tempfile::tempdir().unwrap();
    let clean = check_bias(dir.path(), &guest("guest_sma_cross.wasm"));
    let stdout = String::from_utf8_lossy(&clean.stdout);
    assert!(clean.status.success(), "{stdout}{}", String::from_utf8_lossy(&clean.stderr));
    assert!(stdout.contains("look-ahead: passed (200 steps compared)"), "{stdout}");
    assert!(stdout.contains("recursive dependence: passed"), "{stdout}");

    let planted = check_bias(dir.path(), &guest("guest_short_warmup.wasm"));
    let (stdout, stderr) =
        (String::from_utf8_lossy(&planted.stdout), String::from_utf8_lossy(&planted.stderr));
    assert_eq!(planted.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("recursive dependence: FAILED at 2026-01-"), "{stdout}");
    assert!(stdout.contains("checklist:close_above_ema"), "{stdout}");
    assert!(stderr.contains("spotbot check-bias: short_warmup failed a bias check"), "{stderr}");
}

/// `GET path` on the service at `addr`: the body.
fn get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split("\r\n\r\n").nth(1).unwrap_or_default().to_string()
}

#[cfg(unix)]
#[test]
fn the_service_checks_each_strategy_it_loads_and_flags_the_one_that_fails() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    for file in ["guest_sma_cross.wasm", "guest_short_warmup.wasm"] {
        std::fs::copy(guest(file), plugins.join(file)).unwrap();
    }
    let config = dir.path().join("config.toml");
    let text = format!(
        "[plugins]\ndir = {:?}\nmarket_data = \"synthetic\"\n\n[market]\nwatchlist = [\"BTCUSDT\", \"ETHUSDT\"]\n\n[scheduler]\nenabled = false\n",
        plugins.display().to_string()
    );
    std::fs::write(&config, text).unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--config", config.to_str().unwrap(), "--addr", "127.0.0.1:0"])
        .args(["--data-dir", dir.path().join("data").to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = support::announced_addr(&mut child);
    let started = Instant::now();
    let verdicts = loop {
        let body: serde_json::Value = serde_json::from_str(&get(&addr, "/api/strategies")).unwrap();
        let plugins = body["plugins"].as_array().unwrap().clone();
        let status = |name: &str| {
            plugins.iter().find(|p| p["name"] == name).map(|p| p["bias_check"].clone())
        };
        let (clean, planted) = (status("sma_cross").unwrap(), status("short_warmup").unwrap());
        let done =
            |v: &serde_json::Value| !matches!(v["status"].as_str(), Some("pending" | "checking"));
        if done(&clean) && done(&planted) {
            break (clean, planted, plugins);
        }
        assert!(started.elapsed() < Duration::from_secs(120), "no verdicts: {plugins:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    assert!(child.wait().unwrap().success());

    let (clean, planted, plugins) = verdicts;
    assert_eq!(clean["status"], "passed", "{clean}");
    assert_eq!(
        (clean["look_ahead_passed"].as_bool(), clean["steps"].as_u64()),
        (Some(true), Some(300))
    );
    assert_eq!(planted["status"], "failed", "{planted}");
    assert_eq!(planted["recursive_passed"], false, "{planted}");
    let detail = planted["detail"].as_str().unwrap();
    assert!(detail.starts_with("recursive dependence at 2026-01-"), "{detail}");
    assert!(detail.contains("checklist:close_above_ema"), "{detail}");
    // Flagged, still serving.
    let row = plugins.iter().find(|p| p["name"] == "short_warmup").unwrap();
    assert_eq!(row["status"], "loaded", "{row}");
}
