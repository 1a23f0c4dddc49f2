//! Action nonces (wire reference §4.1): the exchange keeps a signer's 100 highest nonces and
//! refuses one it has seen or one below them, so every nonce is `max(now_ms, last + 1)` —
//! strictly increasing across threads, also when the clock stands still or steps back.
//!
//! Across restarts, a lease: before a nonce beyond the reserved mark is handed out, the mark
//! is moved [`LEASE_MS`] ahead and written down ([`NonceLease`], the host's store); at start
//! the client resumes above the written mark. Every nonce ever signed is at or below it, so
//! a restart within the same millisecond, or after the clock went back, cannot reuse one —
//! at the cost of one store write a minute of trading, not one per order.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How far ahead of the nonce being handed out the written mark is moved.
pub const LEASE_MS: u64 = 60_000;

/// Where the reserved mark is written (the host's store).
pub trait NonceLease: Send + Sync {
    /// Records that nonces up to `until` may have been used.
    fn reserve(&self, until: u64) -> Result<(), String>;
}

/// The written mark and where it goes.
struct Lease {
    store: Arc<dyn NonceLease>,
    until: u64,
}

#[derive(Default)]
pub struct Nonces {
    last: AtomicU64,
    lease: Mutex<Option<Lease>>,
}

impl std::fmt::Debug for Nonces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nonces").field("last", &self.last()).finish()
    }
}

impl Nonces {
    /// The next nonce at `now_ms`, after moving the lease when it would be passed.
    pub fn next(&self, now_ms: i64) -> u64 {
        let now = u64::try_from(now_ms).unwrap_or(0);
        let step = |last: u64| Some(now.max(last.saturating_add(1)));
        let previous = self.last.fetch_update(Ordering::SeqCst, Ordering::SeqCst, step);
        // `step` always answers Some, so both arms hold the previous value.
        let previous = previous.unwrap_or_else(|v| v);
        let nonce = now.max(previous.saturating_add(1));
        self.cover(nonce);
        nonce
    }

    /// Writes a new mark before `nonce` goes out when it is beyond the current one.
    fn cover(&self, nonce: u64) {
        let mut lease = self.lease.lock().unwrap_or_else(|e| e.into_inner());
        let Some(lease) = lease.as_mut().filter(|l| nonce > l.until) else {
            return;
        };
        let until = nonce.saturating_add(LEASE_MS);
        match lease.store.reserve(until) {
            Ok(()) => lease.until = until,
            // Signing goes on: the exchange still refuses a reused nonce, so the worst case
            // is one refused action after a restart with the clock set back.
            Err(e) => tracing::error!(error = %e, "exchange B: cannot write the nonce mark"),
        }
    }

    /// Resumes above `written` (the mark read at start) and writes later marks to `store`.
    pub fn lease(&self, store: Arc<dyn NonceLease>, written: u64) {
        self.resume_after(written);
        *self.lease.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(Lease { store, until: written });
    }

    /// Nonces from now on are above `last` (a high-water mark from before a restart).
    pub fn resume_after(&self, last: u64) {
        self.last.fetch_max(last, Ordering::SeqCst);
    }

    /// The highest nonce handed out (or resumed after).
    pub fn last(&self) -> u64 {
        self.last.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn nonces_increase_strictly_on_a_stalled_clock_and_follow_a_moving_one() {
        let n = Nonces::default();
        assert_eq!(n.next(1_700_000_000_000), 1_700_000_000_000);
        assert_eq!(n.next(1_700_000_000_000), 1_700_000_000_001);
        assert_eq!(n.next(1_699_999_999_000), 1_700_000_000_002, "the clock stepped back");
        assert_eq!(n.next(1_700_000_000_500), 1_700_000_000_500);
        assert_eq!(n.last(), 1_700_000_000_500);
    }

    #[test]
    fn nonces_resume_above_a_restored_mark() {
        let n = Nonces::default();
        n.resume_after(1_700_000_009_000);
        assert_eq!(n.next(1_700_000_000_000), 1_700_000_009_001);
        n.resume_after(5);
        assert_eq!(n.last(), 1_700_000_009_001, "an older mark changes nothing");
    }

    /// The marks written, in order.
    #[derive(Default)]
    struct Written(Mutex<Vec<u64>>);

    impl NonceLease for Written {
        fn reserve(&self, until: u64) -> Result<(), String> {
            self.0.lock().unwrap().push(until);
            Ok(())
        }
    }

    #[test]
    fn the_mark_is_written_ahead_once_a_minute_and_a_restart_resumes_above_it() {
        let written = Arc::new(Written::default());
        let n = Nonces::default();
        n.lease(written.clone(), 0);
        assert_eq!(n.next(1_000_000), 1_000_000);
        assert_eq!(*written.0.lock().unwrap(), [1_060_000], "written before the nonce is used");
        n.next(1_030_000);
        n.next(1_059_999);
        assert_eq!(written.0.lock().unwrap().len(), 1, "inside the lease: no write");
        n.next(1_060_001);
        assert_eq!(*written.0.lock().unwrap(), [1_060_000, 1_120_001]);

        // A restart with the clock set back five minutes: above every nonce signed before.
        let restarted = Nonces::default();
        restarted.lease(written.clone(), 1_120_001);
        assert_eq!(restarted.next(820_000), 1_120_002);
    }

    #[test]
    fn threads_never_share_a_nonce() {
        let n = Arc::new(Nonces::default());
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let n = n.clone();
                std::thread::spawn(move || (0..500).map(|_| n.next(42)).collect::<Vec<_>>())
            })
            .collect();
        let mut all: Vec<u64> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 2000);
    }
}
