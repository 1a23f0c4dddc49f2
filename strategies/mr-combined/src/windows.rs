//! News blackout windows: `HH:MM-HH:MM` in UTC, start inclusive, end exclusive; a window whose
//! end is before its start wraps midnight (`22:00-02:00`). The clock is the request's `now_ms`.

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;
/// Milliseconds in a minute.
const MINUTE_MS: i64 = 60_000;

/// One parsed window, as minutes after midnight UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start_min: i64,
    pub end_min: i64,
}

/// `H:MM` or `HH:MM` (the host's `%H:%M` accepts one or two digits for each part), hours 0–23,
/// minutes 0–59; surrounding spaces are ignored.
fn parse_time(text: &str) -> Option<i64> {
    let (h, m) = text.trim().split_once(':')?;
    let number = |s: &str, max: i64| -> Option<i64> {
        let ok = (1..=2).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| s.parse::<i64>().ok()).flatten().filter(|v| *v <= max)
    };
    Some(number(h, 23)? * 60 + number(m, 59)?)
}

fn hhmm(minutes: i64) -> String {
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

impl Window {
    /// Parses `HH:MM-HH:MM`. A window whose start equals its end is refused: it could mean
    /// "never" or "all day", and a blackout must not be ambiguous.
    pub fn parse(text: &str) -> Result<Window, String> {
        let form = || format!("`{text}` is not a window of the form HH:MM-HH:MM (UTC)");
        let (a, b) = text.split_once('-').ok_or_else(form)?;
        let (start_min, end_min) =
            (parse_time(a).ok_or_else(form)?, parse_time(b).ok_or_else(form)?);
        if start_min == end_min {
            return Err(format!("`{text}` starts and ends at the same minute: ambiguous"));
        }
        Ok(Window { start_min, end_min })
    }

    /// Whether the window covers the instant `now_ms` (epoch milliseconds, UTC).
    pub fn covers(&self, now_ms: i64) -> bool {
        let t = now_ms.rem_euclid(DAY_MS);
        let (start, end) = (self.start_min * MINUTE_MS, self.end_min * MINUTE_MS);
        if start < end { start <= t && t < end } else { t >= start || t < end }
    }

    /// The window as `HH:MM-HH:MM UTC`.
    pub fn label(&self) -> String {
        format!("{}-{} UTC", hhmm(self.start_min), hhmm(self.end_min))
    }
}

/// The time of day of `now_ms` as `HH:MM UTC`.
pub fn time_of_day(now_ms: i64) -> String {
    format!("{} UTC", hhmm(now_ms.rem_euclid(DAY_MS) / MINUTE_MS))
}

/// The first window (in config order) that covers `now_ms`.
pub fn blocking(windows: &[Window], now_ms: i64) -> Option<&Window> {
    windows.iter().find(|w| w.covers(now_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    fn at(h: i64, m: i64) -> i64 {
        DAY + h * 3_600_000 + m * MINUTE_MS
    }

    #[test]
    fn parses_and_refuses() {
        assert_eq!(Window::parse("13:30-14:30"), Ok(Window { start_min: 810, end_min: 870 }));
        assert_eq!(Window::parse(" 9:05 - 9:10 ").map(|w| w.label()), Ok("09:05-09:10 UTC".into()));
        for bad in [
            "",
            "13:30",
            "13:30-",
            "24:00-01:00",
            "10:60-11:00",
            "1330-1430",
            "a:b-c:d",
            "10:00-10:00",
            "+1:00-2:00",
            "100:00-1:00",
        ] {
            assert!(Window::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn covers_start_inclusive_end_exclusive() {
        let w = Window::parse("13:30-14:30").unwrap();
        assert!(!w.covers(at(13, 29)));
        assert!(w.covers(at(13, 30)));
        assert!(w.covers(at(14, 29) + 59_999));
        assert!(!w.covers(at(14, 30)));
        assert!(w.covers(at(13, 45) + 5 * DAY));
        assert!(w.covers(at(13, 45) - 400 * DAY), "before the epoch too");
    }

    #[test]
    fn wraps_midnight() {
        let w = Window::parse("23:00-01:00").unwrap();
        assert!(w.covers(at(23, 0)) && w.covers(at(0, 0)) && w.covers(at(0, 59)));
        assert!(!w.covers(at(1, 0)) && !w.covers(at(22, 59)) && !w.covers(at(12, 0)));
        let ws = [Window::parse("08:00-09:00").unwrap(), w];
        assert_eq!(blocking(&ws, at(0, 30)), Some(&w));
        assert_eq!(blocking(&ws, at(12, 0)), None);
        assert_eq!(time_of_day(at(0, 30)), "00:30 UTC");
    }
}
