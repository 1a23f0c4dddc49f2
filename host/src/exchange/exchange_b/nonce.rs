//! Action nonces (wire reference §4.1): the exchange keeps a signer's 100 highest nonces and
//! refuses one it has seen or one below them, so every nonce is `max(now_ms, last + 1)` —
//! strictly increasing across threads, also when the clock stands still or steps back. The
//! host persists [`Nonces::last`] and hands it back after a restart
//! ([`Nonces::resume_after`]), so a restart within the same millisecond, or after the clock
//! went back, cannot reuse one.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Nonces {
    last: AtomicU64,
}

impl Nonces {
    /// The next nonce at `now_ms`.
    pub fn next(&self, now_ms: i64) -> u64 {
        let now = u64::try_from(now_ms).unwrap_or(0);
        let step = |last: u64| Some(now.max(last.saturating_add(1)));
        let previous = self.last.fetch_update(Ordering::SeqCst, Ordering::SeqCst, step);
        // `step` always answers Some, so both arms hold the previous value.
        let previous = previous.unwrap_or_else(|v| v);
        now.max(previous.saturating_add(1))
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
