//! Sandbox test guest: `describe` traps, so the host must refuse to load the file.
use spotbot_sdk::*;

pub struct Guest;

impl Strategy for Guest {
    fn describe() -> Manifest {
        panic!("guest_describe_trap cannot describe itself");
    }

    fn scan(_request: ScanRequest) -> Result<ScanResponse, ScanError> {
        Err(ScanError::Failed("unreachable: never loaded".to_string()))
    }
}

export_strategy!(Guest);
