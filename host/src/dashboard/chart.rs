//! A trade on a chart: the stops it had (from the order journal), for an open trade's panel,
//! and for a closed trade picked in the history the candles around it
//! (`GET /api/dashboard/chart`), read from the exchange for that window.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::exchange::{Exchange, ExchangeError, Kline};
use crate::execution::journal::{JournalEntry, OrderKind, Outcome};
use crate::execution::{Execution, Trade};
use crate::market::Timeframe;
use crate::money::json_amount;
use crate::store::StoreError;

/// One point of a price line.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PricePoint {
    /// Milliseconds since the epoch.
    pub time: i64,
    pub price: f64,
}

/// One candle of a trade's chart.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChartCandle {
    /// Open time, milliseconds since the epoch.
    pub time: i64,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
}

/// Candles a chart of a closed trade shows at most.
const MAX_CANDLES: i64 = 300;
/// Candles before the entry and after the exit, for context.
const MARGIN_CANDLES: i64 = 8;

/// A window of a symbol's candles with the stops placed in it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TradeChart {
    pub symbol: String,
    /// The candles' timeframe: 15m for a trade of up to two days, coarser for longer ones.
    #[schema(example = "15m")]
    pub timeframe: String,
    /// Oldest first.
    pub candles: Vec<ChartCandle>,
    /// Every stop the symbol's protection was placed with in the window, oldest first.
    pub stops: Vec<PricePoint>,
}

/// Why a chart cannot be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("exchange error: {0}")]
    Exchange(#[from] ExchangeError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The finest timeframe that shows `span_ms` (plus its margins) in at most [`MAX_CANDLES`].
fn timeframe_for(span_ms: i64) -> Timeframe {
    [Timeframe::M15, Timeframe::H1, Timeframe::H4, Timeframe::D1]
        .into_iter()
        .find(|tf| span_ms / tf.duration_ms() + 2 * MARGIN_CANDLES <= MAX_CANDLES)
        .unwrap_or(Timeframe::D1)
}

/// The chart of `symbol` from `from_ms` to `to_ms` (a closed trade's opening and closing).
pub async fn window(
    exchange: &dyn Exchange,
    execution: &Execution,
    symbol: &str,
    from_ms: i64,
    to_ms: i64,
) -> Result<TradeChart, ChartError> {
    let span = to_ms.saturating_sub(from_ms).max(0);
    let timeframe = timeframe_for(span);
    let step = timeframe.duration_ms();
    let count = (span / step).saturating_add(2 * MARGIN_CANDLES).clamp(1, MAX_CANDLES);
    let end = to_ms.saturating_add(MARGIN_CANDLES * step);
    let klines = exchange.klines(symbol, timeframe.as_str(), count as u32, Some(end)).await?;
    let from = DateTime::from_timestamp_millis(from_ms).unwrap_or_default();
    let to = DateTime::from_timestamp_millis(to_ms).unwrap_or_default();
    Ok(TradeChart {
        symbol: symbol.to_string(),
        timeframe: timeframe.as_str().to_string(),
        candles: klines.iter().map(candle).collect(),
        stops: stops_between(execution, symbol, from, Some(to))?,
    })
}

/// A kline as the page draws it.
pub fn candle(k: &Kline) -> ChartCandle {
    ChartCandle {
        time: k.open_time,
        open: json_amount(k.open.0),
        high: json_amount(k.high.0),
        low: json_amount(k.low.0),
        close: json_amount(k.close.0),
    }
}

/// Stops of the protection placed for an open `trade` since it opened. A trade without a
/// readable opening time has no history to show.
pub fn stops_of(execution: &Execution, trade: &Trade) -> Result<Vec<PricePoint>, StoreError> {
    match DateTime::parse_from_rfc3339(&trade.opened_at) {
        Ok(opened) => stops_between(execution, &trade.symbol, opened.to_utc(), None),
        Err(_) => Ok(Vec::new()),
    }
}

/// Stops of the OCO lists and watched stops placed for `symbol` from `from` (to `to`), from
/// the order journal. The journal is read back only to `from` (it is in time order), so a poll
/// costs the trade's own orders, not the whole history.
fn stops_between(
    execution: &Execution,
    symbol: &str,
    from: DateTime<Utc>,
    to: Option<DateTime<Utc>>,
) -> Result<Vec<PricePoint>, StoreError> {
    let mut points: Vec<PricePoint> = execution
        .journal()
        .since(from)?
        .iter()
        .filter(|e| e.symbol == symbol && matches!(e.kind, OrderKind::Oco | OrderKind::WatchedStop))
        .filter(|e| matches!(e.outcome, Outcome::Placed { .. }))
        .filter_map(stop_point)
        .filter(|(t, _)| to.is_none_or(|to| *t <= to))
        .map(|(t, price)| PricePoint { time: t.timestamp_millis(), price })
        .collect();
    points.reverse();
    Ok(points)
}

fn stop_point(entry: &JournalEntry) -> Option<(DateTime<Utc>, f64)> {
    let time = DateTime::parse_from_rfc3339(&entry.created_at).ok()?.to_utc();
    let stop = entry.request.get("stop_price")?;
    let price = stop.as_str().and_then(|s| s.parse().ok()).or_else(|| stop.as_f64())?;
    Some((time, price))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_finest_timeframe_that_fits_the_trade() {
        let hour = 3_600_000;
        assert_eq!(timeframe_for(2 * hour), Timeframe::M15);
        assert_eq!(timeframe_for(48 * hour), Timeframe::M15, "192 + 16 candles");
        assert_eq!(timeframe_for(96 * hour), Timeframe::H1);
        assert_eq!(timeframe_for(40 * 24 * hour), Timeframe::H4);
        assert_eq!(timeframe_for(400 * 24 * hour), Timeframe::D1);
    }
}
