//! Runs cargo for a project command: in this workspace (found at run time), in the environment
//! a shell would give it, and tells where the workspace builds to.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Runs `cargo <args>` in the workspace root and fails when it fails.
pub fn cargo(args: &[&str]) -> anyhow::Result<()> {
    Cargo::workspace().run(args)
}

/// Where cargo runs: a workspace root and, optionally, a target directory other than the
/// workspace's own (the tests build a scratch workspace into the real target directory).
#[derive(Debug, Clone)]
pub struct Cargo {
    pub root: PathBuf,
    pub target_dir: Option<PathBuf>,
}

impl Cargo {
    /// This repository's workspace.
    pub fn workspace() -> Self {
        Cargo { root: workspace_root(), target_dir: None }
    }

    /// `cargo <args>` in the root, not yet started, in the environment a shell would give it:
    /// without the variables cargo set for this xtask run ([`set_by_cargo_for_xtask`]).
    pub fn command(&self, args: &[&str]) -> Command {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut command = Command::new(cargo);
        command.args(args).current_dir(&self.root);
        for (name, _) in std::env::vars_os() {
            if name.to_str().is_some_and(set_by_cargo_for_xtask) {
                command.env_remove(name);
            }
        }
        if let Some(dir) = &self.target_dir {
            command.env("CARGO_TARGET_DIR", dir);
        }
        command
    }

    /// Runs `cargo <args>` in the root and fails when it fails.
    pub fn run(&self, args: &[&str]) -> anyhow::Result<()> {
        println!("$ cargo {}", args.join(" "));
        let status = self
            .command(args)
            .status()
            .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
        if !status.success() {
            bail!("cargo {} failed ({status})", args.join(" "));
        }
        Ok(())
    }

    /// `cargo metadata --no-deps` of the root.
    pub fn metadata(&self) -> anyhow::Result<serde_json::Value> {
        let output = self
            .command(&["metadata", "--format-version", "1", "--no-deps"])
            .output()
            .context("cannot run cargo metadata")?;
        if !output.status.success() {
            bail!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
        }
        Ok(serde_json::from_slice(&output.stdout)?)
    }
}

/// Whether `name` is one of the variables `cargo run` sets for the binary it starts (the xtask
/// package's `CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, ...), as opposed to the operator's cargo
/// configuration (`CARGO_HOME`, `CARGO_TARGET_DIR`, `CARGO_BUILD_*`, ...), which must pass.
///
/// Why it matters: build scripts such as ring's declare `rerun-if-env-changed` on
/// `CARGO_MANIFEST_DIR` and `CARGO_PKG_NAME`, and cargo compares those against its own
/// environment. A cargo started with xtask's values and one started from a shell then
/// invalidate each other's builds: ring, rustls, reqwest and spotbot were rebuilt on each
/// switch (minutes on 2 cores).
fn set_by_cargo_for_xtask(name: &str) -> bool {
    const PREFIXES: &[&str] = &["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_", "CARGO_CRATE_"];
    const NAMES: &[&str] =
        &["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "CARGO_RUSTC_CURRENT_DIR"];
    PREFIXES.iter().any(|prefix| name.starts_with(prefix)) || NAMES.contains(&name)
}

/// `path` as UTF-8, for a command line.
pub fn path_str(path: &Path) -> anyhow::Result<&str> {
    path.to_str().with_context(|| format!("{} is not UTF-8", path.display()))
}

/// The workspace this xtask serves, found at run time: a checkout that moved keeps working
/// with the binary built before the move. `cargo xtask` (`cargo run`) names the xtask
/// package's folder in `CARGO_MANIFEST_DIR`; a binary started by hand looks upwards from the
/// current folder for the workspace's manifest; the folder this crate was compiled in
/// (`xtask/support`, two below the root) comes last. Found once per run: every command asks for it, and the answer cannot change meanwhile.
pub fn workspace_root() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let cargo_names = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
        find_workspace(cargo_names, std::env::current_dir().ok())
            .or_else(|| {
                let compiled_in = Path::new(env!("CARGO_MANIFEST_DIR"));
                compiled_in.parent().and_then(Path::parent).map(Path::to_path_buf)
            })
            .expect("xtask lives in the workspace")
    })
    .clone()
}

/// The workspace from the xtask package's folder cargo names, else from the current folder
/// or one above it.
fn find_workspace(xtask_dir: Option<PathBuf>, cwd: Option<PathBuf>) -> Option<PathBuf> {
    let from_cargo = xtask_dir
        .and_then(|xtask| xtask.parent().map(Path::to_path_buf))
        .filter(|root| is_this_workspace(root));
    from_cargo.or_else(|| {
        let cwd = cwd?;
        cwd.ancestors().find(|dir| is_this_workspace(dir)).map(Path::to_path_buf)
    })
}

/// A folder holding this workspace: its manifest and the xtask package in it.
fn is_this_workspace(dir: &Path) -> bool {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    manifest.contains("[workspace]") && dir.join("xtask").join("Cargo.toml").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cargo xtask starts sees the environment minus what cargo set for this process
    /// (`cargo test` sets the same variables for this test as `cargo run` does for xtask).
    #[test]
    fn the_cargo_xtask_starts_carries_no_cargo_variable_of_its_own() {
        assert!(std::env::var_os("CARGO_PKG_NAME").is_some(), "cargo set it for this test");
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some(), "cargo set it for this test");
        let command = Cargo::workspace().command(&["build"]);
        let mut seen: std::collections::BTreeMap<String, String> = std::env::vars().collect();
        for (name, value) in command.get_envs() {
            let name = name.to_string_lossy().into_owned();
            match value {
                Some(value) => seen.insert(name, value.to_string_lossy().into_owned()),
                None => seen.remove(&name),
            };
        }
        let own: Vec<&String> = seen.keys().filter(|n| set_by_cargo_for_xtask(n)).collect();
        assert!(own.is_empty(), "cargo would be started with {own:?}");
        assert!(seen.keys().all(|n| !n.starts_with("CARGO_PKG_")), "{seen:?}");
        assert!(!seen.contains_key("CARGO_MANIFEST_DIR"));
    }

    #[test]
    fn the_operators_cargo_configuration_passes() {
        for name in ["CARGO_HOME", "CARGO_TARGET_DIR", "CARGO_BUILD_JOBS", "CARGO_TERM_COLOR"] {
            assert!(!set_by_cargo_for_xtask(name), "{name}");
        }
        for name in
            ["CARGO_PKG_NAME", "CARGO_MANIFEST_DIR", "CARGO_MANIFEST_PATH", "CARGO_CRATE_NAME"]
        {
            assert!(set_by_cargo_for_xtask(name), "{name}");
        }
    }

    #[test]
    fn a_moved_checkout_is_found_where_it_is_now() {
        let moved = tempfile::tempdir().unwrap();
        let root = moved.path().join("checkout");
        std::fs::create_dir_all(root.join("xtask").join("src")).unwrap();
        std::fs::write(root.join("Cargo.toml"), "[workspace]\nmembers = [\"xtask\"]\n").unwrap();
        std::fs::write(root.join("xtask").join("Cargo.toml"), "[package]\n").unwrap();
        let gone = Some(moved.path().join("old-place").join("xtask"));
        let inside = Some(root.join("xtask").join("src"));
        assert_eq!(find_workspace(Some(root.join("xtask")), None), Some(root.clone()));
        assert_eq!(find_workspace(gone.clone(), inside), Some(root.clone()), "from the cwd");
        assert_eq!(find_workspace(gone, Some(moved.path().to_path_buf())), None);
        assert!(is_this_workspace(&workspace_root()), "this repository, under cargo test");
    }
}
