//! The request budget of one exchange: what the service may still ask this minute, split so
//! that agent reads can never starve the money paths.
//!
//! An exchange limits request weight per minute and orders per 10 s and per day (exchange A:
//! 6000 weight, 100 orders, 200 000 orders; read from its rules, corrected by the counts its
//! answers report). Three classes draw from it:
//!
//! - [`Class::Money`]: orders, cancels, order lookups and the prices protection needs. It may
//!   use up to [`MONEY_CEILING_PCT`] of each limit; at the ceiling it waits for the window to
//!   roll over (never past the limit: the exchange's 429 and then its IP ban are never
//!   provoked).
//! - [`Class::Read`]: scans, market context, portfolio — whatever agents read. It may use only
//!   `[exchange] read_share_pct` of the weight; past that a read is refused *before sending*
//!   with [`ExchangeError::ReadBudgetSpent`], which the API answers as its own
//!   `429 rate_limited` with `Retry-After`.
//! - [`Class::Background`]: the reads of the service's own scheduled scans (Pump Momentum's,
//!   the pump outcomes). They draw from the read share too, but at most
//!   [`BACKGROUND_PART_PCT`] of it in any minute, and past that they wait for the next minute
//!   instead of failing ([`Budget::admit_paced`]): a scan that costs more than its part is
//!   spread over minutes (exchange B's Pump Momentum scan of the demo's 19 liquid symbols costs
//!   about 440 of the 720 a minute reads may use), and an agent always finds the rest of the
//!   share.
//!
//! The class of a call is set by the handle it goes through ([`ReadHandle`] marks every call
//! as a read, a background read inside [`in_background`]); a call made without a mark is a
//! money call, so a path nobody marked can never be refused by the read share.

mod class;
mod windows;

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;

pub use self::class::{Class, as_read, current_class, in_background};
pub use self::windows::Reported;
use self::windows::Windows;
use super::ExchangeError;

/// The share of every limit money paths may use; the rest is a safety margin against other
/// users of the same IP and against counts that arrive late.
pub const MONEY_CEILING_PCT: u64 = 90;

/// The part of the read share background reads may use in one minute: the other half stays
/// for what agents ask while a scheduled scan runs.
pub const BACKGROUND_PART_PCT: u64 = 50;

/// How often a background read waiting for the next minute looks at the clock again (real
/// time; a test clock moved by a test ends the wait on the next look).
const PACE_LOOK_MS: i64 = 250;

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
    /// A read past its share, or an order past the day's limit: do not send. For a background
    /// read, the wait [`Budget::admit_paced`] takes before asking again.
    Refuse(Duration),
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
    /// The weight the service's own scheduled scans may use per minute (part of `read_limit`).
    pub background_limit: u64,
    /// Background reads that waited for the next minute since start (a scan spread over
    /// minutes instead of failing).
    pub background_waits: u64,
    /// Background reads waiting for the next minute now.
    pub background_waiting: u64,
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
    refused_until_ms: AtomicI64,
    /// Background reads that waited for a next minute so far, and those waiting now.
    background_waits: AtomicU64,
    background_waiting: AtomicU64,
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
            refused_until_ms: AtomicI64::new(0),
            background_waits: AtomicU64::new(0),
            background_waiting: AtomicU64::new(0),
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
        let read_limit = share(limits.weight_per_minute, self.read_share_pct);
        match class {
            Class::Read => {
                if w.used() + weight > read_limit {
                    self.refused_reads.fetch_add(1, Ordering::Relaxed);
                    self.refused_until_ms.fetch_max(next_minute, Ordering::Relaxed);
                    return Admission::Refuse(ms_to(next_minute, now_ms));
                }
            }
            Class::Background => {
                // The first read of a minute always fits its part, however heavy.
                let part = share(read_limit, BACKGROUND_PART_PCT);
                let over_part = w.background > 0 && w.background + weight > part;
                if over_part || w.used() + weight > read_limit {
                    return Admission::Refuse(ms_to(next_minute, now_ms));
                }
                w.background += weight;
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

    /// As [`Budget::admit`], except that a background read that does not fit waits for the
    /// next minute on the clock `now_ms` reads (exchange time) and asks again, instead of
    /// being refused: it never answers `Refuse` for [`Class::Background`].
    pub async fn admit_paced(
        &self,
        class: Class,
        weight: u64,
        order: bool,
        now_ms: impl Fn() -> i64,
    ) -> Admission {
        loop {
            let now = now_ms();
            match self.admit(class, weight, order, now) {
                Admission::Refuse(wait) if class == Class::Background => {
                    let wait_ms = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
                    tracing::info!(
                        wait_ms,
                        "request budget: a scheduled scan used its part of the read share; its \
                         reads wait for the next minute"
                    );
                    self.background_waits.fetch_add(1, Ordering::Relaxed);
                    self.background_waiting.fetch_add(1, Ordering::Relaxed);
                    until_clock(&now_ms, now.saturating_add(wait_ms)).await;
                    self.background_waiting.fetch_sub(1, Ordering::Relaxed);
                }
                admission => return admission,
            }
        }
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
    /// or 60 candles returned) for a request of `class`, added to the minute's count.
    pub fn charge(&self, class: Class, weight: u64, now_ms: i64) {
        let mut w = self.windows();
        w.roll(now_ms);
        w.reported += weight;
        if class == Class::Background {
            w.background += weight;
        }
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
        let read_limit = share(limits.weight_per_minute, self.read_share_pct);
        BudgetUse {
            weight_used: w.used(),
            weight_limit: limits.weight_per_minute,
            read_limit,
            money_limit: share(limits.weight_per_minute, MONEY_CEILING_PCT),
            orders_10s: w.orders_10s(),
            orders_day: w.orders_day(),
            refused_reads: self.refused_reads(),
            background_limit: share(read_limit, BACKGROUND_PART_PCT),
            background_waits: self.background_waits.load(Ordering::Relaxed),
            background_waiting: self.background_waiting.load(Ordering::Relaxed),
        }
    }

    /// Reads refused so far; a single atomic load, without the windows' lock.
    pub fn refused_reads(&self) -> u64 {
        self.refused_reads.load(Ordering::Relaxed)
    }
}

/// Waits until `now_ms()` reads `until_ms`, looking at the clock again every
/// [`PACE_LOOK_MS`] of real time at most.
async fn until_clock(now_ms: &impl Fn() -> i64, until_ms: i64) {
    loop {
        let left = until_ms.saturating_sub(now_ms());
        if left <= 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(left.min(PACE_LOOK_MS) as u64)).await;
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
mod tests;
