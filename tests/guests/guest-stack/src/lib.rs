//! Sandbox test guest: `scan` recurses without end until the Wasm call stack overflows.
//!
//! The frames are kept small and free of address-taken locals so they live on the Wasm stack
//! (bounded by the host's `max_wasm_stack`), not on Rust's shadow stack in linear memory; the
//! `rotate_left ^` keeps LLVM from turning the recursion into a loop.
use spotbot_sdk::*;

pub struct Guest;

#[inline(never)]
fn deeper(depth: u64) -> u64 {
    if depth == u64::MAX {
        return depth;
    }
    deeper(depth + 1).rotate_left(3) ^ depth
}

impl Strategy for Guest {
    fn describe() -> Manifest {
        Manifest::new("guest_stack", env!("CARGO_PKG_VERSION"), PluginKind::Strategy, "recurses")
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let n = deeper(request.now_ms as u64);
        Err(ScanError::Failed(format!("recursion ended at {n}")))
    }
}

export_strategy!(Guest);
