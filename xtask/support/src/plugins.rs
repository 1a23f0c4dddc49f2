//! Builds plugin crates for wasm32-wasip2. A workspace member declares itself a plugin with
//! `[package.metadata.spotbot] plugin = "strategy"` (copied into `plugins/`) or
//! `plugin = "test-guest"` (copied into `target/test-guests/` for the sandbox tests).
//!
//! `cargo xtask plugins` builds all of them; `cargo xtask plugins -p <name>` only the named
//! ones (package name, or the same with `_` for `-`, e.g. `my-strategy` or `my_strategy`).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};

use crate::Cargo;

const TARGET: &str = "wasm32-wasip2";

#[derive(Debug, Clone)]
struct PluginCrate {
    package: String,
    kind: String,
}

/// `cargo xtask plugins [-p <name>]...`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut only = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-p" | "--package" => {
                only.push(args.next().context("-p needs a plugin package name")?.clone());
            }
            other => {
                bail!("unknown argument {other:?} (usage: cargo xtask plugins [-p <name>]...)")
            }
        }
    }
    build(&Cargo::workspace(), &only).map(|_| ())
}

/// Builds every plugin crate of the workspace.
pub fn build_all() -> anyhow::Result<()> {
    build(&Cargo::workspace(), &[]).map(|_| ())
}

/// Builds the plugin crates named in `only` (all of them when empty) and copies each
/// component to its destination; returns the files written.
pub fn build(cargo: &Cargo, only: &[String]) -> anyhow::Result<Vec<PathBuf>> {
    let crates = select(discover(cargo)?, only)?;
    if crates.is_empty() {
        println!("no plugin crates in the workspace yet");
        return Ok(Vec::new());
    }
    ensure_target()?;
    let target_dir = target_dir_of(cargo)?;
    let mut written = Vec::new();
    for plugin in &crates {
        cargo.run(&["build", "--release", "--target", TARGET, "--package", &plugin.package])?;
        let artifact = target_dir
            .join(TARGET)
            .join("release")
            .join(format!("{}.wasm", plugin.package.replace('-', "_")));
        let dest_dir = match plugin.kind.as_str() {
            "strategy" => cargo.root.join("plugins"),
            _ => cargo.root.join("target").join("test-guests"),
        };
        std::fs::create_dir_all(&dest_dir)?;
        let dest = dest_dir.join(artifact.file_name().context("artifact has a file name")?);
        // Write next to the destination and rename, so a running host's watcher never sees a
        // half-written plugin.
        let temp = dest.with_extension("wasm.tmp");
        std::fs::copy(&artifact, &temp)
            .with_context(|| format!("cannot copy {}", artifact.display()))?;
        std::fs::rename(&temp, &dest)?;
        println!("plugin {} -> {}", plugin.package, dest.display());
        written.push(dest);
    }
    Ok(written)
}

/// Whether `arg` names `package` (`my_strategy` names `my-strategy`).
fn names(package: &str, arg: &str) -> bool {
    package.replace('-', "_") == arg.replace('-', "_")
}

/// The crates `only` names, in its order; all of them when it is empty.
fn select(crates: Vec<PluginCrate>, only: &[String]) -> anyhow::Result<Vec<PluginCrate>> {
    if only.is_empty() {
        return Ok(crates);
    }
    let mut selected: Vec<PluginCrate> = Vec::new();
    for arg in only {
        let Some(found) = crates.iter().find(|c| names(&c.package, arg)) else {
            let known: Vec<&str> = crates.iter().map(|c| c.package.as_str()).collect();
            bail!("no plugin package {arg:?} in the workspace (plugins: {})", known.join(", "));
        };
        if !selected.iter().any(|c| c.package == found.package) {
            selected.push(found.clone());
        }
    }
    Ok(selected)
}

/// Installs the wasm32-wasip2 target with rustup when it is missing.
fn ensure_target() -> anyhow::Result<()> {
    let output = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .context("rustup is needed to install the wasm32-wasip2 target")?;
    if String::from_utf8_lossy(&output.stdout).lines().any(|line| line.trim() == TARGET) {
        return Ok(());
    }
    println!("$ rustup target add {TARGET}");
    let status = Command::new("rustup").args(["target", "add", TARGET]).status()?;
    if !status.success() {
        bail!("rustup target add {TARGET} failed");
    }
    Ok(())
}

fn discover(cargo: &Cargo) -> anyhow::Result<Vec<PluginCrate>> {
    let metadata = cargo.metadata()?;
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    Ok(packages
        .iter()
        .filter_map(|package| {
            let kind = package["metadata"]["spotbot"]["plugin"].as_str()?;
            Some(PluginCrate {
                package: package["name"].as_str()?.to_string(),
                kind: kind.to_string(),
            })
        })
        .collect())
}

/// The workspace's target directory.
pub fn target_dir() -> anyhow::Result<PathBuf> {
    target_dir_of(&Cargo::workspace())
}

/// The target directory cargo uses for `cargo`'s workspace.
pub fn target_dir_of(cargo: &Cargo) -> anyhow::Result<PathBuf> {
    let metadata = cargo.metadata()?;
    let dir =
        metadata["target_directory"].as_str().context("cargo metadata has a target directory")?;
    Ok(PathBuf::from(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crates() -> Vec<PluginCrate> {
        ["mr-combined", "pump-momentum", "guest-loop"]
            .iter()
            .map(|p| PluginCrate { package: p.to_string(), kind: "strategy".into() })
            .collect()
    }

    #[test]
    fn dash_p_selects_by_package_name_with_either_separator() {
        let packages = |only: &[&str]| {
            let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
            select(crates(), &only).map(|c| c.into_iter().map(|c| c.package).collect::<Vec<_>>())
        };
        assert_eq!(packages(&[]).unwrap().len(), 3);
        assert_eq!(packages(&["pump-momentum"]).unwrap(), ["pump-momentum"]);
        assert_eq!(packages(&["mr_combined", "mr-combined"]).unwrap(), ["mr-combined"]);
        let e = packages(&["nope"]).unwrap_err().to_string();
        assert!(e.contains("no plugin package \"nope\"") && e.contains("mr-combined"), "{e}");
    }
}
