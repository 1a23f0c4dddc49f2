//! Answers damaged after the exchange executed the request — what a mutating proxy or a broken
//! gateway does — on the entry and on the protection of a confirmed signal, on both exchanges
//! (`on_a::`, `on_b::`): every kind of the simulator's `damage` fault (truncated or cut JSON,
//! the wrong shape, a field missing or of the wrong type, `1e400`, `-0.0001`, an unknown enum,
//! duplicated or reordered keys, an HTML 502/503/504, an empty 200, an answer slower than the
//! request timeout, 429/418 although executed, a connection dropped).
//!
//! After each: the confirm is repeated (as an agent's retry would be), the damage is cleared
//! and reconciliation runs; then, from the simulator's own records, the signal bought once,
//! one protection rests for the whole position, and the service's trade is what the account
//! holds. Before the strict classification, an unknown enum value or a 429/418 after
//! execution made the repeated confirm buy a second time.

use std::time::{Duration, Instant};

use crate::trading_support::{Stage, Trading, Venue, good_signal};
use spotbot_sim::{Damage, Fault, FaultKind};

/// Confirms a good ETHUSDT signal with `damage` armed on `stage`, confirms again, clears the
/// damage and reconciles until the position is protected; asserts the simulator's records.
async fn damaged_confirm(venue: Venue, damage: Damage, stage: Stage) {
    let t = Trading::start_on(venue, "").await;
    t.create_signal(good_signal("ETHUSDT")).await;
    let kind = FaultKind::Damage { damage, seed: 3, ms: None, retry_after: None };
    t.arm_on(Fault::new(kind), stage);
    let (status, answer) = t.confirm("ETHUSDT").await;
    assert_eq!(status, 200, "{damage:?}: {answer}");
    let (status, again) = t.confirm("ETHUSDT").await;
    assert!(status == 200 || status == 409, "{damage:?}: {again}");
    t.sim.sim.clear_faults();
    reconciled(&t, damage).await;

    assert_eq!(t.entries(), 1, "{damage:?} on the {stage:?}: one entry for one signal");
    assert_eq!(t.open_protections(), 1, "{damage:?} on the {stage:?}: one protection rests");
    let trades = t.open_trades().await;
    assert_eq!(trades.len(), 1, "{damage:?}: {trades:?}");
    assert_eq!(trades[0]["protection"], "protected", "{damage:?}: {trades:?}");
    let held = t.balance("ETH");
    let size = crate::trading_support::decimal_of(&trades[0]["size"]);
    let held = held.0 + held.1;
    // The coin's fee leaves less than one step beyond the trade's size.
    let dust = held - size;
    assert!(
        dust >= rust_decimal::Decimal::ZERO && dust < crate::trading_support::d("0.0001"),
        "{damage:?}: the trade ({size}) is what the account holds ({held})"
    );
    t.stop().await;
}

/// Runs reconciliation until the one position is protected (a 418's ban, or a slow answer
/// still held at the simulator, can hold it back for a few seconds).
async fn reconciled(t: &Trading, damage: Damage) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, report) = t.get("/api/trades/recover").await;
        assert!(status == 200 || status == 502 || status == 429, "{damage:?}: {report}");
        let trades = t.open_trades().await;
        if trades.len() == 1 && trades[0]["protection"] == "protected" {
            return;
        }
        assert!(Instant::now() < deadline, "{damage:?}: not reconciled: {report} {trades:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Every damage kind on `stage`, each on a fresh rig.
async fn every_damage_on(venue: Venue, stage: Stage) {
    for damage in Damage::ALL.iter() {
        damaged_confirm(venue, *damage, stage).await;
    }
}

macro_rules! on_venue {
    ($venue:expr) => {
        use crate::trading_support::{Stage, Venue};

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn every_damaged_entry_answer_buys_once_and_ends_protected() {
            super::every_damage_on($venue, Stage::Entry).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn every_damaged_protection_answer_ends_with_one_protection() {
            super::every_damage_on($venue, Stage::Protection).await;
        }
    };
}

mod on_a {
    on_venue!(Venue::A);
}

mod on_b {
    on_venue!(Venue::B);
}
