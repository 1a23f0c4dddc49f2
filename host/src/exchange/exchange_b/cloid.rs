//! Client order ids on exchange B. The service's ids are strings (`SO_mubbs7i8ab12_BTCUSDT`,
//! at most 36 characters); exchange B takes 16 bytes (`cloid`, wire reference §4.2). The
//! cloid of an id is derived, never stored first: bytes 0..3 are the id's purpose prefix
//! (`SO_`) when it starts with two ASCII letters or digits and `_`, the rest the first bytes
//! of the SHA-256 of the whole id (13 after a prefix, 16 without one). So the same id always
//! gives the same cloid (a restart, a lookup after an ambiguous answer), and an order seen on
//! the exchange still shows what it was for.
//!
//! Going back needs the id: [`ClientIds`] remembers every id that passed through the client
//! (and those the host seeds from its order journal), so orders come back with the service's
//! id. An order whose cloid it does not know reports the cloid's `0x…` hex instead.

use std::collections::HashMap;
use std::sync::RwLock;

use sha2::{Digest, Sha256};
use spotbot_exchange_b_protocol::Cloid;

/// The cloid of the service's client order id `id`.
pub fn cloid_of(id: &str) -> Cloid {
    let digest = Sha256::digest(id.as_bytes());
    let bytes = id.as_bytes();
    let prefixed =
        bytes.len() >= 3 && bytes[..2].iter().all(u8::is_ascii_alphanumeric) && bytes[2] == b'_';
    let mut cloid = [0u8; 16];
    let start = if prefixed { 3 } else { 0 };
    cloid[..start].copy_from_slice(&bytes[..start]);
    cloid[start..].copy_from_slice(&digest[..16 - start]);
    Cloid(cloid)
}

/// The ids the client has seen, by cloid.
#[derive(Debug, Default)]
pub struct ClientIds {
    known: RwLock<HashMap<Cloid, String>>,
}

impl ClientIds {
    /// Remembers `id` and answers its cloid.
    pub fn learn(&self, id: &str) -> Cloid {
        let cloid = cloid_of(id);
        let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
        known.entry(cloid).or_insert_with(|| id.to_string());
        cloid
    }

    /// The service's id of an order reporting `cloid`: the id when known, else the cloid's
    /// hex; empty without a cloid.
    pub fn service_id(&self, cloid: Option<Cloid>) -> String {
        let Some(cloid) = cloid else { return String::new() };
        let known = self.known.read().unwrap_or_else(|e| e.into_inner());
        known.get(&cloid).cloned().unwrap_or_else(|| cloid.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn the_cloid_is_deterministic_and_keeps_the_purpose_prefix() {
        let id = "SO_mubbs7i8ab12_BTCUSDT";
        let c = cloid_of(id);
        assert_eq!(c, cloid_of(id));
        assert_eq!(&c.0[..3], b"SO_");
        assert!(c.to_string().starts_with("0x534f5f"), "{c}");
        assert_eq!(c.to_string().len(), 34);
        let plain = cloid_of("manual order");
        assert_eq!(&plain.0[..], &Sha256::digest(b"manual order")[..16], "no prefix: all hash");
    }

    #[test]
    fn different_ids_give_different_cloids() {
        let mut seen = HashSet::new();
        for purpose in ["SE", "SO", "TE", "TO", "MT", "MO", "TS", "RP", "RS", "SX", "WX"] {
            for n in 0..200 {
                for symbol in ["BTCUSDT", "ETHUSDT"] {
                    let id = format!("{purpose}_{n:x}_{symbol}");
                    assert!(seen.insert(cloid_of(&id)), "{id}");
                    assert!(seen.insert(cloid_of(&format!("{id}T"))), "{id}T");
                }
            }
        }
    }

    #[test]
    fn known_cloids_map_back_and_unknown_ones_show_their_hex() {
        let ids = ClientIds::default();
        let c = ids.learn("TE_abc_ETHUSDT");
        assert_eq!(ids.service_id(Some(c)), "TE_abc_ETHUSDT");
        let other = cloid_of("elsewhere");
        assert_eq!(ids.service_id(Some(other)), other.to_string());
        assert_eq!(ids.service_id(None), "");
    }
}
