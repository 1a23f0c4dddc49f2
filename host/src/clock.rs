//! The one source of "now".
//!
//! Every time rule of the service (5-minute signal expiry, pending-entry TTL, 24 h license
//! revalidation, 72 h grace, daily jobs) reads the time through a [`Clock`], so tests drive
//! those rules with a [`TestClock`] instead of sleeping.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> DateTime<Utc>;

    /// Milliseconds since the Unix epoch, the unit the exchanges and the plugin contract use.
    fn now_ms(&self) -> i64 {
        self.now().timestamp_millis()
    }
}

/// The clock shared by every area of the host.
pub type SharedClock = Arc<dyn Clock>;

/// The wall clock used in production.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when a test moves it.
#[derive(Debug, Clone)]
pub struct TestClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl TestClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        Self { now: Arc::new(Mutex::new(start)) }
    }

    /// Moves the clock forward (or backward, with a negative duration).
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *now += by;
    }

    pub fn set(&self, to: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = to;
    }
}

impl Clock for TestClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_clock_moves_only_when_told() {
        let start = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap().to_utc();
        let clock = TestClock::new(start);
        assert_eq!(clock.now(), start);
        clock.advance(Duration::minutes(5));
        assert_eq!(clock.now_ms() - start.timestamp_millis(), 300_000);
        let shared: SharedClock = Arc::new(clock.clone());
        clock.advance(Duration::hours(1));
        assert_eq!(shared.now(), start + Duration::minutes(65));
    }
}
