//! The boss hears when the exchange's streams stay down: protection keeps working on the
//! polled path (the minute's run settles fills, the watch loop polls watched stops), but a
//! fill is then noticed up to a minute later, so a long outage is worth a message. One message
//! when a link has been reconnecting for `[protection] stream_outage_alert_s`, one when every
//! link is back; a short blip (a reconnect, a 24-hour renewal) says nothing.

use chrono::{DateTime, Duration, Utc};

use super::Protection;
use crate::exchange::feed::{FeedStatus, LinkState};
use crate::messenger::templates;

/// What the boss is told.
#[derive(Debug, Clone, PartialEq)]
pub enum OutageNote {
    /// `links` (in words) have been down for `down_for`.
    Down { links: String, down_for: Duration },
    /// Every link is live again after `down_for`.
    Back { down_for: Duration },
}

/// Follows the links' state over time.
#[derive(Debug)]
pub struct OutageWatch {
    after: Duration,
    down_since: Option<DateTime<Utc>>,
    alerted: bool,
}

impl OutageWatch {
    pub fn new(after: Duration) -> Self {
        Self { after, down_since: None, alerted: false }
    }

    /// Looks at the links' state at `now`; says what to tell the boss, if anything.
    pub fn observe(&mut self, status: &FeedStatus, now: DateTime<Utc>) -> Option<OutageNote> {
        let down = down_links(status);
        if down.is_empty() {
            let since = self.down_since.take()?;
            return std::mem::take(&mut self.alerted)
                .then(|| OutageNote::Back { down_for: now - since });
        }
        let since = *self.down_since.get_or_insert(now);
        let down_for = now - since;
        if self.alerted || down_for < self.after {
            return None;
        }
        self.alerted = true;
        Some(OutageNote::Down { links: down.join(" and "), down_for })
    }
}

impl Protection {
    /// An outage watch with `[protection] stream_outage_alert_s`.
    pub(super) fn outage_watch(&self) -> OutageWatch {
        let after = self.inner.config.protection.stream_outage_alert_s;
        OutageWatch::new(Duration::seconds(i64::try_from(after).unwrap_or(i64::MAX)))
    }

    /// Tells the boss (and the activity log) what `watch` makes of the links' state now.
    pub(super) fn observe_streams(&self, status: &FeedStatus, watch: &mut OutageWatch) {
        match watch.observe(status, self.inner.clock.now()) {
            Some(OutageNote::Down { links, down_for }) => {
                let down_for = spoken(down_for);
                self.log(
                    "bot-ops",
                    &format!("exchange stream down for {down_for}: {links}"),
                    "error",
                );
                self.alert(
                    templates::stream_down(&templates::StreamDown { links, down_for }),
                    "stream outage alert",
                );
            }
            Some(OutageNote::Back { down_for }) => {
                let down_for = spoken(down_for);
                self.log("bot-ops", &format!("exchange stream back after {down_for}"), "ok");
                self.alert(templates::stream_back(&down_for), "stream recovery note");
            }
            None => {}
        }
    }
}

/// The links that are reconnecting, in words (a link that is off is not down: nothing to
/// follow).
fn down_links(status: &FeedStatus) -> Vec<&'static str> {
    let mut down = Vec::new();
    if status.account == LinkState::Reconnecting {
        down.push("order updates");
    }
    if status.prices == LinkState::Reconnecting {
        down.push("prices");
    }
    down
}

/// `95 s` → `1 min 35 s`, `30 s` → `30 s`.
pub fn spoken(duration: Duration) -> String {
    let seconds = duration.num_seconds().max(0);
    match (seconds / 60, seconds % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(account: LinkState, prices: LinkState) -> FeedStatus {
        FeedStatus { account, prices, reconnects: 0 }
    }

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_780_000_000 + seconds, 0).unwrap()
    }

    #[test]
    fn a_long_outage_is_told_once_and_its_end_once() {
        let mut watch = OutageWatch::new(Duration::seconds(120));
        let live = status(LinkState::Live, LinkState::Live);
        let down = status(LinkState::Reconnecting, LinkState::Live);
        assert_eq!(watch.observe(&live, at(0)), None);
        assert_eq!(watch.observe(&down, at(10)), None);
        assert_eq!(watch.observe(&down, at(129)), None, "119 s is not yet 2 min");
        assert_eq!(
            watch.observe(&down, at(130)),
            Some(OutageNote::Down {
                links: "order updates".into(),
                down_for: Duration::seconds(120)
            })
        );
        let both = status(LinkState::Reconnecting, LinkState::Reconnecting);
        assert_eq!(watch.observe(&both, at(500)), None, "one message per outage");
        assert_eq!(
            watch.observe(&live, at(610)),
            Some(OutageNote::Back { down_for: Duration::seconds(600) })
        );
        assert_eq!(watch.observe(&live, at(700)), None);
    }

    #[test]
    fn a_blip_says_nothing_and_an_unused_link_is_not_down() {
        let mut watch = OutageWatch::new(Duration::seconds(120));
        let blip = status(LinkState::Live, LinkState::Reconnecting);
        assert_eq!(watch.observe(&blip, at(0)), None);
        assert_eq!(watch.observe(&status(LinkState::Live, LinkState::Live), at(5)), None);
        let off = status(LinkState::Live, LinkState::Off);
        assert_eq!(watch.observe(&off, at(1000)), None);
        assert_eq!(watch.observe(&off, at(5000)), None);
    }

    #[test]
    fn durations_read_like_speech() {
        assert_eq!(spoken(Duration::seconds(30)), "30 s");
        assert_eq!(spoken(Duration::seconds(120)), "2 min");
        assert_eq!(spoken(Duration::seconds(95)), "1 min 35 s");
    }
}
