//! Sandbox test guest: `scan` never returns. The host's per-call deadline must stop it.
use spotbot_sdk::*;

pub struct Guest;

impl Strategy for Guest {
    fn describe() -> Manifest {
        Manifest::new("guest_loop", env!("CARGO_PKG_VERSION"), PluginKind::Strategy, "loops")
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let mut n = request.now_ms as u64;
        loop {
            n = std::hint::black_box(n.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

export_strategy!(Guest);
