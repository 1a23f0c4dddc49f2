//! What the simulator holds of a confirmed signal, in each exchange's terms, and faults armed
//! on one stage of the confirm: the fault suites (`execution_faults`, `damaged_answers`,
//! `chaos`) assert on these, never only on the service's answers.

use std::collections::BTreeSet;

use spotbot_sim::Fault;

use super::{Trading, Venue};

const OCO: &str = "/api/v3/orderList/oco";
/// The cloid prefix of a signal's entry on exchange B: `SE_` in hex.
const ENTRY_CLOID_PREFIX: &str = "0x53455f";

/// Which request of the confirm a fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Entry,
    Protection,
}

impl Trading {
    /// Arms `fault` on the request of `stage`: exchange A's entry order or OCO; on exchange B
    /// every action goes to `POST /exchange`, so the protection's fault skips the entry's.
    pub fn arm_on(&self, mut fault: Fault, stage: Stage) {
        match (self.venue, stage) {
            (Venue::A, Stage::Entry) => {}
            (Venue::A, Stage::Protection) => fault.path = Some(OCO.into()),
            (Venue::B, _) => {
                fault.path = Some("/exchange".into());
                fault.skip = u32::from(stage == Stage::Protection);
            }
        }
        fault.method = fault.path.as_ref().map(|_| "POST".into());
        self.sim.sim.inject(fault);
    }

    /// Buys at market the simulator holds: exchange A's MARKET, exchange B's IOC.
    pub fn entries(&self) -> usize {
        match self.venue {
            Venue::A => self.orders_of("MARKET", "BUY").len(),
            Venue::B => self.orders_b_of("Ioc", "B").len(),
        }
    }

    /// Protections the simulator holds: distinct OCO lists on A, take-profits on B.
    pub fn protections(&self) -> usize {
        match self.venue {
            Venue::A => {
                let legs = self.orders_of("LIMIT_MAKER", "SELL");
                legs.iter()
                    .map(|o| o["orderListId"].as_i64().unwrap())
                    .collect::<BTreeSet<_>>()
                    .len()
            }
            Venue::B => self.orders_b_of("Gtc", "A").len(),
        }
    }

    /// Protections still resting at the simulator.
    pub fn open_protections(&self) -> usize {
        match self.venue {
            Venue::A => {
                let legs = self.orders_of("LIMIT_MAKER", "SELL");
                legs.iter()
                    .filter(|o| o["status"] == "NEW")
                    .map(|o| o["orderListId"].as_i64().unwrap())
                    .collect::<BTreeSet<_>>()
                    .len()
            }
            Venue::B => {
                let resting = self.orders_b_of("Gtc", "A");
                resting.iter().filter(|o| o["status"] == "open").count()
            }
        }
    }

    /// Times the entry was sent.
    pub fn entry_sends(&self) -> usize {
        match self.venue {
            Venue::A => self.seen("POST", "/api/v3/order").len(),
            Venue::B => {
                let sent = self.seen("POST", "/exchange").into_iter();
                sent.filter(|r| r.kind.as_deref() == Some("order"))
                    .filter(|r| {
                        r.client_order_id
                            .as_deref()
                            .is_some_and(|c| c.starts_with(ENTRY_CLOID_PREFIX))
                    })
                    .count()
            }
        }
    }
}
