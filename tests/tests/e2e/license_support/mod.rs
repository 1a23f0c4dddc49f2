//! A real license server on loopback and hosts on one shared test clock, so "server down for
//! 73 hours" takes no time. Shared by the `license_*` tests; any other test that needs an
//! active license (trading routes answer 503 without one) can use it too:
//!
//! ```ignore
//! mod license_support;
//! let rig = license_support::Rig::new().await;
//! let host = rig.licensed_host("[exchange]\n...").await; // your config, without [license]
//! host.post("/api/trade?...", json!({})).await;
//! ```

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};
use spotbot::app::RunningApp;
use spotbot::clock::{Clock as _, SharedClock, TestClock};
use spotbot::config::{Config, Secret};
use spotbot::license::License;
use spotbot_license_server::LicenseServer;

/// A license server whose data and address survive stop/start, and the clock every party
/// reads.
pub struct Rig {
    pub clock: TestClock,
    pub server: Option<LicenseServer>,
    pub server_addr: SocketAddr,
    pub server_dir: tempfile::TempDir,
    pub public_key: String,
    pub http: reqwest::Client,
    registrations: AtomicU32,
}

impl Rig {
    pub async fn new() -> Rig {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let clock = TestClock::new(
            chrono::DateTime::parse_from_rfc3339("2026-03-02T08:00:00Z").unwrap().to_utc(),
        );
        let server_dir = tempfile::tempdir().unwrap();
        let server = start_server(&clock, server_dir.path(), "127.0.0.1:0".parse().unwrap()).await;
        Rig {
            server_addr: server.addr(),
            public_key: server.public_key_hex(),
            server: Some(server),
            clock,
            server_dir,
            http: reqwest::Client::new(),
            registrations: AtomicU32::new(0),
        }
    }

    pub fn server_url(&self) -> String {
        format!("http://{}", self.server_addr)
    }

    /// The license server goes away (connections refused).
    pub async fn stop_server(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop().await.unwrap();
        }
    }

    /// The license server comes back on the same address with the same data.
    pub async fn start_server(&mut self) {
        assert!(self.server.is_none());
        self.server =
            Some(start_server(&self.clock, self.server_dir.path(), self.server_addr).await);
    }

    /// Revokes a key the way an operator does (loopback, no token).
    pub async fn revoke(&self, key: &str) {
        let response = self
            .http
            .post(format!("{}/v1/revoke", self.server_url()))
            .json(&json!({ "license_key": key }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }

    /// The `[license]` section pointing at this server, with the background loop off (tests
    /// call `License::tick`).
    pub fn license_toml(&self) -> String {
        format!(
            "[license]\nserver_url = \"{}\"\npublic_key = \"{}\"\npoll_seconds = 0\n",
            self.server_url(),
            self.public_key
        )
    }

    /// A host config: `config_toml` (without a `[license]` section) plus this server's.
    pub fn config_with(&self, config_toml: &str, data_dir: &Path, env_key: Option<&str>) -> Config {
        let toml = format!("{config_toml}\n{}", self.license_toml());
        let mut config = Config::parse(&toml, "license-test.toml".as_ref()).unwrap();
        config.server.addr = "127.0.0.1:0".into();
        config.server.data_dir = data_dir.display().to_string();
        config.secrets.license_key = env_key.map(Secret::new);
        // The tests move the clock by hours: the scheduler's background loop would run the
        // jobs of those hours behind their backs. Tests that want jobs call
        // `Scheduler::tick` (tests/tests/e2e/scheduler.rs).
        config.scheduler.poll_seconds = 0;
        spotbot_tests::keep_on_loopback(&mut config);
        config
    }

    /// Starts a host on `data_dir` (a fresh folder is a new install with a new machine id).
    pub async fn host(&self, data_dir: tempfile::TempDir, env_key: Option<&str>) -> Host {
        self.host_with("", data_dir, env_key).await
    }

    /// Starts a host from `config_toml` (without a `[license]` section) on `data_dir`.
    pub async fn host_with(
        &self,
        config_toml: &str,
        data_dir: tempfile::TempDir,
        env_key: Option<&str>,
    ) -> Host {
        let config = self.config_with(config_toml, data_dir.path(), env_key);
        self.start_config(config, data_dir).await
    }

    /// Starts a host from a finished config (e.g. with exchange or messenger secrets set) on
    /// this rig's clock; `data_dir` must be the folder the config names.
    pub async fn start_config(&self, config: Config, data_dir: tempfile::TempDir) -> Host {
        let shared: SharedClock = Arc::new(self.clock.clone());
        let app = spotbot::app::start(config, shared).await.expect("host starts");
        Host { app, data_dir, http: self.http.clone() }
    }

    pub async fn new_host(&self) -> Host {
        self.host(tempfile::tempdir().unwrap(), None).await
    }

    /// A new install from `config_toml` whose license is registered and active.
    pub async fn licensed_host(&self, config_toml: &str) -> Host {
        let host = self.host_with(config_toml, tempfile::tempdir().unwrap(), None).await;
        let n = self.registrations.fetch_add(1, Ordering::Relaxed);
        host.register(&format!("install{n}@example.com")).await;
        host
    }

    pub fn advance_hours(&self, hours: i64) {
        self.clock.advance(chrono::Duration::hours(hours));
    }

    pub fn advance_minutes(&self, minutes: i64) {
        self.clock.advance(chrono::Duration::minutes(minutes));
    }

    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }
}

async fn start_server(clock: &TestClock, dir: &Path, addr: SocketAddr) -> LicenseServer {
    let mut config = spotbot_license_server::Config::new(dir);
    let server_clock = clock.clone();
    config.clock = Arc::new(move || server_clock.now());
    config.register_per_hour = 100;
    // Coming back on the same port: while the server was down, another test's connection may
    // have been given that port as its local one for a moment. Wait for it (up to 5 s).
    for _ in 0..50 {
        match LicenseServer::bind(config.clone(), addr).await {
            Ok(server) => return server,
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    LicenseServer::bind(config, addr).await.expect("license server starts")
}

/// A running host and its data folder.
pub struct Host {
    pub app: RunningApp,
    pub data_dir: tempfile::TempDir,
    pub http: reqwest::Client,
}

impl Host {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.app.base_url())
    }

    pub fn license(&self) -> &Arc<License> {
        &self.app.state.license
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.http.get(self.url(path)).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self.http.post(self.url(path)).json(&body).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn post_raw(&self, path: &str, body: &'static str) -> (u16, Value) {
        let response = self
            .http
            .post(self.url(path))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Registers through the host's API and returns the new key.
    pub async fn register(&self, email: &str) -> String {
        let (status, body) =
            self.post("/api/license/register", json!({"email": email, "name": "Test Ops"})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["ok"], true, "{body}");
        assert_eq!(body["plan"], "free");
        body["license_key"].as_str().unwrap().to_string()
    }

    pub async fn status(&self) -> Value {
        let (status, body) = self.get("/api/license/status").await;
        assert_eq!(status, 200);
        body
    }

    pub async fn assert_active(&self) {
        let status = self.status().await;
        assert_eq!(status["status"], "active", "{status}");
        let (_, health) = self.get("/api/health").await;
        assert_eq!(health["license_status"], "active", "{health}");
        assert_eq!(health["plan"], "free", "{health}");
    }

    pub async fn assert_required(&self) -> Value {
        let status = self.status().await;
        assert_eq!(status["status"], "unlicensed", "{status}");
        assert!(status["message"].as_str().is_some_and(|m| !m.is_empty()), "{status}");
        let (_, health) = self.get("/api/health").await;
        assert_eq!(health["license_status"], "required", "{health}");
        status
    }

    /// Stops the host and hands back its data folder for a restart.
    pub async fn stop(self) -> tempfile::TempDir {
        self.app.stop().await.expect("host stops cleanly");
        self.data_dir
    }
}
