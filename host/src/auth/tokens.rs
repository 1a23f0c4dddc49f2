//! The API tokens file, `<data_dir>/api-tokens.json`: one row per token with its agent, scope
//! and the SHA-256 of the token, never the token itself. `spotbot token create` prints a new
//! token once; the file cannot give it back.
//!
//! A file rather than a table of the store: the store is held by the running service, and the
//! operator must be able to create and revoke tokens while it runs (also from a second
//! container of the compose stack). Writers take an exclusive lock on a companion lock file
//! and replace the file atomically (write, sync, rename), so a reader sees the old or the new
//! file, never half of one. The service looks at the file's identity on every request
//! ([`TokenFile::stamp`]) and reads it again when it changed, so a revoked token fails on its
//! next request.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use utoipa::ToSchema;

use super::Scope;
use crate::activity::AgentName;

/// The file's name inside the data folder.
pub const FILE_NAME: &str = "api-tokens.json";
/// Every token starts with this, so a leaked one is recognisable (secret scanners, logs).
pub const PREFIX: &str = "spotbot_";
/// Random bytes of a token's public id and of its secret.
const ID_BYTES: usize = 6;
const SECRET_BYTES: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot {what} {}: {err}", path.display())]
    Io { what: &'static str, path: PathBuf, err: std::io::Error },
    #[error("{} is damaged ({reason}); fix or remove it", path.display())]
    Damaged { reason: String, path: PathBuf },
    #[error("no token `{0}`; `spotbot token list` shows the ids")]
    Unknown(String),
    #[error("the operating system gave no random bytes: {0}")]
    Random(String),
}

/// One token as the file keeps it (and as `token list` and `GET /api/tokens` show it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenRecord {
    /// Public id (also inside the token): what `token revoke` takes.
    pub id: String,
    /// The agent every request with this token acts as.
    pub agent: AgentName,
    pub scope: Scope,
    /// SHA-256 of the whole token, hex.
    pub sha256: String,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339; a revoked token is refused and stays listed (the audit log names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
}

impl TokenRecord {
    pub fn is_active(&self) -> bool {
        self.revoked_at.is_none()
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Contents {
    tokens: Vec<TokenRecord>,
}

/// Identity of the file's current version: a rename gives a new inode, a write a new time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    modified: Option<std::time::SystemTime>,
    len: u64,
    inode: u64,
}

/// The tokens file of a data folder.
#[derive(Debug, Clone)]
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    pub fn in_dir(data_dir: &Path) -> Self {
        Self { path: data_dir.join(FILE_NAME) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current version's identity; `None` while there is no file.
    pub fn stamp(&self) -> Option<Stamp> {
        let meta = std::fs::metadata(&self.path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Stamp { modified: meta.modified().ok(), len: meta.len(), inode })
    }

    /// Every token, revoked ones too; no file means none.
    pub fn load(&self) -> Result<Vec<TokenRecord>, TokenError> {
        Ok(self.read()?.tokens)
    }

    fn read(&self) -> Result<Contents, TokenError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Contents::default());
            }
            Err(err) => return Err(self.io("read", err)),
        };
        let contents: Contents = serde_json::from_str(&text).map_err(|err| {
            TokenError::Damaged { reason: err.to_string(), path: self.path.clone() }
        })?;
        for record in &contents.tokens {
            if digest_of_hex(&record.sha256).is_none() {
                let reason = format!("token {} has no 64-digit sha256", record.id);
                return Err(TokenError::Damaged { reason, path: self.path.clone() });
            }
        }
        Ok(contents)
    }

    /// Creates a token for `agent` with `scope`: the record is stored, the token is returned
    /// once and kept nowhere.
    pub fn create(
        &self,
        agent: AgentName,
        scope: Scope,
        now: DateTime<Utc>,
    ) -> Result<(TokenRecord, String), TokenError> {
        let id = hex::encode(random::<ID_BYTES>()?);
        let token = format!("{PREFIX}{id}_{}", hex::encode(random::<SECRET_BYTES>()?));
        let record = TokenRecord {
            id,
            agent,
            scope,
            sha256: hex::encode(Sha256::digest(token.as_bytes())),
            created_at: now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            revoked_at: None,
        };
        self.change(|contents| {
            contents.tokens.push(record.clone());
            Ok(())
        })?;
        Ok((record, token))
    }

    /// Revokes the token `id` (already revoked: unchanged). Its row stays, marked.
    pub fn revoke(&self, id: &str, now: DateTime<Utc>) -> Result<TokenRecord, TokenError> {
        let mut revoked = None;
        self.change(|contents| {
            let record = contents
                .tokens
                .iter_mut()
                .find(|r| r.id == id)
                .ok_or_else(|| TokenError::Unknown(id.to_string()))?;
            if record.revoked_at.is_none() {
                record.revoked_at = Some(now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
            }
            revoked = Some(record.clone());
            Ok(())
        })?;
        revoked.ok_or_else(|| TokenError::Unknown(id.to_string()))
    }

    /// Read, change and replace the file under the exclusive lock.
    fn change(
        &self,
        edit: impl FnOnce(&mut Contents) -> Result<(), TokenError>,
    ) -> Result<(), TokenError> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|err| self.io("create the folder of", err))?;
        }
        let lock_path = self.path.with_extension("json.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|err| self.io("lock", err))?;
        lock.lock().map_err(|err| self.io("lock", err))?;
        let mut contents = self.read()?;
        edit(&mut contents)?;
        let text = serde_json::to_string_pretty(&contents).expect("token rows serialize");
        let temporary = self.path.with_extension("json.tmp");
        let mut options = std::fs::OpenOptions::new();
        options.create(true).truncate(true).write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temporary).map_err(|err| self.io("write", err))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.write_all(b"\n"))
            .and_then(|()| file.sync_all())
            .map_err(|err| self.io("write", err))?;
        std::fs::rename(&temporary, &self.path).map_err(|err| self.io("replace", err))?;
        Ok(())
    }

    fn io(&self, what: &'static str, err: std::io::Error) -> TokenError {
        TokenError::Io { what, path: self.path.clone(), err }
    }
}

fn random<const N: usize>() -> Result<[u8; N], TokenError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|err| TokenError::Random(err.to_string()))?;
    Ok(bytes)
}

fn digest_of_hex(text: &str) -> Option<[u8; 32]> {
    let mut digest = [0u8; 32];
    hex::decode_to_slice(text, &mut digest).ok()?;
    Some(digest)
}

/// The tokens of one version of the file, ready to check requests against.
#[derive(Debug, Default)]
pub struct TokenSet {
    by_id: HashMap<String, Known>,
    /// The file has ever held a token (revoked ones count): tokens are in use.
    pub any: bool,
}

#[derive(Debug)]
struct Known {
    record: TokenRecord,
    digest: [u8; 32],
}

/// Why a presented token is not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejected {
    /// Not a token of this service, or its secret does not match.
    Unknown,
    Revoked,
}

impl TokenSet {
    pub fn new(records: Vec<TokenRecord>) -> Self {
        let any = !records.is_empty();
        let by_id = records
            .into_iter()
            .filter_map(|record| {
                let digest = digest_of_hex(&record.sha256)?;
                Some((record.id.clone(), Known { record, digest }))
            })
            .collect();
        Self { by_id, any }
    }

    /// Whether any token can still be used.
    pub fn active_any(&self) -> bool {
        self.by_id.values().any(|k| k.record.is_active())
    }

    /// The record of `token` when it is one of ours and not revoked. The digest comparison
    /// takes the same time however much of it matches.
    pub fn check(&self, token: &str) -> Result<&TokenRecord, Rejected> {
        let id = token
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split_once('_'))
            .map(|(id, _)| id)
            .ok_or(Rejected::Unknown)?;
        let known = self.by_id.get(id).ok_or(Rejected::Unknown)?;
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if !bool::from(digest.ct_eq(&known.digest)) {
            return Err(Rejected::Unknown);
        }
        if !known.record.is_active() {
            return Err(Rejected::Revoked);
        }
        Ok(&known.record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-11-28T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn a_created_token_checks_until_it_is_revoked_and_the_file_keeps_only_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let file = TokenFile::in_dir(dir.path());
        assert!(file.stamp().is_none());
        assert!(!TokenSet::new(file.load().unwrap()).any);

        let (record, token) = file.create(AgentName::Coo, Scope::Execute, now()).unwrap();
        assert!(token.starts_with(&format!("{PREFIX}{}_", record.id)), "{token}");
        assert_eq!(token.len(), PREFIX.len() + 12 + 1 + 64);
        let text = std::fs::read_to_string(file.path()).unwrap();
        assert!(!text.contains(token.rsplit('_').next().unwrap()), "the secret is not stored");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }

        let set = TokenSet::new(file.load().unwrap());
        assert!(set.any);
        assert_eq!(set.check(&token).unwrap().agent, AgentName::Coo);
        let mut wrong = token.clone();
        wrong.pop();
        wrong.push(if token.ends_with('0') { '1' } else { '0' });
        assert_eq!(set.check(&wrong), Err(Rejected::Unknown));
        assert_eq!(set.check("Bearer"), Err(Rejected::Unknown));
        assert_eq!(set.check(&format!("{PREFIX}ffffffffffff_00")), Err(Rejected::Unknown));

        let before = file.stamp();
        let revoked = file.revoke(&record.id, now()).unwrap();
        assert!(!revoked.is_active());
        assert_ne!(file.stamp(), before, "a change gives the file a new stamp");
        let set = TokenSet::new(file.load().unwrap());
        assert_eq!(set.check(&token), Err(Rejected::Revoked));
        assert!(set.any, "a revoked token still means tokens are in use");
        assert!(matches!(file.revoke("nope", now()), Err(TokenError::Unknown(_))));
    }

    #[test]
    fn a_damaged_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = TokenFile::in_dir(dir.path());
        std::fs::write(file.path(), "{\"tokens\": [{\"id\": 1}]}").unwrap();
        let err = file.load().unwrap_err().to_string();
        assert!(err.contains(FILE_NAME) && err.contains("damaged"), "{err}");
    }
}
