//! Makes sure the dashboard's browser test has a Chromium: Debian's `chromium` package,
//! installed with apt-get when it is missing (as root, or through password-less sudo).
//! Otherwise `cargo xtask test` stops and says how to get one, rather than letting the test
//! fail later with less context.

use std::path::Path;

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
    crate::apt::install("chromium", "the dashboard's browser test", HOW)
}
