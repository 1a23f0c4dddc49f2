//! A headless Chromium driven through the Chrome DevTools protocol, for the dashboard's browser
//! test: open a page, evaluate script in it, collect what its console reports, and take
//! screenshots.
//!
//! Chromium is Debian's package (`/usr/bin/chromium`, or `SPOTBOT_CHROMIUM`); `cargo xtask
//! test` installs it when it is missing. It is started with a fresh profile and every
//! background service off, so it makes no connection but to the page's own loopback server.
//! The protocol is JSON over one WebSocket: commands carry an id and get a reply with the
//! same id; everything else is an event, kept in order for [`Browser::console_errors`].

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

type Replies = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;
type Sink = futures_util::stream::SplitSink<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    Message,
>;

/// Where Chromium is looked for, in order, after `SPOTBOT_CHROMIUM`.
const CANDIDATES: &[&str] = &["/usr/bin/chromium", "/usr/bin/chromium-browser"];

/// What the DevTools protocol answers when an evaluation's page was replaced under it.
const NAVIGATING: [&str; 3] = [
    "Inspected target navigated or closed",
    "Execution context was destroyed",
    "Cannot find context with specified id",
];

/// How to get Chromium when it is missing.
pub const INSTALL_HINT: &str = "install Debian's chromium (`apt-get install chromium`, which \
    `cargo xtask test` does when it runs as root or with password-less sudo), or point \
    SPOTBOT_CHROMIUM at a Chromium or Chrome binary";

/// The Chromium binary, if there is one.
pub fn chromium_path() -> Option<PathBuf> {
    std::env::var_os("SPOTBOT_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(CANDIDATES.iter().map(PathBuf::from))
        .find(|p| p.is_file())
}

/// One headless Chromium with one page (tab) attached.
pub struct Browser {
    child: Child,
    sink: tokio::sync::Mutex<Sink>,
    replies: Replies,
    events: Arc<Mutex<Vec<Value>>>,
    session: String,
    next_id: std::sync::atomic::AtomicU64,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium and opens a blank page.
    pub async fn launch() -> Result<Browser, String> {
        let binary =
            chromium_path().ok_or_else(|| format!("Chromium not found: {INSTALL_HINT}"))?;
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut child = Command::new(&binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let (tx, rx) = oneshot::channel();
        std::thread::spawn(move || {
            let _ = tx.send(devtools_url(stderr));
        });
        let ws_url = match tokio::time::timeout(Duration::from_secs(30), rx).await {
            Ok(Ok(found)) => found?,
            _ => {
                let _ = child.kill();
                return Err("Chromium did not open its DevTools port within 30 s".into());
            }
        };
        let (socket, _) = tokio_tungstenite::connect_async(ws_url.as_str())
            .await
            .map_err(|e| format!("DevTools connection: {e}"))?;
        let (sink, mut stream) = socket.split();
        let replies: Replies = Arc::default();
        let events: Arc<Mutex<Vec<Value>>> = Arc::default();
        let (r, e) = (replies.clone(), events.clone());
        tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                let Ok(text) = message.into_text() else { continue };
                let Ok(value) = serde_json::from_str::<Value>(&text) else { continue };
                match value.get("id").and_then(Value::as_u64) {
                    Some(id) => {
                        if let Some(tx) = r.lock().unwrap().remove(&id) {
                            let _ = tx.send(value);
                        }
                    }
                    None => e.lock().unwrap().push(value),
                }
            }
        });
        let mut browser = Browser {
            child,
            sink: tokio::sync::Mutex::new(sink),
            replies,
            events,
            session: String::new(),
            next_id: 1.into(),
            _profile: profile,
        };
        let target =
            browser.call(None, "Target.createTarget", json!({"url": "about:blank"})).await?;
        let target_id = target["targetId"].as_str().ok_or("no targetId")?.to_string();
        let attached = browser
            .call(None, "Target.attachToTarget", json!({"targetId": target_id, "flatten": true}))
            .await?;
        browser.session = attached["sessionId"].as_str().ok_or("no sessionId")?.to_string();
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            browser.send(domain, json!({})).await?;
        }
        Ok(browser)
    }

    async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut command = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            command["sessionId"] = json!(session);
        }
        let (tx, rx) = oneshot::channel();
        self.replies.lock().unwrap().insert(id, tx);
        self.sink
            .lock()
            .await
            .send(Message::text(command.to_string()))
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        let reply = tokio::time::timeout(Duration::from_secs(30), rx)
            .await
            .map_err(|_| format!("{method}: no reply within 30 s"))?
            .map_err(|_| format!("{method}: the browser went away"))?;
        if let Some(error) = reply.get("error") {
            return Err(format!("{method}: {error}"));
        }
        Ok(reply["result"].clone())
    }

    /// Sends a command to the page.
    pub async fn send(&self, method: &str, params: Value) -> Result<Value, String> {
        self.call(Some(&self.session.clone()), method, params).await
    }

    /// Opens `url` and waits for its load event.
    pub async fn open(&self, url: &str) -> Result<(), String> {
        let seen = self.events.lock().unwrap().len();
        self.send("Page.navigate", json!({"url": url})).await?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let loaded = self.events.lock().unwrap()[seen..]
                .iter()
                .any(|e| e["method"] == "Page.loadEventFired");
            if loaded {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("{url} did not load within 30 s"));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Evaluates `expression` in the page (promises are awaited) and returns its value.
    pub async fn eval(&self, expression: &str) -> Result<Value, String> {
        let result = self
            .send(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await?;
        if let Some(details) = result.get("exceptionDetails") {
            return Err(format!("{expression}: {}", exception_text(details)));
        }
        Ok(result["result"]["value"].clone())
    }

    /// Evaluates `expression` until it is truthy; the time it took, or an error after
    /// `within`.
    pub async fn wait_for(&self, expression: &str, within: Duration) -> Result<Duration, String> {
        let start = Instant::now();
        loop {
            let value = match self.eval(expression).await {
                Ok(value) => value,
                // The page was replaced while it evaluated (a reload, a navigation): the new
                // document is asked at the next turn.
                Err(err) if NAVIGATING.iter().any(|m| err.contains(m)) => Value::Null,
                Err(err) => return Err(err),
            };
            let truthy = !matches!(&value, Value::Null | Value::Bool(false))
                && value != json!(0)
                && value != json!("");
            if truthy {
                return Ok(start.elapsed());
            }
            if start.elapsed() > within {
                return Err(format!("`{expression}` still false after {within:?}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Sets the viewport (CSS pixels); `mobile` emulates a phone.
    pub async fn viewport(&self, width: u32, height: u32, mobile: bool) -> Result<(), String> {
        self.send(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        )
        .await
        .map(|_| ())
    }

    /// Writes a PNG of the whole page (not only the viewport) to `path`.
    pub async fn screenshot(&self, path: &Path) -> Result<(), String> {
        let shot = self
            .send("Page.captureScreenshot", json!({"format": "png", "captureBeyondViewport": true}))
            .await?;
        let data = shot["data"].as_str().ok_or("no screenshot data")?;
        let png =
            base64::engine::general_purpose::STANDARD.decode(data).map_err(|e| e.to_string())?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        std::fs::write(path, png).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// What the page reported as errors so far: uncaught exceptions, `console.error` calls
    /// and error entries of the browser's log (failed loads, CSP, …).
    pub fn console_errors(&self) -> Vec<String> {
        let events = self.events.lock().unwrap();
        events
            .iter()
            .filter_map(|e| {
                let p = &e["params"];
                match e["method"].as_str()? {
                    "Runtime.exceptionThrown" => Some(exception_text(&p["exceptionDetails"])),
                    "Runtime.consoleAPICalled" if p["type"] == "error" => {
                        let args: Vec<String> = p["args"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|a| {
                                a.get("value")
                                    .map(|v| v.to_string())
                                    .or_else(|| a["description"].as_str().map(String::from))
                                    .unwrap_or_default()
                            })
                            .collect();
                        Some(format!("console.error: {}", args.join(" ")))
                    }
                    "Log.entryAdded" if p["entry"]["level"] == "error" => Some(format!(
                        "{} ({})",
                        p["entry"]["text"].as_str().unwrap_or_default(),
                        p["entry"]["url"].as_str().unwrap_or_default()
                    )),
                    _ => None,
                }
            })
            .collect()
    }

    /// Closes the browser.
    pub async fn close(self) {
        let _ = self.call(None, "Browser.close", json!({})).await;
    }
}

impl Drop for Browser {
    /// A failed test must not leave a browser running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn exception_text(details: &Value) -> String {
    details["exception"]["description"]
        .as_str()
        .or_else(|| details["text"].as_str())
        .unwrap_or("exception")
        .to_string()
}

/// Reads Chromium's stderr up to the `DevTools listening on ws://…` line, then keeps
/// draining it on this thread (a full pipe would stall the browser).
fn devtools_url(stderr: std::process::ChildStderr) -> Result<String, String> {
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let Ok(line) = line else { break };
        if let Some(url) = line.split("DevTools listening on ").nth(1) {
            let url = url.trim().to_string();
            std::thread::spawn(move || lines.for_each(drop));
            return Ok(url);
        }
        seen.push(line);
    }
    Err(format!("Chromium exited before opening its DevTools port:\n{}", seen.join("\n")))
}
