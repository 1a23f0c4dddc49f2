//! Makes sure the dashboard's browser test has a Chromium: Debian's `chromium` package,
//! installed with apt-get when it is missing (as root, or through password-less sudo).
//! Otherwise `cargo xtask test` stops and says how to get one, rather than letting the test
//! fail later with less context.

use std::path::Path;
use std::process::Command;

use anyhow::bail;

const BINARIES: &[&str] = &["/usr/bin/chromium", "/usr/bin/chromium-browser"];
const HOW: &str = "install Debian's chromium (`sudo apt-get install chromium`) or set \
                   SPOTBOT_CHROMIUM to a Chromium or Chrome binary";

pub fn ensure() -> anyhow::Result<()> {
    if let Some(given) = std::env::var_os("SPOTBOT_CHROMIUM") {
        if Path::new(&given).is_file() {
            return Ok(());
        }
        bail!("SPOTBOT_CHROMIUM={} is not a file: {HOW}", Path::new(&given).display());
    }
    if BINARIES.iter().any(|b| Path::new(b).is_file()) {
        return Ok(());
    }
    let Some(sudo) = privilege() else {
        bail!("the dashboard's browser test needs Chromium and this user cannot install it: {HOW}");
    };
    println!("installing Debian's chromium for the dashboard's browser test");
    // A fresh machine may have no package lists yet: update once when the first try fails.
    if !apt(sudo, &["install", "-y", "--no-install-recommends", "chromium"])? {
        apt(sudo, &["update"])?;
        if !apt(sudo, &["install", "-y", "--no-install-recommends", "chromium"])? {
            bail!("apt-get could not install chromium: {HOW}");
        }
    }
    Ok(())
}

/// `Some(false)` as root, `Some(true)` with password-less sudo, `None` otherwise.
fn privilege() -> Option<bool> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() == "0" {
        return Some(false);
    }
    let sudo = Command::new("sudo").args(["-n", "true"]).status().ok()?;
    sudo.success().then_some(true)
}

fn apt(sudo: bool, args: &[&str]) -> anyhow::Result<bool> {
    let mut command = if sudo { Command::new("sudo") } else { Command::new("apt-get") };
    if sudo {
        command.args(["-n", "apt-get"]);
    }
    println!("$ {}apt-get {}", if sudo { "sudo " } else { "" }, args.join(" "));
    let status = command.args(args).env("DEBIAN_FRONTEND", "noninteractive").status()?;
    Ok(status.success())
}
