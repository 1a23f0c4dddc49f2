//! Sandbox test guest: `scan` never returns. The host's per-call deadline must stop it.
//! Config `hang_on_canary`: when false (the default) it answers the host's canary request
//! (symbols `CANARY*`) at once and hangs only on real scans, so it loads and serves, the way a
//! plugin that hides its hang from the canary would; when true it hangs on the canary too,
//! and the host must refuse to load it.
use spotbot_sdk::*;

pub struct Guest;

impl Strategy for Guest {
    fn describe() -> Manifest {
        let mut m =
            Manifest::new("guest_loop", env!("CARGO_PKG_VERSION"), PluginKind::Strategy, "loops");
        m.default_config = r#"{"hang_on_canary":false}"#.into();
        m
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let config: serde_json::Value = parse_config(&request.config)?;
        let hang_on_canary = config["hang_on_canary"].as_bool().unwrap_or(false);
        let canary = request.symbols.iter().all(|s| s.symbol.starts_with("CANARY"));
        if canary && !hang_on_canary {
            return Ok(ScanResponse { results: vec![], alerts: vec![], state_updates: vec![] });
        }
        let mut n = request.now_ms as u64;
        loop {
            n = std::hint::black_box(n.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

export_strategy!(Guest);
