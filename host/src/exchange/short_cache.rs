//! A short-lived cache for exchange reads that many callers repeat (24 h tickers, all prices):
//! an answer is reused for a few seconds, and concurrent identical requests wait for one fetch
//! instead of each spending request weight.
//!
//! Keys come from callers (a scan's symbol list), so the map is bounded: a new key first drops
//! every aged answer nobody is using, and past [`MAX_KEYS`] its answer is fetched but not kept.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use crate::clock::SharedClock;

type Slot<V> = Arc<tokio::sync::Mutex<Option<(i64, V)>>>;

/// Keys kept at most; repeated reads share a handful (all tickers, the watchlist's).
pub const MAX_KEYS: usize = 64;

/// Answers per key, each trusted for `ttl_ms` on the service's clock.
pub struct ShortCache<K, V> {
    ttl_ms: i64,
    clock: SharedClock,
    slots: Mutex<HashMap<K, Slot<V>>>,
}

impl<K: Eq + Hash + Clone, V: Clone> ShortCache<K, V> {
    pub fn new(ttl_ms: i64, clock: SharedClock) -> Self {
        Self { ttl_ms, clock, slots: Mutex::new(HashMap::new()) }
    }

    /// The cached answer for `key` while fresh; otherwise `fetch`'s, which is kept on success.
    /// A caller arriving while another fetches the same key waits for that fetch.
    pub async fn get_or_fetch<E, F>(&self, key: K, fetch: F) -> Result<V, E>
    where
        F: Future<Output = Result<V, E>>,
    {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            match slots.get(&key) {
                Some(slot) => slot.clone(),
                None => {
                    let now = self.clock.now_ms();
                    let fresh = |slot: &Slot<V>| {
                        slot.try_lock().is_ok_and(|held| {
                            held.as_ref().is_some_and(|(at, _)| now - at < self.ttl_ms)
                        })
                    };
                    // The map holds one reference; another is a caller using the slot.
                    slots.retain(|_, slot| Arc::strong_count(slot) > 1 || fresh(slot));
                    let slot = Slot::default();
                    if slots.len() < MAX_KEYS {
                        slots.insert(key, slot.clone());
                    }
                    slot
                }
            }
        };
        let mut held = slot.lock().await;
        let now = self.clock.now_ms();
        if let Some((at, value)) = held.as_ref()
            && now - at < self.ttl_ms
        {
            return Ok(value.clone());
        }
        let value = fetch.await?;
        *held = Some((self.clock.now_ms(), value.clone()));
        Ok(value)
    }

    #[cfg(test)]
    fn keys(&self) -> usize {
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::TestClock;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn one_fetch_serves_concurrent_callers_until_it_ages() {
        let clock = TestClock::new(chrono::DateTime::UNIX_EPOCH);
        let cache: Arc<ShortCache<&str, u32>> =
            Arc::new(ShortCache::new(5_000, Arc::new(clock.clone())));
        let fetches = Arc::new(AtomicU32::new(0));
        let fetch = |fetches: Arc<AtomicU32>| async move {
            tokio::task::yield_now().await;
            Ok::<_, ()>(fetches.fetch_add(1, Ordering::SeqCst) + 1)
        };
        let (a, b) = tokio::join!(
            cache.get_or_fetch("all", fetch(fetches.clone())),
            cache.get_or_fetch("all", fetch(fetches.clone()))
        );
        assert_eq!((a, b), (Ok(1), Ok(1)), "the second caller waited for the first fetch");
        clock.advance(chrono::Duration::milliseconds(4_999));
        assert_eq!(cache.get_or_fetch("all", fetch(fetches.clone())).await, Ok(1));
        clock.advance(chrono::Duration::milliseconds(1));
        assert_eq!(cache.get_or_fetch("all", fetch(fetches.clone())).await, Ok(2), "aged out");
        assert_eq!(cache.get_or_fetch("one", fetch(fetches.clone())).await, Ok(3), "per key");
    }

    #[tokio::test]
    async fn callers_cannot_grow_it_past_its_bound() {
        let clock = TestClock::new(chrono::DateTime::UNIX_EPOCH);
        let cache: ShortCache<u32, u32> = ShortCache::new(5_000, Arc::new(clock.clone()));
        for key in 0..1000 {
            assert_eq!(cache.get_or_fetch(key, async { Ok::<_, ()>(key) }).await, Ok(key));
        }
        assert_eq!(cache.keys(), MAX_KEYS, "answers past the bound are fetched, not kept");
        assert_eq!(cache.get_or_fetch(0, async { Ok::<_, ()>(7) }).await, Ok(0), "kept ones serve");
        clock.advance(chrono::Duration::milliseconds(5_000));
        assert_eq!(cache.get_or_fetch(5000, async { Ok::<_, ()>(1) }).await, Ok(1));
        assert_eq!(cache.keys(), 1, "a new key drops every aged answer");
    }
}
