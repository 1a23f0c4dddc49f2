//! Settling an ambiguous outcome (a timeout, a 5xx, a lost answer) by looking the order or
//! list up by its client order id before anything is sent again: found is the answer;
//! "unknown" `absent_after` times means it was never placed (on exchange A twice, a moment
//! apart: the caller may send it once more; exchange B never concludes that, since an action
//! answered with a 5xx may still land in a later block); anything else means the exchange
//! cannot tell, and nothing is sent.
//!
//! "Absent" alone never justifies sending an entry again: a just-placed order can briefly read
//! as unknown, and a damaged answer can hide an order that executed. Before any resend the
//! account's own trades of the symbol are read too ([`trades_since`]): a trade on the order's
//! side since it was first sent, by an order the lookup did not find, is doubt, and in doubt
//! nothing is sent.

use std::future::Future;
use std::time::Duration;

use super::{Exchange, ExchangeError, Order, OrderRef, Side};

/// How far before the first send a trade still counts as possibly this order's: the service's
/// clock and the exchange's may differ, and an answer may arrive late.
pub const TRADE_SLACK_MS: i64 = 60_000;

/// What the account's trades say about an order the lookup reported absent.
#[derive(Debug, PartialEq)]
pub enum TradeEvidence {
    /// No trade on the order's side since it was sent: sending it again is safe.
    Clear,
    /// A trade since then belongs to this very order (found by the trade's order id).
    Ours(Order),
    /// A trade since then that cannot be attributed, or the trades could not be read.
    Doubt(String),
}

/// How many "unknown" answers mean an order was never placed, on an exchange that answers
/// only once it has executed (exchange A's matching engine).
pub const ABSENT_AFTER: u32 = 2;

/// Looks up with `lookup` up to `attempts` times, waiting `delay` × the attempt (at most 4×)
/// before each: `Some` found, `None` absent (`absent_after` lookups said unknown), `Unknown`
/// when the exchange could not tell.
pub async fn by_client_id<T, F, Fut>(
    attempts: u32,
    delay: Duration,
    absent_after: u32,
    mut lookup: F,
) -> Result<Option<T>, ExchangeError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ExchangeError>>,
{
    let mut not_found = 0;
    let mut last_error = None;
    for attempt in 0..attempts.max(1) {
        if attempt > 0 {
            tokio::time::sleep(delay * attempt.min(4)).await;
        }
        match lookup().await {
            Ok(found) => return Ok(Some(found)),
            Err(ExchangeError::UnknownOrder { .. }) => {
                not_found += 1;
                if not_found >= absent_after {
                    return Ok(None);
                }
            }
            Err(e) => last_error = Some(e),
        }
    }
    let why =
        last_error.map_or_else(|| format!("said unknown {not_found} times"), |e| e.to_string());
    Err(ExchangeError::Unknown { detail: format!("the lookup by client order id failed: {why}") })
}

/// The exchange's time of `written_at` (RFC 3339 on the service's clock, whose now is
/// `now_ms`): the exchange's time now less the age, so a service clock far from the
/// exchange's cannot hide a trade from [`trades_since`].
pub async fn exchange_time_of(
    exchange: &dyn Exchange,
    written_at: &str,
    now_ms: i64,
) -> Result<i64, String> {
    let written = chrono::DateTime::parse_from_rfc3339(written_at)
        .map_err(|e| format!("time {written_at:?}: {e}"))?
        .timestamp_millis();
    let age = (now_ms - written).max(0);
    let now = exchange.server_time().await.map_err(|e| e.to_string())?;
    Ok(now - age)
}

/// Reads the account's trades of `symbol` since `since_ms` (exchange time, less
/// [`TRADE_SLACK_MS`]) on `side` (either side when unknown), and attributes each to its
/// order: an order with `client_id` is this one, another client id is not, anything
/// unreadable is doubt.
pub async fn trades_since(
    exchange: &dyn Exchange,
    symbol: &str,
    side: Option<Side>,
    client_id: &str,
    since_ms: i64,
) -> TradeEvidence {
    let trades = match exchange.my_trades(symbol, None).await {
        Ok(trades) => trades,
        Err(e) => return TradeEvidence::Doubt(format!("the account's trades cannot be read: {e}")),
    };
    let on_side = |is_buyer: bool| side.is_none_or(|s| (s == Side::Buy) == is_buyer);
    let mut order_ids: Vec<i64> = trades
        .iter()
        .filter(|t| on_side(t.is_buyer) && t.time >= since_ms - TRADE_SLACK_MS)
        .map(|t| t.order_id)
        .collect();
    order_ids.dedup();
    for order_id in order_ids {
        match exchange.order(symbol, &OrderRef::Id(order_id)).await {
            Ok(order) if order.client_order_id == client_id => return TradeEvidence::Ours(order),
            Ok(_) => {}
            Err(e) => {
                return TradeEvidence::Doubt(format!(
                    "the account traded {symbol} in order {order_id}, which cannot be read: {e}"
                ));
            }
        }
    }
    TradeEvidence::Clear
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn unknown() -> ExchangeError {
        ExchangeError::UnknownOrder { code: 0, msg: "unknown".into() }
    }

    #[tokio::test]
    async fn found_absent_or_cannot_tell() {
        let found =
            by_client_id(5, Duration::ZERO, ABSENT_AFTER, || async { Ok::<_, ExchangeError>(7) })
                .await;
        assert_eq!(found, Ok(Some(7)));

        let calls = AtomicU32::new(0);
        let absent = by_client_id(5, Duration::ZERO, ABSENT_AFTER, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err::<u32, _>(unknown())
        })
        .await;
        assert_eq!((absent, calls.load(Ordering::SeqCst)), (Ok(None), 2), "two unknowns suffice");

        let once = AtomicU32::new(0);
        let cannot_tell = by_client_id(3, Duration::ZERO, ABSENT_AFTER, || async {
            if once.fetch_add(1, Ordering::SeqCst) == 0 {
                Err::<u32, _>(unknown())
            } else {
                Err(ExchangeError::Unknown { detail: "502".into() })
            }
        })
        .await;
        assert!(matches!(cannot_tell, Err(ExchangeError::Unknown { .. })), "{cannot_tell:?}");

        let never =
            by_client_id(3, Duration::ZERO, u32::MAX, || async { Err::<u32, _>(unknown()) });
        assert!(
            matches!(never.await, Err(ExchangeError::Unknown { .. })),
            "never concluded absent"
        );
    }
}
