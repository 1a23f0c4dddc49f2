//! The simulator's one source of "now". Every read of the time goes through a [`Clock`], so tests
//! (and the admin API's "advance time") move the market, the matching engine and the timestamp
//! check together.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Epoch milliseconds, as the exchange speaks them.
pub type Millis = i64;

pub trait Clock: Send + Sync + 'static {
    /// Current time in epoch milliseconds.
    fn now_ms(&self) -> Millis;
    /// Moves the clock forward (the admin API's `POST /sim/time/advance`).
    fn advance(&self, ms: Millis);
}

/// Wall clock plus an offset that only ever grows through [`Clock::advance`].
#[derive(Debug, Default)]
pub struct SystemClock {
    offset: AtomicI64,
}

impl SystemClock {
    pub fn new() -> Self {
        Self::default()
    }
}

fn wall_ms() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        wall_ms().saturating_add(self.offset.load(Ordering::Relaxed))
    }
    fn advance(&self, ms: Millis) {
        self.offset.fetch_add(ms.max(0), Ordering::Relaxed);
    }
}

/// A clock that stands still until told to move: deterministic tests.
#[derive(Debug)]
pub struct ManualClock {
    now: AtomicI64,
}

impl ManualClock {
    pub fn new(start_ms: Millis) -> Self {
        Self { now: AtomicI64::new(start_ms) }
    }
    /// Starts at the current wall-clock time (so a real client's timestamps are accepted).
    pub fn starting_now() -> Self {
        Self::new(wall_ms())
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> Millis {
        self.now.load(Ordering::Relaxed)
    }
    fn advance(&self, ms: Millis) {
        self.now.fetch_add(ms.max(0), Ordering::Relaxed);
    }
}
