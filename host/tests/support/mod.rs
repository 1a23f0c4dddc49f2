//! Shared by the tests that run the real `spotbot` binary.

use std::io::{BufRead, BufReader};
use std::process::Child;

/// Reads the address `spotbot serve` announces on its first stdout line
/// ("spotbot API on http://127.0.0.1:PORT/api ..."), so tests can bind port 0.
pub fn announced_addr(child: &mut Child) -> String {
    let mut first_line = String::new();
    let stdout = child.stdout.take().expect("spotbot started with a piped stdout");
    BufReader::new(stdout).read_line(&mut first_line).expect("spotbot prints its address");
    first_line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {first_line:?}"))
        .to_string()
}
