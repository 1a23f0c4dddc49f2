//! Installs a Debian package a project command needs (Chromium for the dashboard's browser
//! test, npm for the OpenClaw check) with apt-get, as root or through password-less sudo, so
//! `cargo xtask test` sets a fresh machine up by itself.

use std::process::Command;

use anyhow::bail;

/// Installs `package`, updating the package lists once when the first try fails (a fresh
/// machine may have none yet). `how` tells the reader what to do when this user cannot.
pub fn install(package: &str, why: &str, how: &str) -> anyhow::Result<()> {
    let Some(sudo) = privilege() else {
        bail!("{why} needs {package} and this user cannot install it: {how}");
    };
    println!("installing Debian's {package} for {why}");
    let args = ["install", "-y", "--no-install-recommends", package];
    if !apt(sudo, &args)? {
        apt(sudo, &["update"])?;
        if !apt(sudo, &args)? {
            bail!("apt-get could not install {package}: {how}");
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
