//! Which share of the budget a call draws from, set by the task that makes it: the handle a
//! call goes through marks it as a read, and a scheduled job marks its whole run as background
//! work, so its reads are paced instead of refused.

use std::future::Future;

/// Which share of the budget a call draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Orders, cancels, lookups and prices of execution and protection.
    Money,
    /// What an agent asked for: refused with a 429 past the read share.
    Read,
    /// A read of the service's own scheduled scans: it waits for the next minute instead of
    /// being refused, and uses at most part of the read share (see `BACKGROUND_PART_PCT`).
    Background,
}

tokio::task_local! {
    static CLASS: Class;
    static BACKGROUND: ();
}

/// The class of the call being made on this task (money unless marked as a read).
pub fn current_class() -> Class {
    CLASS.try_with(|c| *c).unwrap_or(Class::Money)
}

/// Runs `call` as a read: an agent's, or a background one inside [`in_background`].
pub async fn as_read<F: Future>(call: F) -> F::Output {
    let class = if BACKGROUND.try_with(|_| ()).is_ok() { Class::Background } else { Class::Read };
    CLASS.scope(class, call).await
}

/// Runs `work` (a scheduled job) so that its reads are background reads. Its unmarked calls
/// stay money calls.
pub async fn in_background<F: Future>(work: F) -> F::Output {
    BACKGROUND.scope((), work).await
}
