//! What blocks new entries, checked server-side at order time on every entry path (POST
//! /api/trade, a confirm, manual entries, scans): the drawdown pause, the boss's own pause,
//! the daily trade limit and the consecutive-loss limit. Exits are never blocked.
//!
//! The pause is execution's own state (table `entry_pause`): protection's drawdown watch sets
//! and clears it through [`pause_in`] and [`resume_in`] inside its own transaction, so the
//! dependency runs one way — protection drives execution, execution never reads protection.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Execution;
use crate::store::{StoreError, Writer, tables};

/// The pause the drawdown watch starts.
const DRAWDOWN: &str = "drawdown";
/// The pause the boss starts (`POST /api/protection/pause`): only resuming lifts it, never a
/// rising high-water mark.
const OPERATOR: &str = "operator";

/// New entries paused until someone resumes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryPause {
    /// ISO 8601.
    pub since: String,
    /// The whole sentence, starting with its code (`drawdown_paused:`, `entries_paused:`).
    pub reason: String,
}

/// Why no new entry may be placed now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryBlock {
    /// The drawdown pause (409 `drawdown_paused`).
    DrawdownPaused(EntryPause),
    /// The boss paused entries (409 `entries_paused`).
    OperatorPaused(EntryPause),
    /// `max_trades_per_day` of the strategy `bot` reached (409 `daily_limit_reached`).
    DailyTrades { today: i64, max: u32, bot: String },
    /// `[risk] max_consecutive_losses` reached (409 `daily_limit_reached`).
    ConsecutiveLosses { count: i64, max: u32 },
}

impl EntryBlock {
    /// The API's error code, also the scans' skip reason.
    pub fn code(&self) -> &'static str {
        match self {
            Self::DrawdownPaused(_) => "drawdown_paused",
            Self::OperatorPaused(_) => "entries_paused",
            Self::DailyTrades { .. } | Self::ConsecutiveLosses { .. } => "daily_limit_reached",
        }
    }
}

impl fmt::Display for EntryBlock {
    /// `<code>: <why>`, the sentence the boss, the agents and the log read.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DrawdownPaused(pause) | Self::OperatorPaused(pause) => f.write_str(&pause.reason),
            // Each says how it ends: at midnight by itself, now by the operator's reset, or for
            // good by the config key.
            Self::DailyTrades { today, max, bot } => write!(
                f,
                "daily_limit_reached: {today} trades today, [strategy.{bot}] max_trades_per_day \
                 is {max}; it resets at midnight ([market] timezone), or now with POST \
                 /api/reset-daily (admin)"
            ),
            Self::ConsecutiveLosses { count, max } => write!(
                f,
                "daily_limit_reached: {count} consecutive losses today, \
                 [risk] max_consecutive_losses is {max}; it resets at midnight ([market] \
                 timezone), or now with POST /api/reset-daily (admin)"
            ),
        }
    }
}

/// Pauses new entries (inside the caller's transaction).
pub fn pause_in(w: &Writer, pause: &EntryPause) -> Result<(), StoreError> {
    w.put(tables::ENTRY_PAUSE, DRAWDOWN, pause)
}

/// Lifts the pause; true when entries were paused.
pub fn resume_in(w: &Writer) -> Result<bool, StoreError> {
    w.remove(tables::ENTRY_PAUSE, DRAWDOWN)
}

/// The pause as the caller's transaction sees it.
pub fn pause_of(w: &Writer) -> Result<Option<EntryPause>, StoreError> {
    w.get(tables::ENTRY_PAUSE, DRAWDOWN)
}

/// Lifts the boss's pause (inside the caller's transaction); true when there was one.
pub fn operator_resume_in(w: &Writer) -> Result<bool, StoreError> {
    w.remove(tables::ENTRY_PAUSE, OPERATOR)
}

impl Execution {
    /// The drawdown pause, if entries are paused.
    pub fn entry_pause(&self) -> Result<Option<EntryPause>, StoreError> {
        self.inner.book.store().read(|r| r.get(tables::ENTRY_PAUSE, DRAWDOWN))
    }

    /// The boss's pause, if he paused entries.
    pub fn operator_pause(&self) -> Result<Option<EntryPause>, StoreError> {
        self.inner.book.store().read(|r| r.get(tables::ENTRY_PAUSE, OPERATOR))
    }

    /// Pauses new entries for the boss (`by` names who, for the reason), or answers the pause
    /// that holds already (`false`: nothing changed).
    pub fn pause_entries(&self, by: &str) -> Result<(EntryPause, bool), StoreError> {
        let since = self.inner.clock.now().to_rfc3339();
        let pause = EntryPause {
            reason: format!(
                "entries_paused: new entries paused by {by} since {since}; exits, stops and \
                 trailing go on. POST /api/protection/resume (admin) lifts it"
            ),
            since,
        };
        self.inner.book.store().write(|w| match w.get(tables::ENTRY_PAUSE, OPERATOR)? {
            Some(holding) => Ok((holding, false)),
            None => {
                w.put(tables::ENTRY_PAUSE, OPERATOR, &pause)?;
                Ok((pause, true))
            }
        })
    }

    /// Why no new entry of strategy `bot` may be placed now, if anything blocks it.
    pub fn entry_block(&self, bot: &str) -> Result<Option<EntryBlock>, StoreError> {
        if let Some(pause) = self.entry_pause()? {
            return Ok(Some(EntryBlock::DrawdownPaused(pause)));
        }
        if let Some(pause) = self.operator_pause()? {
            return Ok(Some(EntryBlock::OperatorPaused(pause)));
        }
        let counters = self.counters()?;
        let max = self.strategy_keys(bot).max_trades_per_day;
        if counters.trades_today >= i64::from(max) {
            let bot = bot.to_string();
            return Ok(Some(EntryBlock::DailyTrades { today: counters.trades_today, max, bot }));
        }
        let max = self.inner.config.risk.max_consecutive_losses;
        if max > 0 && counters.consecutive_losses >= i64::from(max) {
            return Ok(Some(EntryBlock::ConsecutiveLosses {
                count: counters.consecutive_losses,
                max,
            }));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_block_names_its_code_first() {
        let trades = EntryBlock::DailyTrades { today: 2, max: 2, bot: "mr_combined".into() };
        assert_eq!(trades.code(), "daily_limit_reached");
        assert_eq!(
            trades.to_string(),
            "daily_limit_reached: 2 trades today, [strategy.mr_combined] max_trades_per_day is \
             2; it resets at midnight ([market] timezone), or now with POST /api/reset-daily \
             (admin)"
        );
        let losses = EntryBlock::ConsecutiveLosses { count: 3, max: 3 };
        assert!(losses.to_string().starts_with("daily_limit_reached: 3 consecutive losses"));
        let pause = EntryBlock::DrawdownPaused(EntryPause {
            since: "t".into(),
            reason: "drawdown_paused: equity fell".into(),
        });
        assert_eq!(
            (pause.code(), pause.to_string().as_str()),
            ("drawdown_paused", "drawdown_paused: equity fell")
        );
        let boss = EntryBlock::OperatorPaused(EntryPause {
            since: "t".into(),
            reason: "entries_paused: by boss".into(),
        });
        assert_eq!(
            (boss.code(), boss.to_string().as_str()),
            ("entries_paused", "entries_paused: by boss")
        );
    }
}
