//! When a job is due: a 5-field cron expression read in the `[market] timezone`.
//!
//! Every job, the "every minute" ones included, is a cron expression, so all runs sit on
//! wall-clock boundaries (08:01:00, 08:05:00, 21:00:00 local) and the next run is a pure
//! function of "now": nothing drifts, and a test clock moved by one minute makes exactly the
//! jobs of that minute due.

use std::str::FromStr as _;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::Cron;

/// A parsed cron expression, the zone it is read in, and a sentence for people.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
    expression: &'static str,
    human: &'static str,
    tz: Tz,
}

impl Schedule {
    /// `expression` has 5 fields (minute hour day-of-month month day-of-week). The job table
    /// is fixed in the code, so a bad expression is a programming error caught by the tests.
    pub fn new(expression: &'static str, human: &'static str, tz: Tz) -> Self {
        let cron = Cron::from_str(expression)
            .unwrap_or_else(|err| panic!("bad cron expression {expression:?}: {err}"));
        Self { cron, expression, human, tz }
    }

    /// The first run strictly after `now`. `None` only for an expression that never matches
    /// again (none of ours).
    pub fn next_after(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = now.with_timezone(&self.tz);
        self.cron.find_next_occurrence(&local, false).ok().map(|next| next.with_timezone(&Utc))
    }

    pub fn expression(&self) -> &'static str {
        self.expression
    }

    pub fn human(&self) -> &'static str {
        self.human
    }

    pub fn timezone(&self) -> Tz {
        self.tz
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    #[test]
    fn every_minute_runs_on_the_next_minute_boundary() {
        let s = Schedule::new("* * * * *", "every minute", Tz::UTC);
        assert_eq!(s.next_after(at("2026-03-02T08:00:00Z")), Some(at("2026-03-02T08:01:00Z")));
        assert_eq!(s.next_after(at("2026-03-02T08:00:59Z")), Some(at("2026-03-02T08:01:00Z")));
    }

    #[test]
    fn every_five_minutes_is_on_the_fives() {
        let s = Schedule::new("*/5 * * * *", "every 5 minutes", Tz::UTC);
        assert_eq!(s.next_after(at("2026-03-02T08:00:00Z")), Some(at("2026-03-02T08:05:00Z")));
        assert_eq!(s.next_after(at("2026-03-02T08:07:30Z")), Some(at("2026-03-02T08:10:00Z")));
    }

    #[test]
    fn the_daily_report_is_at_21_local_time_across_daylight_saving() {
        let s = Schedule::new("0 21 * * *", "daily at 21:00", "Europe/Berlin".parse().unwrap());
        // Winter: UTC+1.
        assert_eq!(s.next_after(at("2026-03-02T08:00:00Z")), Some(at("2026-03-02T20:00:00Z")));
        assert_eq!(s.next_after(at("2026-03-02T20:00:00Z")), Some(at("2026-03-03T20:00:00Z")));
        // Summer time starts on 29 March 2026: UTC+2.
        assert_eq!(s.next_after(at("2026-03-29T12:00:00Z")), Some(at("2026-03-29T19:00:00Z")));
    }

    #[test]
    fn hourly_in_a_half_hour_zone_is_on_the_local_hour() {
        let s = Schedule::new("0 * * * *", "every hour", "Asia/Kolkata".parse().unwrap());
        assert_eq!(s.next_after(at("2026-03-02T08:00:00Z")), Some(at("2026-03-02T08:30:00Z")));
    }
}
