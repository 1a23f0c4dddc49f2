//! Sandbox test guest: `scan` panics (a trap for the host).
use spotbot_sdk::*;

pub struct Guest;

impl Strategy for Guest {
    fn describe() -> Manifest {
        Manifest::new("guest_panic", env!("CARGO_PKG_VERSION"), PluginKind::Strategy, "panics")
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        panic!("guest_panic gave up on purpose at {}", request.now_ms);
    }
}

export_strategy!(Guest);
