//! `cargo xtask bench-http`: the API throughput benchmark with `/metrics` recording on
//! (host/benches/http_throughput.rs, release build) — wrk against the service's
//! `GET /api/health` and a bare axum hello-world server in the same run. Installs Debian's
//! wrk first when it is missing.

use std::path::Path;

const BINARY: &str = "/usr/bin/wrk";
const HOW: &str = "install Debian's wrk (`sudo apt-get install wrk`)";

pub fn run() -> anyhow::Result<()> {
    if !Path::new(BINARY).is_file() {
        crate::apt::install("wrk", "the HTTP throughput benchmark", HOW)?;
    }
    crate::cargo(&["bench", "-p", "spotbot", "--bench", "http_throughput"])
}
