//! Sandbox test guest: `scan` keeps allocating (and touching) 1 MiB blocks until the host's
//! memory cap refuses to grow the linear memory.
use spotbot_sdk::*;

pub struct Guest;

impl Strategy for Guest {
    fn describe() -> Manifest {
        Manifest::new("guest_memory", env!("CARGO_PKG_VERSION"), PluginKind::Strategy, "hogs")
    }

    fn scan(_request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let mut blocks: Vec<Vec<u8>> = Vec::new();
        loop {
            blocks.push(vec![0xA5; 1 << 20]);
            std::hint::black_box(&blocks);
        }
    }
}

export_strategy!(Guest);
