//! redb storage of the license server: one record per key and an index from e-mail to key.
//!
//! Every change is one write transaction, so two concurrent activations of the same key cannot
//! both win: redb serialises writers and the last commit is the binding.

use std::path::Path;

use chrono::{DateTime, Utc};
use redb::{Database, ReadableDatabase as _, ReadableTable as _, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::wire::{Features, Verdict};

/// key → JSON [`LicenseRecord`].
const LICENSES: TableDefinition<&str, &[u8]> = TableDefinition::new("licenses");
/// lower-case e-mail → key.
const EMAILS: TableDefinition<&str, &str> = TableDefinition::new("emails");

/// Everything the server knows about one key.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LicenseRecord {
    pub email: String,
    pub name: String,
    pub plan: String,
    pub features: Features,
    pub created_at: DateTime<Utc>,
    /// The machine the key is bound to; `None` until the first activation.
    pub machine_id: Option<String>,
    pub activated_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// Storage failures and refusals that a caller acts on.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("a license is already registered for this e-mail address")]
    EmailTaken,
    #[error("no license with this key")]
    UnknownKey,
    #[error("storage error: {0}")]
    Storage(#[from] redb::Error),
    #[error("corrupt license record: {0}")]
    Corrupt(#[from] serde_json::Error),
}

/// The outcome of an activation or validation.
#[derive(Debug, Clone)]
pub struct Lookup {
    pub verdict: Verdict,
    pub record: Option<LicenseRecord>,
}

/// Handle to the server's database file.
pub struct Db {
    db: Database,
}

impl Db {
    /// Opens (or creates) the database file and its tables.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        let db = Database::create(path).map_err(redb::Error::from)?;
        let tx = db.begin_write().map_err(redb::Error::from)?;
        tx.open_table(LICENSES).map_err(redb::Error::from)?;
        tx.open_table(EMAILS).map_err(redb::Error::from)?;
        tx.commit().map_err(redb::Error::from)?;
        Ok(Db { db })
    }

    /// Stores a new license for `email` under the key `new_key` returns (called again while the
    /// key collides with an existing one). Refuses an e-mail that already has a license.
    pub fn register(
        &self,
        email: &str,
        name: &str,
        now: DateTime<Utc>,
        mut new_key: impl FnMut() -> String,
    ) -> Result<String, DbError> {
        let tx = self.db.begin_write().map_err(redb::Error::from)?;
        let key = {
            let mut emails = tx.open_table(EMAILS).map_err(redb::Error::from)?;
            let mut licenses = tx.open_table(LICENSES).map_err(redb::Error::from)?;
            let email_id = email.to_lowercase();
            if emails.get(email_id.as_str()).map_err(redb::Error::from)?.is_some() {
                return Err(DbError::EmailTaken);
            }
            let key = loop {
                let candidate = new_key();
                if licenses.get(candidate.as_str()).map_err(redb::Error::from)?.is_none() {
                    break candidate;
                }
            };
            let record = LicenseRecord {
                email: email.to_string(),
                name: name.to_string(),
                plan: crate::wire::PLAN_FREE.to_string(),
                features: Features::FREE,
                created_at: now,
                machine_id: None,
                activated_at: None,
                revoked_at: None,
            };
            licenses
                .insert(key.as_str(), serde_json::to_vec(&record)?.as_slice())
                .map_err(redb::Error::from)?;
            emails.insert(email_id.as_str(), key.as_str()).map_err(redb::Error::from)?;
            key
        };
        tx.commit().map_err(redb::Error::from)?;
        Ok(key)
    }

    /// Binds `key` to `machine_id`. The last activation wins: activating from another machine
    /// moves the binding, and the previous machine learns it at its next validation.
    pub fn activate(
        &self,
        key: &str,
        machine_id: &str,
        now: DateTime<Utc>,
    ) -> Result<Lookup, DbError> {
        let tx = self.db.begin_write().map_err(redb::Error::from)?;
        let lookup = {
            let mut licenses = tx.open_table(LICENSES).map_err(redb::Error::from)?;
            let Some(mut record) = get_record(&licenses, key)? else {
                return Ok(Lookup { verdict: Verdict::UnknownKey, record: None });
            };
            if record.revoked_at.is_some() {
                return Ok(Lookup { verdict: Verdict::Revoked, record: Some(record) });
            }
            if record.machine_id.as_deref() != Some(machine_id) {
                record.machine_id = Some(machine_id.to_string());
                record.activated_at = Some(now);
                licenses
                    .insert(key, serde_json::to_vec(&record)?.as_slice())
                    .map_err(redb::Error::from)?;
            }
            Lookup { verdict: Verdict::Active, record: Some(record) }
        };
        tx.commit().map_err(redb::Error::from)?;
        Ok(lookup)
    }

    /// Says whether `key` is valid on `machine_id`, changing nothing.
    pub fn validate(&self, key: &str, machine_id: &str) -> Result<Lookup, DbError> {
        let tx = self.db.begin_read().map_err(redb::Error::from)?;
        let licenses = tx.open_table(LICENSES).map_err(redb::Error::from)?;
        let Some(record) = get_record(&licenses, key)? else {
            return Ok(Lookup { verdict: Verdict::UnknownKey, record: None });
        };
        let verdict = match (&record.revoked_at, record.machine_id.as_deref()) {
            (Some(_), _) => Verdict::Revoked,
            (None, None) => Verdict::NotActivated,
            (None, Some(bound)) if bound == machine_id => Verdict::Active,
            (None, Some(_)) => Verdict::BoundElsewhere,
        };
        Ok(Lookup { verdict, record: Some(record) })
    }

    /// Marks `key` revoked. Revoking twice keeps the first revocation time.
    pub fn revoke(&self, key: &str, now: DateTime<Utc>) -> Result<LicenseRecord, DbError> {
        let tx = self.db.begin_write().map_err(redb::Error::from)?;
        let record = {
            let mut licenses = tx.open_table(LICENSES).map_err(redb::Error::from)?;
            let mut record = get_record(&licenses, key)?.ok_or(DbError::UnknownKey)?;
            if record.revoked_at.is_none() {
                record.revoked_at = Some(now);
                licenses
                    .insert(key, serde_json::to_vec(&record)?.as_slice())
                    .map_err(redb::Error::from)?;
            }
            record
        };
        tx.commit().map_err(redb::Error::from)?;
        Ok(record)
    }
}

fn get_record(
    table: &impl redb::ReadableTable<&'static str, &'static [u8]>,
    key: &str,
) -> Result<Option<LicenseRecord>, DbError> {
    match table.get(key).map_err(redb::Error::from)? {
        Some(bytes) => Ok(Some(serde_json::from_slice(bytes.value())?)),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "SPOT-2345-6789-ABCD-EFGH";
    const M1: &str = "11111111-1111-4111-8111-111111111111";
    const M2: &str = "22222222-2222-4222-8222-222222222222";

    fn open() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("licenses.redb")).unwrap();
        (dir, db)
    }

    #[test]
    fn the_last_activation_owns_the_key() {
        let (_dir, db) = open();
        let now = Utc::now();
        db.register("a@example.com", "A", now, || KEY.into()).unwrap();
        assert_eq!(db.validate(KEY, M1).unwrap().verdict, Verdict::NotActivated);
        assert_eq!(db.activate(KEY, M1, now).unwrap().verdict, Verdict::Active);
        assert_eq!(db.validate(KEY, M1).unwrap().verdict, Verdict::Active);
        assert_eq!(db.activate(KEY, M2, now).unwrap().verdict, Verdict::Active);
        assert_eq!(db.validate(KEY, M1).unwrap().verdict, Verdict::BoundElsewhere);
        assert_eq!(db.validate(KEY, M2).unwrap().verdict, Verdict::Active);
        db.revoke(KEY, now).unwrap();
        assert_eq!(db.validate(KEY, M2).unwrap().verdict, Verdict::Revoked);
        assert_eq!(db.activate(KEY, M2, now).unwrap().verdict, Verdict::Revoked);
        assert_eq!(
            db.validate("SPOT-2345-6789-ABCD-EFGJ", M2).unwrap().verdict,
            Verdict::UnknownKey
        );
    }

    #[test]
    fn one_license_per_email_and_keys_never_collide() {
        let (_dir, db) = open();
        let now = Utc::now();
        db.register("a@example.com", "A", now, || KEY.into()).unwrap();
        assert!(matches!(
            db.register("A@EXAMPLE.com", "A", now, || "SPOT-2222-2222-2222-2222".into()),
            Err(DbError::EmailTaken)
        ));
        let mut candidates = vec!["SPOT-3333-3333-3333-3333", KEY];
        let key =
            db.register("b@example.com", "B", now, || candidates.pop().unwrap().into()).unwrap();
        assert_eq!(key, "SPOT-3333-3333-3333-3333");
    }
}
