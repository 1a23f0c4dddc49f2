//! Aggregates over the closed-trade history (`GET /api/trades/stats`): counts, win rate, pnl
//! totals, profit factor and the maximum drawdown of the cumulative pnl curve, overall and per
//! strategy. The arithmetic is in decimals over rows in the order they closed
//! ([`chronological`]); only the answer is converted to floats.

use std::collections::BTreeMap;

use chrono::DateTime;
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::Serialize;
use utoipa::ToSchema;

use super::book::Book;
use super::trade::ClosedTrade;
use crate::money::json_amount;
use crate::store::{StoreError, tables};

/// The statistics of a set of closed trades. Money is in the quote asset, net of fees.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Aggregate {
    /// Closed trades.
    pub count: usize,
    /// Trades with pnl > 0.
    pub wins: usize,
    /// Trades with pnl < 0.
    pub losses: usize,
    /// Trades with pnl exactly 0.
    pub breakeven: usize,
    /// wins / count in percent (0-100, 2 decimals); null without trades.
    #[schema(required = true)]
    pub win_rate: Option<f64>,
    /// Sum of the pnl.
    pub total_pnl: f64,
    /// total_pnl / count; null without trades.
    #[schema(required = true)]
    pub avg_pnl: Option<f64>,
    /// Largest pnl of one trade; null without trades.
    #[schema(required = true)]
    pub best: Option<f64>,
    /// Smallest pnl of one trade; null without trades.
    #[schema(required = true)]
    pub worst: Option<f64>,
    /// Sum of the winning trades' pnl.
    pub gross_profit: f64,
    /// Sum of the losing trades' pnl as a positive number.
    pub gross_loss: f64,
    /// gross_profit / gross_loss (4 decimals); null when there is no loss (undefined).
    #[schema(required = true)]
    pub profit_factor: Option<f64>,
    /// Largest fall of the cumulative pnl from its running peak (the curve starts at 0 before
    /// the first trade), in the quote asset, as a positive number; 0 when it never fell.
    pub max_drawdown: f64,
}

/// `GET /api/trades/stats`: the whole history and each strategy's share of it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TradeStats {
    /// The currency every amount is in (`[market] quote_asset` on exchange A, USDC on
    /// exchange B).
    pub currency: String,
    #[serde(flatten)]
    pub overall: Aggregate,
    /// The same statistics per strategy (`bot` of the trade; `synced` for trades copied from
    /// the exchange by `POST /api/trades/sync`).
    pub by_bot: BTreeMap<String, Aggregate>,
    /// The same statistics per symbol.
    pub by_symbol: BTreeMap<String, Aggregate>,
    /// Pnl per day the trades closed on (`[market] timezone`), oldest first, the last
    /// [`DAYS`] days that had a closed trade.
    pub daily: Vec<PeriodPnl>,
    /// Pnl per week (Monday to Sunday, `[market] timezone`), oldest first, the last [`WEEKS`]
    /// weeks that had a closed trade.
    pub weekly: Vec<PeriodPnl>,
}

/// Days of `daily` at most.
pub const DAYS: usize = 90;
/// Weeks of `weekly` at most.
pub const WEEKS: usize = 104;

/// The closed trades of one day or week.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PeriodPnl {
    /// The first day of the period, `YYYY-MM-DD` in `[market] timezone`.
    #[schema(example = "2026-11-23")]
    pub start: String,
    pub count: usize,
    pub wins: usize,
    pub losses: usize,
    /// Net pnl of the trades that closed in the period.
    pub pnl: f64,
}

/// The Monday of `day`'s week.
fn week_start(day: chrono::NaiveDate) -> chrono::NaiveDate {
    use chrono::Datelike;
    day - chrono::Days::new(u64::from(day.weekday().num_days_from_monday()))
}

/// The pnl of `closes` (closing time, pnl) per period, the period of a day given by
/// `start_of`, days in `tz`; the last `keep` periods.
fn per_period(
    closes: &[(&str, Decimal)],
    start_of: fn(chrono::NaiveDate) -> chrono::NaiveDate,
    tz: chrono_tz::Tz,
    keep: usize,
) -> Vec<PeriodPnl> {
    let mut periods: BTreeMap<chrono::NaiveDate, Vec<Decimal>> = BTreeMap::new();
    for (closed_at, pnl) in closes {
        let Ok(at) = DateTime::parse_from_rfc3339(closed_at) else { continue };
        let day = at.with_timezone(&tz).date_naive();
        periods.entry(start_of(day)).or_default().push(*pnl);
    }
    let skip = periods.len().saturating_sub(keep);
    periods
        .into_iter()
        .skip(skip)
        .map(|(start, pnls)| PeriodPnl {
            start: start.to_string(),
            count: pnls.len(),
            wins: pnls.iter().filter(|p| **p > Decimal::ZERO).count(),
            losses: pnls.iter().filter(|p| **p < Decimal::ZERO).count(),
            pnl: json_amount(pnls.iter().sum()),
        })
        .collect()
}

impl Aggregate {
    /// The statistics of `pnls`, given in the order the trades closed.
    pub fn of(pnls: &[Decimal]) -> Self {
        let count = pnls.len();
        let wins = pnls.iter().filter(|p| **p > Decimal::ZERO).count();
        let losses = pnls.iter().filter(|p| **p < Decimal::ZERO).count();
        let total: Decimal = pnls.iter().sum();
        let gross_profit: Decimal = pnls.iter().filter(|p| **p > Decimal::ZERO).sum();
        let gross_loss: Decimal = -pnls.iter().filter(|p| **p < Decimal::ZERO).sum::<Decimal>();
        let (mut cumulative, mut peak, mut drawdown) =
            (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO);
        for pnl in pnls {
            cumulative += pnl;
            peak = peak.max(cumulative);
            drawdown = drawdown.max(peak - cumulative);
        }
        let per_trade = |d: Decimal| (count > 0).then(|| d / Decimal::from(count as u64));
        Aggregate {
            count,
            wins,
            losses,
            breakeven: count - wins - losses,
            win_rate: per_trade(Decimal::from(wins as u64) * Decimal::ONE_HUNDRED)
                .map(|r| r.round_dp(2).to_f64().unwrap_or(0.0)),
            total_pnl: json_amount(total),
            avg_pnl: per_trade(total).map(json_amount),
            best: pnls.iter().max().copied().map(json_amount),
            worst: pnls.iter().min().copied().map(json_amount),
            gross_profit: json_amount(gross_profit),
            gross_loss: json_amount(gross_loss),
            profit_factor: (!gross_loss.is_zero())
                .then(|| (gross_profit / gross_loss).round_dp(4).to_f64().unwrap_or(0.0)),
            max_drawdown: json_amount(drawdown),
        }
    }
}

impl TradeStats {
    /// The statistics of `rows`, given in the order the trades closed; days and weeks are
    /// those of `tz`.
    pub fn of(rows: &[ClosedTrade], currency: &str, tz: chrono_tz::Tz) -> Self {
        let pnls: Vec<Decimal> = rows.iter().map(|r| r.pnl).collect();
        let closes: Vec<(&str, Decimal)> =
            rows.iter().map(|r| (r.closed_at.as_str(), r.pnl)).collect();
        let grouped = |key: fn(&ClosedTrade) -> &str| {
            let mut groups: BTreeMap<String, Vec<Decimal>> = BTreeMap::new();
            for row in rows {
                groups.entry(key(row).to_string()).or_default().push(row.pnl);
            }
            groups.into_iter().map(|(name, pnls)| (name, Aggregate::of(&pnls))).collect()
        };
        TradeStats {
            currency: currency.to_string(),
            overall: Aggregate::of(&pnls),
            by_bot: grouped(|r| &r.trade.bot),
            by_symbol: grouped(|r| &r.trade.symbol),
            daily: per_period(&closes, |day| day, tz, DAYS),
            weekly: per_period(&closes, week_start, tz, WEEKS),
        }
    }
}

/// Every closed trade in the order it closed (`closed_at`; rows that closed at the same
/// instant in the order they were recorded). A row copied from the exchange by a later sync
/// is recorded after rows that closed later than it, so the recording order alone is not the
/// closing order.
pub fn chronological(book: &Book) -> Result<Vec<ClosedTrade>, StoreError> {
    let mut rows: Vec<(u64, ClosedTrade)> =
        book.store().read(|r| r.newest(tables::CLOSED_TRADES, 0, usize::MAX))?;
    rows.sort_by_cached_key(|(seq, row)| (closed_ms(&row.closed_at), *seq));
    Ok(rows.into_iter().map(|(_, row)| row).collect())
}

/// Milliseconds of an ISO 8601 time (unreadable ones sort first).
fn closed_ms(iso: &str) -> i64 {
    DateTime::parse_from_rfc3339(iso).map_or(i64::MIN, |t| t.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn pnls(list: &[&str]) -> Vec<Decimal> {
        list.iter().map(|s| d(s)).collect()
    }

    #[test]
    fn days_and_weeks_are_those_of_the_market_s_time_zone() {
        let tokyo: chrono_tz::Tz = "Asia/Tokyo".parse().unwrap();
        // Sunday 2026-03-01 23:30 UTC is Monday 08:30 in Tokyo: the same day and week as the
        // Monday close; the Saturday close is the week before.
        let closes = [
            ("2026-02-28T10:00:00Z", d("-4")),
            ("2026-03-01T23:30:00Z", d("10")),
            ("2026-03-02T03:00:00Z", d("5")),
        ];
        let daily = per_period(&closes, |day| day, tokyo, DAYS);
        let starts: Vec<&str> = daily.iter().map(|p| p.start.as_str()).collect();
        assert_eq!(starts, ["2026-02-28", "2026-03-02"]);
        assert_eq!((daily[1].count, daily[1].pnl), (2, 15.0));
        let weekly = per_period(&closes, week_start, tokyo, WEEKS);
        let weeks: Vec<(&str, f64)> = weekly.iter().map(|p| (p.start.as_str(), p.pnl)).collect();
        assert_eq!(weeks, [("2026-02-23", -4.0), ("2026-03-02", 15.0)]);
        assert_eq!(per_period(&closes, |day| day, tokyo, 1).len(), 1, "only the last days");
    }

    #[test]
    fn a_win_a_loss_and_a_breakeven_by_hand() {
        // +30, -10, 0, +20, -25: total 15; gross 50 / 35; curve 30, 20, 20, 40, 15.
        let a = Aggregate::of(&pnls(&["30", "-10", "0", "20", "-25"]));
        assert_eq!((a.count, a.wins, a.losses, a.breakeven), (5, 2, 2, 1));
        assert_eq!(a.win_rate, Some(40.0));
        assert_eq!(a.total_pnl, 15.0);
        assert_eq!(a.avg_pnl, Some(3.0));
        assert_eq!((a.best, a.worst), (Some(30.0), Some(-25.0)));
        assert_eq!((a.gross_profit, a.gross_loss), (50.0, 35.0));
        // 50 / 35 = 1.428571...
        assert_eq!(a.profit_factor, Some(1.4286));
        // Peak 40 after the fourth trade, then 15: a fall of 25 (the earlier fall was 10).
        assert_eq!(a.max_drawdown, 25.0);
    }

    #[test]
    fn the_drawdown_counts_from_zero_before_the_first_trade() {
        // Curve -5, -12, -2: the peak is the starting 0, the trough -12.
        let a = Aggregate::of(&pnls(&["-5", "-7", "10"]));
        assert_eq!(a.max_drawdown, 12.0);
        assert_eq!(a.profit_factor, Some(0.8333), "10 / 12");
        assert_eq!(a.win_rate, Some(33.33));
    }

    #[test]
    fn the_order_matters_for_the_drawdown_only() {
        let up_then_down = Aggregate::of(&pnls(&["10", "10", "-15"]));
        let down_then_up = Aggregate::of(&pnls(&["-15", "10", "10"]));
        assert_eq!(up_then_down.max_drawdown, 15.0);
        assert_eq!(down_then_up.max_drawdown, 15.0, "from 0 down to -15");
        let recovering = Aggregate::of(&pnls(&["10", "-4", "8", "-6", "1"]));
        // Curve 10, 6, 14, 8, 9: falls of 4 (10 -> 6) and 6 (14 -> 8).
        assert_eq!(recovering.max_drawdown, 6.0);
        assert_eq!(up_then_down.total_pnl, down_then_up.total_pnl);
    }

    #[test]
    fn no_losses_leave_the_profit_factor_undefined() {
        let a = Aggregate::of(&pnls(&["1.5", "2.25"]));
        assert_eq!(a.profit_factor, None);
        assert_eq!(a.max_drawdown, 0.0);
        assert_eq!(a.win_rate, Some(100.0));
        assert_eq!(a.avg_pnl, Some(1.875));
    }

    #[test]
    fn no_trades_give_zeros_and_nulls() {
        let a = Aggregate::of(&[]);
        assert_eq!((a.count, a.wins, a.losses, a.breakeven), (0, 0, 0, 0));
        assert_eq!((a.win_rate, a.avg_pnl, a.best, a.worst), (None, None, None, None));
        assert_eq!((a.total_pnl, a.max_drawdown, a.profit_factor), (0.0, 0.0, None));
    }

    #[test]
    fn decimals_add_up_exactly() {
        // 0.1 + 0.2 - 0.3 is exactly 0 in decimals (floats would leave 5.55e-17).
        let a = Aggregate::of(&pnls(&["0.1", "0.2", "-0.3"]));
        assert_eq!(a.total_pnl, 0.0);
        assert_eq!(a.avg_pnl, Some(0.0));
        assert_eq!(a.max_drawdown, 0.3);
    }
}
