//! `cargo xtask vendor-dashboard`: fetches the dashboard's chart library from the npm registry
//! and writes the files the page embeds into `host/src/dashboard/assets/vendor/`.
//!
//! The page must work offline, so the library is committed, not loaded from a CDN. This
//! command is how it got there and how it is updated: the version and the SHA-256 of every
//! file are pinned below and in `VENDOR.md`, and a host test checks the embedded files
//! against `VENDOR.md`. To update, change `VERSION`, run the command, and copy the printed
//! digests into `FILES` and `VENDOR.md`.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

use crate::workspace_root;

const PACKAGE: &str = "uplot";
const VERSION: &str = "1.6.32";
/// (file in the npm package, file written, SHA-256).
const FILES: &[(&str, &str, &str)] = &[
    (
        "package/dist/uPlot.iife.min.js",
        "uPlot.iife.min.js",
        "19c8d4c6ad88929a79f4ae49d6f7161566dfd0ba3d15cc495e974f787eb78f1f",
    ),
    (
        "package/dist/uPlot.min.css",
        "uPlot.min.css",
        "df630c6a8d6f8eeaff264b50f73ce5b114f646ffd9a0bb74f049b0a00135fa04",
    ),
    (
        "package/LICENSE",
        "LICENSE",
        "8f989229699b4fe2f1a0432d0e9edc338a8a911e250e2d1b01ecd770a5f5b1bd",
    ),
];

pub fn run() -> anyhow::Result<()> {
    let work = std::env::temp_dir().join(format!("spotbot-vendor-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let result = fetch_into(&work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn fetch_into(work: &Path) -> anyhow::Result<()> {
    let spec = format!("{PACKAGE}@{VERSION}");
    let status = Command::new("npm")
        .args(["pack", &spec, "--silent", "--pack-destination"])
        .arg(work)
        .status()
        .context("npm is needed to fetch the chart library (Debian: apt-get install npm)")?;
    if !status.success() {
        bail!("npm pack {spec} failed ({status})");
    }
    let tarball = work.join(format!("{PACKAGE}-{VERSION}.tgz"));
    let status = Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(work).status()?;
    if !status.success() {
        bail!("tar could not unpack {}", tarball.display());
    }
    let dest = workspace_root().join("host/src/dashboard/assets/vendor");
    std::fs::create_dir_all(&dest)?;
    let mut changed = false;
    for (from, to, pinned) in FILES {
        let bytes = std::fs::read(work.join(from)).with_context(|| format!("{spec}: {from}"))?;
        let digest = sha256_hex(&bytes)?;
        if digest != *pinned {
            changed = true;
            eprintln!("{to}: SHA-256 {digest} differs from the pinned {pinned}");
        }
        std::fs::write(dest.join(to), &bytes)?;
        println!("{to}  {digest}");
    }
    if changed {
        bail!("{spec} is not the pinned content: review it, then update FILES and VENDOR.md");
    }
    println!("{spec} written to {}", dest.display());
    Ok(())
}

/// SHA-256 through `sha256sum` (coreutils), so the xtask needs no hashing crate.
fn sha256_hex(bytes: &[u8]) -> anyhow::Result<String> {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("sha256sum (coreutils) is needed")?;
    child.stdin.take().context("stdin")?.write_all(bytes)?;
    let out = child.wait_with_output()?;
    let text = String::from_utf8(out.stdout)?;
    Ok(text.split_whitespace().next().unwrap_or_default().to_string())
}
