//! Builds plugin crates for wasm32-wasip2. A workspace member declares itself a plugin with
//! `[package.metadata.spotbot] plugin = "strategy"` (copied into `plugins/`) or
//! `plugin = "test-guest"` (copied into `target/test-guests/` for the sandbox tests).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};

use crate::{cargo, workspace_root};

const TARGET: &str = "wasm32-wasip2";

struct PluginCrate {
    package: String,
    kind: String,
}

pub fn build_all() -> anyhow::Result<()> {
    let crates = discover()?;
    if crates.is_empty() {
        println!("no plugin crates in the workspace yet");
        return Ok(());
    }
    ensure_target()?;
    let root = workspace_root();
    for plugin in &crates {
        cargo(&["build", "--release", "--target", TARGET, "--package", &plugin.package])?;
        let artifact = target_dir()?
            .join(TARGET)
            .join("release")
            .join(format!("{}.wasm", plugin.package.replace('-', "_")));
        let dest_dir = match plugin.kind.as_str() {
            "strategy" => root.join("plugins"),
            _ => root.join("target").join("test-guests"),
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
    }
    Ok(())
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

fn metadata() -> anyhow::Result<serde_json::Value> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(workspace_root())
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(serde_json::from_slice(&output.stdout)?)
}

fn discover() -> anyhow::Result<Vec<PluginCrate>> {
    let metadata = metadata()?;
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

pub fn target_dir() -> anyhow::Result<PathBuf> {
    let metadata = metadata()?;
    let dir =
        metadata["target_directory"].as_str().context("cargo metadata has a target directory")?;
    Ok(PathBuf::from(dir))
}
