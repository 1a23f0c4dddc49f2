//! Request weight per minute and IP bans, the way the exchanges meter a client: every request
//! adds its weight to the current minute; past the limit it is refused with a retry time. On
//! exchange A a client that keeps going past the limit more than ten times in a minute is
//! banned for 120 s; exchange B documents no ban ([`Limits::without_bans`]).

use crate::clock::Millis;

/// Refusals past the limit within one minute before the ban.
const HITS_BEFORE_BAN: u32 = 10;
const BAN_MS: Millis = 120_000;

#[derive(Debug, Default)]
pub struct Limits {
    minute: i64,
    used: u64,
    banned_until: Millis,
    limited_hits: u32,
    /// Past the limit is only ever "over the limit", never a ban.
    no_bans: bool,
}

/// What the meter says about one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Served; the minute's weight so far.
    Admitted { used: u64 },
    /// Over the minute's limit: retry after the minute ends.
    OverLimit { used: u64, retry_after_secs: u64 },
    /// The client is banned until `until`.
    Banned { until: Millis, retry_after_secs: u64 },
}

impl Limits {
    /// A meter that refuses past the limit but never bans.
    pub fn without_bans() -> Self {
        Self { no_bans: true, ..Self::default() }
    }

    /// Meters a request costing `weight` at `now` against `limit` per minute.
    pub fn admit(&mut self, now: Millis, weight: u64, limit: u64) -> Admission {
        if now < self.banned_until {
            let secs = ((self.banned_until - now) / 1000).max(1);
            return Admission::Banned { until: now + secs * 1000, retry_after_secs: secs as u64 };
        }
        let minute = now.div_euclid(60_000);
        if self.minute != minute {
            self.minute = minute;
            self.used = 0;
            self.limited_hits = 0;
        }
        self.used += weight;
        if self.used <= limit {
            return Admission::Admitted { used: self.used };
        }
        self.limited_hits += 1;
        if !self.no_bans && self.limited_hits > HITS_BEFORE_BAN {
            self.banned_until = now + BAN_MS;
            return Admission::Banned {
                until: self.banned_until,
                retry_after_secs: (BAN_MS / 1000) as u64,
            };
        }
        let retry = ((minute + 1) * 60_000 - now).max(1000) / 1000;
        Admission::OverLimit { used: self.used, retry_after_secs: retry as u64 }
    }

    /// Adds weight after the fact (a request that is free only when it succeeds, and failed).
    pub fn charge(&mut self, weight: u64) {
        self.used += weight;
    }

    /// Bans the client until `until` (an injected ban).
    pub fn ban_until(&mut self, until: Millis) {
        self.banned_until = until;
    }

    /// The current minute's weight so far.
    pub fn used(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minute_s_weight_resets_and_the_eleventh_refusal_bans() {
        let mut l = Limits::default();
        assert_eq!(l.admit(0, 5, 10), Admission::Admitted { used: 5 });
        assert_eq!(l.admit(1_000, 5, 10), Admission::Admitted { used: 10 });
        assert_eq!(l.admit(1_500, 1, 10), Admission::OverLimit { used: 11, retry_after_secs: 58 });
        for i in 0..9 {
            assert!(matches!(l.admit(2_000 + i, 1, 10), Admission::OverLimit { .. }));
        }
        assert_eq!(
            l.admit(3_000, 1, 10),
            Admission::Banned { until: 123_000, retry_after_secs: 120 }
        );
        // Still banned in the next minute; free again after the ban.
        assert_eq!(
            l.admit(61_000, 1, 10),
            Admission::Banned { until: 123_000, retry_after_secs: 62 }
        );
        assert_eq!(l.admit(123_000, 1, 10), Admission::Admitted { used: 1 });
    }

    #[test]
    fn a_meter_without_bans_only_refuses_until_the_minute_ends() {
        let mut l = Limits::without_bans();
        for i in 0..30 {
            assert!(matches!(l.admit(i, 11, 10), Admission::OverLimit { .. }));
        }
        assert_eq!(l.admit(60_000, 1, 10), Admission::Admitted { used: 1 });
    }
}
