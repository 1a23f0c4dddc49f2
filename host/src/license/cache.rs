//! The persisted license: the key and the last answer of the license server, exactly as the
//! server signed it.
//!
//! Nothing in the stored document is trusted until the signature verifies with the configured
//! public key and the answer names this key and this machine. The one unsigned value, the local
//! time of the last validation, can only shorten the grace: the grace counts from the earlier
//! of it and the server's signed `issued_at`.

use chrono::{DateTime, Utc};
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};
use spotbot_license_protocol::{AnswerPayload, SignedAnswer};

use crate::store::tables::LICENSE_CACHE;
use crate::store::{Store, StoreError};

const KEY: &str = "current";

/// The stored document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheDoc {
    /// Needed to revalidate. The store is the install's own private data; the key is never
    /// logged or returned by the API.
    pub license_key: String,
    pub answer: SignedAnswer,
    /// Host clock when the answer arrived.
    pub received_at: DateTime<Utc>,
}

/// What a cached document turned out to be.
#[derive(Debug, Clone)]
pub enum Loaded {
    /// Nothing was ever activated.
    Empty,
    /// A signed answer for this key and machine.
    Verified { key: String, payload: AnswerPayload, last_ok: DateTime<Utc> },
    /// The document does not verify: edited, signed by another server, or for another machine.
    Untrusted(String),
}

/// The time the grace counts from: the earlier of the local receipt time and the server's
/// signed answer time, so editing the stored receipt time cannot extend the grace.
pub fn last_ok(received_at: DateTime<Utc>, payload: &AnswerPayload) -> DateTime<Utc> {
    received_at.min(payload.issued_at)
}

/// Reads and verifies the cached license.
pub fn load(store: &Store, public_key: Option<&VerifyingKey>, machine_id: &str) -> Loaded {
    let doc: Option<CacheDoc> = match store.read(|r| r.get(LICENSE_CACHE, KEY)) {
        Ok(doc) => doc,
        Err(err) => return Loaded::Untrusted(format!("the cached license is unreadable: {err}")),
    };
    let Some(doc) = doc else { return Loaded::Empty };
    let Some(public_key) = public_key else {
        return Loaded::Untrusted(
            "license.public_key is not configured, so the cached license cannot be verified".into(),
        );
    };
    match doc.answer.verify_for(public_key, &doc.license_key, machine_id, None) {
        Ok(payload) => {
            let last_ok = last_ok(doc.received_at, &payload);
            Loaded::Verified { key: doc.license_key, payload, last_ok }
        }
        Err(err) => Loaded::Untrusted(format!(
            "the cached license failed verification ({err}); activate the key again"
        )),
    }
}

/// Persists a verified answer (positive or negative) for `key`.
pub fn save(
    store: &Store,
    key: &str,
    answer: &SignedAnswer,
    received_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    let doc = CacheDoc { license_key: key.to_string(), answer: answer.clone(), received_at };
    store.write(|w| w.put(LICENSE_CACHE, KEY, &doc))
}
