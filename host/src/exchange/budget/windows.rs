//! The counts of the exchange's current windows (a minute of weight, 10 s and a day of
//! orders), as the exchange last reported them plus what is in flight.

/// Counts of the current windows.
///
/// Every count is what the exchange last reported for its window plus what is in flight
/// (admitted, not answered yet): the exchange's count already holds every request it answered,
/// whether its windows are fixed or sliding, so adding our own answered requests to it would
/// count them twice (a sliding 10-s count of 80 taken over as the start of our fixed window,
/// plus our next orders on top, held money paths back for up to 10 s at a quarter of the
/// limit).
#[derive(Debug, Default)]
pub(super) struct Windows {
    pub(super) minute: i64,
    /// The weight the exchange last reported for `minute` (everything on this IP, up to the
    /// request it answered), plus the weight of answers that carried no count.
    pub(super) reported: u64,
    /// Weight of requests admitted and not answered yet (the exchange has not reported them).
    in_flight: u64,
    pub(super) ten_seconds: i64,
    /// The exchange's last order count for 10 s, plus orders answered without one.
    orders_10s: u64,
    pub(super) day: i64,
    /// The exchange's last order count for the day, plus orders answered without one.
    orders_day: u64,
    /// Orders admitted and not answered yet.
    orders_in_flight: u64,
    /// Weight background reads were admitted with in `minute`, with their surcharges: our own
    /// pacing measure, never replaced by the exchange's counts.
    pub(super) background: u64,
}

impl Windows {
    /// Starts new windows when `now_ms` (exchange time) has left the current ones.
    pub(super) fn roll(&mut self, now_ms: i64) {
        let minute = now_ms.div_euclid(60_000);
        if minute != self.minute {
            (self.minute, self.reported, self.background) = (minute, 0, 0);
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

    pub(super) fn used(&self) -> u64 {
        self.reported + self.in_flight
    }

    pub(super) fn orders_10s(&self) -> u64 {
        self.orders_10s + self.orders_in_flight
    }

    pub(super) fn orders_day(&self) -> u64 {
        self.orders_day + self.orders_in_flight
    }

    pub(super) fn count(&mut self, weight: u64, order: bool) {
        self.in_flight += weight;
        self.orders_in_flight += u64::from(order);
    }

    /// Takes the counts of an answer to a request of `weight` (`order` when it placed one).
    pub(super) fn answer(&mut self, weight: u64, order: bool, counts: Reported) {
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
