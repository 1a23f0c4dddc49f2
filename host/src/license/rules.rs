//! The license's time rules as pure functions of the clock's now: whether an activated license
//! is active (its end date, the 72 h offline grace), when it is validated again (every 24 h,
//! retried every 15 minutes after a failure), and when a failed validation is worth telling
//! the caller about. [`super::License`] keeps the state and does the I/O; these decide.

use chrono::{DateTime, Duration, Utc};

/// A successful validation older than this is renewed.
pub const REVALIDATE_EVERY: Duration = Duration::hours(24);
/// While the license server cannot be reached, the license stays active this long after the
/// last successful validation.
pub const OFFLINE_GRACE: Duration = Duration::hours(72);
/// Spacing of attempts after a failed one (server unreachable, answer refused).
pub const RETRY_EVERY: Duration = Duration::minutes(15);

/// Where an activated license stands now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Trading may go on; `grace_end` is when it stops without a successful validation.
    Active { grace_end: DateTime<Utc> },
    /// Its end date passed.
    Expired { at: DateTime<Utc> },
    /// No successful validation for [`OFFLINE_GRACE`]: `since` is when the grace ended.
    GraceEnded { since: DateTime<Utc> },
}

/// The standing of a license that ends at `expires_at` (never: `None`) and was last
/// validated at `last_ok`. An end date wins over the grace: an expired license is expired
/// whatever the server says.
pub fn standing(
    expires_at: Option<DateTime<Utc>>,
    last_ok: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Standing {
    let grace_end = last_ok + OFFLINE_GRACE;
    match expires_at {
        Some(at) if now >= at => Standing::Expired { at },
        _ if now >= grace_end => Standing::GraceEnded { since: grace_end },
        _ => Standing::Active { grace_end },
    }
}

/// Whether a validation is due now: [`RETRY_EVERY`] after the last attempt at the earliest,
/// and then when the last success (`None`: none yet, a key waiting to be activated) is
/// [`REVALIDATE_EVERY`] old or `other_key_waits` (a new key replaces the active one).
pub fn validation_due(
    last_ok: Option<DateTime<Utc>>,
    last_attempt: Option<DateTime<Utc>>,
    other_key_waits: bool,
    now: DateTime<Utc>,
) -> bool {
    let spaced = last_attempt.is_none_or(|t| now - t >= RETRY_EVERY);
    let stale = last_ok.is_none_or(|ok| now - ok >= REVALIDATE_EVERY);
    spaced && (stale || other_key_waits)
}

/// Whether the status warns that validations fail: the last success is older than
/// [`REVALIDATE_EVERY`] and the last attempt failed (a single failure inside the day is not
/// news: the next attempt comes in 15 minutes).
pub fn warns_unreachable(
    last_ok: DateTime<Utc>,
    last_attempt_failed: bool,
    now: DateTime<Utc>,
) -> bool {
    last_attempt_failed && now >= last_ok + REVALIDATE_EVERY
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(hours: i64) -> DateTime<Utc> {
        DateTime::UNIX_EPOCH + Duration::hours(hours)
    }

    #[test]
    fn active_until_the_end_date_or_72_hours_without_a_validation() {
        let ok = at(100);
        assert_eq!(standing(None, ok, at(171)), Standing::Active { grace_end: at(172) });
        assert_eq!(standing(None, ok, at(172)), Standing::GraceEnded { since: at(172) });
        assert_eq!(standing(Some(at(150)), ok, at(149)), Standing::Active { grace_end: at(172) });
        assert_eq!(standing(Some(at(150)), ok, at(150)), Standing::Expired { at: at(150) });
        assert_eq!(standing(Some(at(150)), ok, at(200)), Standing::Expired { at: at(150) });
    }

    #[test]
    fn validated_every_24_hours_and_retried_every_15_minutes() {
        let ok = Some(at(100));
        assert!(!validation_due(ok, None, false, at(123)));
        assert!(validation_due(ok, None, false, at(124)));
        let failed = Some(at(124));
        let minute = |m: i64| at(124) + Duration::minutes(m);
        assert!(!validation_due(ok, failed, false, minute(14)), "retries are spaced");
        assert!(validation_due(ok, failed, false, minute(15)));
        assert!(validation_due(ok, None, true, at(101)), "a new key waits: now");
        assert!(!validation_due(ok, Some(at(101)), true, at(101)), "but spaced too");
        assert!(validation_due(None, None, false, at(0)), "a key never validated");
    }

    #[test]
    fn failures_are_news_only_once_the_day_has_passed() {
        let ok = at(100);
        assert!(!warns_unreachable(ok, true, at(123)));
        assert!(warns_unreachable(ok, true, at(124)));
        assert!(!warns_unreachable(ok, false, at(130)));
    }
}
