//! Sandbox test guest: `scan` tries every ambient capability a program could use — read a
//! file, list a directory, read an environment variable, open a TCP socket, read the clocks,
//! draw randomness — and reports what it got. Config: `{"file": path, "env": name,
//! "addr": "host:port"}`.
//!
//! If anything was granted the scan *succeeds* with one result whose reason starts with
//! `ESCAPED`; when everything was denied it fails with `denied: ...` describing each attempt.
use spotbot_sdk::*;
use std::hash::BuildHasher;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

pub struct Guest;

#[derive(serde::Deserialize)]
struct Config {
    file: String,
    env: String,
    addr: String,
}

impl Strategy for Guest {
    fn describe() -> Manifest {
        let mut m = Manifest::new(
            "guest_capabilities",
            env!("CARGO_PKG_VERSION"),
            PluginKind::Scanner,
            "probes",
        );
        // The host accepts only the keys a plugin declares in its default config.
        m.default_config = r#"{"file":"","env":"","addr":""}"#.to_string();
        m
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let config: Config = parse_config(&request.config)?;
        let mut escaped = Vec::new();
        let mut report = Vec::new();

        match std::fs::read_to_string(&config.file) {
            Ok(text) => escaped.push(format!("read file {}: {text}", config.file)),
            Err(e) => report.push(format!("file: {e}")),
        }
        match std::fs::read_dir("/").or_else(|_| std::fs::read_dir(".")) {
            Ok(_) => escaped.push("listed a directory".to_string()),
            Err(e) => report.push(format!("dir: {e}")),
        }
        match std::env::var(&config.env) {
            Ok(v) => escaped.push(format!("env {}={v}", config.env)),
            Err(e) => report.push(format!("env: {e}")),
        }
        let vars = std::env::vars().count();
        if vars > 0 {
            escaped.push(format!("{vars} environment variables visible"));
        }
        match std::net::TcpStream::connect(&config.addr) {
            Ok(_) => escaped.push(format!("connected to {}", config.addr)),
            Err(e) => report.push(format!("socket: {e}")),
        }
        println!("stdout is not the host's");
        eprintln!("stderr is captured, bounded");

        let wall_ms =
            SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
        let started = Instant::now();
        std::hint::black_box((0..10_000u64).sum::<u64>());
        let elapsed_ns = started.elapsed().as_nanos();
        let hash = std::collections::hash_map::RandomState::new().hash_one(42u64);
        report.push(format!("clock_ms={wall_ms} elapsed_ns={elapsed_ns} hash={hash}"));

        if escaped.is_empty() {
            Err(ScanError::Failed(format!("denied: {}", report.join("; "))))
        } else {
            let mut r = ScanResult::new("ESCAPE", "guest_capabilities", Direction::Skip, 0.0);
            r.reason = Some(format!("ESCAPED: {}", escaped.join("; ")));
            Ok(ScanResponse { results: vec![r], alerts: Vec::new(), state_updates: Vec::new() })
        }
    }
}

export_strategy!(Guest);
