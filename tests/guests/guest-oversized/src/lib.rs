//! Sandbox test guest: `scan` returns 16 results with a 512 KiB reason each (8 MiB in
//! total): within the memory cap, above the result-size cap.
use spotbot_sdk::*;

pub struct Guest;

impl Strategy for Guest {
    fn describe() -> Manifest {
        Manifest::new("guest_oversized", env!("CARGO_PKG_VERSION"), PluginKind::Strategy, "big")
    }

    fn scan(_request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let results = (0..16)
            .map(|i| {
                let mut r = ScanResult::new(
                    &format!("BIG{i}USDT"),
                    "guest_oversized",
                    Direction::Skip,
                    1.0,
                );
                r.reason = Some("x".repeat(512 * 1024));
                r
            })
            .collect();
        Ok(ScanResponse { results, alerts: Vec::new(), state_updates: Vec::new() })
    }
}

export_strategy!(Guest);
