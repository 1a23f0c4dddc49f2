//! The example strategy's Wasm component for host tests and benches: taken from
//! `target/test-guests/` or `plugins/` (what `cargo xtask plugins` builds), else built once
//! with `cargo build --release --target wasm32-wasip2 -p strategy-template`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub const FILE: &str = "strategy_template.wasm";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The path of the template's `.wasm`, building it when no built copy exists.
pub fn template_path() -> PathBuf {
    let candidates =
        [root().join("target/test-guests").join(FILE), root().join("plugins").join(FILE)];
    if let Some(found) = candidates.iter().find(|p| p.exists()) {
        return found.clone();
    }
    let target_dir = root().join("target").join("guest-build");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--target", "wasm32-wasip2", "-p", "strategy-template"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .current_dir(root())
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the example strategy failed");
    target_dir.join("wasm32-wasip2/release").join(FILE)
}

/// A sandbox test guest from `target/test-guests/` (built by `cargo xtask plugins`), if there.
pub fn test_guest(file: &str) -> Option<Vec<u8>> {
    std::fs::read(root().join("target/test-guests").join(file)).ok()
}

pub fn template_wasm() -> Vec<u8> {
    std::fs::read(template_path()).unwrap()
}
