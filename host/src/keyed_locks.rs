//! One async lock per key (a symbol): work on one symbol runs one at a time while other
//! symbols go on. Keys come from callers, so a lock is kept only while somebody holds it or
//! waits for it; every new request first drops the idle ones, and the map never holds more
//! locks than requests in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

type Gate = Arc<tokio::sync::Mutex<()>>;

#[derive(Default)]
pub struct KeyedLocks {
    gates: Mutex<HashMap<String, Gate>>,
}

impl KeyedLocks {
    /// Waits for `key`'s lock; it is released when the guard drops.
    pub async fn lock(&self, key: &str) -> OwnedMutexGuard<()> {
        let gate = {
            let mut gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
            // The map holds one reference; a holder's guard or a waiter holds another.
            gates.retain(|_, gate| Arc::strong_count(gate) > 1);
            gates.entry(key.to_string()).or_default().clone()
        };
        gate.lock_owned().await
    }

    /// Locks kept: those held or waited for, plus the last one taken.
    pub fn kept(&self) -> usize {
        self.gates.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn one_holder_per_key_and_only_held_locks_are_kept() {
        let locks = Arc::new(KeyedLocks::default());
        let held = locks.lock("ETHUSDT").await;
        let waiter = {
            let locks = locks.clone();
            tokio::spawn(async move { drop(locks.lock("ETHUSDT").await) })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished(), "a second holder of the key waits");
        drop(locks.lock("SOLUSDT").await);
        drop(held);
        waiter.await.expect("the waiter gets the lock once it is released");
        for i in 0..1000 {
            drop(locks.lock(&format!("SYM{i}")).await);
        }
        assert_eq!(locks.kept(), 1, "idle locks are dropped: a caller cannot grow the map");
    }
}
