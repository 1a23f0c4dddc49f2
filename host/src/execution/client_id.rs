//! Client order ids: every order the service sends carries one derived from what caused it,
//! `<PREFIX>_<cause id>_<SYMBOL>`, at most 36 characters (the exchange's limit). The prefix
//! names the order's purpose, so an order found on the exchange tells what it was for (manual
//! entries are recovered from open orders by their `MT_` prefix, spec). The protection's legs
//! append one letter to their list's id: `T` take-profit, `S` stop, `X` the watched stop's
//! market exit.

use std::fmt;

/// The longest client order id exchange A accepts.
pub const MAX_LEN: usize = 36;

/// What an order is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The MARKET entry of a confirmed signal.
    SignalEntry,
    /// The protection placed after a signal's entry.
    SignalProtection,
    /// The MARKET entry of `POST /api/trade`.
    TradeEntry,
    TradeProtection,
    /// A manual LIMIT entry (`POST /api/trade/manual`).
    ManualEntry,
    ManualProtection,
    /// The protection placed again with a moved stop (trailing).
    TrailingReplace,
    /// The protection placed again at the old levels after a failed move or exit.
    Reprotect,
    /// The protection of a trade restored by hand, once reconciliation places it.
    Restored,
    /// A market exit (close, closeall, a sell signal, a gapped stop).
    MarketExit,
    /// A watched stop's exit when the trade has no protection id to derive it from.
    WatchedExit,
    /// The journal note of a watched stop's level (never sent).
    WatchedStop,
}

impl Purpose {
    const ALL: [Purpose; 12] = [
        Self::SignalEntry,
        Self::SignalProtection,
        Self::TradeEntry,
        Self::TradeProtection,
        Self::ManualEntry,
        Self::ManualProtection,
        Self::TrailingReplace,
        Self::Reprotect,
        Self::Restored,
        Self::MarketExit,
        Self::WatchedExit,
        Self::WatchedStop,
    ];

    pub fn prefix(self) -> &'static str {
        match self {
            Self::SignalEntry => "SE",
            Self::SignalProtection => "SO",
            Self::TradeEntry => "TE",
            Self::TradeProtection => "TO",
            Self::ManualEntry => "MT",
            Self::ManualProtection => "MO",
            Self::TrailingReplace => "TS",
            Self::Reprotect => "RP",
            Self::Restored => "RS",
            Self::MarketExit => "SX",
            Self::WatchedExit => "WX",
            Self::WatchedStop => "WS",
        }
    }
}

/// One client order id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientOrderId(String);

impl ClientOrderId {
    /// `<PREFIX>_<cause>_<SYMBOL>`, cut to [`MAX_LEN`] (symbols are at most 20 characters and
    /// cause ids short base-36 numbers, so nothing is cut in practice).
    pub fn new(purpose: Purpose, cause: &str, symbol: &str) -> Self {
        let mut id = format!("{}_{cause}_{symbol}", purpose.prefix());
        id.truncate(MAX_LEN);
        Self(id)
    }

    /// An id for a cause of its own at `now_ms` ([`fresh_cause`]).
    pub fn fresh(purpose: Purpose, now_ms: i64, symbol: &str) -> Self {
        Self::new(purpose, &fresh_cause(now_ms), symbol)
    }

    /// What the order is for, read from the prefix of any id (one the service did not make
    /// gives `None`).
    pub fn purpose_of(id: &str) -> Option<Purpose> {
        let prefix = id.split('_').next()?;
        Purpose::ALL.into_iter().find(|p| p.prefix() == prefix)
    }

    /// The id of one leg of the protection this id names (`T`, `S` or `X` appended), when it
    /// still fits the exchange's limit.
    pub fn leg(id: &str, leg: char) -> Option<String> {
        Some(format!("{id}{leg}")).filter(|id| id.len() <= MAX_LEN)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for ClientOrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A new cause id: the time in base 36 and 4 random hex digits, so two causes in the same
/// millisecond (or on a test clock that stands still, or after a restart) never share order
/// ids — a shared id would make the journal treat the second as a retry of the first.
pub fn fresh_cause(ms: i64) -> String {
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{}{}", time_id(ms), &random[..4])
}

/// A short id from a millisecond time: base 36, 8 characters until the year 2059.
fn time_id(ms: i64) -> String {
    let mut n = ms.max(0) as u64;
    let mut digits = Vec::new();
    loop {
        let d = (n % 36) as u8;
        digits.push(if d < 10 { b'0' + d } else { b'a' + d - 10 });
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_purpose_and_fit_the_exchange() {
        let id = ClientOrderId::new(Purpose::SignalProtection, "mubbs7i8", "BTCUSDT");
        assert_eq!(id.as_str(), "SO_mubbs7i8_BTCUSDT");
        assert_eq!(ClientOrderId::purpose_of(id.as_str()), Some(Purpose::SignalProtection));
        assert_eq!(ClientOrderId::purpose_of("web_123"), None, "not ours");
        let long =
            ClientOrderId::new(Purpose::SignalProtection, "mvh9ufk0", "ABCDEFGHIJKLMNOPQRST");
        assert!(long.as_str().len() <= MAX_LEN, "{long}");
        let longest =
            ClientOrderId::fresh(Purpose::MarketExit, 1_790_000_000_000, "ABCDEFGHIJKLMNOPQRST");
        assert!(
            longest.as_str().len() == 36 && longest.as_str().ends_with("_ABCDEFGHIJKLMNOPQRST")
        );
        assert_eq!(ClientOrderId::leg(longest.as_str(), 'X'), None, "a leg id that would not fit");
        assert_eq!(ClientOrderId::leg("SO_a_ETHUSDT", 'T').as_deref(), Some("SO_a_ETHUSDTT"));
        for purpose in Purpose::ALL {
            let id = ClientOrderId::new(purpose, "x", "ETHUSDT");
            assert_eq!(ClientOrderId::purpose_of(id.as_str()), Some(purpose), "{id}");
        }
    }

    #[test]
    fn causes_are_short_and_never_repeat() {
        assert_eq!(time_id(0), "0");
        assert_eq!(time_id(35), "z");
        assert_eq!(time_id(1_790_000_000_000), "mubbs7i8");
        assert_ne!(fresh_cause(1), fresh_cause(1), "same millisecond, different causes");
    }
}
