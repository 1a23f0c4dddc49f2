//! The request budget of one exchange: what the service may still ask this minute, split so
//! that agent reads can never starve the money paths.
//!
//! An exchange limits request weight per minute and orders per 10 s and per day (exchange A:
//! 6000 weight, 100 orders, 200 000 orders; read from its rules, corrected by the counts its
//! answers report). Two classes draw from it:
//!
//! - [`Class::Money`]: orders, cancels, order lookups and the prices protection needs. It may
//!   use up to [`MONEY_CEILING_PCT`] of each limit; at the ceiling it waits for the window to
//!   roll over (never past the limit: the exchange's 429 and then its IP ban are never
//!   provoked).
//! - [`Class::Read`]: scans, market context, portfolio — whatever agents read. It may use only
//!   `[exchange] read_share_pct` of the weight; past that a read is refused *before sending*
//!   with [`ExchangeError::ReadBudgetSpent`], which the API answers as its own
//!   `429 rate_limited` with `Retry-After`.
//!
//! The class of a call is set by the handle it goes through ([`ReadHandle`] marks every call
//! as a read); a call made without a mark is a money call, so a path nobody marked can never be
//! refused by the read share.

use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;

use super::ExchangeError;

/// The share of every limit money paths may use; the rest is a safety margin against other
/// users of the same IP and against counts that arrive late.
pub const MONEY_CEILING_PCT: u64 = 90;

/// Which share of the budget a call draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Money,
    Read,
}

tokio::task_local! {
    static CLASS: Class;
}

/// The class of the call being made on this task (money unless marked as a read).
pub fn current_class() -> Class {
    CLASS.try_with(|c| *c).unwrap_or(Class::Money)
}

/// Runs `call` as an agent read.
pub async fn as_read<F: Future>(call: F) -> F::Output {
    CLASS.scope(Class::Read, call).await
}

/// The limits of one exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub weight_per_minute: u64,
    pub orders_per_10s: u64,
    pub orders_per_day: u64,
}

impl Default for Limits {
    /// Exchange A's documented values, until its rules are read.
    fn default() -> Self {
        Self { weight_per_minute: 6000, orders_per_10s: 100, orders_per_day: 200_000 }
    }
}

/// What the budget says about one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Send it; its weight is counted.
    Go,
    /// A money request at the ceiling: wait this long (the window rolls over), then send.
    Wait(Duration),
    /// A read past its share, or an order past the day's limit: do not send.
    Refuse(Duration),
}

/// Counts of the current windows.
///
/// Every count is what the exchange last reported for its window plus what is in flight
/// (admitted, not answered yet): the exchange's count already holds every request it answered,
/// whether its windows are fixed or sliding, so adding our own answered requests to it would
/// count them twice (a sliding 10-s count of 80 taken over as the start of our fixed window,
/// plus our next orders on top, held money paths back for up to 10 s at a quarter of the
/// limit).
#[derive(Debug, Default)]
struct Windows {
    minute: i64,
    /// The weight the exchange last reported for `minute` (everything on this IP, up to the
    /// request it answered), plus the weight of answers that carried no count.
    reported: u64,
    /// Weight of requests admitted and not answered yet (the exchange has not reported them).
    in_flight: u64,
    ten_seconds: i64,
    /// The exchange's last order count for 10 s, plus orders answered without one.
    orders_10s: u64,
    day: i64,
    /// The exchange's last order count for the day, plus orders answered without one.
    orders_day: u64,
    /// Orders admitted and not answered yet.
    orders_in_flight: u64,
}

impl Windows {
    /// Starts new windows when `now_ms` (exchange time) has left the current ones.
    fn roll(&mut self, now_ms: i64) {
        let minute = now_ms.div_euclid(60_000);
        if minute != self.minute {
            (self.minute, self.reported) = (minute, 0);
        }
        let ten = now_ms.div_euclid(10_000);
        if ten != self.ten_seconds {
            (self.ten_seconds, self.orders_10s) = (ten, 0);
        }
        let day = now_ms.div_euclid(86_400_000);
        if day != self.day {
            (self.day, self.orders_day) = (day, 0);
        }
    }

    fn used(&self) -> u64 {
        self.reported + self.in_flight
    }

    fn orders_10s(&self) -> u64 {
        self.orders_10s + self.orders_in_flight
    }

    fn orders_day(&self) -> u64 {
        self.orders_day + self.orders_in_flight
    }

    fn count(&mut self, weight: u64, order: bool) {
        self.in_flight += weight;
        self.orders_in_flight += u64::from(order);
    }

    /// Takes the counts of an answer to a request of `weight` (`order` when it placed one).
    fn answer(&mut self, weight: u64, order: bool, counts: Reported) {
        self.in_flight = self.in_flight.saturating_sub(weight);
        self.orders_in_flight = self.orders_in_flight.saturating_sub(u64::from(order));
        let order = u64::from(order);
        self.reported = counts.weight_1m.unwrap_or(self.reported + weight);
        self.orders_10s = counts.orders_10s.unwrap_or(self.orders_10s + order);
        self.orders_day = counts.orders_day.unwrap_or(self.orders_day + order);
    }
}

/// The counts an exchange's answer reported (its headers), when it sent them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reported {
    pub weight_1m: Option<u64>,
    pub orders_10s: Option<u64>,
    pub orders_day: Option<u64>,
}

/// How much of the budget is used now (for the status route and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct BudgetUse {
    /// Request weight used in the current minute: what the exchange last reported plus what
    /// is in flight.
    pub weight_used: u64,
    pub weight_limit: u64,
    /// The weight agent reads may use per minute.
    pub read_limit: u64,
    /// The weight money paths may use per minute.
    pub money_limit: u64,
    pub orders_10s: u64,
    pub orders_day: u64,
    /// Reads refused with 429 since start.
    pub refused_reads: u64,
}

/// One exchange's request budget.
#[derive(Debug)]
pub struct Budget {
    read_share_pct: u64,
    limits: Mutex<Limits>,
    windows: Mutex<Windows>,
    /// Reads refused so far: outside the windows' lock because the API's rate-limit layer
    /// reads it twice on every request.
    refused_reads: AtomicU64,
    /// Until when (exchange time, ms) the last refused read was told to wait: a read of
    /// weight 20 is refused at 719 of 720 used, where the share alone does not look spent,
    /// and the 429's `Retry-After` must still say the time it really needs.
    refused_until_ms: std::sync::atomic::AtomicI64,
}

fn ms_to(next_boundary_ms: i64, now_ms: i64) -> Duration {
    Duration::from_millis((next_boundary_ms - now_ms).max(1) as u64)
}

fn share(limit: u64, pct: u64) -> u64 {
    limit * pct / 100
}

impl Budget {
    /// A budget whose reads may use `read_share_pct` percent of the weight (clamped below the
    /// money ceiling, so money always keeps a reserve).
    pub fn new(read_share_pct: u64) -> Self {
        Self {
            read_share_pct: read_share_pct.clamp(1, MONEY_CEILING_PCT - 10),
            limits: Mutex::new(Limits::default()),
            windows: Mutex::new(Windows::default()),
            refused_reads: AtomicU64::new(0),
            refused_until_ms: std::sync::atomic::AtomicI64::new(0),
        }
    }

    /// The exchange's own limits, once its rules are read.
    pub fn set_limits(&self, limits: Limits) {
        *self.limits.lock().unwrap_or_else(|p| p.into_inner()) = limits;
    }

    fn limits(&self) -> Limits {
        *self.limits.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn windows(&self) -> std::sync::MutexGuard<'_, Windows> {
        self.windows.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Decides on a request of `weight` (`order` when it places an order) at exchange time
    /// `now_ms`, and counts it when it may go.
    pub fn admit(&self, class: Class, weight: u64, order: bool, now_ms: i64) -> Admission {
        let limits = self.limits();
        let mut w = self.windows();
        w.roll(now_ms);
        let next_minute = (w.minute + 1) * 60_000;
        match class {
            Class::Read => {
                if w.used() + weight > share(limits.weight_per_minute, self.read_share_pct) {
                    self.refused_reads.fetch_add(1, Ordering::Relaxed);
                    self.refused_until_ms.fetch_max(next_minute, Ordering::Relaxed);
                    return Admission::Refuse(ms_to(next_minute, now_ms));
                }
            }
            Class::Money => {
                if order && w.orders_day() + 1 > share(limits.orders_per_day, MONEY_CEILING_PCT) {
                    return Admission::Refuse(ms_to((w.day + 1) * 86_400_000, now_ms));
                }
                if order && w.orders_10s() + 1 > share(limits.orders_per_10s, MONEY_CEILING_PCT) {
                    return Admission::Wait(ms_to((w.ten_seconds + 1) * 10_000, now_ms));
                }
                if w.used() + weight > share(limits.weight_per_minute, MONEY_CEILING_PCT) {
                    return Admission::Wait(ms_to(next_minute, now_ms));
                }
            }
        }
        w.count(weight, order);
        Admission::Go
    }

    /// Counts a request sent after waiting out a [`Admission::Wait`] (the windows rolled).
    pub fn count_after_wait(&self, weight: u64, order: bool, now_ms: i64) {
        let mut w = self.windows();
        w.roll(now_ms);
        w.count(weight, order);
    }

    /// A request of `weight` (`order` when it placed an order) was answered (or failed): it
    /// leaves the in-flight counts, and the exchange's counts from the answer's headers replace
    /// ours. An answer without a count keeps the request itself counted.
    pub fn answered(&self, weight: u64, order: bool, counts: Reported, now_ms: i64) {
        let mut w = self.windows();
        w.roll(now_ms);
        w.answer(weight, order, counts);
    }

    /// Weight the exchange charges only after answering (exchange B's surcharge per 20 fills
    /// or 60 candles returned), added to the minute's count.
    pub fn charge(&self, weight: u64, now_ms: i64) {
        let mut w = self.windows();
        w.roll(now_ms);
        w.reported += weight;
    }

    /// When reads are refused now (the share is spent, or a read was refused for its weight
    /// in this minute): how long until the next minute gives them weight again.
    pub fn reads_blocked_for(&self, now_ms: i64) -> Option<Duration> {
        let limits = self.limits();
        let mut w = self.windows();
        w.roll(now_ms);
        let next_minute = (w.minute + 1) * 60_000;
        let refused = self.refused_until_ms.load(Ordering::Relaxed) > now_ms;
        (refused || w.used() >= share(limits.weight_per_minute, self.read_share_pct))
            .then(|| ms_to(next_minute, now_ms))
    }

    pub fn usage(&self, now_ms: i64) -> BudgetUse {
        let limits = self.limits();
        let mut w = self.windows();
        w.roll(now_ms);
        BudgetUse {
            weight_used: w.used(),
            weight_limit: limits.weight_per_minute,
            read_limit: share(limits.weight_per_minute, self.read_share_pct),
            money_limit: share(limits.weight_per_minute, MONEY_CEILING_PCT),
            orders_10s: w.orders_10s(),
            orders_day: w.orders_day(),
            refused_reads: self.refused_reads(),
        }
    }

    /// Reads refused so far; a single atomic load, without the windows' lock.
    pub fn refused_reads(&self) -> u64 {
        self.refused_reads.load(Ordering::Relaxed)
    }
}

/// What the budget admitted one request as.
#[derive(Debug, Clone, Copy)]
pub struct Admitted {
    pub weight: u64,
    /// It places an order (counts against the exchange's order limits).
    pub order: bool,
}

/// A request the budget admitted: when it is answered, or dropped on any early return, it
/// leaves the budget's in-flight counts.
pub struct InFlight<'a, F: Fn() -> i64> {
    budget: &'a Budget,
    /// `None` once answered.
    admitted: Option<Admitted>,
    now_ms: F,
}

impl<'a, F: Fn() -> i64> InFlight<'a, F> {
    /// `admitted` is in flight on `budget`; `now_ms` is the exchange's time.
    pub fn new(budget: &'a Budget, admitted: Admitted, now_ms: F) -> Self {
        Self { budget, admitted: Some(admitted), now_ms }
    }

    /// The request was answered with `counts` (once; later calls change nothing).
    pub fn answered(&mut self, counts: Reported) {
        if let Some(Admitted { weight, order }) = self.admitted.take() {
            self.budget.answered(weight, order, counts, (self.now_ms)());
        }
    }
}

impl<F: Fn() -> i64> Drop for InFlight<'_, F> {
    fn drop(&mut self) {
        self.answered(Reported::default());
    }
}

/// The refusal a read gets when its share is spent.
pub fn refused(retry_after: Duration) -> ExchangeError {
    ExchangeError::ReadBudgetSpent { retry_after }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i64 = 60_000;

    #[test]
    fn reads_stop_at_their_share_while_money_goes_on_to_the_ceiling() {
        let budget = Budget::new(60);
        let t = 10 * MINUTE + 5_000;
        for i in 1..=45 {
            assert_eq!(budget.admit(Class::Read, 80, false, t), Admission::Go);
            budget.answered(
                80,
                false,
                Reported { weight_1m: Some(80 * i), ..Reported::default() },
                t,
            );
        }
        // 3600 used: the 60 % share of 6000 is spent.
        assert_eq!(
            budget.admit(Class::Read, 2, false, t),
            Admission::Refuse(Duration::from_millis(55_000)),
            "refused until the minute rolls over"
        );
        assert_eq!(budget.admit(Class::Money, 4, false, t), Admission::Go);
        assert_eq!(budget.admit(Class::Money, 1, true, t), Admission::Go);
        assert_eq!(budget.usage(t).refused_reads, 1);
        assert_eq!(budget.admit(Class::Read, 2, false, t + MINUTE), Admission::Go, "new minute");
    }

    #[test]
    fn a_read_refused_for_its_weight_reports_the_wait_it_really_needs() {
        let budget = Budget::new(60);
        let t = 10 * MINUTE + 35_000;
        // 3599 of the 3600 share used: a read of 20 does not fit, a read of 1 would.
        budget.answered(0, false, Reported { weight_1m: Some(3_599), ..Reported::default() }, t);
        assert_eq!(budget.reads_blocked_for(t), None, "nothing refused yet");
        assert_eq!(
            budget.admit(Class::Read, 20, false, t),
            Admission::Refuse(Duration::from_millis(25_000))
        );
        assert_eq!(
            budget.reads_blocked_for(t + 1_000),
            Some(Duration::from_millis(24_000)),
            "the 429's Retry-After is the time to the next minute, not 1 s"
        );
        assert_eq!(budget.reads_blocked_for(t + 25_000), None, "the next minute");
    }

    #[test]
    fn money_waits_at_its_ceiling_instead_of_passing_the_limit() {
        let budget = Budget::new(60);
        let t = 3 * MINUTE + 59_000;
        budget.answered(0, false, Reported { weight_1m: Some(5_399), ..Reported::default() }, t);
        assert_eq!(budget.admit(Class::Money, 1, false, t), Admission::Go, "5400 is the ceiling");
        assert_eq!(
            budget.admit(Class::Money, 4, false, t),
            Admission::Wait(Duration::from_millis(1_000))
        );
        assert!(budget.reads_blocked_for(t).is_some());
    }

    #[test]
    fn orders_respect_the_ten_second_and_daily_counts() {
        let budget = Budget::new(60);
        let t = 7 * MINUTE + 1_000;
        budget.answered(0, false, Reported { orders_10s: Some(90), ..Reported::default() }, t);
        assert_eq!(
            budget.admit(Class::Money, 1, true, t),
            Admission::Wait(Duration::from_millis(9_000)),
            "90 of 100 orders in 10 s is the ceiling"
        );
        assert_eq!(budget.admit(Class::Money, 4, false, t), Admission::Go, "lookups still go");
        budget.answered(0, false, Reported { orders_day: Some(180_000), ..Reported::default() }, t);
        assert!(matches!(budget.admit(Class::Money, 1, true, t + 10_000), Admission::Refuse(_)));
    }

    #[test]
    fn an_order_the_exchange_counted_is_not_counted_again() {
        let budget = Budget::new(60);
        // The exchange's window slides: at the start of ours it still holds 80 earlier orders.
        let t = 9 * MINUTE;
        let reported = |n| Reported { orders_10s: Some(n), ..Reported::default() };
        budget.answered(0, false, reported(80), t);
        assert_eq!(budget.admit(Class::Money, 1, true, t), Admission::Go);
        assert_eq!(budget.usage(t).orders_10s, 81, "80 reported, one in flight");
        budget.answered(1, true, reported(81), t);
        assert_eq!(budget.usage(t).orders_10s, 81, "the answer's count holds our order");
        // Seconds later the oldest orders have left the exchange's window.
        for n in 42..=50 {
            assert_eq!(budget.admit(Class::Money, 1, true, t + 4_000), Admission::Go);
            budget.answered(1, true, reported(n), t + 4_000);
        }
        assert_eq!(budget.usage(t + 4_000).orders_10s, 50);
        assert_eq!(budget.admit(Class::Money, 1, true, t + 4_000), Admission::Go);
        budget.answered(1, true, Reported::default(), t + 4_000);
        assert_eq!(budget.usage(t + 4_000).orders_10s, 51, "no count in the answer: ours is added");
    }

    #[test]
    fn the_exchange_count_replaces_ours_once_it_answers() {
        let budget = Budget::new(50);
        let t = MINUTE;
        assert_eq!(budget.admit(Class::Read, 80, false, t), Admission::Go);
        assert_eq!(budget.usage(t).weight_used, 80, "in flight");
        let counts = Reported { weight_1m: Some(2_999), ..Reported::default() };
        budget.answered(80, false, counts, t);
        assert_eq!(budget.usage(t).weight_used, 2_999, "another user of the IP spent the rest");
        assert_eq!(budget.admit(Class::Read, 1, false, t), Admission::Go);
        assert!(matches!(budget.admit(Class::Read, 1, false, t), Admission::Refuse(_)));
        budget.answered(1, false, Reported { weight_1m: Some(12), ..Reported::default() }, t);
        assert_eq!(budget.usage(t).weight_used, 12, "the exchange's window rolled first");
        budget.answered(0, false, Reported::default(), t);
        assert_eq!(budget.usage(t).weight_used, 12);
        assert_eq!(budget.admit(Class::Read, 5, false, t), Admission::Go);
        budget.answered(5, false, Reported::default(), t);
        assert_eq!(budget.usage(t).weight_used, 17, "no count in the answer: ours is kept");
    }

    #[test]
    fn weight_charged_after_the_answer_counts_in_the_minute() {
        let budget = Budget::new(60);
        budget.set_limits(Limits { weight_per_minute: 1200, ..Limits::default() });
        let t = 2 * MINUTE;
        assert_eq!(budget.admit(Class::Read, 20, false, t), Admission::Go);
        budget.answered(20, false, Reported::default(), t);
        budget.charge(100, t);
        assert_eq!(budget.usage(t).weight_used, 120, "20 before sending, 100 for 2000 fills");
        assert_eq!(budget.usage(t + MINUTE).weight_used, 0);
    }

    #[tokio::test]
    async fn a_marked_call_is_a_read_and_anything_else_money() {
        assert_eq!(current_class(), Class::Money);
        assert_eq!(as_read(async { current_class() }).await, Class::Read);
    }
}
