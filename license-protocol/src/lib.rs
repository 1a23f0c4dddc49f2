//! The license protocol as both sides see it: request and answer bodies, the key format, input
//! validation and the Ed25519-signed validation answer.
//!
//! Its own crate so that the host's license client and the reference server share it without
//! the host depending on the server (axum, redb): client and server cannot drift apart.
//! Nothing here does I/O.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use chrono::{DateTime, Utc};
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// Every license key starts with this prefix.
pub const KEY_PREFIX: &str = "SPOT";
/// The characters a key group is drawn from: digits and upper-case letters without `0`, `1`,
/// `I` and `O`, so a key read aloud or copied from paper is unambiguous. 32 symbols = 5 bits.
pub const KEY_ALPHABET: &[u8; 32] = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ";
/// Number of hyphen-separated groups after the prefix.
pub const KEY_GROUPS: usize = 4;
/// Characters per group (4 groups x 4 characters x 5 bits = 80 random bits per key).
pub const KEY_GROUP_LEN: usize = 4;
/// Total length of a key: `SPOT-XXXX-XXXX-XXXX-XXXX`.
pub const KEY_LEN: usize = KEY_PREFIX.len() + KEY_GROUPS * (KEY_GROUP_LEN + 1);

/// The only plan the reference server hands out.
pub const PLAN_FREE: &str = "free";

/// Domain separation for signatures: a signature over a license answer can never be mistaken
/// for a signature over anything else made with the same key.
const SIGNING_CONTEXT: &[u8] = b"spotbot-license-answer-v1\n";
/// Version of [`AnswerPayload`]; a client refuses payloads of another version.
pub const PAYLOAD_VERSION: u32 = 1;

/// Limits a plan grants to an install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Features {
    pub max_positions: u32,
    pub max_watchlist: u32,
}

impl Features {
    /// What the `free` plan grants.
    pub const FREE: Features = Features { max_positions: 5, max_watchlist: 30 };
}

/// A field of a request that failed validation; `field` is the JSON field name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct FieldError {
    pub field: &'static str,
    pub reason: String,
}

impl FieldError {
    fn new(field: &'static str, reason: impl Into<String>) -> Self {
        FieldError { field, reason: reason.into() }
    }
}

/// Checks the shape of a license key and returns it normalised (trimmed, upper case).
pub fn normalize_key(input: &str) -> Result<String, FieldError> {
    let key = input.trim().to_ascii_uppercase();
    let shape = || {
        FieldError::new(
            "license_key",
            format!(
                "expected {KEY_PREFIX} followed by {KEY_GROUPS} groups of {KEY_GROUP_LEN} \
                 characters from {}, separated by hyphens",
                std::str::from_utf8(KEY_ALPHABET).unwrap_or_default()
            ),
        )
    };
    let mut parts = key.split('-');
    if parts.next() != Some(KEY_PREFIX) {
        return Err(shape());
    }
    let groups: Vec<&str> = parts.collect();
    let well_formed = groups.len() == KEY_GROUPS
        && groups
            .iter()
            .all(|g| g.len() == KEY_GROUP_LEN && g.bytes().all(|b| KEY_ALPHABET.contains(&b)));
    if well_formed { Ok(key) } else { Err(shape()) }
}

/// Builds a key from random bytes (one byte per character; only the low 5 bits are used).
pub fn key_from_random(random: &[u8; KEY_GROUPS * KEY_GROUP_LEN]) -> String {
    let mut key = String::with_capacity(KEY_LEN);
    key.push_str(KEY_PREFIX);
    for group in random.chunks(KEY_GROUP_LEN) {
        key.push('-');
        key.extend(group.iter().map(|b| KEY_ALPHABET[usize::from(b & 0x1f)] as char));
    }
    key
}

/// A stable, non-reversible identifier of a key: signed answers name the key by it, so the key
/// itself never has to travel back or be logged.
pub fn key_id(key: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"spotbot-license-key\n")
        .chain_update(key.as_bytes())
        .finalize();
    hex::encode(&digest[..16])
}

/// Validates an e-mail address (a practical subset of RFC 5321) and returns it trimmed with a
/// lower-case domain.
pub fn validate_email(input: &str) -> Result<String, FieldError> {
    let email = input.trim();
    let bad = |why: &str| Err(FieldError::new("email", why.to_string()));
    if email.is_empty() {
        return bad("must not be empty");
    }
    if email.len() > 254 {
        return bad("must be at most 254 characters");
    }
    let Some((local, domain)) = email.rsplit_once('@') else {
        return bad("must look like name@example.com");
    };
    if local.is_empty() || local.len() > 64 || local.contains('@') {
        return bad("must look like name@example.com");
    }
    let local_ok =
        local.chars().all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+/=?^_`{|}~.-".contains(c))
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..");
    if !local_ok {
        return bad("contains characters not allowed before the @");
    }
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    if !domain_ok {
        return bad("has an invalid domain after the @");
    }
    Ok(format!("{local}@{}", domain.to_ascii_lowercase()))
}

/// Validates a person's or organisation's name: 1 to 100 characters, no control characters.
pub fn validate_name(input: &str) -> Result<String, FieldError> {
    let name = input.trim();
    if name.is_empty() {
        return Err(FieldError::new("name", "must not be empty"));
    }
    if name.chars().count() > 100 {
        return Err(FieldError::new("name", "must be at most 100 characters"));
    }
    if name.chars().any(char::is_control) {
        return Err(FieldError::new("name", "must not contain control characters"));
    }
    Ok(name.to_string())
}

/// Validates a machine id (a UUID) and returns it in lower-case hyphenated form.
pub fn validate_machine_id(input: &str) -> Result<String, FieldError> {
    uuid::Uuid::parse_str(input.trim())
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| FieldError::new("machine_id", "must be a UUID"))
}

/// Validates a client nonce: 16 to 128 characters of `[A-Za-z0-9_-]`.
pub fn validate_nonce(input: &str) -> Result<String, FieldError> {
    let ok = (16..=128).contains(&input.len())
        && input.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(input.to_string())
    } else {
        Err(FieldError::new("nonce", "must be 16 to 128 characters of letters, digits, '-' or '_'"))
    }
}

/// `POST /v1/register` body.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RegisterRequest {
    pub email: String,
    pub name: String,
}

/// `POST /v1/register` success answer (201).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RegisterResponse {
    pub ok: bool,
    pub license_key: String,
    pub plan: String,
    pub features: Features,
    pub message: String,
}

/// `POST /v1/activate` and `POST /v1/validate` body. The nonce is chosen by the client and
/// echoed inside the signed answer, so an old answer cannot be replayed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ValidateRequest {
    pub license_key: String,
    pub machine_id: String,
    pub nonce: String,
}

/// `POST /v1/revoke` body.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RevokeRequest {
    pub license_key: String,
}

/// What the server says about a key for one machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The key is valid and bound to the asking machine.
    Active,
    /// No such key.
    UnknownKey,
    /// The key was revoked by an administrator.
    Revoked,
    /// The key is bound to another machine (it was activated there later).
    BoundElsewhere,
    /// The key exists but was never activated; validation does not bind.
    NotActivated,
}

impl Verdict {
    /// The error code / status word used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Active => "active",
            Verdict::UnknownKey => "unknown_key",
            Verdict::Revoked => "revoked",
            Verdict::BoundElsewhere => "bound_elsewhere",
            Verdict::NotActivated => "not_activated",
        }
    }
}

/// The signed content of an activation or validation answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerPayload {
    pub version: u32,
    pub verdict: Verdict,
    /// [`key_id`] of the key asked about.
    pub key_id: String,
    pub machine_id: String,
    /// The client's nonce, echoed.
    pub nonce: String,
    pub plan: Option<String>,
    pub features: Option<Features>,
    pub expires_at: Option<DateTime<Utc>>,
    /// The server's time when it answered.
    pub issued_at: DateTime<Utc>,
    pub message: String,
}

/// An activation or validation answer: the payload bytes exactly as signed, and the signature.
///
/// The HTTP body also carries `ok`, `error` and `detail` for people reading it; the client
/// trusts only what verifies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedAnswer {
    /// Base64 of the JSON payload.
    pub payload: String,
    /// Base64 of the Ed25519 signature over the context string followed by the payload bytes.
    pub signature: String,
}

/// Why a signed answer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("the answer is not valid base64")]
    Encoding,
    #[error("the signature does not verify with the configured public key")]
    BadSignature,
    #[error("the signed payload is not a license answer of version {PAYLOAD_VERSION}")]
    Payload,
    #[error("the answer is about another key, machine or request")]
    Mismatch,
}

impl SignedAnswer {
    /// Signs a payload.
    pub fn sign(payload: &AnswerPayload, key: &SigningKey) -> SignedAnswer {
        let bytes = serde_json::to_vec(payload).expect("a license payload always serialises");
        let signature = key.sign(&signed_message(&bytes));
        SignedAnswer { payload: B64.encode(&bytes), signature: B64.encode(signature.to_bytes()) }
    }

    /// Verifies the signature and decodes the payload. Says nothing yet about whether the
    /// answer is for the caller's key, machine and nonce: see [`SignedAnswer::verify_for`].
    pub fn verify(&self, public: &VerifyingKey) -> Result<AnswerPayload, AnswerError> {
        let bytes = B64.decode(&self.payload).map_err(|_| AnswerError::Encoding)?;
        let sig = B64.decode(&self.signature).map_err(|_| AnswerError::Encoding)?;
        let sig = Signature::from_slice(&sig).map_err(|_| AnswerError::BadSignature)?;
        public
            .verify_strict(&signed_message(&bytes), &sig)
            .map_err(|_| AnswerError::BadSignature)?;
        let payload: AnswerPayload =
            serde_json::from_slice(&bytes).map_err(|_| AnswerError::Payload)?;
        if payload.version != PAYLOAD_VERSION {
            return Err(AnswerError::Payload);
        }
        Ok(payload)
    }

    /// Verifies the answer and checks that it is about `key` on `machine_id` (and, when given,
    /// answers the request that carried `nonce`).
    pub fn verify_for(
        &self,
        public: &VerifyingKey,
        key: &str,
        machine_id: &str,
        nonce: Option<&str>,
    ) -> Result<AnswerPayload, AnswerError> {
        let payload = self.verify(public)?;
        let same_request = nonce.is_none_or(|n| n == payload.nonce);
        if payload.key_id != key_id(key) || payload.machine_id != machine_id || !same_request {
            return Err(AnswerError::Mismatch);
        }
        Ok(payload)
    }
}

fn signed_message(payload: &[u8]) -> Vec<u8> {
    let mut msg = Vec::with_capacity(SIGNING_CONTEXT.len() + payload.len());
    msg.extend_from_slice(SIGNING_CONTEXT);
    msg.extend_from_slice(payload);
    msg
}

/// The HTTP body of an activation or validation answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnswerBody {
    pub ok: bool,
    /// The verdict word (`active`, `revoked`, ...), unsigned copy for people.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub answer: SignedAnswer,
}

/// The error body of the license server: the same shape as the host's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    pub ok: bool,
    pub error: String,
    pub detail: String,
    /// The request field at fault, when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// `GET /v1/public-key` answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PublicKeyBody {
    pub algorithm: String,
    /// Hex of the 32-byte Ed25519 public key: the value for the host's `license.public_key`.
    pub public_key: String,
}

/// Parses a public key given as 64 hex characters.
pub fn parse_public_key(hex_key: &str) -> Result<VerifyingKey, FieldError> {
    let bad = || FieldError::new("public_key", "must be 64 hex characters (Ed25519)");
    let bytes: [u8; 32] =
        hex::decode(hex_key.trim()).map_err(|_| bad())?.try_into().map_err(|_| bad())?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| bad())
}

/// Hex form of a public key, as [`parse_public_key`] reads it.
pub fn public_key_hex(key: &VerifyingKey) -> String {
    hex::encode(key.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signing_key() -> SigningKey {
        SigningKey::from_bytes(&[7u8; 32])
    }

    fn payload() -> AnswerPayload {
        AnswerPayload {
            version: PAYLOAD_VERSION,
            verdict: Verdict::Active,
            key_id: key_id("SPOT-2345-6789-ABCD-EFGH"),
            machine_id: "5f0b8f0e-8d5e-4b4a-9a43-1f9e5c7d2a10".into(),
            nonce: "nonce-nonce-nonce-1".into(),
            plan: Some(PLAN_FREE.into()),
            features: Some(Features::FREE),
            expires_at: None,
            issued_at: DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
            message: "ok".into(),
        }
    }

    #[test]
    fn keys_have_the_documented_shape() {
        let key = key_from_random(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 31, 32, 63, 200, 255]);
        assert_eq!(key.len(), KEY_LEN);
        assert_eq!(key, "SPOT-2345-6789-ABCZ-2ZAZ");
        assert_eq!(normalize_key(&format!(" {} ", key.to_lowercase())), Ok(key));
        for bad in [
            "",
            "SPOT-2345-6789-ABCD",
            "SPOT-2345-6789-ABCD-EFGH-JKLM",
            "SPOT-0345-6789-ABCD-EFGH",
            "SPOT-I345-6789-ABCD-EFGH",
            "SPOT-23456-789-ABCD-EFGH",
            "TRAD-2345-6789-ABCD-EFGH",
            "SPOT_2345_6789_ABCD_EFGH",
        ] {
            assert_eq!(normalize_key(bad).unwrap_err().field, "license_key", "{bad}");
        }
    }

    #[test]
    fn emails_and_names_are_validated() {
        assert_eq!(validate_email(" Ann.Lee+bot@Example.COM ").unwrap(), "Ann.Lee+bot@example.com");
        for bad in [
            "",
            "plain",
            "@example.com",
            "a@b",
            "a@@b.com",
            "a b@c.com",
            "a@-b.com",
            "a@b..com",
            ".a@b.com",
        ] {
            assert_eq!(validate_email(bad).unwrap_err().field, "email", "{bad}");
        }
        assert_eq!(validate_name("  Ann  ").unwrap(), "Ann");
        assert_eq!(validate_name(" ").unwrap_err().field, "name");
        assert_eq!(validate_name("a\u{7}b").unwrap_err().field, "name");
        assert_eq!(validate_name(&"x".repeat(101)).unwrap_err().field, "name");
    }

    #[test]
    fn a_signed_answer_verifies_and_any_change_is_refused() {
        let key = signing_key();
        let answer = SignedAnswer::sign(&payload(), &key);
        let public = key.verifying_key();
        assert_eq!(answer.verify(&public).unwrap(), payload());
        assert!(
            answer
                .verify_for(
                    &public,
                    "SPOT-2345-6789-ABCD-EFGH",
                    "5f0b8f0e-8d5e-4b4a-9a43-1f9e5c7d2a10",
                    Some("nonce-nonce-nonce-1"),
                )
                .is_ok()
        );

        // Edited payload: the signature no longer matches.
        let mut forged = payload();
        forged.plan = Some("pro".into());
        let tampered = SignedAnswer {
            payload: SignedAnswer::sign(&forged, &key).payload,
            signature: answer.signature.clone(),
        };
        assert_eq!(tampered.verify(&public), Err(AnswerError::BadSignature));

        // Signed by another key.
        let other = SigningKey::from_bytes(&[8u8; 32]);
        assert_eq!(
            SignedAnswer::sign(&payload(), &other).verify(&public),
            Err(AnswerError::BadSignature)
        );

        // Right signature, wrong request.
        for (k, m, n) in [
            (
                "SPOT-2345-6789-ABCD-EFGJ",
                "5f0b8f0e-8d5e-4b4a-9a43-1f9e5c7d2a10",
                "nonce-nonce-nonce-1",
            ),
            (
                "SPOT-2345-6789-ABCD-EFGH",
                "00000000-8d5e-4b4a-9a43-1f9e5c7d2a10",
                "nonce-nonce-nonce-1",
            ),
            (
                "SPOT-2345-6789-ABCD-EFGH",
                "5f0b8f0e-8d5e-4b4a-9a43-1f9e5c7d2a10",
                "nonce-nonce-nonce-2",
            ),
        ] {
            assert_eq!(answer.verify_for(&public, k, m, Some(n)), Err(AnswerError::Mismatch));
        }
    }

    #[test]
    fn public_keys_round_trip_as_hex() {
        let public = signing_key().verifying_key();
        assert_eq!(parse_public_key(&public_key_hex(&public)).unwrap(), public);
        assert!(parse_public_key("abcd").is_err());
    }
}
