//! Exchange B's nonce rule, per signer: the 100 highest nonces are kept; a new one must not be
//! one of them, must be greater than the smallest of them once 100 are kept, and must lie
//! within (now − 2 days, now + 1 day). The texts of the refusals are the simulator's own
//! except "Invalid nonce: duplicate nonce", which the real exchange answers.

use crate::clock::Millis;
use crate::market::DAY;
use std::collections::BTreeSet;

/// How many of a signer's highest nonces are kept.
pub const KEPT: usize = 100;

/// Why a nonce is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonceError {
    /// Not within (now − 2 days, now + 1 day).
    OutOfWindow { nonce: u64, now: Millis },
    /// Already used.
    Duplicate,
    /// Not above the smallest of the 100 kept.
    TooLow { nonce: u64, smallest: u64 },
}

impl NonceError {
    /// The text of the top-level `err` answer.
    pub fn text(&self) -> String {
        match self {
            Self::OutOfWindow { nonce, now } => format!(
                "Invalid nonce: {nonce} is not within (now - 2 days, now + 1 day) of the server time {now}"
            ),
            Self::Duplicate => "Invalid nonce: duplicate nonce".to_string(),
            Self::TooLow { nonce, smallest } => format!(
                "Invalid nonce: {nonce} is not greater than {smallest}, the smallest of the {KEPT} highest nonces used"
            ),
        }
    }
}

/// The nonces one signer used.
#[derive(Debug, Default, Clone)]
pub struct Nonces {
    kept: BTreeSet<u64>,
}

impl Nonces {
    /// Uses `nonce` at `now`, or says why it cannot be used (then nothing changes).
    pub fn take(&mut self, nonce: u64, now: Millis) -> Result<(), NonceError> {
        let t = i64::try_from(nonce).unwrap_or(i64::MAX);
        if t <= now.saturating_sub(2 * DAY) || t >= now.saturating_add(DAY) {
            return Err(NonceError::OutOfWindow { nonce, now });
        }
        if self.kept.contains(&nonce) {
            return Err(NonceError::Duplicate);
        }
        if self.kept.len() >= KEPT
            && let Some(&smallest) = self.kept.first()
            && nonce <= smallest
        {
            return Err(NonceError::TooLow { nonce, smallest });
        }
        self.kept.insert(nonce);
        while self.kept.len() > KEPT {
            self.kept.pop_first();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Millis = 1_750_000_000_000;

    #[test]
    fn a_nonce_is_used_once_within_its_window_and_above_the_kept_ones() {
        let mut n = Nonces::default();
        let now = NOW as u64;
        assert_eq!(n.take(now, NOW), Ok(()));
        assert_eq!(n.take(now, NOW), Err(NonceError::Duplicate));
        assert_eq!(n.take(now - 5, NOW), Ok(()), "lower is fine while fewer than 100 are kept");
        let two_days = 2 * DAY as u64;
        assert!(matches!(n.take(now - two_days, NOW), Err(NonceError::OutOfWindow { .. })));
        assert!(matches!(n.take(now + DAY as u64, NOW), Err(NonceError::OutOfWindow { .. })));
        for i in 1..=100 {
            assert_eq!(n.take(now + i, NOW), Ok(()));
        }
        // Kept now: now+1 ..= now+100; now-5 and now fell out.
        assert_eq!(n.take(now + 1, NOW), Err(NonceError::Duplicate));
        assert_eq!(
            n.take(now - 1, NOW),
            Err(NonceError::TooLow { nonce: now - 1, smallest: now + 1 })
        );
        assert_eq!(n.take(now + 500, NOW), Ok(()));
        assert!(n.take(now + 2, NOW).is_err(), "now+2 is the smallest kept: not above it");
        assert!(NonceError::Duplicate.text().starts_with("Invalid nonce"));
    }
}
