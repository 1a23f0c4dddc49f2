//! Reference license server for spotbot installs.
//!
//! The major components:
//! - [`wire`]: the protocol shared with the host's license client — key format, input rules,
//!   request bodies and the Ed25519-signed validation answer — is the `spotbot-license-protocol`
//!   crate, re-exported under its old name;
//! - `db`: redb storage of licenses and the e-mail index, with the binding rule (the last
//!   activation owns the key);
//! - `signing`: the server's key pair, persisted in the data directory;
//! - `http`: the axum routes (`/v1/register`, `/v1/activate`, `/v1/validate`, `/v1/revoke`,
//!   `/v1/public-key`, `/v1/health`).
//!
//! [`LicenseServer::start`] runs it on a listener; `main.rs` is the command line around it.
//! Tests start it in process with their own clock.

pub use spotbot_license_protocol as wire;

mod db;
mod http;
mod signing;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use ed25519_dalek::VerifyingKey;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The source of "now" for the server (rate-limit windows, answer timestamps).
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// How to run a server.
#[derive(Clone)]
pub struct Config {
    /// Holds `licenses.redb`, `signing.key` and `public.key`; created if missing.
    pub data_dir: PathBuf,
    /// When set, `/v1/revoke` requires `Authorization: Bearer <token>`; when not, it accepts
    /// loopback callers only.
    pub admin_token: Option<String>,
    /// Register attempts accepted per client address per hour.
    pub register_per_hour: u32,
    pub clock: Clock,
}

impl Config {
    /// Defaults: no admin token, 5 registrations per address per hour, the system clock.
    pub fn new(data_dir: impl Into<PathBuf>) -> Config {
        Config {
            data_dir: data_dir.into(),
            admin_token: None,
            register_per_hour: 5,
            clock: Arc::new(Utc::now),
        }
    }
}

/// A running server. Stop it with [`LicenseServer::stop`]; the data directory can then be
/// opened again by another instance.
pub struct LicenseServer {
    addr: SocketAddr,
    public_key: VerifyingKey,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl LicenseServer {
    /// Binds `addr` and starts serving.
    pub async fn bind(config: Config, addr: SocketAddr) -> anyhow::Result<LicenseServer> {
        let listener = TcpListener::bind(addr).await.with_context(|| format!("binding {addr}"))?;
        LicenseServer::start(config, listener).await
    }

    /// Opens the data directory and serves on `listener`.
    pub async fn start(config: Config, listener: TcpListener) -> anyhow::Result<LicenseServer> {
        std::fs::create_dir_all(&config.data_dir)
            .with_context(|| format!("creating {}", config.data_dir.display()))?;
        let signing = signing::load_or_create(&config.data_dir)?;
        let db_path = config.data_dir.join("licenses.redb");
        let db = tokio::task::spawn_blocking(move || db::Db::open(&db_path))
            .await?
            .context("opening licenses.redb")?;
        let public_key = signing.verifying_key();
        let state = Arc::new(http::Inner {
            db,
            signing,
            clock: config.clock,
            admin_token: config.admin_token.filter(|t| !t.is_empty()),
            register_per_hour: config.register_per_hour,
            limiter: Mutex::new(HashMap::new()),
        });
        let addr = listener.local_addr()?;
        let app = http::router(state).into_make_service_with_connect_info::<SocketAddr>();
        let (shutdown, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
        });
        Ok(LicenseServer { addr, public_key, shutdown, task })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT`, the value for the host's TRADER_LICENSE_URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn public_key(&self) -> VerifyingKey {
        self.public_key
    }

    /// Hex of the public key, the value for the host's `license.public_key`.
    pub fn public_key_hex(&self) -> String {
        wire::public_key_hex(&self.public_key)
    }

    /// Stops accepting, lets open requests finish and closes the database.
    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.shutdown.send(());
        self.task.await??;
        Ok(())
    }

    /// Serves until the task ends (for the binary, which stops on Ctrl-C).
    pub async fn run_until(
        self,
        signal: impl std::future::Future<Output = ()>,
    ) -> anyhow::Result<()> {
        signal.await;
        self.stop().await
    }
}
