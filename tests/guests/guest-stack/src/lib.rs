//! Sandbox test guest: `scan` recurses without end until the Wasm stack overflows.
use spotbot_sdk::*;

pub struct Guest;

/// Each frame keeps a 256-byte buffer alive so the recursion can not become a loop.
fn deeper(depth: u64) -> u64 {
    let buf = std::hint::black_box([depth as u8; 256]);
    if std::hint::black_box(depth) == u64::MAX {
        return buf[0] as u64;
    }
    deeper(depth + 1) + buf[1] as u64
}

impl Strategy for Guest {
    fn describe() -> Manifest {
        Manifest::new("guest_stack", env!("CARGO_PKG_VERSION"), PluginKind::Strategy, "recurses")
    }

    fn scan(_request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let n = deeper(0);
        Err(ScanError::Failed(format!("recursion ended at {n}")))
    }
}

export_strategy!(Guest);
