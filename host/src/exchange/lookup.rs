//! Settling an ambiguous outcome (a timeout, a 5xx, a lost answer) by looking the order or
//! list up by its client order id before anything is sent again: found is the answer;
//! "unknown" `absent_after` times means it was never placed (on exchange A twice, a moment
//! apart: the caller may send it once more; exchange B never concludes that, since an action
//! answered with a 5xx may still land in a later block); anything else means the exchange
//! cannot tell, and nothing is sent.

use std::future::Future;
use std::time::Duration;

use super::ExchangeError;

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
        tokio::time::sleep(delay * attempt.min(4)).await;
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
