//! Exchange B's address-based action budget (wire reference §3.1): every order or cancel an
//! account sends costs one request from a budget of an initial buffer (10 000 on the
//! exchange; smaller in tests through [`ExchangeBConfig`](super::ExchangeBConfig)) plus one
//! per whole USDC the account traded. Cancels get a larger cap, so open orders can always be
//! cancelled. Past the cap one action every 10 s still goes through; the others are refused
//! with the exchange's text, and — the pessimistic reading of the docs, which do not say —
//! count as used too, so hammering a spent budget only deepens it.

use crate::clock::Millis;
use crate::core::Engine;
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;

/// The budget everyone starts with on the exchange.
pub const INITIAL_REQUESTS: u64 = 10_000;
/// How often an account past its cap may still act.
pub const OVER_BUDGET_EVERY_MS: Millis = 10_000;
/// Cancels may go this far past the cap (or to twice the cap, whichever is less).
const CANCEL_EXTRA: u64 = 100_000;

/// The quote volume `account` traded, in USDC.
pub fn traded_volume(e: &Engine, account: usize) -> Decimal {
    e.trades.iter().filter(|t| t.account == account).map(|t| t.quote_qty).sum()
}

/// The budget of an account that traded `volume`.
pub fn cap(initial: u64, volume: Decimal) -> u64 {
    initial.saturating_add(volume.trunc().to_u64().unwrap_or(0))
}

/// The cap that applies to an action: cancels get the larger one.
pub fn cap_for(cap: u64, cancel: bool) -> u64 {
    if cancel { cap.saturating_add(CANCEL_EXTRA).min(cap.saturating_mul(2)) } else { cap }
}

/// The top-level error of an action refused past the cap, in the exchange's words.
pub fn refusal(used: u64, cap: u64, volume: Decimal) -> String {
    format!(
        "Too many cumulative requests sent ({used} > {cap}) for cumulative volume traded \
         ${:.2}. Place taker orders to free up 1 request per USDC traded.",
        volume.round_dp(2)
    )
}

/// One account's spending.
#[derive(Debug, Default, Clone, Copy)]
pub struct Spending {
    /// Requests used, refused ones included.
    pub used: u64,
    /// When the last action past the cap went through.
    last_over_cap: Option<Millis>,
}

impl Spending {
    /// Spends `n` requests at `now` against `cap`: `Err(used)` when refused.
    pub fn spend(&mut self, n: u64, cap: u64, now: Millis) -> Result<(), u64> {
        self.used = self.used.saturating_add(n);
        if self.used <= cap {
            return Ok(());
        }
        let rested = self.last_over_cap.is_none_or(|at| now - at >= OVER_BUDGET_EVERY_MS);
        if rested {
            self.last_over_cap = Some(now);
            Ok(())
        } else {
            Err(self.used)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_cap_one_action_per_ten_seconds_goes_through() {
        let mut s = Spending::default();
        assert_eq!(s.spend(2, 3, 0), Ok(()));
        assert_eq!(s.spend(1, 3, 1), Ok(()), "exactly at the cap");
        assert_eq!(s.spend(1, 3, 2), Ok(()), "the first past it");
        assert_eq!(s.spend(1, 3, 9_000), Err(5), "refused, and counted");
        assert_eq!(s.spend(1, 3, 12_001), Ok(()), "10 s after the last one that went");
        assert_eq!(s.used, 6);
    }

    #[test]
    fn cancels_get_the_larger_cap_and_the_text_is_the_exchanges() {
        assert_eq!(cap(10, "12.9".parse().unwrap()), 22);
        assert_eq!(cap_for(10, true), 20);
        assert_eq!(cap_for(200_000, true), 300_000);
        assert_eq!(cap_for(10, false), 10);
        assert_eq!(
            refusal(14_295, 14_294, "4295.524".parse().unwrap()),
            "Too many cumulative requests sent (14295 > 14294) for cumulative volume traded \
             $4295.52. Place taker orders to free up 1 request per USDC traded."
        );
    }
}
