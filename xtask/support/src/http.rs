//! A minimal HTTP/1.1 client for talking to the demo's own servers on loopback, so the xtask
//! needs no HTTP dependency.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{Context, bail};

/// Sends one request with `Connection: close` and returns the status code and the body.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    json: Option<&str>,
) -> anyhow::Result<(u16, String)> {
    let mut stream =
        TcpStream::connect(addr).with_context(|| format!("cannot connect to {addr}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let body = json.unwrap_or("");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").context("malformed HTTP response")?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .context("HTTP response without a status")?;
    if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        bail!("chunked responses are not expected from the demo servers");
    }
    Ok((status, body.to_string()))
}

/// Polls `GET path` until it answers 200, `tries` run out, or `keep_trying` says no more (the
/// server exited, a stop was requested).
pub fn wait_until_up(
    addr: &str,
    path: &str,
    tries: u32,
    mut keep_trying: impl FnMut() -> bool,
) -> anyhow::Result<()> {
    for _ in 0..tries {
        if !keep_trying() {
            bail!("{addr}{path}: gave up waiting");
        }
        if matches!(request(addr, "GET", path, None), Ok((200, _))) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    bail!("{addr}{path} did not come up")
}
