//! The MCP endpoint driven by the official Python MCP client (`mcp`, unmodified, pinned in
//! xtask/python-requirements.txt and installed into target/xtask-venv by `cargo xtask venv`)
//! running tests/mcp/drive_service.py: it lists the tools, reads, posts a signal and, once the
//! boss's approval request reached the messenger, confirms it; the bracket must then be at the
//! exchange simulator. Refusals come out as over HTTP: no license, a bad argument, a foreign
//! `Host`.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::license_support::Rig;
use crate::signal_flow::assert_bracket_at_exchange;
use crate::trading_support::{Trading, good_signal};

/// Longest wait for one line of the client (its start imports the SDK).
const LINE_TIMEOUT: Duration = Duration::from_secs(60);

/// The venv's Python, or one line saying how to get it.
fn python() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("target"));
    let python = target.join("xtask-venv").join("bin").join("python");
    assert!(
        python.is_file(),
        "{} is missing: run `cargo xtask venv` (it installs the official Python MCP client this \
         test drives /mcp with)",
        python.display()
    );
    python
}

/// drive_service.py running, its output lines arriving on a channel.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Client {
    fn start(args: &[&str]) -> Client {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp").join("drive_service.py");
        let mut child = Command::new(python())
            .arg(script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the MCP client starts");
        let (sender, lines) = mpsc::unbounded_channel();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let collected = stderr.clone();
        let pipe = BufReader::new(child.stderr.take().expect("stderr"));
        std::thread::spawn(move || {
            for line in pipe.lines().map_while(Result::ok) {
                collected.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        Client { stdin: child.stdin.take(), child, lines, stderr }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The JSON after `tag` on the client's next tagged line.
    async fn next(&mut self, tag: &str) -> Value {
        loop {
            let line = tokio::time::timeout(LINE_TIMEOUT, self.lines.recv()).await;
            let Ok(Some(line)) = line else {
                panic!("no `{tag}` line from the MCP client; its stderr:\n{}", self.stderr());
            };
            if let Some(json) = line.strip_prefix(tag).and_then(|rest| rest.strip_prefix(' ')) {
                return serde_json::from_str(json).expect("a JSON result");
            }
        }
    }

    fn reply(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").and_then(|()| stdin.flush()).expect("the client reads stdin");
    }

    /// Waits for the client to exit and asserts it succeeded.
    async fn finished(mut self) {
        self.stdin.take();
        let deadline = tokio::time::Instant::now() + LINE_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("client status") {
                assert!(status.success(), "the MCP client failed ({status}):\n{}", self.stderr());
                return;
            }
            assert!(tokio::time::Instant::now() < deadline, "the MCP client does not exit");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// One tool call through the client: `{is_error, answer: {status, body}, text}`.
async fn call_tool(url: &str, tool: &str, arguments: Value) -> Value {
    let mut client = Client::start(&["call", url, tool, &arguments.to_string()]);
    let result = client.next("RESULT").await;
    client.finished().await;
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_posts_a_signal_the_boss_approves_and_the_bracket_reaches_the_exchange() {
    let t = Trading::start().await;
    let url = t.host.url("/mcp");
    let signal = good_signal("ETHUSDT");
    let mut client = Client::start(&["scenario", &url, &signal.to_string()]);

    let created = client.next("SIGNAL").await;
    assert_eq!(created["is_error"], false, "{created}");
    let body = &created["answer"]["body"];
    assert_eq!((body["ok"].as_bool(), body["status"].as_str()), (Some(true), Some("pending")));
    assert_eq!((body["ev"].as_f64(), body["confidence"].as_u64()), (Some(89.0), Some(9)));
    assert!(t.orders().is_empty(), "nothing is traded before the confirm");

    // The boss's approval request, then the boss's YES relayed to the agent.
    let approval = t.message_containing("1-YES ETHUSDT").await;
    assert!(approval.text.contains("0-NO ETHUSDT"), "{}", approval.text);
    client.reply("1-YES ETHUSDT");

    let confirmed = client.next("CONFIRMED").await;
    client.finished().await;
    assert_eq!(confirmed["is_error"], false, "{confirmed}");
    assert_eq!(confirmed["answer"]["status"], 200);
    let answer = &confirmed["answer"]["body"];
    assert_eq!(
        (answer["ok"].as_bool(), answer["status"].as_str()),
        (Some(true), Some("confirmed"))
    );
    let opened = &answer["trade"]["opened"];
    assert_eq!(opened["protection"], "protected", "{answer}");

    // What the exchange received: one MARKET BUY of ETHUSDT and its OCO (take-profit and
    // stop-loss SELL legs of the bought quantity net of the fee).
    let (_, tp, sl) = assert_bracket_at_exchange(&t);
    assert!(t.orders().iter().all(|o| o["symbol"] == "ETHUSDT"), "{:?}", t.orders());
    assert_eq!(
        (opened["tp_oid"].clone(), opened["sl_oid"].clone()),
        (tp["orderId"].clone(), sl["orderId"].clone())
    );
    let trades = t.open_trades().await;
    assert_eq!((trades.len(), trades[0]["source"].as_str()), (1, Some("signal")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_license_a_tool_call_is_refused_exactly_as_over_http() {
    let rig = Rig::new().await;
    let host = rig.new_host().await;
    let url = host.url("/mcp");
    let trade = json!({"symbol": "ETHUSDT", "direction": "buy", "bot": "mr_combined", "sl": 2,
        "tp": 5, "ev": 30, "confidence": 9});
    let result = call_tool(&url, "trade", trade).await;
    let response = host
        .http
        .post(host.url(
            "/api/trade?symbol=ETHUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9",
        ))
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let over_http: Value = response.json().await.unwrap();
    assert_eq!(status, 503, "{over_http}");
    assert_eq!(over_http["error"], "license_required");
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(result["answer"], json!({"status": status, "body": over_http}));

    // A free tool still answers, and says why trading is off.
    let health = call_tool(&url, "health", json!({})).await;
    assert_eq!(health["is_error"], false, "{health}");
    assert_eq!(health["answer"]["body"]["license_status"], "required");
    host.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_argument_names_the_field_and_a_foreign_host_is_refused() {
    let rig = Rig::new().await;
    let host = rig.new_host().await;
    let url = host.url("/mcp");

    let result = call_tool(&url, "cleanup_signals", json!({"max_age_minutes": "soon"})).await;
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(result["answer"]["status"], 422, "{result}");
    assert!(result["text"].as_str().unwrap().contains("max_age_minutes"), "{result}");
    let result = call_tool(&url, "get_signal", json!({"symbl": "ETHUSDT"})).await;
    assert_eq!(result["is_error"], true, "{result}");
    let text = result["text"].as_str().unwrap();
    assert!(text.contains("`symbol` is required"), "{text}");

    // DNS rebinding: a request whose Host is not in [api] allowed_hosts never reaches a tool
    // (the API's own error body: the check covers the whole API).
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}});
    let post = |host_header: String| {
        host.http
            .post(&url)
            .header("host", host_header)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize)
            .send()
    };
    let refused = post("attacker.example".into()).await.unwrap();
    assert_eq!(refused.status(), 403);
    assert!(refused.text().await.unwrap().contains("\"error\":\"host_not_allowed\""));
    let allowed = post(host.app.addr.to_string()).await.unwrap();
    assert_eq!(allowed.status(), 200, "{:?}", allowed.text().await);
    host.stop().await;
}
