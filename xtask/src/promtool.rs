//! Makes sure the metrics test can validate the exposition with `promtool check metrics`:
//! Debian's `prometheus` package ships it, installed with apt-get when it is missing.

use std::path::Path;

const BINARY: &str = "/usr/bin/promtool";
const HOW: &str = "install Debian's prometheus (`sudo apt-get install prometheus`), which \
                   ships promtool";

pub fn ensure() -> anyhow::Result<()> {
    if Path::new(BINARY).is_file() {
        return Ok(());
    }
    crate::apt::install("prometheus", "the metrics test's promtool check", HOW)
}
