//! Helpers for the end-to-end tests: start real servers on loopback and talk HTTP to them.

pub mod browser;
pub mod contract;
pub mod fake_messenger;
pub mod scripted;
pub mod venue;

use std::sync::Arc;

use spotbot::app::RunningApp;
use spotbot::clock::{SharedClock, TestClock};
use spotbot::config::Config;

/// A host started on 127.0.0.1 with a free port and its own temporary data folder.
pub struct TestHost {
    pub app: RunningApp,
    pub clock: TestClock,
    pub http: reqwest::Client,
    /// Kept alive for the host's lifetime; deleted on drop.
    pub data_dir: tempfile::TempDir,
}

impl TestHost {
    /// Starts a host from `config_toml` (empty for the defaults) on a test clock.
    pub async fn start(config_toml: &str) -> Self {
        let data_dir = tempfile::tempdir().expect("temporary data folder");
        Self::start_in(config_toml, data_dir).await
    }

    /// Starts a host on an existing data folder (to test what survives a restart).
    pub async fn start_in(config_toml: &str, data_dir: tempfile::TempDir) -> Self {
        let mut config =
            Config::parse(config_toml, "test.toml".as_ref()).expect("valid test config");
        config.server.addr = "127.0.0.1:0".into();
        config.server.data_dir = data_dir.path().display().to_string();
        keep_on_loopback(&mut config);
        let clock = TestClock::new(chrono::Utc::now());
        let shared: SharedClock = Arc::new(clock.clone());
        let app = spotbot::app::start(config, shared).await.expect("host starts");
        Self { app, clock, http: http_client(), data_dir }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.app.base_url())
    }

    /// Stops the host and hands back its data folder.
    pub async fn stop(self) -> tempfile::TempDir {
        self.app.stop().await.expect("host stops cleanly");
        self.data_dir
    }
}

/// Points the default news sources (public feeds) at a closed loopback port: tests talk to
/// nothing but loopback, and a page that reads `GET /api/news` must not reach the internet. A
/// test that configures its own sources keeps them.
pub fn keep_on_loopback(config: &mut Config) {
    if config.news.sources == spotbot::config::NewsConfig::default().sources {
        config.news.sources = vec!["http://127.0.0.1:9/rss".to_string()];
    }
}

/// An HTTP client for the tests. reqwest is built without a default TLS crypto provider (the
/// workspace uses ring to keep builds light), so install it once before the first client.
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}
