//! The in-memory news cache, aged by the service clock: a success is served for 10 minutes
//! (spec, Limits), a round where every source failed is repeated for 1 minute.
//!
//! Keeping a failure briefly means a dashboard polling an unreachable set of sources waits
//! for the source timeouts at most once a minute instead of on every call; it is never served
//! as headlines.

use chrono::{DateTime, Duration, Utc};

use super::{Headlines, NewsItem};

/// How long fetched headlines answer as `cached: true` (spec: news cache 10 minutes).
pub const FRESH_FOR: Duration = Duration::minutes(10);
/// How long an all-failed round answers again without fetching.
pub const FAILURE_KEPT_FOR: Duration = Duration::minutes(1);

#[derive(Debug, Default)]
pub struct Cache {
    last: Option<(Kept, DateTime<Utc>)>,
}

#[derive(Debug)]
enum Kept {
    Items(Vec<NewsItem>),
    Failure(String),
}

impl Cache {
    /// What is still valid at `now`: cached headlines, or the recent failure.
    pub fn lookup(&self, now: DateTime<Utc>) -> Option<Headlines> {
        let (kept, at) = self.last.as_ref()?;
        // A clock moved backwards makes the age negative: treat that entry as stale rather
        // than keeping it for longer than its lifetime.
        let age = now - *at;
        let within = |limit: Duration| age >= Duration::zero() && age < limit;
        match kept {
            Kept::Items(items) if within(FRESH_FOR) => {
                Some(Headlines::Cached { items: items.clone() })
            }
            Kept::Failure(error) if within(FAILURE_KEPT_FOR) => {
                Some(Headlines::Failed { error: error.clone() })
            }
            _ => None,
        }
    }

    /// Remembers the answer of a round finished at `now`.
    pub fn store(&mut self, answer: &Headlines, now: DateTime<Utc>) {
        let kept = match answer {
            Headlines::Fresh { items, .. } | Headlines::Cached { items } => {
                Kept::Items(items.clone())
            }
            Headlines::Failed { error } => Kept::Failure(error.clone()),
        };
        self.last = Some((kept, now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> NewsItem {
        NewsItem { title: "t".into(), url: "https://x.example/a".into(), source: "X".into() }
    }

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::UNIX_EPOCH + Duration::days(20_000) + Duration::minutes(minutes)
    }

    #[test]
    fn headlines_are_served_for_ten_minutes_then_stale() {
        let mut cache = Cache::default();
        assert_eq!(cache.lookup(at(0)), None);
        cache.store(&Headlines::Fresh { items: vec![item()], source: "u".into() }, at(0));
        let cached = Some(Headlines::Cached { items: vec![item()] });
        assert_eq!(cache.lookup(at(0)), cached);
        assert_eq!(cache.lookup(at(10) - Duration::seconds(1)), cached);
        assert_eq!(cache.lookup(at(10)), None);
        assert_eq!(cache.lookup(at(-1)), None, "a clock moved backwards refetches");
    }

    #[test]
    fn a_failure_is_repeated_for_one_minute_only() {
        let mut cache = Cache::default();
        cache.store(&Headlines::Failed { error: "all failed".into() }, at(0));
        let failed = Some(Headlines::Failed { error: "all failed".into() });
        assert_eq!(cache.lookup(at(0) + Duration::seconds(59)), failed);
        assert_eq!(cache.lookup(at(1)), None);
    }

    #[test]
    fn a_success_replaces_a_failure() {
        let mut cache = Cache::default();
        cache.store(&Headlines::Failed { error: "x".into() }, at(0));
        cache.store(&Headlines::Fresh { items: vec![item()], source: "u".into() }, at(0));
        assert_eq!(cache.lookup(at(5)), Some(Headlines::Cached { items: vec![item()] }));
    }
}
