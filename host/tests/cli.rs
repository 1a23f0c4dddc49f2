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
