//! The trade book: open trades, closed-trade history and the daily counters, all in the
//! store. Writes that belong together (a fill and its trade, a close and its history row and
//! counters) go through one transaction via the `*_in` functions.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use rust_decimal::Decimal;
use serde::Serialize;
use utoipa::ToSchema;

use super::trade::{ClosedTrade, Trade};
use crate::store::decoded::DecodedTable;
use crate::store::{Reader, Store, StoreError, Writer, tables};

const TRADES_TODAY: &str = "trades_today";
const CONSECUTIVE_LOSSES: &str = "consecutive_losses";
/// The day the two counters belong to, as YYYYMMDD in the configured time zone.
const COUNTERS_DAY: &str = "counters_day";

/// The daily counters as of now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct Counters {
    pub trades_today: i64,
    pub consecutive_losses: i64,
}

/// The day `now` falls on in `tz`: the key of the daily counters and a trade's `date`.
#[derive(Debug, Clone, Copy)]
pub struct Day {
    pub key: i64,
}

impl Day {
    pub fn of(now: DateTime<Utc>, tz: Tz) -> Self {
        let local = now.with_timezone(&tz).date_naive();
        let key = local.format("%Y%m%d").to_string().parse().unwrap_or(0);
        Day { key }
    }

    /// YYYY-MM-DD.
    pub fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.key / 10_000, self.key / 100 % 100, self.key % 100)
    }
}

/// Store access of the execution area. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Book {
    store: Store,
    /// The open trades, decoded again only where they changed (see [`DecodedTable`]).
    open: Arc<DecodedTable<Trade>>,
}

impl Book {
    pub fn new(store: Store) -> Self {
        Self { store, open: Arc::new(DecodedTable::new(tables::OPEN_TRADES)) }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn open_trade(&self, symbol: &str) -> Result<Option<Trade>, StoreError> {
        Ok(self.open_trades_shared()?.iter().find(|t| t.symbol == symbol).cloned())
    }

    /// Every open trade, by symbol.
    pub fn open_trades(&self) -> Result<Vec<Trade>, StoreError> {
        Ok(self.open_trades_shared()?.as_ref().clone())
    }

    /// [`Book::open_trades`] without a copy.
    pub fn open_trades_shared(&self) -> Result<Arc<Vec<Trade>>, StoreError> {
        self.open.all(&self.store)
    }

    pub fn put_trade(&self, trade: &Trade) -> Result<(), StoreError> {
        self.store.write(|w| put_trade_in(w, trade))
    }

    /// Closed trades, newest first.
    pub fn history(&self, offset: usize, limit: usize) -> Result<Vec<ClosedTrade>, StoreError> {
        Ok(self
            .store
            .read(|r| r.newest(tables::CLOSED_TRADES, offset, limit))?
            .into_iter()
            .map(|(_, t)| t)
            .collect())
    }

    pub fn counters(&self, today: Day) -> Result<Counters, StoreError> {
        self.store.read(|r| counters_in(r, today))
    }

    /// Zeroes trades_today; returns the value before.
    pub fn reset_trades_today(&self, today: Day) -> Result<i64, StoreError> {
        self.store.write(|w| {
            let before = roll(w, today)?.trades_today;
            w.set_counter(TRADES_TODAY, 0)?;
            Ok(before)
        })
    }
}

pub fn put_trade_in(w: &Writer, trade: &Trade) -> Result<(), StoreError> {
    w.put(tables::OPEN_TRADES, &trade.symbol, trade)
}

/// A new trade was entered: store it and count it for the day.
pub fn open_trade_in(w: &Writer, trade: &Trade, today: Day) -> Result<(), StoreError> {
    let counters = roll(w, today)?;
    w.set_counter(TRADES_TODAY, counters.trades_today + 1)?;
    put_trade_in(w, trade)
}

/// How far an exit may lie from the entry, in percent of the entry price, and still be a
/// scratch: about the round trip's fees (0.1 % a side on exchange A). A scratch costs only
/// its fees; counting it as a loss would let a few flat trades stop all entries.
const SCRATCH_PCT: Decimal = Decimal::from_parts(2, 0, 0, false, 1);

/// What a closed trade does to the consecutive-loss streak.
fn streak_after(closed: &ClosedTrade, streak: i64) -> i64 {
    let entry = closed.trade.entry_px;
    let moved_pct = if entry.is_zero() {
        Decimal::ONE_HUNDRED
    } else {
        ((closed.exit_px - entry) / entry * Decimal::ONE_HUNDRED).abs()
    };
    if moved_pct <= SCRATCH_PCT {
        streak
    } else if closed.pnl.is_sign_negative() && !closed.pnl.is_zero() {
        streak + 1
    } else {
        0
    }
}

/// A trade ended: remove it from the open trades, append it to the history and update the
/// consecutive-loss counter (a loss adds one, a win resets it, a scratch — an exit within
/// [`SCRATCH_PCT`] of the entry — leaves it as it is).
pub fn close_trade_in(w: &Writer, closed: &ClosedTrade, today: Day) -> Result<(), StoreError> {
    let counters = roll(w, today)?;
    let losses = streak_after(closed, counters.consecutive_losses);
    w.set_counter(CONSECUTIVE_LOSSES, losses)?;
    w.remove(tables::OPEN_TRADES, &closed.trade.symbol)?;
    w.append(tables::CLOSED_TRADES, closed)?;
    Ok(())
}

fn counters_in(r: &Reader, today: Day) -> Result<Counters, StoreError> {
    if r.counter(COUNTERS_DAY)? != today.key {
        return Ok(Counters { trades_today: 0, consecutive_losses: 0 });
    }
    Ok(Counters {
        trades_today: r.counter(TRADES_TODAY)?,
        consecutive_losses: r.counter(CONSECUTIVE_LOSSES)?,
    })
}

/// Resets both counters when the stored day is not `today` (midnight in the configured time
/// zone has passed), and returns the counters of today.
fn roll(w: &Writer, today: Day) -> Result<Counters, StoreError> {
    if w.counter(COUNTERS_DAY)? != today.key {
        w.set_counter(COUNTERS_DAY, today.key)?;
        w.set_counter(TRADES_TODAY, 0)?;
        w.set_counter(CONSECUTIVE_LOSSES, 0)?;
    }
    Ok(Counters {
        trades_today: w.counter(TRADES_TODAY)?,
        consecutive_losses: w.counter(CONSECUTIVE_LOSSES)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::trade::CloseReason;

    fn closed(entry: &str, exit: &str, pnl: &str) -> ClosedTrade {
        let d = |s: &str| s.parse::<Decimal>().unwrap();
        let trade: Trade = serde_json::from_value(serde_json::json!({
            "symbol": "ETHUSDT", "direction": "buy", "bot": "mr_combined",
            "exchange": "exchange_a", "size": "0.0258", "entry_px": entry, "entry_quote": "99",
            "sl_px": "1", "tp_px": "9999", "sl_limit_px": "1", "sl_pct": "2", "tp_pct": "5",
            "entry_order_id": null, "entry_client_order_id": null,
            "protection": {"state": "protected"}, "source": "trade", "date": "2026-05-01",
            "opened_at": "2026-05-01T00:00:00Z"
        }))
        .unwrap();
        ClosedTrade {
            trade,
            exit_px: d(exit),
            exit_quote: d("99"),
            qty_sold: d("0.0258"),
            pnl: d(pnl),
            reason: CloseReason::Market,
            closed_at: "2026-05-01T01:00:00Z".into(),
        }
    }

    #[test]
    fn a_scratch_neither_adds_to_nor_resets_the_loss_streak() {
        // The flat ETH trade: 3836.48 in, 3835.44 out, only the fees lost.
        assert_eq!(streak_after(&closed("3836.48", "3835.44", "-0.22"), 2), 2);
        assert_eq!(streak_after(&closed("3000", "2940", "-2.18"), 2), 3, "a stop-out is a loss");
        assert_eq!(streak_after(&closed("3000", "3150", "4.75"), 2), 0, "a win resets it");
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    #[test]
    fn counters_reset_at_midnight_in_the_configured_time_zone() {
        let dir = tempfile::tempdir().unwrap();
        let book = Book::new(Store::open(dir.path()).unwrap());
        let tz: Tz = "Asia/Tokyo".parse().unwrap();
        // 14:30 UTC is 23:30 in Tokyo.
        let day1 = Day::of(at("2026-05-01T14:30:00Z"), tz);
        book.store.write(|w| w.set_counter(COUNTERS_DAY, day1.key)).unwrap();
        book.store.write(|w| roll(w, day1).map(|_| ())).unwrap();
        book.store.write(|w| w.set_counter(TRADES_TODAY, 2)).unwrap();
        assert_eq!(book.counters(day1).unwrap().trades_today, 2);
        // 15:30 UTC is 00:30 the next day in Tokyo, still May 1st in UTC.
        let day2 = Day::of(at("2026-05-01T15:30:00Z"), tz);
        assert_eq!(day2.iso(), "2026-05-02");
        assert_eq!(book.counters(day2).unwrap().trades_today, 0);
        assert_eq!(book.reset_trades_today(day2).unwrap(), 0);
        assert_eq!(book.reset_trades_today(day1).unwrap(), 0, "rolled over to day 2 already");
    }
}
