//! Shared by the `plugins_*` tests: the Wasm files of the example strategy and the sandbox
//! test guests, and a host whose plugins folder the test controls.
//!
//! The files come from `target/test-guests/` (what `cargo xtask plugins` builds). When one is
//! missing, they are built once here with `cargo build --release --target wasm32-wasip2`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use spotbot_tests::TestHost;

/// Guest packages and the template, as (package, file name).
const PACKAGES: &[&str] = &[
    "strategy-template",
    "guest-loop",
    "guest-memory",
    "guest-panic",
    "guest-oversized",
    "guest-stack",
    "guest-capabilities",
    "guest-describe-trap",
    "guest-echo",
    "guest-echo-next",
    "guest-v2",
    "guest-logger",
    "guest-logger-broken",
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn guests_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::var_os("SPOTBOT_TEST_GUESTS")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target").join("test-guests"));
        let missing = PACKAGES.iter().any(|p| !dir.join(file_of(p)).exists());
        if missing {
            build_guests(&dir);
        }
        dir
    })
}

fn file_of(package: &str) -> String {
    format!("{}.wasm", package.replace('-', "_"))
}

fn build_guests(dest: &Path) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target_dir = workspace_root().join("target").join("guest-build");
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "--target", "wasm32-wasip2"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .current_dir(workspace_root());
    for p in PACKAGES {
        cmd.args(["-p", p]);
    }
    let status = cmd.status().expect("cargo runs");
    assert!(status.success(), "building the test guests failed");
    std::fs::create_dir_all(dest).unwrap();
    for p in PACKAGES {
        let file = file_of(p);
        std::fs::copy(target_dir.join("wasm32-wasip2/release").join(&file), dest.join(&file))
            .unwrap();
    }
}

/// The bytes of a built guest, by package name (e.g. `guest-loop`, `strategy-template`).
/// A plugins folder holding the workspace's built strategy `files` (`cargo xtask plugins`:
/// `mr_combined.wasm`, `pump_momentum.wasm`, ...), and the `[plugins]` lines that point at it.
pub fn workspace_plugins(files: &[&str]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        std::fs::write(dir.path().join(file), spotbot_tests::contract::built_plugin(file)).unwrap();
    }
    let toml = format!("[plugins]\ndir = {:?}\n", dir.path().display().to_string());
    (dir, toml)
}

pub fn wasm(package: &str) -> Vec<u8> {
    std::fs::read(guests_dir().join(file_of(package))).unwrap()
}

/// Writes `bytes` into `dir/file` the way a deploy should: temp file + rename.
pub fn deploy(dir: &Path, file: &str, bytes: &[u8]) {
    let tmp = dir.join(format!(".{file}.tmp"));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, dir.join(file)).unwrap();
}

/// A host whose `[plugins] dir` is a fresh folder; `extra_toml` is appended to the config.
pub struct PluginHost {
    pub host: TestHost,
    pub plugins_dir: tempfile::TempDir,
}

pub fn config_toml(plugins_dir: &Path, plugins_toml: &str, extra_toml: &str) -> String {
    format!(
        "[plugins]\ndir = {:?}\nmarket_data = \"synthetic\"\n{plugins_toml}\n{extra_toml}",
        plugins_dir.display().to_string()
    )
}

impl PluginHost {
    /// Starts a host after putting `files` (file name, package) into its plugins folder.
    pub async fn start(files: &[(&str, &str)], plugins_toml: &str, extra_toml: &str) -> Self {
        let plugins_dir = tempfile::tempdir().unwrap();
        for (file, package) in files {
            deploy(plugins_dir.path(), file, &wasm(package));
        }
        let host =
            TestHost::start(&config_toml(plugins_dir.path(), plugins_toml, extra_toml)).await;
        PluginHost { host, plugins_dir }
    }

    pub fn dir(&self) -> &Path {
        self.plugins_dir.path()
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.host.http.get(self.host.url(path)).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    /// `POST path` with a JSON body; status and body.
    pub async fn post_json(&self, path: &str, body: &Value) -> (u16, Value) {
        let r = self.host.http.post(self.host.url(path)).json(body).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    /// `DELETE path`; status and body.
    pub async fn delete(&self, path: &str) -> (u16, Value) {
        let r = self.host.http.delete(self.host.url(path)).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    /// `GET path`; status and the body as text.
    pub async fn get_text(&self, path: &str) -> (u16, String) {
        let r = self.host.http.get(self.host.url(path)).send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }

    /// `POST /api/strategies/{name}/scan` with an optional `symbols` list; status, body, time.
    pub async fn scan(&self, name: &str, symbols: Option<&[&str]>) -> (u16, Value, Duration) {
        let started = Instant::now();
        let mut request = self
            .host
            .http
            .post(self.host.url(&format!("/api/strategies/{name}/scan")))
            .header("content-type", "application/json");
        if let Some(symbols) = symbols {
            request = request.json(&serde_json::json!({ "symbols": symbols }));
        }
        let r = request.send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap(), started.elapsed())
    }

    /// The `GET /api/strategies` row of `file`.
    pub async fn row(&self, file: &str) -> Option<Value> {
        let (_, body) = self.get("/api/strategies").await;
        body["plugins"].as_array().unwrap().iter().find(|p| p["file"] == file).cloned()
    }

    /// Polls the plugin list until `pred` holds for the row of `file` (None = no row);
    /// returns how long it took. Panics after `limit`.
    pub async fn wait_for(
        &self,
        file: &str,
        limit: Duration,
        pred: impl Fn(Option<&Value>) -> bool,
    ) -> Duration {
        let started = Instant::now();
        loop {
            let row = self.row(file).await;
            if pred(row.as_ref()) {
                return started.elapsed();
            }
            assert!(
                started.elapsed() < limit,
                "{file} did not reach the expected state within {limit:?}: {row:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
