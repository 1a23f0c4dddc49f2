//! Faults injected at the exchange simulator during the entry and during the protection of a
//! confirmed signal, on both exchanges (`on_a::`, `on_b::`): timeout, 5xx with and without
//! execution, 429, connection dropped after execution, a refusal. Exchange A's protection is
//! its OCO; exchange B's is the resting take-profit (its actions all go to `POST /exchange`,
//! so the fault skips the entry's). Whatever happens: never a duplicate order, and never an
//! unprotected position without an alert to the boss — asserted on what the simulator holds.

use crate::trading_support::{Stage, Trading, Venue, good_signal};
use spotbot_sim::{Fault, FaultKind};

/// Confirms a good ETHUSDT signal on `venue` with `kind` armed for `count` requests of
/// `stage`; returns the confirm answer.
async fn confirm_with_fault(
    venue: Venue,
    kind: FaultKind,
    count: u32,
    stage: Stage,
) -> (Trading, serde_json::Value) {
    let t = Trading::start_on(venue, "").await;
    t.create_signal(good_signal("ETHUSDT")).await;
    t.arm_on(Fault { count, ..Fault::new(kind) }, stage);
    let (status, answer) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 200, "{answer}");
    (t, answer)
}

/// The entry filled once and the position is protected exactly once.
async fn assert_one_protected_position(t: &Trading, answer: &serde_json::Value) {
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(t.entries(), 1, "never a duplicate entry");
    assert_eq!(t.protections(), 1, "exactly one protection");
    let trades = t.open_trades().await;
    assert_eq!(trades.len(), 1);
    assert_eq!(trades[0]["protection"], "protected", "{trades:?}");
}

async fn assert_unprotected_with_alert(t: &Trading) {
    let trades = t.open_trades().await;
    assert_eq!(trades.len(), 1, "the filled entry is a trade");
    assert_eq!(trades[0]["protection"], "unprotected", "{trades:?}");
    assert_eq!(trades[0]["sl_placed"], "failed");
    t.message_containing("UNPROTECTED POSITION: ETHUSDT").await;
    assert_eq!(t.entries(), 1, "never a duplicate entry");
}

// ---- during the entry -------------------------------------------------------------------

async fn entry_timeout_after_execution_is_found_by_lookup_and_protected(venue: Venue) {
    let delay = FaultKind::Delay { ms: 2500, before: false };
    let (t, answer) = confirm_with_fault(venue, delay, 1, Stage::Entry).await;
    assert_one_protected_position(&t, &answer).await;
}

async fn entry_5xx_after_execution_is_found_by_lookup_and_protected(venue: Venue) {
    let error = FaultKind::ServerError { status: 500, execute: true };
    let (t, answer) = confirm_with_fault(venue, error, 1, Stage::Entry).await;
    assert_one_protected_position(&t, &answer).await;
}

/// Exchange A answers a 5xx only when its engine did not execute: two lookups that say
/// unknown mean absent, and the entry is sent once more. Exchange B's action may still land
/// in a later block: the entry is never sent again, the boss is told its outcome is
/// unknown, and reconciliation settles it by lookup later.
async fn entry_5xx_without_execution_is_sent_again_only_after_the_lookup(venue: Venue) {
    let error = FaultKind::ServerError { status: 503, execute: false };
    let (t, answer) = confirm_with_fault(venue, error, 1, Stage::Entry).await;
    if venue == Venue::A {
        assert_one_protected_position(&t, &answer).await;
        assert_eq!(t.entry_sends(), 2, "sent, looked up absent, sent once more");
        return;
    }
    assert_eq!(answer["ok"], false, "{answer}");
    assert_eq!(t.entry_sends(), 1, "never sent again on exchange B");
    t.message_containing("Order outcome unknown").await;
    // The reconciliation that follows an unknown outcome settles it.
    t.message_containing("never placed").await;
    assert_eq!((t.entries(), t.entry_sends()), (0, 1));
}

/// A 429 to an order may come from a gateway that forwarded it (docs/execution.md, "A
/// misbehaving exchange"): it is an unknown outcome, looked up before anything is sent again.
/// Exchange A sends it again once the lookups say absent and the account's trades show nothing
/// of it; exchange B never does, and reconciliation records it as never placed.
async fn entry_429_is_looked_up_before_it_is_sent_again(venue: Venue) {
    let limited = FaultKind::RateLimit { retry_after: 1 };
    let (t, answer) = confirm_with_fault(venue, limited, 1, Stage::Entry).await;
    if venue == Venue::A {
        assert_one_protected_position(&t, &answer).await;
        assert_eq!(t.entry_sends(), 2, "429, looked up absent, sent once more");
        return;
    }
    assert_eq!(answer["ok"], false, "{answer}");
    t.message_containing("Order outcome unknown").await;
    t.message_containing("never placed").await;
    assert_eq!((t.entries(), t.entry_sends()), (0, 1));
}

async fn entry_connection_dropped_after_execution_is_found_by_lookup(venue: Venue) {
    let (t, answer) = confirm_with_fault(venue, FaultKind::DropAfterExecute, 1, Stage::Entry).await;
    assert_one_protected_position(&t, &answer).await;
}

async fn entry_refused_places_nothing_and_keeps_the_signal(venue: Venue) {
    let refused = FaultKind::Reject { code: -2010, msg: None };
    let (t, answer) = confirm_with_fault(venue, refused, 1, Stage::Entry).await;
    assert_eq!(
        (answer["ok"].as_bool(), answer["status"].as_str()),
        (Some(false), Some("pending")),
        "{answer}"
    );
    assert!(answer["trade"]["error"].as_str().unwrap().contains("-2010"), "{answer}");
    assert!(t.orders().is_empty(), "nothing exists at the exchange");
    assert!(t.open_trades().await.is_empty());
    let (status, _) = t.get("/api/signal/ETHUSDT").await;
    assert_eq!(status, 200, "the signal is still pending");
}

async fn entry_outcome_that_stays_unknown_is_never_sent_a_third_time(venue: Venue) {
    // Every send times out before the exchange executes it, and every lookup says absent:
    // the client sends twice, then the journal holds the id unsettled.
    let hang = FaultKind::Delay { ms: 2500, before: true };
    let (t, answer) = confirm_with_fault(venue, hang, 2, Stage::Entry).await;
    assert_eq!(answer["ok"], false, "{answer}");
    assert_eq!(answer["status"], "confirmed", "the signal is consumed: no retry may double it");
    assert!(t.entry_sends() <= 2);
    let (_, again) = t.confirm("ETHUSDT").await;
    assert_eq!(again["already_confirmed"], true, "{again}");
    assert!(t.entry_sends() <= 2, "the repeat sent nothing");
    t.message_containing("Order outcome unknown").await;
    // The reconciliation that follows an unknown outcome settles it by lookup: absent,
    // nothing to protect.
    t.message_containing("never placed").await;
    assert_eq!(t.entries(), 0);
}

// ---- during the protection --------------------------------------------------------------

async fn protection_timeout_after_execution_is_found_by_lookup(venue: Venue) {
    let delay = FaultKind::Delay { ms: 2500, before: false };
    let (t, answer) = confirm_with_fault(venue, delay, 1, Stage::Protection).await;
    assert_one_protected_position(&t, &answer).await;
}

async fn protection_5xx_after_execution_is_found_by_lookup(venue: Venue) {
    let error = FaultKind::ServerError { status: 502, execute: true };
    let (t, answer) = confirm_with_fault(venue, error, 1, Stage::Protection).await;
    assert_one_protected_position(&t, &answer).await;
}

async fn protection_5xx_without_execution_is_retried(venue: Venue) {
    let error = FaultKind::ServerError { status: 503, execute: false };
    let (t, answer) = confirm_with_fault(venue, error, 3, Stage::Protection).await;
    assert_one_protected_position(&t, &answer).await;
}

async fn protection_429_is_waited_out(venue: Venue) {
    let limited = FaultKind::RateLimit { retry_after: 1 };
    let (t, answer) = confirm_with_fault(venue, limited, 1, Stage::Protection).await;
    assert_one_protected_position(&t, &answer).await;
}

async fn protection_connection_dropped_after_execution_is_found_by_lookup(venue: Venue) {
    let dropped = FaultKind::DropAfterExecute;
    let (t, answer) = confirm_with_fault(venue, dropped, 1, Stage::Protection).await;
    assert_one_protected_position(&t, &answer).await;
}

async fn protection_refused_leaves_the_trade_unprotected_and_alerts_the_boss(venue: Venue) {
    let refused = FaultKind::Reject { code: -2010, msg: None };
    let (t, answer) = confirm_with_fault(venue, refused, 10, Stage::Protection).await;
    assert_eq!(answer["ok"], true, "the entry happened: {answer}");
    assert_eq!(answer["trade"]["opened"]["protection"], "unprotected", "{answer}");
    assert_eq!(t.protections(), 0);
    assert_unprotected_with_alert(&t).await;

    // Once the exchange accepts the protection again, reconciliation places it.
    t.sim.sim.clear_faults();
    let (status, report) = t.get("/api/trades/recover").await;
    assert_eq!(status, 200, "{report}");
    let placed = match venue {
        Venue::A => "OCO placed",
        Venue::B => "take-profit (stop watched) placed",
    };
    assert!(report["actions"].to_string().contains(placed), "{report}");
    assert_eq!(t.protections(), 1);
    assert_eq!(t.open_trades().await[0]["protection"], "protected");
}

async fn protection_that_never_gets_an_answer_is_retried_then_reported_unprotected(venue: Venue) {
    let hang = FaultKind::Delay { ms: 2500, before: true };
    let (t, answer) = confirm_with_fault(venue, hang, 20, Stage::Protection).await;
    assert_eq!(answer["trade"]["opened"]["protection"], "unprotected", "{answer}");
    assert_eq!(t.protections(), 0, "no protection was executed");
    assert_unprotected_with_alert(&t).await;
}

/// Every scenario above as a test on `venue`.
macro_rules! on_venue {
    ($venue:expr) => {
        use crate::trading_support::Venue;

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn entry_timeout_after_execution_is_found_by_lookup_and_protected() {
            super::entry_timeout_after_execution_is_found_by_lookup_and_protected($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn entry_5xx_after_execution_is_found_by_lookup_and_protected() {
            super::entry_5xx_after_execution_is_found_by_lookup_and_protected($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn entry_5xx_without_execution_is_sent_again_only_after_the_lookup() {
            super::entry_5xx_without_execution_is_sent_again_only_after_the_lookup($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn entry_429_is_looked_up_before_it_is_sent_again() {
            super::entry_429_is_looked_up_before_it_is_sent_again($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn entry_connection_dropped_after_execution_is_found_by_lookup() {
            super::entry_connection_dropped_after_execution_is_found_by_lookup($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn entry_refused_places_nothing_and_keeps_the_signal() {
            super::entry_refused_places_nothing_and_keeps_the_signal($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn entry_outcome_that_stays_unknown_is_never_sent_a_third_time() {
            super::entry_outcome_that_stays_unknown_is_never_sent_a_third_time($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn protection_timeout_after_execution_is_found_by_lookup() {
            super::protection_timeout_after_execution_is_found_by_lookup($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn protection_5xx_after_execution_is_found_by_lookup() {
            super::protection_5xx_after_execution_is_found_by_lookup($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn protection_5xx_without_execution_is_retried() {
            super::protection_5xx_without_execution_is_retried($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn protection_429_is_waited_out() {
            super::protection_429_is_waited_out($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn protection_connection_dropped_after_execution_is_found_by_lookup() {
            super::protection_connection_dropped_after_execution_is_found_by_lookup($venue).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn protection_refused_leaves_the_trade_unprotected_and_alerts_the_boss() {
            super::protection_refused_leaves_the_trade_unprotected_and_alerts_the_boss($venue)
                .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn protection_that_never_gets_an_answer_is_retried_then_reported_unprotected() {
            super::protection_that_never_gets_an_answer_is_retried_then_reported_unprotected(
                $venue,
            )
            .await;
        }
    };
}

mod on_a {
    on_venue!(Venue::A);
}

mod on_b {
    on_venue!(Venue::B);
}
